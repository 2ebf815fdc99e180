// The device lifecycle on a real PostgreSQL store (the suite of deviceLifecycleSuite.ts), and what
// only an engine with concurrent writers must show: a revocation waits for an upload that holds
// the device's row, an upload that waits for a revocation is refused once it commits, and racing
// writers (one token, one hardware_uuid) get exactly one winner.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseDatabaseLocation } from '../../../src/server/db/location';
import { openStore } from '../../../src/server/db/open';
import type { Store } from '../../../src/server/db/store';
import { enroll, heartbeat, revoke, uploadPostures } from '../../../src/server/deviceLifecycle';
import { createDatabase, databasePool, postgresEnv } from '../../support/postgres';
import { deviceAttributes } from '../../support/storeDevices';
import { T0, activeDevice, createdDevice, enrolledDevice, lifecycleOnStore, newResult } from '../deviceLifecycleSuite';

let store: Store;
/** A superuser pool on the same database: the other transaction of each race, and the view of who waits. */
let admin: pg.Pool;

beforeAll(async () => {
  const url = await createDatabase();
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD;
  store = await openStore(parseDatabaseLocation(url));
  admin = databasePool(url);
});

afterAll(async () => {
  await store?.close();
  await admin?.end();
});

lifecycleOnStore('PostgreSQL', () => store);

/** Resolves once `count` sessions of this database wait for a lock (polled: the waits are the events). */
async function lockWaiters(count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await admin.query<{ waiting: string }>(
      "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (Number(rows[0]!.waiting) === count) return;
    if (Date.now() > deadline) throw new Error(`${count} lock waiters not seen within 20 s; last: ${rows[0]!.waiting}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `work` inside a transaction of the admin pool that stays open until `release` is called. */
async function heldTransaction(work: (client: pg.PoolClient) => Promise<unknown>): Promise<{ release(): Promise<void> }> {
  const client = await admin.connect();
  await client.query('BEGIN');
  await work(client);
  return {
    async release() {
      await client.query('COMMIT');
      client.release();
    },
  };
}

describe('PostgreSQL: concurrent writers', () => {
  test('a revocation waits for an upload that holds the device row; the upload is stored, then the key is revoked', async () => {
    const device = await activeDevice(store);
    expect((await uploadPostures(store, device, [newResult()], T0)).kind).toBe('recorded');
    // Another session holds the device's latest FIREWALL_ENABLED row: the next upload locks the
    // device's row, then waits at its latest_results upsert.
    const holder = await heldTransaction((client) =>
      client.query('SELECT 1 FROM latest_results WHERE device_id = $1 FOR UPDATE', [device.id]),
    );
    const settled: string[] = [];
    const upload = uploadPostures(store, device, [newResult({ status: 'FAIL' })], T0).finally(() => settled.push('upload'));
    await lockWaiters(1);
    const revocation = revoke(store, device, T0).finally(() => settled.push('revocation'));
    // The revocation waits too: for the device row the upload holds.
    await lockWaiters(2);
    expect(settled).toEqual([]);

    await holder.release();
    expect(await upload).toMatchObject({ kind: 'recorded' });
    expect(await revocation).toBe('revoked');
    expect(settled).toEqual(['upload', 'revocation']);
    expect((await store.listPostures(device)).map((r) => r.status)).toEqual(['PASS', 'FAIL']);
    expect((await store.findDevice(device.id))?.state).toBe('REVOKED');
  });

  test('an upload that waits for a revocation in progress is refused once the revocation commits', async () => {
    const device = await activeDevice(store);
    // A revocation made elsewhere, not yet committed (what the store's revokeDevice writes).
    const revocation = await heldTransaction((client) =>
      client.query("UPDATE devices SET state = 'REVOKED', api_key_hash = NULL, revoked_at = now() WHERE id = $1", [device.id]),
    );
    const upload = uploadPostures(store, device, [newResult()], T0);
    await lockWaiters(1);
    await revocation.release();
    expect(await upload).toEqual({ kind: 'not_active' });
    expect(await store.listPostures(device)).toEqual([]);
  });

  test('one token raced by ten enrollments enrolls once', async () => {
    const device = await createdDevice(store);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => enroll(store, device.token, T0)));
    expect(outcomes.filter((outcome) => outcome.kind === 'enrolled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.kind === 'token_refused')).toHaveLength(9);
  });

  test('one hardware_uuid raced by two PENDING devices activates one; the other stays PENDING', async () => {
    for (let round = 0; round < 5; round += 1) {
      const [first, second] = await Promise.all([enrolledDevice(store), enrolledDevice(store)]);
      const attributes = deviceAttributes();
      const outcomes = await Promise.all([heartbeat(store, first, attributes, T0), heartbeat(store, second, attributes, T0)]);
      expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['hardware_uuid_taken', 'recorded']);
      const loser = outcomes[0].kind === 'recorded' ? second : first;
      expect((await store.findDevice(loser.id))?.state).toBe('PENDING');
    }
  });
});

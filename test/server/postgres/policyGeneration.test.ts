// The policy cache on PostgreSQL (src/server/db/postgresPolicyWatch.ts), over a real database with a
// second store standing in for the admin CLI or another server process: policy_generation is read
// once and then only after a notification of a change, not at every event-loop turn; a change
// committed elsewhere (a policy, a device's labels) is served once its notification arrived; a
// terminated listening connection is replaced; and a change that was never notified is served
// after the fallback period.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseDatabaseLocation } from '../../../src/server/db/location';
import { openStore } from '../../../src/server/db/open';
import { POLICY_CHANNEL } from '../../../src/server/db/postgresPolicyWatch';
import type { Store } from '../../../src/server/db/store';
import { DeviceCache } from '../../../src/server/deviceCache';
import { PolicyCache } from '../../../src/server/policy';
import { until } from '../../support/agent';
import { createDatabase, postgresEnv, queryDatabase } from '../../support/postgres';
import { activeStoreDevice, type StoreDevice } from '../../support/storeDevices';

const HOUR_MS = 3_600_000;
let url: string;
let serving: Store;
/** Another connection to the same database, as the admin CLI or another server process would have. */
let admin: Store;

beforeEach(async () => {
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD;
  url = await createDatabase();
  serving = await openStore(parseDatabaseLocation(url));
  admin = await openStore(parseDatabaseLocation(url));
});

afterEach(async () => {
  await serving.close();
  await admin.close();
});

/** The serving store, counting its reads of policyGeneration, its watch's fallback period set. */
function counting(fallbackMs: number): { store: Store; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(serving) as Store;
  wrapped.policyGeneration = () => {
    reads += 1;
    return serving.policyGeneration();
  };
  wrapped.watchPolicyGeneration = (changed) => serving.watchPolicyGeneration(changed, fallbackMs);
  return { store: wrapped, reads: () => reads };
}

/** The backends LISTENing to the policy channel (their last statement). */
async function listeners(): Promise<number[]> {
  const found = await queryDatabase<{ pid: number }>(
    url,
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()',
    [`LISTEN ${POLICY_CHANNEL}`],
  );
  return found.map((row) => row.pid);
}

/** A heartbeat's `policy_version` as the routes get it: the device authenticated through the cache, then the token. */
async function tokenFor(devices: DeviceCache, policies: PolicyCache, device: StoreDevice): Promise<string> {
  expect((await devices.authenticate(device.keyHash))?.id).toBe(device.device.id);
  return policies.token(device.device.orgId);
}

const policyChange = (device: StoreDevice, document: unknown) => ({
  orgId: device.device.orgId,
  label: null,
  document: JSON.stringify(document),
  changedBy: 'test',
  now: new Date().toISOString(),
});

describe('the policy cache on PostgreSQL', () => {
  test('reads the generation once, not at every turn; a change committed elsewhere is served once its notification arrived', async () => {
    const { store, reads } = counting(HOUR_MS);
    const devices = new DeviceCache(store, 100);
    const policies = new PolicyCache(store, devices);
    const device = await activeStoreDevice(serving, { creator: admin, orgName: 'watched' });
    await until(listeners, (pids) => pids.length === 1, 60_000, 'the listening connection');

    for (let turn = 0; turn < 100; turn += 1) {
      expect(await tokenFor(devices, policies, device)).toBe('0.0');
      await nextTurn();
    }
    // One read, and one more when the listening connection's own "changes may have been missed" came after it.
    expect(reads()).toBeLessThanOrEqual(2);

    // With a fallback period of an hour, only the notification can tell of these.
    expect(await admin.putPolicy(policyChange(device, { password: { minLength: 12 } }))).toBe(1);
    await until(
      () => tokenFor(devices, policies, device),
      (token) => token === '1.0',
      60_000,
      'the policy change',
    );
    expect((await admin.changeDeviceLabels(device.device, () => ({ team: 'lab' })))?.version).toBe(2);
    await until(
      () => tokenFor(devices, policies, device),
      (token) => token === '2.0',
      60_000,
      'the label change',
    );
    const afterChanges = reads();
    for (let turn = 0; turn < 20; turn += 1) await tokenFor(devices, policies, device);
    expect(reads()).toBe(afterChanges);
  });

  test('a terminated listening connection is replaced, and changes are served again', async () => {
    const { store } = counting(HOUR_MS);
    const devices = new DeviceCache(store, 100);
    const policies = new PolicyCache(store, devices);
    const device = await activeStoreDevice(serving, { creator: admin, orgName: 'restarted' });
    const [first] = await until(listeners, (pids) => pids.length === 1, 60_000, 'the listening connection');
    expect(await tokenFor(devices, policies, device)).toBe('0.0');

    await queryDatabase(url, 'SELECT pg_terminate_backend($1)', [first]);
    await admin.putPolicy(policyChange(device, { password: { minLength: 12 } }));
    await until(listeners, (pids) => pids.length === 1 && pids[0] !== first, 60_000, 'a new listening connection');
    await until(
      () => tokenFor(devices, policies, device),
      (token) => token === '1.0',
      60_000,
      'the change made meanwhile',
    );
  });

  test('a change that was never notified is served after the fallback period', async () => {
    const { store } = counting(200);
    const devices = new DeviceCache(store, 100);
    const policies = new PolicyCache(store, devices);
    const device = await activeStoreDevice(serving, { creator: admin, orgName: 'unnotified' });
    expect(await tokenFor(devices, policies, device)).toBe('0.0');
    // Written around the store: no notification.
    await queryDatabase(
      url,
      `WITH changed AS (
         INSERT INTO policy_changes (org_id, version, label, document, previous, changed_by, changed_at)
         VALUES ($1, 1, '', '{}', NULL, 'test', now()))
       INSERT INTO settings (key, value) VALUES ('policy_generation', '99') ON CONFLICT (key) DO UPDATE SET value = '99'`,
      [device.device.orgId],
    );
    await until(
      () => tokenFor(devices, policies, device),
      (token) => token === '1.0',
      60_000,
      'the fallback read',
    );
  });
});

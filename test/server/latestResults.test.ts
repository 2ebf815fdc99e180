// The latest result of each check (latest_results, what the admin API's device view and failing
// filter read) after a batch that holds several results of one check: the newest of the batch,
// whatever came before it in the same batch or in earlier ones. SQLite store; PostgreSQL writes
// the same rows in one statement (DISTINCT ON).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openStore } from '../../src/server/db/open';
import type { AuthenticatedDevice, NewPostureResult, Store } from '../../src/server/db/store';
import { uploadPostures } from '../../src/server/deviceLifecycle';
import { activeStoreDevice } from '../support/storeDevices';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-latest-'));
  store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function activeDevice(): Promise<AuthenticatedDevice> {
  return (await activeStoreDevice(store)).device;
}

const result = (checkKey: string, status: NewPostureResult['status'], rule: string): NewPostureResult => ({
  checkKey,
  status,
  evidence: { rule },
  observedAt: '2026-01-01T00:00:00.000Z',
  correlationId: null,
});

test('the newest result of each check in a batch is its latest result; every result is kept', async () => {
  const device = await activeDevice();
  await uploadPostures(store, device, [result('FIREWALL_ENABLED', 'PASS', 'first')], '2026-01-01T00:00:01.000Z');
  const batch = [
    result('FIREWALL_ENABLED', 'FAIL', 'second'),
    result('DISK_ENCRYPTION', 'PASS', 'only'),
    result('FIREWALL_ENABLED', 'PASS', 'third'),
    result('FIREWALL_ENABLED', 'FAIL', 'fourth'),
  ];
  expect((await uploadPostures(store, device, batch, '2026-01-01T00:00:02.000Z')).kind).toBe('recorded');

  const latest = await store.latestResults(device);
  expect(latest.map((r) => [r.checkKey, r.status, r.evidence])).toEqual([
    ['DISK_ENCRYPTION', 'PASS', { rule: 'only' }],
    ['FIREWALL_ENABLED', 'FAIL', { rule: 'fourth' }],
  ]);
  const all = await store.listPostures(device);
  expect(all.map((r) => (r.evidence as { rule: string }).rule)).toEqual(['first', 'second', 'only', 'third', 'fourth']);
  // The latest row points at the stored result it copies.
  expect(latest.find((r) => r.checkKey === 'FIREWALL_ENABLED')!.id).toBe(all.at(-1)!.id);
});

test('a result with the status already stored replaces the latest row in place; a new status moves it in the failing filter', async () => {
  const device = await activeDevice();
  const failing = async () =>
    (
      await store.listDevicePage({
        scope: { orgId: null },
        filter: { failingCheck: 'FIREWALL_ENABLED' },
        grace: { cutoffs: [], now: new Date().toISOString() },
        sort: 'created_at',
        descending: false,
        after: null,
        limit: 10,
      })
    ).map((d) => d.id);
  await uploadPostures(store, device, [result('FIREWALL_ENABLED', 'FAIL', 'first')], '2026-01-01T00:00:01.000Z');
  const repeated = { ...result('FIREWALL_ENABLED', 'FAIL', 'again'), observedAt: '2026-01-01T00:00:05.000Z' };
  await uploadPostures(store, device, [repeated], '2026-01-01T00:00:06.000Z');

  const [latest] = await store.latestResults(device);
  const all = await store.listPostures(device);
  // The repeated status keeps the time it began: the first result's observation.
  expect(latest).toEqual({ ...all.at(-1)!, checkKey: 'FIREWALL_ENABLED', statusSince: all[0]!.observedAt });
  expect([latest!.status, latest!.evidence, latest!.observedAt, latest!.receivedAt]).toEqual([
    'FAIL',
    { rule: 'again' },
    '2026-01-01T00:00:05.000Z',
    '2026-01-01T00:00:06.000Z',
  ]);
  expect(await failing()).toEqual([device.id]);

  await uploadPostures(store, device, [result('FIREWALL_ENABLED', 'PASS', 'fixed')], '2026-01-01T00:00:07.000Z');
  expect((await store.latestResults(device)).map((r) => [r.status, r.evidence])).toEqual([['PASS', { rule: 'fixed' }]]);
  expect(await failing()).toEqual([]);
});

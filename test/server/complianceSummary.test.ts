// The fleet summary (src/server/admin.ts complianceSummary) against custom check keys: every
// official check is shown, and of the others only those the most devices report, so that devices
// inventing keys cannot flood every admin's overview. On a real SQLite store (the counting is
// engine-neutral; each engine's query is covered by the admin API suite on both).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { ALL_ORGANIZATIONS, MAX_OTHER_CHECKS_SHOWN, complianceSummary } from '../../src/server/admin';
import { openStore } from '../../src/server/db/open';
import type { Store } from '../../src/server/db/store';
import { uploadPostures } from '../../src/server/deviceLifecycle';
import { T0, activeDevice, newResult } from './deviceLifecycleSuite';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-summary-'));
  store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function report(keys: string[]): Promise<void> {
  const device = await activeDevice(store);
  const outcome = await uploadPostures(
    store,
    device,
    keys.map((checkKey) => newResult({ checkKey })),
    T0,
  );
  expect(outcome.kind).toBe('recorded');
}

test('the official checks always, and the others reported by the most devices, at most MAX_OTHER_CHECKS_SHOWN', async () => {
  // Two devices share SHARED_A and SHARED_B; three devices each invent ten keys of their own.
  await report(['DISK_ENCRYPTION', 'SHARED_A', 'SHARED_B']);
  await report(['SCREEN_LOCK', 'SHARED_A', 'SHARED_B']);
  for (const device of ['X', 'Y', 'Z']) await report(Array.from({ length: 10 }, (_, i) => `${device}_${i}`));

  const summary = await complianceSummary(store, ALL_ORGANIZATIONS, {
    heartbeatIntervalSeconds: 300,
    postureIntervalSeconds: 3600,
    now: new Date(T0),
  });
  const shown = summary.checks.map((check) => check.check_key);
  expect(MAX_OTHER_CHECKS_SHOWN).toBe(20);
  // The shared keys first, then by key among keys of one device each: all of X's, eight of Y's, none of Z's.
  const keysOf = (device: string, n: number) => Array.from({ length: n }, (_, i) => `${device}_${i}`);
  const others = ['SHARED_A', 'SHARED_B', ...keysOf('X', 10), ...keysOf('Y', 8)];
  // Shown sorted by key, as before.
  expect(shown).toEqual(['DISK_ENCRYPTION', 'SCREEN_LOCK', ...others].sort((a, b) => a.localeCompare(b)));
  expect(summary.checks.find((check) => check.check_key === 'SHARED_A')).toMatchObject({ PASS: 2, MISSING: 3 });
});

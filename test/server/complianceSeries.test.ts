// The daily compliance series (src/server/admin.ts complianceSeries, the console overview's chart
// and GET /api/admin/v1/compliance/daily) on a real store (SQLite; PostgreSQL in the `postgres`
// project): as many days as asked, but none that began before the retention's cutoff, whose
// results are deleted in whole or in part. Over HTTP with `--retention`: adminApi.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ALL_ORGANIZATIONS, complianceSeries } from '../../src/server/admin';
import type { Store } from '../../src/server/db/store';
import { uploadPostures } from '../../src/server/deviceLifecycle';
import { SETTLED_AFTER_MS } from '../../src/server/complianceDays';
import { openTestStore } from '../support/testStore';
import { activeDevice, newResult } from './deviceLifecycleSuite';

const DAY_MS = 86_400_000;
const NOON = new Date('2026-11-27T12:00:00.000Z');
const MIDNIGHT = new Date('2026-11-27T00:00:00.000Z');

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-series-'));
  store = await openTestStore(dir);
  const device = await activeDevice(store);
  for (const [at, status] of [
    ['2026-11-20T12:00:00.000Z', 'FAIL'],
    ['2026-11-25T00:00:00.000Z', 'PASS'],
    ['2026-11-27T06:00:00.000Z', 'PASS'],
  ] as const) {
    expect((await uploadPostures(store, device, [newResult({ status })], at)).kind).toBe('recorded');
  }
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const series = async (options: { days?: number; retentionMs: number; now: Date }) =>
  (await complianceSeries(store, ALL_ORGANIZATIONS, options)).days;

test('a retention longer than the days asked: the days asked, oldest first, today last', async () => {
  const days = await series({ days: 30, retentionMs: 90 * DAY_MS, now: NOON });
  expect(days).toHaveLength(30);
  expect([days[0]!.day, days.at(-1)!.day]).toEqual(['2026-10-29', '2026-11-27']);
  expect(days.find((d) => d.day === '2026-11-20')?.pass_ratio).toBe(0);
  expect(days.find((d) => d.day === '2026-11-25')?.pass_ratio).toBe(1);
  expect(await series({ retentionMs: 90 * DAY_MS, now: NOON })).toHaveLength(30);
});

test('a shorter retention: only the days that began after its cutoff, so no day shows part of its results as the whole', async () => {
  // At noon, 7 days keep 2026-11-20 from noon on only: the series starts the day after.
  const days = await series({ days: 30, retentionMs: 7 * DAY_MS, now: NOON });
  expect(days.map((d) => d.day)).toEqual([
    '2026-11-21',
    '2026-11-22',
    '2026-11-23',
    '2026-11-24',
    '2026-11-25',
    '2026-11-26',
    '2026-11-27',
  ]);
  expect(days.map((d) => d.checks.FIREWALL_ENABLED?.FAIL ?? 0)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  // At midnight the cutoff is the start of 2026-11-20: that day is kept whole, and shown.
  const whole = await series({ days: 30, retentionMs: 7 * DAY_MS, now: MIDNIGHT });
  expect(whole.map((d) => d.day)[0]).toBe('2026-11-20');
  expect(whole).toHaveLength(8);
  // One millisecond more of retention at noon does not reach back to a whole 2026-11-20.
  expect((await series({ days: 30, retentionMs: 7 * DAY_MS + 1, now: NOON }))[0]!.day).toBe('2026-11-21');
  expect((await series({ days: 30, retentionMs: 7.5 * DAY_MS, now: NOON }))[0]!.day).toBe('2026-11-20');
});

test('a retention shorter than a day: today alone, with what it has', async () => {
  const days = await series({ days: 30, retentionMs: 3_600_000, now: NOON });
  expect(days.map((d) => [d.day, d.pass_ratio])).toEqual([['2026-11-27', 1]]);
});

test('fewer days asked than retained: the days asked', async () => {
  expect((await series({ days: 3, retentionMs: 7 * DAY_MS, now: NOON })).map((d) => d.day)).toEqual([
    '2026-11-25',
    '2026-11-26',
    '2026-11-27',
  ]);
});

test('a settled day is read once per process; the day that ended less than SETTLED_AFTER_MS ago, and today, are read afresh', async () => {
  // An organization of its own: this process has read none of its days yet.
  const device = await activeDevice(store, 'settled-days');
  const days = async (now: Date) =>
    (await complianceSeries(store, ALL_ORGANIZATIONS, { org: 'settled-days', days: 5, retentionMs: 90 * DAY_MS, now })).days.map((d) => [
      d.day,
      d.checks.FIREWALL_ENABLED?.FAIL ?? 0,
    ]);
  const justAfterMidnight = new Date(MIDNIGHT.getTime() + SETTLED_AFTER_MS / 2);
  expect((await days(justAfterMidnight)).map(([, fails]) => fails)).toEqual([0, 0, 0, 0, 0]);
  // Results received (by the server's clock, moved back here) on days already read: 2026-11-25 is
  // settled and kept as it was read; 2026-11-26, ended 5 minutes ago, is read again, as is today.
  for (const at of ['2026-11-25T18:00:00.000Z', '2026-11-26T23:59:00.000Z', '2026-11-27T00:04:00.000Z'])
    expect((await uploadPostures(store, device, [newResult({ status: 'FAIL' })], at)).kind).toBe('recorded');
  expect(await days(justAfterMidnight)).toEqual([
    ['2026-11-23', 0],
    ['2026-11-24', 0],
    ['2026-11-25', 0],
    ['2026-11-26', 1],
    ['2026-11-27', 1],
  ]);
  // Once 2026-11-26 is settled it is read once more, and kept.
  expect((await days(new Date(MIDNIGHT.getTime() + SETTLED_AFTER_MS))).map(([, fails]) => fails)).toEqual([0, 0, 0, 1, 1]);
  expect((await days(NOON)).map(([, fails]) => fails)).toEqual([0, 0, 0, 1, 1]);
});

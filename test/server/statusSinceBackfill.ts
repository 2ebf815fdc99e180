// The history a server older than "failing since" left (schema SQLite 7 / PostgreSQL 6), and what
// the migration that adds latest_results.status_since must make of it: shared by the SQLite and
// PostgreSQL migration tests.
import { expect } from 'vitest';
import type { DeviceView } from '../../src/server/admin';
import { createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import type { RunningServer } from '../support/server';
import { call } from './client';

const ORG = 'org_00000000000000000000000000000001';
const DEVICE = 'dev_00000000000000000000000000000001';
const REPORT = 'rpt_00000000000000000000000000000001';
const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00.000Z`;

/** Runs one statement with `?` placeholders; answers the id a posture_results insert got. */
export type Run = (sql: string, params: unknown[]) => Promise<number | undefined>;

// Per check, its results in order of arrival, and whether retention has deleted them from the
// history (the latest result is kept in latest_results all the same).
const HISTORY: [check: string, results: [status: string, minute: number][], retained: boolean][] = [
  [
    'FIREWALL_ENABLED',
    [
      ['FAIL', 1],
      ['PASS', 2],
      ['FAIL', 3],
      ['FAIL', 4],
    ],
    true,
  ],
  [
    'DISK_ENCRYPTION',
    [
      ['FAIL', 1],
      ['FAIL', 5],
    ],
    true,
  ],
  ['TIME_SYNC', [['UNKNOWN', 6]], false],
];

/** Fills a database at the schema before the migration the way an older server did. */
export async function fillOlderSchema(run: Run): Promise<void> {
  await run('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)', [ORG, 'acme', at(0)]);
  await run(
    "INSERT INTO devices (id, org_id, state, hostname, platform, created_at, activated_at, last_seen_at) VALUES (?, ?, 'ACTIVE', 'host', 'LINUX', ?, ?, ?)",
    [DEVICE, ORG, at(0), at(0), at(9)],
  );
  await run('INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES (?, ?, ?, ?)', [REPORT, ORG, DEVICE, at(0)]);
  let deletedId = 1_000_000;
  for (const [check, results, retained] of HISTORY) {
    let latest: { id: number; status: string; minute: number } | undefined;
    for (const [status, minute] of results) {
      const id = retained
        ? await run(
            `INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
             VALUES (?, ?, ?, ?, ?, NULL, ?, ?) RETURNING id`,
            [ORG, DEVICE, REPORT, check, status, at(minute), at(minute)],
          )
        : (deletedId += 1);
      latest = { id: id!, status, minute };
    }
    await run(
      `INSERT INTO latest_results (org_id, device_id, check_key, result_id, report_id, status, evidence, observed_at, received_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
      [ORG, DEVICE, check, latest!.id, REPORT, latest!.status, at(latest!.minute), at(latest!.minute)],
    );
  }
}

/** After the upgrade: each check's status began where its history says, or at its latest result when none is left. */
export async function expectBackfilled(server: RunningServer): Promise<void> {
  const { admin_token } = await createAdminToken(server, { org: 'acme' });
  const answer = await call(server, `/api/admin/v1/devices/${DEVICE}`, {
    method: 'GET',
    headers: { authorization: `Bearer ${admin_token}` },
  });
  const view = parseJson<DeviceView>(answer.text);
  expect(view.latest.map((r) => [r.check_key, r.status, r.status_since, r.failing_since])).toEqual([
    ['DISK_ENCRYPTION', 'FAIL', at(1), at(1)],
    ['FIREWALL_ENABLED', 'FAIL', at(3), at(3)],
    ['TIME_SYNC', 'UNKNOWN', at(6), null],
  ]);
}

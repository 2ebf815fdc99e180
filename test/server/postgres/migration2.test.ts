// PostgreSQL migration 2 on a database that a version-1 server filled: the newest result of each
// check of each device is backfilled into latest_results (results stored before the upgrade are what
// the admin API's device view and failing filter see), the listing indexes replace the old one, and
// a second start applies nothing and changes nothing.
import { afterAll, expect, test } from 'vitest';
import { migratePostgres } from '../../../src/server/db/postgresMigrations';
import type { DevicePage, DeviceView } from '../../../src/server/admin';
import { createAdminToken } from '../../support/admin';
import { parseJson } from '../../support/json';
import { createDatabase, databasePool, queryDatabase } from '../../support/postgres';
import { startServer, type RunningServer } from '../../support/server';
import { call } from '../client';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

const ORG = 'org_00000000000000000000000000000001';
const FAILING = 'dev_00000000000000000000000000000001';
const PASSING = 'dev_00000000000000000000000000000002';
const NEVER_REPORTED = 'dev_00000000000000000000000000000003';
const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00.000Z`;

/** A version-1 database as a version-1 server left it: devices, one posture report each, results over time. */
async function versionOneDatabase(): Promise<string> {
  const url = await createDatabase();
  const pool = databasePool(url);
  try {
    expect(await migratePostgres(pool, 1)).toEqual([1]);
    await pool.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [ORG, 'acme', at(0)]);
    for (const [device, hostname] of [
      [FAILING, 'build-01'],
      [PASSING, 'mac-alice'],
      [NEVER_REPORTED, 'new-host'],
    ] as const) {
      await pool.query(
        "INSERT INTO devices (id, org_id, state, hostname, platform, created_at, activated_at, last_seen_at) VALUES ($1, $2, 'ACTIVE', $3, 'LINUX', $4, $5, $6)",
        [device, ORG, hostname, at(0), at(1), at(9)],
      );
    }
    const insertResult = (device: string, report: string, check: string, status: string, rule: string, minute: number) =>
      pool.query(
        `INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        // observed_at is the agent's text as sent, offset included.
        [
          ORG,
          device,
          report,
          check,
          status,
          JSON.stringify({ rule }),
          `2026-11-20T11:${String(minute).padStart(2, '0')}:00+01:00`,
          at(minute),
        ],
      );
    for (const [report, device] of [
      ['rpt_00000000000000000000000000000001', FAILING],
      ['rpt_00000000000000000000000000000002', PASSING],
    ] as const) {
      await pool.query('INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES ($1, $2, $3, $4)', [
        report,
        ORG,
        device,
        at(1),
      ]);
    }
    // The failing device: the firewall failed, passed, then failed again; the disk passed once.
    await insertResult(FAILING, 'rpt_00000000000000000000000000000001', 'FIREWALL_ENABLED', 'FAIL', 'no_inbound_filtering', 1);
    await insertResult(FAILING, 'rpt_00000000000000000000000000000001', 'DISK_ENCRYPTION', 'PASS', 'root_encrypted', 2);
    await insertResult(FAILING, 'rpt_00000000000000000000000000000001', 'FIREWALL_ENABLED', 'PASS', 'ufw_active', 3);
    await insertResult(FAILING, 'rpt_00000000000000000000000000000001', 'FIREWALL_ENABLED', 'FAIL', 'no_inbound_filtering', 4);
    // The passing device failed the firewall once, long ago.
    await insertResult(PASSING, 'rpt_00000000000000000000000000000002', 'FIREWALL_ENABLED', 'FAIL', 'firewall_off', 5);
    await insertResult(PASSING, 'rpt_00000000000000000000000000000002', 'FIREWALL_ENABLED', 'PASS', 'firewall_on', 6);
  } finally {
    await pool.end();
  }
  return url;
}

interface LatestRow {
  device_id: string;
  check_key: string;
  result_id: string;
  status: string;
  evidence: { rule: string };
  observed_at: string;
  received_at: Date;
}

const latestRows = (url: string) =>
  queryDatabase<LatestRow>(
    url,
    `SELECT device_id, check_key, result_id, status, evidence, observed_at, received_at
     FROM latest_results ORDER BY device_id, check_key COLLATE "C"`,
  );

test('results stored under schema 1 are the latest results after the upgrade, and a second start changes nothing', async () => {
  const url = await versionOneDatabase();
  expect(await queryDatabase(url, "SELECT 1 FROM pg_tables WHERE tablename = 'latest_results'")).toEqual([]);

  // The server's start applies migration 2 (and the later ones).
  const first = await startServer({ dbPath: url });
  servers.push(first);
  const migrations = await queryDatabase<{ version: number; applied_at: Date }>(
    url,
    'SELECT version, applied_at FROM schema_migrations ORDER BY version',
  );
  expect(migrations.map((m) => m.version)).toEqual([1, 2, 3]);

  const idOf = async (device: string, check: string, minute: number) =>
    (
      await queryDatabase<{ id: string }>(
        url,
        'SELECT id FROM posture_results WHERE device_id = $1 AND check_key = $2 AND received_at = $3',
        [device, check, at(minute)],
      )
    )[0]!.id;
  const expected = [
    [FAILING, 'DISK_ENCRYPTION', 'PASS', 'root_encrypted', 2],
    [FAILING, 'FIREWALL_ENABLED', 'FAIL', 'no_inbound_filtering', 4],
    [PASSING, 'FIREWALL_ENABLED', 'PASS', 'firewall_on', 6],
  ] as const;
  const backfilled = await latestRows(url);
  expect(backfilled).toEqual(
    await Promise.all(
      expected.map(async ([device, check, status, rule, minute]) => ({
        device_id: device,
        check_key: check,
        result_id: await idOf(device, check, minute),
        status,
        evidence: { rule },
        observed_at: `2026-11-20T11:${String(minute).padStart(2, '0')}:00+01:00`,
        received_at: new Date(at(minute)),
      })),
    ),
  );
  // The listing indexes replace the one they cover.
  const indexes = (await queryDatabase<{ indexname: string }>(url, "SELECT indexname FROM pg_indexes WHERE tablename = 'devices'")).map(
    (i) => i.indexname,
  );
  expect(indexes).toEqual(expect.arrayContaining(['devices_by_created', 'devices_by_org_hostname', 'devices_by_org_last_seen']));
  expect(indexes).not.toContain('devices_by_org');

  // What the admin API sees of the results stored before the upgrade.
  const { admin_token } = await createAdminToken(first, { org: 'acme' });
  const get = async <T>(path: string) =>
    parseJson<T>((await call(first, `/api/admin/v1${path}`, { method: 'GET', headers: { authorization: `Bearer ${admin_token}` } })).text);
  const view = await get<DeviceView>(`/devices/${FAILING}`);
  expect(view.latest.map((r) => [r.check_key, r.status, r.evidence?.rule])).toEqual([
    ['DISK_ENCRYPTION', 'PASS', 'root_encrypted'],
    ['FIREWALL_ENABLED', 'FAIL', 'no_inbound_filtering'],
  ]);
  expect((await get<DeviceView>(`/devices/${NEVER_REPORTED}`)).latest).toEqual([]);
  expect((await get<DevicePage>('/devices?failing=FIREWALL_ENABLED')).devices.map((d) => d.device_id)).toEqual([FAILING]);
  expect((await get<DevicePage>('/devices?failing=any')).devices.map((d) => d.device_id)).toEqual([FAILING]);
  await first.stop();
  servers.pop();

  // A second start (and a second migration run) applies nothing and leaves the backfill as it was.
  const second = await startServer({ dbPath: url });
  servers.push(second);
  const pool = databasePool(url);
  try {
    expect(await migratePostgres(pool)).toEqual([]);
  } finally {
    await pool.end();
  }
  expect(await queryDatabase(url, 'SELECT version, applied_at FROM schema_migrations ORDER BY version')).toEqual(migrations);
  expect(await latestRows(url)).toEqual(backfilled);
});

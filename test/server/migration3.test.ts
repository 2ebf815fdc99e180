// Migration 3 on a database that a version-2 server filled: the newest result of each check of each
// device is backfilled into latest_results, so the admin API's device view and failing filter see
// results stored before the upgrade; a second start applies nothing and changes nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, expect, test } from 'vitest';
import { SCHEMA_VERSION, migrate } from '../../src/server/db/migrations';
import type { DevicePage, DeviceView } from '../../src/server/admin';
import { createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { startServer, type RunningServer } from '../support/server';
import { call } from './client';

let server: RunningServer | undefined;
afterAll(async () => {
  await server?.stop();
});

test('results stored under schema 2 are the latest results after the upgrade, and a second start changes nothing', async () => {
  const dbPath = join(mkdtempSync(join(tmpdir(), 'device-agent-migration-')), 'server.db');
  const db = new Database(dbPath);
  migrate(db, 2);
  expect(db.pragma('user_version', { simple: true })).toBe(2);
  const org = 'org_00000000000000000000000000000001';
  const device = 'dev_00000000000000000000000000000001';
  const report = 'rpt_00000000000000000000000000000001';
  const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00.000Z`;
  db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(org, 'acme', at(0));
  db.prepare(
    "INSERT INTO devices (id, org_id, state, hostname, platform, created_at, activated_at, last_seen_at) VALUES (?, ?, 'ACTIVE', 'old-host', 'LINUX', ?, ?, ?)",
  ).run(device, org, at(0), at(1), at(9));
  db.prepare('INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES (?, ?, ?, ?)').run(report, org, device, at(1));
  const insert = db.prepare(
    'INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  insert.run(org, device, report, 'FIREWALL_ENABLED', 'FAIL', '{"rule":"no_inbound_filtering"}', at(1), at(1));
  insert.run(org, device, report, 'DISK_ENCRYPTION', 'FAIL', '{"rule":"root_not_encrypted"}', at(2), at(2));
  insert.run(org, device, report, 'FIREWALL_ENABLED', 'PASS', '{"rule":"ufw_active"}', at(3), at(3));
  db.close();

  server = await startServer({ dbPath });
  const { admin_token } = await createAdminToken(server, { org: 'acme' });
  const headers = { authorization: `Bearer ${admin_token}` };
  const view = parseJson<DeviceView>((await call(server, `/api/admin/v1/devices/${device}`, { method: 'GET', headers })).text);
  expect(view.latest.map((r) => [r.check_key, r.status, r.evidence?.rule])).toEqual([
    ['DISK_ENCRYPTION', 'FAIL', 'root_not_encrypted'],
    ['FIREWALL_ENABLED', 'PASS', 'ufw_active'],
  ]);
  const failing = (check: string) =>
    call(server!, `/api/admin/v1/devices?failing=${check}`, { method: 'GET', headers }).then((a) => parseJson<DevicePage>(a.text));
  expect((await failing('DISK_ENCRYPTION')).devices.map((d) => d.device_id)).toEqual([device]);
  expect((await failing('FIREWALL_ENABLED')).devices).toEqual([]);
  await server.stop();
  server = undefined;

  const latestRows = () => {
    const reader = new Database(dbPath, { readonly: true });
    try {
      return {
        version: reader.pragma('user_version', { simple: true }),
        rows: reader.prepare('SELECT * FROM latest_results ORDER BY device_id, check_key').all(),
      };
    } finally {
      reader.close();
    }
  };
  const backfilled = latestRows();
  // Migration 3 and the later ones.
  expect(backfilled.version).toBe(SCHEMA_VERSION);
  expect(backfilled.rows).toHaveLength(2);
  server = await startServer({ dbPath });
  expect(latestRows()).toEqual(backfilled);
  const writer = new Database(dbPath);
  try {
    expect(migrate(writer)).toEqual([]);
  } finally {
    writer.close();
  }
  expect(latestRows()).toEqual(backfilled);
});

// migrate-data: a SQLite deployment copied into PostgreSQL keeps working as it was (the same API
// keys, pending tokens, revocations and posture history), the counts are verified, and a second
// run resumes an interrupted copy without duplicating anything.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { linuxLifecycle } from '../../../checks/linux/lifecycle';
import { addAccount, ConsoleClient, createAdminToken } from '../../support/admin';
import { createDatabase, queryDatabase } from '../../support/postgres';
import { runServerCli, startServer, tryServerCli } from '../../support/server';
import { call, createSecret, enroll, enrolledDevice, heartbeat, heartbeatBody, listSecrets, postures, register, result } from '../client';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const dir = mkdtempSync(join(tmpdir(), 'device-agent-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TABLES = [
  'organizations',
  'enroll_secrets',
  'devices',
  'device_labels',
  'enrollment_tokens',
  'posture_reports',
  'posture_results',
  'latest_results',
  'admin_tokens',
  'admin_accounts',
  'admin_sessions',
  'sign_in_attempts',
  'settings',
  'policies',
  'policy_changes',
  'policy_exceptions',
  'lifecycle_sets',
  'audit_log',
  'webhooks',
  'webhook_deliveries',
  'alert_marks',
];

/** The server policy's state as the admin CLI shows it: history, exceptions, lifecycle version. */
async function policyState(dbPath: string): Promise<string[]> {
  const run = async (args: string[]) => (await runServerCli([...args, '--db', dbPath, '--json'])).stdout;
  return Promise.all([
    run(['policy', 'history', '--org', 'acme']),
    run(['exception', 'list', '--org', 'acme']),
    run(['lifecycle', 'show']),
  ]);
}

test('a SQLite deployment moves to PostgreSQL: same keys, tokens, revocations and history; a rerun resumes', async () => {
  const file = join(dir, 'server.db');
  const sqlite = await startServer({ dbPath: file });
  const active = await enrolledDevice(sqlite, { org: 'acme' });
  for (let i = 0; i < 3; i += 1)
    expect(
      (
        await postures(sqlite, active.apiKey, {
          results: [result(), { ...result({ check_key: 'FIREWALL_ENABLED' }), evidence: undefined }],
        })
      ).status,
    ).toBe(204);
  const revoked = await enrolledDevice(sqlite, { org: 'globex' });
  await sqlite.revokeDevice(revoked.deviceId);
  const pending = await sqlite.createDevice({ org: 'acme', name: 'not yet enrolled' });
  // An enrollment secret with labels, a device it registered, and that device re-enrolled (superseded).
  const secret = await createSecret(sqlite, ['--label', 'team=finance', '--max-uses', '5'], 'acme');
  const identity = heartbeatBody();
  const firstRegistration = await register(sqlite, secret.enroll_secret, identity);
  const registeredKey = String((await enroll(sqlite, firstRegistration.body?.enrollment_token)).body?.api_key);
  expect((await heartbeat(sqlite, registeredKey, identity)).status).toBe(200);
  const reenrolled = await register(sqlite, secret.enroll_secret, identity);
  expect(reenrolled.status).toBe(200);
  const registered = [String(firstRegistration.body?.device_id), String(reenrolled.body?.device_id)];
  const secretsBefore = await listSecrets(sqlite);
  const before = await Promise.all([active.deviceId, revoked.deviceId, ...registered].map((id) => sqlite.showDevice(id)));
  const { admin_token: adminToken } = await createAdminToken(sqlite, { org: 'acme' });
  expect((await addAccount(sqlite, 'admin@acme.test', { org: 'acme' }, 'a long console password')).code).toBe(0);
  const policyFile = join(dir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify({ password: { minLength: 12 } }));
  await runServerCli(['policy', 'set', '--db', file, '--org', 'acme', '--file', policyFile]);
  await runServerCli(['policy', 'set', '--db', file, '--org', 'acme', '--label', 'team=lab', '--file', policyFile]);
  writeFileSync(policyFile, JSON.stringify({ LINUX: linuxLifecycle }));
  await runServerCli(['lifecycle', 'import', policyFile, '--db', file]);
  await runServerCli([
    'exception',
    'add',
    '--db',
    file,
    '--org',
    'acme',
    '--device',
    active.deviceId,
    '--check',
    'FIREWALL_ENABLED',
    '--reason',
    'lab',
    '--expires',
    '30d',
  ]);
  const policyBefore = await policyState(file);
  // A wrong guess: its count moves too (sign_in_attempts 1 1 ok).
  expect((await new ConsoleClient(sqlite).signIn('admin@acme.test', 'a wrong guess')).status).toBe(401);
  const latestBefore = (await call(sqlite, `/api/admin/v1/devices/${active.deviceId}`, { method: 'GET', headers: bearer(adminToken) }))
    .text;
  await runServerCli(['webhook', 'create', '--db', file, '--org', 'acme', '--url', 'https://hooks.example.test/device-agent', '--json']);
  const webhooksOf = async (dbPath: string) => (await runServerCli(['webhook', 'list', '--db', dbPath, '--json'])).stdout;
  const webhooksBefore = await webhooksOf(file);
  const auditOf = async (dbPath: string) => (await runServerCli(['audit', '--db', dbPath, '--json'])).stdout;
  const auditBefore = await auditOf(file);
  await sqlite.stop();

  const url = await createDatabase();
  const { stdout } = await runServerCli(['migrate-data', '--from', file, '--to', url]);
  for (const table of TABLES) expect(stdout).toMatch(new RegExp(`^${table} +(\\d+) +\\1 +ok$`, 'm'));
  expect(stdout).toContain(`Copied ${file} into ${url}.`);

  // Interrupted half-way, as far as the target can tell: the newest results and a token are missing.
  await queryDatabase(url, 'DELETE FROM posture_results WHERE id > (SELECT min(id) FROM posture_results)');
  await queryDatabase(url, 'DELETE FROM enrollment_tokens');
  const resumed = await runServerCli(['migrate-data', '--from', file, '--to', url]);
  for (const table of TABLES) expect(resumed.stdout).toMatch(new RegExp(`^${table} +(\\d+) +\\1 +ok$`, 'm'));

  const pg = await startServer({ dbPath: url });
  try {
    expect(await policyState(url)).toEqual(policyBefore);
    expect(await auditOf(url)).toEqual(auditBefore);
    expect(await webhooksOf(url)).toEqual(webhooksBefore);
    expect(webhooksBefore).toContain('"format": "json"');
    const after = await Promise.all([active.deviceId, revoked.deviceId, ...registered].map((id) => pg.showDevice(id)));
    expect(after).toEqual(before);
    expect(after[3]).toMatchObject({ supersedes: registered[0], enroll_secret_id: secret.secret_id });
    // The secret came along as its hash, with its labels and use count: it registers on PostgreSQL.
    expect(await listSecrets(pg)).toEqual(secretsBefore);
    expect((await register(pg, secret.enroll_secret)).status).toBe(200);
    expect((await listSecrets(pg))[0]).toMatchObject({ uses: 3, labels: { team: 'finance' } });
    // The admin token, the console account and each check's latest result came along.
    const device = await call(pg, `/api/admin/v1/devices/${active.deviceId}`, { method: 'GET', headers: bearer(adminToken) });
    expect(device.status).toBe(200);
    expect(JSON.parse(device.text)).toEqual(JSON.parse(latestBefore));
    expect((await new ConsoleClient(pg).signIn('admin@acme.test', 'a long console password')).status).toBe(303);
    // The audit log goes on after the copied entries.
    const audit = (JSON.parse(await auditOf(url)) as { entries: { id: number; action: string }[] }).entries;
    expect(audit[0]).toMatchObject({ action: 'sign_in', id: audit[1]!.id + 1 });
    expect((await heartbeat(pg, active.apiKey, heartbeatBody({ hardware_uuid: active.hardwareUuid }))).status).toBe(200);
    expect((await heartbeat(pg, revoked.apiKey)).status).toBe(401);
    expect((await enroll(pg, pending.enrollment_token)).status).toBe(200);
    // New results take ids after the copied ones: the history stays in order.
    expect((await postures(pg, active.apiKey, { results: [result({ check_key: 'SCREEN_LOCK' })] })).status).toBe(204);
    const history = (await pg.showDevice(active.deviceId)).postures.map((p) => p.check_key);
    expect(history).toHaveLength(7);
    expect(history.at(-1)).toBe('SCREEN_LOCK');
  } finally {
    await pg.stop();
  }
});

test('refuses a target that is not PostgreSQL and a source that does not exist, changing nothing', async () => {
  const missing = await tryServerCli(['migrate-data', '--from', join(dir, 'nope.db'), '--to', await createDatabase()]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain(`no database at ${join(dir, 'nope.db')}`);
  const notPostgres = await tryServerCli(['migrate-data', '--from', join(dir, 'nope.db'), '--to', join(dir, 'other.db')]);
  expect(notPostgres).toMatchObject({ code: 2, stderr: 'device-agent-server: --to must be a postgres:// URL\n' });
});

// The audit log against the real server and its real database (SQLite, or PostgreSQL in the
// `postgres` project): a sequence of admin actions through the admin CLI, the admin API and the
// console becomes entries with who, what and from where (X-Forwarded-For believed from a
// --trust-proxy address only), listed newest first by the API (JSON pages and CSV), the console and
// `audit --json`, within the credential's organization; no secret, token or password in any of
// them; and the retention sweep deletes entries older than --retention.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AuditPage, AuditView } from '../../src/server/audit';
import { until } from '../support/agent';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { logEntries, runServerCli, startServer, type RunningServer } from '../support/server';
import { call, type Answer } from './client';

const PASSWORD = 'correct horse battery staple';
const PROXY_CLIENT = '203.0.113.7';
let server: RunningServer;
let acmeToken: { token_id: string; admin_token: string };
let allToken: { token_id: string; admin_token: string };
/** Every secret the sequence handled: none may appear in the log's answers. */
const secrets: string[] = [PASSWORD, 'wrong password 123'];
let actions: { deviceId: string; secretId: string; exceptionId: string };

const api = (path: string, token: string, options: { method?: string; json?: unknown; forwardedFor?: string } = {}) =>
  call(server, `/api/admin/v1${path}`, {
    method: options.method ?? 'GET',
    json: options.json,
    headers: { authorization: `Bearer ${token}`, ...(options.forwardedFor && { 'x-forwarded-for': options.forwardedFor }) },
  });

function ok<T>(answer: Answer): T {
  expect(answer.status, answer.text).toBeLessThan(300);
  return (answer.text === '' ? undefined : parseJson<T>(answer.text)) as T;
}

function expectNoSecret(text: string): void {
  for (const secret of secrets) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  // The loopback address is the "proxy": its X-Forwarded-For is believed.
  server = await startServer({ args: ['--trust-proxy', '127.0.0.1'] });
  acmeToken = await createAdminToken(server, { org: 'acme' });
  allToken = await createAdminToken(server, { allOrgs: true });
  secrets.push(acmeToken.admin_token, allToken.admin_token);
  expect((await addAccount(server, 'ada@acme.test', { org: 'acme' }, PASSWORD)).code).toBe(0);

  // The admin API, as the acme token, through the "proxy".
  const from = { forwardedFor: PROXY_CLIENT };
  const device = ok<{ device_id: string; enrollment_token: string }>(
    await api('/devices', acmeToken.admin_token, { ...from, method: 'POST', json: { org: 'acme', name: 'laptop' } }),
  );
  secrets.push(device.enrollment_token);
  const secret = ok<{ secret_id: string; enroll_secret: string }>(
    await api('/enroll-secrets', acmeToken.admin_token, { ...from, method: 'POST', json: { org: 'acme', max_uses: 5 } }),
  );
  secrets.push(secret.enroll_secret);
  ok(await api(`/enroll-secrets/${secret.secret_id}`, acmeToken.admin_token, { ...from, method: 'DELETE' }));
  ok(await api('/policy?org=acme', acmeToken.admin_token, { ...from, method: 'PUT', json: { screenLock: { maxIdleSeconds: 300 } } }));
  const exception = ok<{ exception_id: string }>(
    await api('/exceptions?org=acme', acmeToken.admin_token, {
      ...from,
      method: 'POST',
      json: { device_id: device.device_id, check_key: 'DISK_ENCRYPTION', reason: 'replacement ordered', expires: '30d' },
    }),
  );
  ok(await api(`/exceptions/${exception.exception_id}?org=acme`, acmeToken.admin_token, { ...from, method: 'DELETE' }));
  ok(await api(`/devices/${device.device_id}/revoke`, acmeToken.admin_token, { ...from, method: 'POST' }));

  // Another organization's action, by the CLI.
  const globex = parseJson<{ device_id: string; enrollment_token: string }>(
    (await runServerCli(['device', 'create', '--db', server.dbPath, '--org', 'globex', '--json'])).stdout,
  );
  secrets.push(globex.enrollment_token);

  // The console: a refused sign-in, one of an unknown email, a sign-in and a sign-out.
  const browser = new ConsoleClient(server);
  expect((await browser.signIn('ada@acme.test', 'wrong password 123')).status).toBe(401);
  expect((await browser.signIn('nobody@acme.test', PASSWORD)).status).toBe(401);
  expect((await browser.signIn('ada@acme.test', PASSWORD)).status).toBe(303);
  const session = browser.cookie('device_agent_session');
  expect(session).toBeDefined();
  secrets.push(session!);
  const csrf = await browser.csrfToken('/console/overview');
  expect((await browser.post('/console/sign-out', { _csrf: csrf })).status).toBe(303);
  actions = { deviceId: device.device_id, secretId: secret.secret_id, exceptionId: exception.exception_id };
});
afterAll(async () => {
  await server?.stop();
});

const shape = (e: AuditView) => [e.action, e.actor, e.address, e.org, e.target_id];

describe('the audit log', () => {
  test('records each action with who, what and from where, newest first; an organization sees its own', async () => {
    const { entries, next_before } = ok<AuditPage>(await api('/audit', allToken.admin_token));
    expect(next_before).toBeNull();
    const token = `token:${acmeToken.token_id}`;
    const { deviceId, secretId, exceptionId } = actions;
    expect(entries.map(shape)).toEqual([
      ['sign_out', 'account:ada@acme.test', '127.0.0.1', 'acme', null],
      ['sign_in', 'account:ada@acme.test', '127.0.0.1', 'acme', null],
      // An unknown email's text is not recorded (it may be a password typed in the wrong field).
      ['sign_in_refused', 'unknown', '127.0.0.1', null, null],
      ['sign_in_refused', 'account:ada@acme.test', '127.0.0.1', 'acme', null],
      ['device.create', expect.stringMatching(/^cli/), null, 'globex', expect.stringMatching(/^dev_/)],
      ['device.revoke', token, PROXY_CLIENT, 'acme', deviceId],
      ['exception.revoke', token, PROXY_CLIENT, 'acme', exceptionId],
      ['exception.grant', token, PROXY_CLIENT, 'acme', exceptionId],
      ['policy.set', token, PROXY_CLIENT, 'acme', null],
      ['enroll_secret.revoke', token, PROXY_CLIENT, 'acme', secretId],
      ['enroll_secret.create', token, PROXY_CLIENT, 'acme', secretId],
      ['device.create', token, PROXY_CLIENT, 'acme', deviceId],
      ['admin_account.add', expect.stringMatching(/^cli/), null, 'acme', 'ada@acme.test'],
      ['admin_token.create', expect.stringMatching(/^cli/), null, null, allToken.token_id],
      ['admin_token.create', expect.stringMatching(/^cli/), null, 'acme', acmeToken.token_id],
    ]);
    expect(entries.find((e) => e.action === 'device.revoke')?.detail).toEqual({ outcome: 'revoked' });
    expect(entries.find((e) => e.action === 'policy.set')?.detail).toEqual({ label: null, version: 1 });
    expect(entries.find((e) => e.action === 'exception.grant')?.detail).toMatchObject({
      check_key: 'DISK_ENCRYPTION',
      device_id: deviceId,
    });
    expect(entries.every((e, i) => i === 0 || e.id < entries[i - 1]!.id)).toBe(true);
    expect(entries.every((e) => !Number.isNaN(Date.parse(e.at)))).toBe(true);
    expectNoSecret(JSON.stringify(entries));

    // The acme token sees acme's entries only; another organization is out of its reach.
    const own = ok<AuditPage>(await api('/audit', acmeToken.admin_token)).entries;
    expect(own.map((e) => e.id)).toEqual(entries.filter((e) => e.org === 'acme').map((e) => e.id));
    expect((await api('/audit?org=globex', acmeToken.admin_token)).status).toBe(404);
  });

  test('filters by action, pages with before, refuses an unknown action; CSV holds the same, formula-safe', async () => {
    const revokes = ok<AuditPage>(await api('/audit?action=device.revoke', allToken.admin_token)).entries;
    expect(revokes.map((e) => e.target_id)).toEqual([actions.deviceId]);
    const first = ok<AuditPage>(await api('/audit?limit=2', allToken.admin_token));
    expect(first.entries).toHaveLength(2);
    const second = ok<AuditPage>(await api(`/audit?limit=2&before=${first.next_before}`, allToken.admin_token));
    expect(second.entries[0]!.id).toBeLessThan(first.entries[1]!.id);
    expect((await api('/audit?action=nonsense', allToken.admin_token)).status).toBe(400);

    const csv = await api('/audit?format=csv&action=enroll_secret.create', allToken.admin_token);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines.slice(0, 4)).toEqual([
      '# organization: all organizations',
      '# filters: action=enroll_secret.create',
      expect.stringMatching(/^# exported at: /),
      '# entries: 1',
    ]);
    expect(lines[4]).toBe('id,at,actor,address,action,org,target_type,target_id,detail');
    expect(lines[5]).toContain(`enroll_secret,${actions.secretId},`);
    expectNoSecret(csv.text);
  });

  test('the CLI and the console list the same entries', async () => {
    const { stdout } = await runServerCli(['audit', '--db', server.dbPath, '--json']);
    const fromCli = parseJson<AuditPage>(stdout);
    const fromApi = ok<AuditPage>(await api('/audit', allToken.admin_token));
    // The console's own audit page view added nothing: listing is no action.
    expect(fromCli.entries.map((e) => e.id)).toEqual(fromApi.entries.map((e) => e.id));
    expectNoSecret(stdout);
    const human = (await runServerCli(['audit', '--db', server.dbPath, '--action', 'policy.set'])).stdout;
    expect(human).toMatch(/policy\.set\s+acme\s+-\s+label=null version=1\s+203\.0\.113\.7/);

    const browser = new ConsoleClient(server);
    expect((await browser.signIn('ada@acme.test', PASSWORD)).status).toBe(303);
    const page = await browser.get('/console/audit?action=device.revoke');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<code>${actions.deviceId}</code>`);
    expect(page.text.match(/data-audit="/g)).toHaveLength(1);
    const all = await browser.get('/console/audit');
    // The acme account sees acme's entries, the newest (its own sign-in) first.
    expect(all.text).not.toContain('globex');
    expect(/data-audit="\d+">\s*<td>[^]*?<\/td>\s*<td>account:ada@acme\.test<\/td>\s*<td><code>sign_in<\/code>/.test(all.text)).toBe(true);
    expectNoSecret(all.text);
  });
});

describe('audit retention', () => {
  test('the retention sweep deletes entries older than --retention', async () => {
    const short = await startServer({ args: ['--retention', '3s', '--retention-interval', '1s'] });
    try {
      await runServerCli(['device', 'create', '--db', short.dbPath, '--org', 'acme', '--json']);
      const listed = async () => parseJson<AuditPage>((await runServerCli(['audit', '--db', short.dbPath, '--json'])).stdout).entries;
      // The one entry (device.create) is deleted by a sweep: the log counts it. Not listed before,
      // which on a loaded machine may come after the 3 s.
      const sweeps = await until(
        () => logEntries(short.logs()).filter((entry) => Number(entry.deleted_audit_entries) > 0),
        (found) => found.length > 0,
        60_000,
        'a retention sweep that deletes audit entries',
      );
      expect(sweeps.map((entry) => entry.deleted_audit_entries)).toEqual([1]);
      expect(await listed()).toEqual([]);
    } finally {
      await short.stop();
    }
  });
});

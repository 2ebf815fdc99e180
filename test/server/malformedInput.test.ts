// Malformed input is the client's error on every engine: one table of values (NUL and other
// characters an engine refuses, over-long identifiers, wrong types) sent through every input of
// every route of the agent API, the admin API and the console, in paths, queries, JSON and forms.
// No answer is a 5xx, the log holds no stack trace, and each engine gives each probe the same
// answer: the statuses are compared with one recording (malformedInput.statuses.json) that both
// vitest projects, SQLite and PostgreSQL, must match. A value the edge refuses never reaches the
// database: PostgreSQL's refusal (the 400 safety net of databaseErrors.ts, logged at debug) never happens.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { ConsoleClient, addAccount, createAdminToken } from '../support/admin';
import { NO_RATE_LIMITS, logEntries, startServer, tryServerCli, type RunningServer } from '../support/server';
import { call, enrolledDevice, heartbeatBody, result, type EnrolledDevice } from './client';

/** Text values: each goes into JSON and form fields as is, and percent-encoded into paths and queries. */
const TEXTS = [
  '\u0000',
  'dev_\u0000',
  'rpt_\u0000x',
  'a\u0000b',
  '\u0001\u001b[2J\u0007',
  '\u007f\u0085\u009b',
  '\ufffe\uffff',
  'x'.repeat(3_000),
  '😀'.repeat(700),
  'é'.repeat(2_000),
  `dev_${'f'.repeat(4_000)}`,
  '',
  ' ',
  '-1',
  '0',
  '1e999',
  '99999999999999999999',
  '9223372036854775808',
  'abc',
  'null',
  '2024-13-45T99:99:99Z',
  '10000-01-01T00:00:00Z',
  '-infinity',
  'NaN',
  "'; DROP TABLE devices; --",
  '__proto__',
];
/** Raw pieces of a URL that are not valid percent-encoded UTF-8. */
const RAW_URL_PIECES = ['%FF', '%ED%A0%80', '%C0%80', '%', '%0', '%00'];
/** Wrong JSON types for fields that take strings or numbers. */
const JSON_VALUES: unknown[] = [...TEXTS, 1, -1, 1.5, 1e308, true, null, [], {}, ['\u0000'], { '\u0000': '\u0000' }];

interface Probe {
  client: 'device' | 'admin' | 'console' | 'visitor';
  method: string;
  path: string;
  json?: unknown;
  form?: Record<string, string>;
}

/** One input of one route: how a value reaches it. */
interface Slot {
  name: string;
  /** In a path or query: `piece` is already URL-encoded. */
  url?: (piece: string) => Probe;
  /** In a JSON body. */
  body?: (value: unknown) => Probe;
  /** In a form. */
  form?: (value: string) => Probe;
}

const ADMIN = '/api/admin/v1';
const ADMIN_LIST = [
  'org',
  'state',
  'platform',
  'failing',
  'hostname',
  'last_seen_before',
  'last_seen_after',
  'sort',
  'order',
  'cursor',
  'limit',
];

function slots(device: EnrolledDevice): Slot[] {
  const beat = (field: string) => (value: unknown) => ({
    client: 'device' as const,
    method: 'POST',
    path: ROUTES.heartbeat,
    json: { ...heartbeatBody({ hardware_uuid: device.hardwareUuid }), [field]: value },
  });
  const posture = (build: (value: unknown) => unknown) => (value: unknown) => ({
    client: 'device' as const,
    method: 'POST',
    path: ROUTES.postures,
    json: { results: [build(value)] },
  });
  const adminGet = (path: string) => (piece: string) => ({ client: 'admin' as const, method: 'GET', path: path.replace('$', piece) });
  const consoleGet = (path: string) => (piece: string) => ({ client: 'console' as const, method: 'GET', path: path.replace('$', piece) });
  const created = (extra: (value: unknown) => Record<string, unknown>) => (value: unknown) => ({
    client: 'admin' as const,
    method: 'POST',
    path: `${ADMIN}/devices`,
    json: { org: 'acme', ...extra(value) },
  });
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const id = device.deviceId;
  return [
    // The agent API.
    { name: 'enroll token', body: (value) => ({ client: 'visitor', method: 'POST', path: ROUTES.enroll, json: { token: value } }) },
    ...['hardware_uuid', 'serial_number', 'hostname', 'platform', 'os_version', 'agent_version'].map((field) => ({
      name: `heartbeat ${field}`,
      body: beat(field),
    })),
    { name: 'postures check_key', body: posture((value) => result({ check_key: value as string })) },
    { name: 'postures status', body: posture((value) => result({ status: value as 'PASS' })) },
    { name: 'postures observed_at', body: posture((value) => result({ observed_at: value as string })) },
    { name: 'postures correlation_id', body: posture((value) => ({ ...result(), correlation_id: value })) },
    { name: 'postures evidence value', body: posture((value) => result({ evidence: { value } })) },
    { name: 'postures evidence key', body: posture((value) => result({ evidence: { [text(value)]: 1 } })) },
    { name: 'postures results', body: (value) => ({ client: 'device', method: 'POST', path: ROUTES.postures, json: { results: value } }) },
    { name: 'health query', url: (piece) => ({ client: 'visitor', method: 'GET', path: `/healthz?x=${piece}` }) },
    { name: 'readiness query', url: (piece) => ({ client: 'visitor', method: 'GET', path: `/readyz?x=${piece}` }) },
    { name: 'metrics query', url: (piece) => ({ client: 'visitor', method: 'GET', path: `/metrics?x=${piece}` }) },
    { name: 'unknown agent path', url: (piece) => ({ client: 'device', method: 'POST', path: `/api/agent/v1/${piece}` }) },
    // The admin API.
    ...ADMIN_LIST.map((parameter) => ({ name: `admin device list ${parameter}`, url: adminGet(`${ADMIN}/devices?${parameter}=$`) })),
    {
      name: 'admin device create org',
      body: (value) => ({ client: 'admin', method: 'POST', path: `${ADMIN}/devices`, json: { org: value } }),
    },
    { name: 'admin device create name', body: created((value) => ({ name: value })) },
    { name: 'admin device create token_ttl_seconds', body: created((value) => ({ token_ttl_seconds: value })) },
    { name: 'admin device create, unknown field', body: created((value) => ({ [text(value)]: value })) },
    { name: 'admin device', url: adminGet(`${ADMIN}/devices/$`) },
    { name: 'admin device history path', url: adminGet(`${ADMIN}/devices/$/history`) },
    ...['check', 'before', 'limit'].map((parameter) => ({
      name: `admin device history ${parameter}`,
      url: adminGet(`${ADMIN}/devices/${id}/history?${parameter}=$`),
    })),
    { name: 'admin device revoke', url: (piece) => ({ client: 'admin', method: 'POST', path: `${ADMIN}/devices/${piece}/revoke` }) },
    { name: 'admin compliance org', url: adminGet(`${ADMIN}/compliance?org=$`) },
    { name: 'admin compliance daily org', url: adminGet(`${ADMIN}/compliance/daily?org=$`) },
    { name: 'admin compliance daily days', url: adminGet(`${ADMIN}/compliance/daily?days=$`) },
    { name: 'admin failures org', url: adminGet(`${ADMIN}/failures?org=$`) },
    // The console.
    // The e-mail is looked up; the password only meets a hash (each attempt costs one: keep them few).
    {
      name: 'console sign-in email',
      form: (value) => ({
        client: 'visitor',
        method: 'POST',
        path: '/console/sign-in',
        form: { email: value, password: 'not the password' },
      }),
    },
    { name: 'console overview org', url: consoleGet('/console/overview?org=$') },
    ...ADMIN_LIST.filter((p) => p !== 'limit').map((parameter) => ({
      name: `console devices ${parameter}`,
      url: consoleGet(`/console/devices?${parameter}=$`),
    })),
    { name: 'console device', url: consoleGet('/console/devices/$') },
    ...['check', 'before'].map((parameter) => ({
      name: `console device ${parameter}`,
      url: consoleGet(`/console/devices/${id}?${parameter}=$`),
    })),
    { name: 'console revoke page', url: consoleGet('/console/devices/$/revoke') },
    {
      name: 'console revoke',
      url: (piece) => ({ client: 'console', method: 'POST', path: `/console/devices/${piece}/revoke`, form: { confirm: 'yes' } }),
    },
    ...['org', 'name', 'ttl'].map((field) => ({
      name: `console enroll ${field}`,
      form: (value: string) => ({
        client: 'console' as const,
        method: 'POST',
        path: '/console/enroll',
        form: { org: 'acme', ttl: '1h', [field]: value },
      }),
    })),
    { name: 'unknown console path', url: consoleGet('/console/$') },
  ];
}

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ args: [...NO_RATE_LIMITS, '--rate-limit-sign-ins', '0', '--log-level', 'debug'] });
});
afterAll(async () => {
  await server?.stop();
});

describe('malformed input on every route', () => {
  test('is answered 4xx (or accepted), never 5xx, the same on every engine, and logs no stack trace', async () => {
    const device = await enrolledDevice(server);
    const { admin_token: adminToken } = await createAdminToken(server, { allOrgs: true });
    const email = 'admin@example.com';
    const password = 'a long enough password for tests';
    expect((await addAccount(server, email, { allOrgs: true }, password)).code).toBe(0);
    const console = new ConsoleClient(server);
    expect((await console.signIn(email, password)).status).toBe(303);
    const consoleCsrf = await console.csrfToken('/console/enroll');
    const visitor = new ConsoleClient(server);
    const visitorCsrf = await visitor.csrfToken('/console/sign-in');

    async function send(probe: Probe): Promise<number | undefined> {
      try {
        if (probe.client === 'console' || (probe.client === 'visitor' && probe.form)) {
          const client = probe.client === 'console' ? console : visitor;
          if (probe.method === 'GET') return (await client.get(probe.path)).status;
          return (await client.post(probe.path, { ...probe.form, _csrf: probe.client === 'console' ? consoleCsrf : visitorCsrf })).status;
        }
        const headers: Record<string, string> = probe.client === 'admin' ? { authorization: `Bearer ${adminToken}` } : {};
        const answer = await call(server, probe.path, {
          method: probe.method,
          headers,
          ...(probe.client === 'device' && { apiKey: device.apiKey }),
          ...(probe.json !== undefined && { json: probe.json }),
        });
        return answer.status;
      } catch (error) {
        // A value no HTTP client can put on the wire (undici refuses it) tests nothing here.
        if (error instanceof TypeError || (error as { code?: string }).code === 'UND_ERR_INVALID_ARG') return undefined;
        throw error;
      }
    }

    const failures: string[] = [];
    /** Per slot, the status of each probe in order ('-': not sendable). */
    const statuses: Record<string, string> = {};
    let sent = 0;
    const pieces = [...TEXTS.map((value) => encodeURIComponent(value)), ...RAW_URL_PIECES];
    for (const slot of slots(device)) {
      const probes = [
        ...(slot.url ? pieces.map(slot.url) : []),
        ...(slot.body ? JSON_VALUES.map(slot.body) : []),
        ...(slot.form ? TEXTS.map(slot.form) : []),
      ];
      const answers: string[] = [];
      for (const probe of probes) {
        const status = await send(probe);
        answers.push(String(status ?? '-'));
        if (status === undefined) continue;
        sent += 1;
        if (status >= 500) failures.push(`${slot.name}: ${status} for ${JSON.stringify(probe).slice(0, 200)}`);
      }
      statuses[slot.name] = answers.join(' ');
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(2_000);
    await expect(`${JSON.stringify(statuses, null, 2)}\n`).toMatchFileSnapshot('./malformedInput.statuses.json');

    // A check key is the device's text: "__proto__" (sent above) is counted like any other key, and
    // pollutes no object of the server (which would break its metrics, among others).
    const daily = await call(server, `${ADMIN}/compliance/daily?days=1`, {
      method: 'GET',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const [today] = daily.body?.days as { checks: Record<string, { PASS: number }> }[];
    expect(Object.hasOwn(today!.checks, '__proto__')).toBe(true);
    expect(today!.checks.__proto__!.PASS).toBeGreaterThan(0);
    expect((await call(server, '/metrics', { method: 'GET' })).status).toBe(200);

    // The admin CLI's ids meet the same rule (argv cannot carry a NUL; control characters it can):
    // exit 2 with the id's form, the value not echoed, on every engine.
    for (const [command, value] of [
      ['device show', '\u0001\u001b[2J\u0007'],
      ['device revoke', '\u009b31m'],
      ['device show', `dev_${'F'.repeat(32)}`],
      ['device revoke', `dev_${'f'.repeat(4_000)}`],
      ['token revoke', '\u001b]52;c;aGk=\u0007'],
    ] as const) {
      const outcome = await tryServerCli([...command.split(' '), value, '--db', server.dbPath]);
      expect(outcome.code, `${command} ${JSON.stringify(value)}`).toBe(2);
      const what = command === 'token revoke' ? 'admin token: a token id is "adt_"' : 'device: a device id is "dev_"';
      expect(outcome.stderr).toBe(`device-agent-server: no such ${what} and 32 lowercase hexadecimal digits\n`);
    }

    // An email no account can have is never an account's: `admin add` refuses it (C0 and C1 alike;
    // argv cannot carry a NUL), and a sign-in with it is counted by the account's delay like any
    // other, so its answers tell nothing an unknown email's would not: 5 free attempts, then 429.
    for (const invalid of ['a\u0001b@example.com', 'a\u0085b@example.com']) {
      const refused = await addAccount(server, invalid, { allOrgs: true }, password);
      expect(refused.code, JSON.stringify(invalid)).toBe(2);
      expect(refused.stderr).toMatch(/--email must be an email address/);
    }
    const attempts: number[] = [];
    for (let i = 0; i < 6; i += 1) attempts.push((await visitor.signIn('x\u0000@example.com', 'not the password')).status);
    expect(attempts).toEqual([401, 401, 401, 401, 401, 429]);

    const logs = server.logs();
    expect(logEntries(logs).filter((line) => line.msg === 'request failed')).toEqual([]);
    expect(logEntries(logs).filter((line) => line.msg?.startsWith('the database refused a value'))).toEqual([]);
    expect(logs).not.toMatch(/"stack"|\n\s+at /);
  }, 300_000);
});

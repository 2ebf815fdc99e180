// The admin API (/api/admin/v1) over real HTTP against the real server: every route, its filters and
// pagination, admin token scopes and tenancy (a credential of one organization never reads or
// changes another's devices), and the console session as the other way in (with its CSRF token).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, runServerCli, startServer, type RunningServer } from '../support/server';
import {
  call,
  enroll,
  enrolledDevice,
  expectError,
  heartbeat,
  heartbeatBody,
  postures,
  result,
  type Answer,
  type EnrolledDevice,
} from './client';
import type { ComplianceSummary, DevicePage, DeviceView, PostureHistory } from '../../src/server/admin';
import type { FleetFailure } from '../../src/server/remediation';

const API = '/api/admin/v1';
let server: RunningServer;
let acmeToken: string;
let globexToken: string;
let allToken: string;
let acmeFailing: EnrolledDevice;
let acmePassing: EnrolledDevice;
let globexDevice: EnrolledDevice;

const api = (path: string, token: string, options: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) =>
  call(server, `${API}${path}`, {
    method: options.method ?? 'GET',
    json: options.json,
    headers: { authorization: `Bearer ${token}`, ...options.headers },
  });

function body<T>(answer: Answer): T {
  expect(answer.status, answer.text).toBeLessThan(300);
  return parseJson<T>(answer.text);
}

beforeAll(async () => {
  server = await startServer({ args: NO_RATE_LIMITS });
  const tokens = await Promise.all([
    createAdminToken(server, { org: 'acme' }),
    createAdminToken(server, { org: 'globex' }),
    createAdminToken(server, { allOrgs: true }),
  ]);
  [acmeToken, globexToken, allToken] = tokens.map((t) => t.admin_token) as [string, string, string];
  [acmeFailing, acmePassing, globexDevice] = await Promise.all([
    enrolledDevice(server, { org: 'acme' }),
    enrolledDevice(server, { org: 'acme' }),
    enrolledDevice(server, { org: 'globex' }),
  ]);
  // Hostnames and platforms to filter on.
  await heartbeat(
    server,
    acmeFailing.apiKey,
    heartbeatBody({ hardware_uuid: acmeFailing.hardwareUuid, hostname: 'build-01.acme', platform: 'LINUX' }),
  );
  await heartbeat(
    server,
    acmePassing.apiKey,
    heartbeatBody({ hardware_uuid: acmePassing.hardwareUuid, hostname: 'mac-alice', platform: 'DARWIN', os_version: '14.5' }),
  );
  // FIREWALL_ENABLED failed first, then passed, then failed again: the latest result decides.
  for (const status of ['FAIL', 'PASS', 'FAIL'] as const) {
    const answer = await postures(server, acmeFailing.apiKey, {
      results: [
        result({
          check_key: 'FIREWALL_ENABLED',
          status,
          evidence: status === 'FAIL' ? { rule: 'no_inbound_filtering' } : { rule: 'ufw_active' },
        }),
        result({ check_key: 'DISK_ENCRYPTION', status: 'PASS', evidence: { rule: 'root_encrypted' } }),
      ],
    });
    expect(answer.status, answer.text).toBe(204);
  }
  // This device failed FIREWALL_ENABLED once and passes now.
  for (const status of ['FAIL', 'PASS'] as const) {
    await postures(server, acmePassing.apiKey, {
      results: [result({ check_key: 'FIREWALL_ENABLED', status, evidence: { rule: status === 'FAIL' ? 'firewall_off' : 'firewall_on' } })],
    });
  }
  await postures(server, globexDevice.apiKey, {
    results: [result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'no_inbound_filtering' } })],
  });
  // The uploads' last-seen times are written with the next batch (within about 250 ms): a walk
  // sorted by last_seen_at needs the fleet at rest, not devices moving under the cursor.
  await sleep(750);
});
afterAll(async () => {
  await server?.stop();
});

const ids = (page: DevicePage) => page.devices.map((d) => d.device_id).sort();

// Sibling concurrent suites run together: the suites that only read come first and run at once,
// those that add devices or revoke run after them, one test at a time, so no walk or count
// sees the fleet change under it.
describe.concurrent('GET /devices', () => {
  test('an organization token lists its own devices only; an all-organizations token lists every one', async () => {
    expect(ids(body<DevicePage>(await api('/devices', acmeToken)))).toEqual([acmeFailing.deviceId, acmePassing.deviceId].sort());
    expect(ids(body<DevicePage>(await api('/devices', globexToken)))).toEqual([globexDevice.deviceId]);
    expect(ids(body<DevicePage>(await api('/devices', allToken)))).toEqual(
      [acmeFailing.deviceId, acmePassing.deviceId, globexDevice.deviceId].sort(),
    );
    // Naming the other organization finds nothing.
    expect(body<DevicePage>(await api('/devices?org=globex', acmeToken)).devices).toEqual([]);
    expect(ids(body<DevicePage>(await api('/devices?org=globex', allToken)))).toEqual([globexDevice.deviceId]);
  });

  test('filters: failing check by its latest result, any failing check, state, platform, hostname, last seen', async () => {
    expect(ids(body<DevicePage>(await api('/devices?failing=FIREWALL_ENABLED', acmeToken)))).toEqual([acmeFailing.deviceId]);
    expect(ids(body<DevicePage>(await api('/devices?failing=any', allToken)))).toEqual(
      [acmeFailing.deviceId, globexDevice.deviceId].sort(),
    );
    expect(body<DevicePage>(await api('/devices?failing=DISK_ENCRYPTION', acmeToken)).devices).toEqual([]);
    expect(ids(body<DevicePage>(await api('/devices?platform=darwin', acmeToken)))).toEqual([acmePassing.deviceId]);
    expect(ids(body<DevicePage>(await api('/devices?hostname=BUILD', acmeToken)))).toEqual([acmeFailing.deviceId]);
    expect(body<DevicePage>(await api('/devices?hostname=%25', acmeToken)).devices).toEqual([]);
    expect(ids(body<DevicePage>(await api('/devices?state=ACTIVE', acmeToken)))).toHaveLength(2);
    expect(body<DevicePage>(await api('/devices?state=PENDING', acmeToken)).devices).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(ids(body<DevicePage>(await api(`/devices?last_seen_before=${future}`, acmeToken)))).toHaveLength(2);
    expect(body<DevicePage>(await api(`/devices?last_seen_after=${future}`, acmeToken)).devices).toEqual([]);
  });

  test('keyset pagination walks every device once, in the order asked for', async () => {
    for (const [sort, order] of [
      ['created_at', 'asc'],
      ['hostname', 'desc'],
      ['last_seen_at', 'asc'],
    ]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: DevicePage = body<DevicePage>(
          await api(`/devices?limit=1&sort=${sort}&order=${order}${cursor ? `&cursor=${cursor}` : ''}`, allToken),
        );
        expect(page.devices.length).toBeLessThanOrEqual(1);
        seen.push(...page.devices.map((d) => d.device_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect([...seen].sort()).toEqual([acmeFailing.deviceId, acmePassing.deviceId, globexDevice.deviceId].sort());
      if (sort === 'hostname') {
        const all = body<DevicePage>(await api('/devices', allToken)).devices;
        const hostnames = seen.map((id) => all.find((d) => d.device_id === id)?.hostname ?? '');
        expect(hostnames).toEqual([...hostnames].sort().reverse());
      }
    }
  });

  test('bad parameters are 400 with the error body', async () => {
    for (const query of [
      'state=LOST',
      'platform=AMIGA',
      'failing=no such',
      'limit=0',
      'limit=501',
      'cursor=garbage',
      'sort=name',
      'unknown=1',
      'last_seen_before=yesterday',
      'state=ACTIVE&state=PENDING',
    ]) {
      expectError(await api(`/devices?${query}`, acmeToken), 400, 'bad_request');
    }
    const first = body<DevicePage>(await api('/devices?limit=1', allToken));
    // A cursor of another sort order is refused instead of skipping rows.
    expectError(await api(`/devices?limit=1&sort=hostname&cursor=${first.next_cursor}`, allToken), 400, 'bad_request');
  });

  test('a tampered cursor is refused for what is wrong in it, alike on every engine', async () => {
    const first = body<DevicePage>(await api('/devices?limit=1', allToken));
    const id = first.devices[0]!.device_id;
    const tampered = (sort: string, value: string, deviceId = id) =>
      Buffer.from(JSON.stringify([sort, 'asc', value, deviceId])).toString('base64url');
    const refusal = async (sort: string, cursor: string) => {
      const answer = await api(`/devices?limit=1&sort=${sort}&cursor=${cursor}`, allToken);
      expectError(answer, 400, 'bad_request');
      return answer.body?.message;
    };
    // A timestamp part that is not a timestamp (PostgreSQL once read it as -infinity and started over; SQLite compared it as text).
    for (const value of ['yesterday', '', '2026-11-24', '2026-11-24T10:00:00Z']) {
      expect(await refusal('created_at', tampered('created_at', value))).toBe(
        'cursor is not one this server handed out (its created_at is not a timestamp); start again without it',
      );
    }
    expect(await refusal('last_seen_at', tampered('last_seen_at', '9999-99-99T00:00:00.000Z'))).toBe(
      'cursor is not one this server handed out (its last_seen_at is neither a timestamp nor empty); start again without it',
    );
    expect(await refusal('hostname', tampered('hostname', 'host\u0000name'))).toBe(
      'cursor is not one this server handed out (its hostname is not one a device can report); start again without it',
    );
    expect(await refusal('created_at', tampered('created_at', first.devices[0]!.created_at, 'dev_\u0000'))).toBe(
      'cursor is not one this server handed out (its device id is malformed); start again without it',
    );
    // The values the server hands out itself still page: a device never seen sorts first by last_seen_at.
    const created = body<DevicePage>(
      await api(`/devices?limit=1&cursor=${tampered('created_at', first.devices[0]!.created_at)}`, allToken),
    );
    expect(created.devices.map((d) => d.device_id)).not.toContain(id);
    const neverSeen = body<DevicePage>(await api(`/devices?limit=5&sort=last_seen_at&cursor=${tampered('last_seen_at', '')}`, allToken));
    expect(neverSeen.devices.length).toBeGreaterThan(0);
  });
});

describe.concurrent('GET /devices/:id and /history', () => {
  test('the device with the latest result of each check and its remediation', async () => {
    const device = body<DeviceView>(await api(`/devices/${acmeFailing.deviceId}`, acmeToken));
    expect(device).toMatchObject({
      device_id: acmeFailing.deviceId,
      org: 'acme',
      state: 'ACTIVE',
      hostname: 'build-01.acme',
      platform: 'LINUX',
    });
    expect(device.latest.map((r) => [r.check_key, r.status])).toEqual([
      ['DISK_ENCRYPTION', 'PASS'],
      ['FIREWALL_ENABLED', 'FAIL'],
    ]);
    const firewall = device.latest.find((r) => r.check_key === 'FIREWALL_ENABLED')!;
    expect(firewall.remediation).toMatchObject({ word: 'no_inbound_filtering', generic: false });
    // The same texts as the CLI's device show (one service layer, one catalogue).
    const shown = await server.showDevice(acmeFailing.deviceId);
    expect(
      shown.postures.at(-1)?.check_key === 'DISK_ENCRYPTION' ? shown.postures.at(-2)?.remediation : shown.postures.at(-1)?.remediation,
    ).toEqual(firewall.remediation);
  });

  test('history: newest first, per check, paged with before', async () => {
    const all = body<PostureHistory>(await api(`/devices/${acmeFailing.deviceId}/history`, acmeToken));
    expect(all.results).toHaveLength(6);
    expect(all.results.map((r) => r.id)).toEqual([...all.results.map((r) => r.id)].sort((a, b) => b - a));
    const firewall = body<PostureHistory>(await api(`/devices/${acmeFailing.deviceId}/history?check=FIREWALL_ENABLED&limit=2`, acmeToken));
    expect(firewall.results.map((r) => r.status)).toEqual(['FAIL', 'PASS']);
    expect(firewall.next_before).not.toBeNull();
    const older = body<PostureHistory>(
      await api(`/devices/${acmeFailing.deviceId}/history?check=FIREWALL_ENABLED&limit=2&before=${firewall.next_before}`, acmeToken),
    );
    expect(older.results.map((r) => r.status)).toEqual(['FAIL']);
    expect(older.next_before).toBeNull();
  });

  test("another organization's device is answered exactly like a missing one", async () => {
    for (const path of [`/devices/${globexDevice.deviceId}`, `/devices/${globexDevice.deviceId}/history`]) {
      const foreign = await api(path, acmeToken);
      expectError(foreign, 404, 'not_found');
      const missing = await api(path.replace(globexDevice.deviceId, 'dev_00000000000000000000000000000000'), acmeToken);
      expect(foreign.body?.message).toBe(
        String(missing.body?.message).replace('dev_00000000000000000000000000000000', globexDevice.deviceId),
      );
      expect(body<object>(await api(path, allToken))).toBeTruthy();
    }
  });
});

describe.concurrent('compliance', () => {
  test('summary per check by latest result; scoped to the credential; another organization is 404', async () => {
    const summary = body<ComplianceSummary>(await api('/compliance', acmeToken));
    expect(summary.presence).toMatchObject({ active: 2, stale: 0, offline: 0 });
    expect(summary.devices.by_platform).toMatchObject({ LINUX: 1, DARWIN: 1 });
    expect(summary.checks.find((c) => c.check_key === 'FIREWALL_ENABLED')).toEqual({
      check_key: 'FIREWALL_ENABLED',
      PASS: 1,
      FAIL: 1,
      UNKNOWN: 0,
      NOT_APPLICABLE: 0,
      EXCEPTED: 0,
      MISSING: 0,
      STALE: 0,
      IN_GRACE: 0,
    });
    expect(summary.checks.find((c) => c.check_key === 'DISK_ENCRYPTION')).toMatchObject({ PASS: 1, MISSING: 1, STALE: 0 });
    expectError(await api('/compliance?org=globex', acmeToken), 404, 'not_found');
    expect(body<ComplianceSummary>(await api('/compliance?org=globex', allToken)).checks).toEqual([
      { check_key: 'FIREWALL_ENABLED', PASS: 0, FAIL: 1, UNKNOWN: 0, NOT_APPLICABLE: 0, EXCEPTED: 0, MISSING: 0, STALE: 0, IN_GRACE: 0 },
    ]);
  });

  test('daily series: one entry per day, today holding each device’s last result of each check', async () => {
    const series = body<{ days: { day: string; checks: Record<string, Record<string, number>>; pass_ratio: number | null }[] }>(
      await api('/compliance/daily?days=7', acmeToken),
    );
    expect(series.days).toHaveLength(7);
    const today = series.days.at(-1)!;
    expect(today.day).toBe(new Date().toISOString().slice(0, 10));
    expect(today.checks.FIREWALL_ENABLED).toEqual({ PASS: 1, FAIL: 1, UNKNOWN: 0, NOT_APPLICABLE: 0 });
    expect(today.pass_ratio).toBeCloseTo(2 / 3);
    expect(series.days[0]!.pass_ratio).toBeNull();
    expectError(await api('/compliance/daily?org=globex', acmeToken), 404, 'not_found');
    expectError(await api('/compliance/daily?days=0', acmeToken), 400, 'bad_request');
  });

  test('failures: the same as `device failing --json`, within the scope', async () => {
    const { failures } = body<{ failures: FleetFailure[] }>(await api('/failures', acmeToken));
    expect(failures.map((f) => [f.check_key, f.word, f.devices])).toEqual([
      ['FIREWALL_ENABLED', 'no_inbound_filtering', [acmeFailing.deviceId]],
    ]);
    const cli = parseJson<FleetFailure[]>(
      (await runServerCli(['device', 'failing', '--db', server.dbPath, '--org', 'acme', '--json'])).stdout,
    );
    expect(failures).toEqual(cli);
    expectError(await api('/failures?org=globex', acmeToken), 404, 'not_found');
  });
});

describe.concurrent('the CLI and the API agree', () => {
  test('`device list` with filters lists what GET /devices lists (one service layer)', async () => {
    for (const [flags, query] of [
      [['--org', 'acme', '--failing', 'FIREWALL_ENABLED'], 'org=acme&failing=FIREWALL_ENABLED'],
      [['--failing', 'any', '--state', 'active'], 'failing=any&state=ACTIVE'],
      [['--platform', 'DARWIN', '--hostname', 'alice'], 'platform=DARWIN&hostname=alice'],
    ] as const) {
      const cli = parseJson<{ device_id: string }[]>(
        (await runServerCli(['device', 'list', '--db', server.dbPath, '--json', ...flags])).stdout,
      );
      const listed = ids(body<DevicePage>(await api(`/devices?${query}`, allToken)));
      expect(listed.length).toBeGreaterThan(0);
      expect(cli.map((d) => d.device_id).sort()).toEqual(listed);
    }
  });
});

describe('POST /devices and /devices/:id/revoke', () => {
  test('creates a device in its own organization, and returns the token that enrolls it', async () => {
    const answer = await api('/devices', acmeToken, {
      method: 'POST',
      json: { org: 'acme', name: 'from the API', token_ttl_seconds: 3600 },
    });
    expect(answer.status, answer.text).toBe(201);
    const created = parseJson<{ device_id: string; enrollment_token: string; enrollment_link: string; token_expires_at: string }>(
      answer.text,
    );
    expect(created.enrollment_link).toContain(created.enrollment_token);
    expect(Date.parse(created.token_expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await enroll(server, created.enrollment_token)).status).toBe(200);
    expect(body<DeviceView>(await api(`/devices/${created.device_id}`, acmeToken)).name).toBe('from the API');
  });

  test('a token of one organization cannot create devices in another; bad bodies are 400', async () => {
    expectError(await api('/devices', acmeToken, { method: 'POST', json: { org: 'globex' } }), 404, 'not_found');
    expect(body<DevicePage>(await api('/devices?state=PENDING', globexToken)).devices).toEqual([]);
    for (const json of [
      {},
      { org: 7 },
      { org: 'acme', extra: 1 },
      { org: 'acme', token_ttl_seconds: 0 },
      { org: 'acme', token_ttl_seconds: 1.5 },
      { org: '' },
      [],
    ]) {
      expectError(await api('/devices', acmeToken, { method: 'POST', json }), 400, 'bad_request');
    }
    const created = await api('/devices', allToken, { method: 'POST', json: { org: 'initech' } });
    expect(created.status, created.text).toBe(201);
  });

  test("revokes its own organization's device (its key stops working), never another's", async () => {
    const victim = await enrolledDevice(server, { org: 'globex' });
    expectError(await api(`/devices/${victim.deviceId}/revoke`, acmeToken, { method: 'POST' }), 404, 'not_found');
    expect((await heartbeat(server, victim.apiKey, heartbeatBody({ hardware_uuid: victim.hardwareUuid }))).status).toBe(200);
    expect(body<{ outcome: string }>(await api(`/devices/${victim.deviceId}/revoke`, globexToken, { method: 'POST' })).outcome).toBe(
      'revoked',
    );
    expect(body<{ outcome: string }>(await api(`/devices/${victim.deviceId}/revoke`, globexToken, { method: 'POST' })).outcome).toBe(
      'already_revoked',
    );
    expect((await heartbeat(server, victim.apiKey, heartbeatBody({ hardware_uuid: victim.hardwareUuid }))).status).toBe(401);
  });
});

describe('authentication', () => {
  test('no credential, a malformed or unknown token, or a device API key: 401 with the Bearer challenge', async () => {
    const none = await call(server, `${API}/devices`, { method: 'GET' });
    expectError(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    for (const token of ['nonsense', `dat_${'0'.repeat(96)}`, acmeFailing.apiKey])
      expectError(await api('/devices', token), 401, 'unauthorized');
  });

  test('an unknown admin path or method: 404 with the error body, before authentication', async () => {
    const unknown = await call(server, `${API}/nothing`, { method: 'GET' });
    expectError(unknown, 404, 'not_found');
    expect(unknown.body?.message).toContain('/api/admin/v1');
    expectError(await api(`/devices/${acmeFailing.deviceId}`, acmeToken, { method: 'DELETE' }), 404, 'not_found');
  });

  test('a revoked admin token stops working at once', async () => {
    const { token_id, admin_token } = await createAdminToken(server, { org: 'acme' }, 'short-lived');
    expect((await api('/devices', admin_token)).status).toBe(200);
    await runServerCli(['token', 'revoke', token_id, '--db', server.dbPath]);
    expectError(await api('/devices', admin_token), 401, 'unauthorized');
    // Tokens are listed without their secret.
    const listed = (await runServerCli(['token', 'list', '--db', server.dbPath, '--json'])).stdout;
    expect(listed).toContain(token_id);
    expect(listed).not.toMatch(/[0-9a-f]{96}/);
  });

  test('the console session reaches its own organization; changes need the CSRF token', async () => {
    expect((await addAccount(server, 'api-user@acme.test', { org: 'acme' }, 'api user password 1')).code).toBe(0);
    const client = new ConsoleClient(server);
    expect((await client.signIn('api-user@acme.test', 'api user password 1')).status).toBe(303);
    const list = parseJson<DevicePage>((await client.get(`${API}/devices`)).text);
    expect(list.devices.every((d) => d.org === 'acme')).toBe(true);
    expect((await client.get(`${API}/devices/${globexDevice.deviceId}`)).status).toBe(404);
    const json = JSON.stringify({ org: 'acme' });
    const refused = await client.send('POST', `${API}/devices`, json, { 'content-type': 'application/json' });
    expect(refused.status, refused.text).toBe(403);
    expect(parseJson<{ error: string }>(refused.text).error).toBe('forbidden');
    const csrf = await client.csrfToken('/console/overview');
    const created = await client.send('POST', `${API}/devices`, json, { 'content-type': 'application/json', 'x-csrf-token': csrf });
    expect(created.status, created.text).toBe(201);
  });
});

// The server policy (docs/server.md, "Policy") over the real server and its admin CLI, on every
// engine: set, show and history through the CLI and the admin API, refusals that store nothing,
// the heartbeat's policy_version and POST /policy served from memory yet following changes made by
// other processes, lifecycle import, and `serve --no-policy` (the spec's server: no extra field, no route).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { linuxLifecycle } from '../../checks/linux/lifecycle';
import { EXTENSION_ROUTES, type PolicyResponse } from '../../src/protocol/schemas';
import type { LifecycleVersionView, PolicyChangeView, PolicyView } from '../../src/server/policy';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, runServerCli, startServer, tryServerCli, type RunningServer } from '../support/server';
import type { ComplianceSummary, DeviceView } from '../../src/server/admin';
import type { ExceptionView } from '../../src/server/exceptions';
import { until } from '../support/agent';
import {
  call,
  createSecret,
  enroll,
  enrolledDevice,
  expectError,
  heartbeat,
  heartbeatBody,
  postures,
  register,
  result,
  type EnrolledDevice,
} from './client';

const API = '/api/admin/v1';
let server: RunningServer;
let device: EnrolledDevice;
let acmeToken: string;
let globexToken: string;

beforeAll(async () => {
  server = await startServer({ args: NO_RATE_LIMITS });
  device = await enrolledDevice(server, { org: 'acme' });
  await server.createDevice({ org: 'globex' });
  acmeToken = (await createAdminToken(server, { org: 'acme' })).admin_token;
  globexToken = (await createAdminToken(server, { org: 'globex' })).admin_token;
});
afterAll(async () => {
  await server?.stop();
});

function policyFile(name: string, content: unknown): string {
  const file = join(server.dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const cli = (args: readonly string[]) => tryServerCli([...args, '--db', server.dbPath]);
const api = (path: string, token: string, options: { method?: string; json?: unknown } = {}) =>
  call(server, `${API}${path}`, { method: options.method ?? 'GET', json: options.json, headers: { authorization: `Bearer ${token}` } });

async function history(org: string): Promise<PolicyChangeView[]> {
  return parseJson<PolicyChangeView[]>((await runServerCli(['policy', 'history', '--db', server.dbPath, '--org', org, '--json'])).stdout);
}

async function policyVersion(apiKey: string): Promise<unknown> {
  const answer = await heartbeat(server, apiKey);
  expect(answer.status, answer.text).toBe(200);
  return answer.body?.policy_version;
}

async function served(apiKey: string, platform = 'LINUX'): Promise<PolicyResponse> {
  const answer = await call(server, EXTENSION_ROUTES.policy, { apiKey, json: { platform } });
  expect(answer.status, answer.text).toBe(200);
  return parseJson<PolicyResponse>(answer.text);
}

describe('policy set|show|history (admin CLI)', () => {
  test('a valid policy is stored as the next version; history says who changed which settings', async () => {
    const before = await policyVersion(device.apiKey);
    expect(before).toBe('0.0');
    const file = policyFile('first.json', { screenLock: { maxIdleSeconds: 300 }, checks: { disabled: ['FIREWALL_ENABLED'] } });
    const set = await cli(['policy', 'set', '--org', 'acme', '--file', file]);
    expect(set, set.stderr).toMatchObject({ code: 0, stdout: 'Policy of acme is now version 1.\n' });
    const second = policyFile('second.json', { screenLock: { maxIdleSeconds: 600 }, checks: { disabled: ['FIREWALL_ENABLED'] } });
    expect((await cli(['policy', 'set', '--org', 'acme', '--file', second])).code).toBe(0);

    const view = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout);
    expect(view).toMatchObject({ org: 'acme', version: 2, label: null, document: { screenLock: { maxIdleSeconds: 600 } }, labels: [] });
    expect(view.effective.screenLock).toEqual({ maxIdleSeconds: 600, maxGraceSeconds: 5 });
    expect(view.effective.password.minLength).toBe(8);

    const changes = await history('acme');
    expect(changes.map((c) => [c.version, c.changed])).toEqual([
      [2, ['screenLock.maxIdleSeconds']],
      [1, ['checks', 'screenLock']],
    ]);
    expect(changes[0]!.changed_by).toMatch(/^cli(:.+)?$/);
    expect(Date.parse(changes[0]!.changed_at)).toBeGreaterThan(Date.now() - 600_000);
    const text = (await cli(['policy', 'history', '--org', 'acme'])).stdout;
    expect(text).toMatch(/^VERSION +LABEL +CHANGED AT +BY +WHAT CHANGED\n2 +- +\S+ \S+ UTC +cli\S* +screenLock\.maxIdleSeconds\n1 /);
  });

  test.each([
    ['an unknown setting', { screenLock: { maxIdleSecs: 60 } }, 'invalid policy at screenLock.maxIdleSecs: unknown setting'],
    ['a value out of range', { password: { minLength: 0 } }, 'invalid policy at password.minLength: Too small: expected number to be >0'],
    ['an unknown check', { checks: { disabled: ['FIREWALL'] } }, 'invalid policy at checks.disabled.0: Invalid option'],
    ['the served lifecycle field', { osVersion: { lifecycleData: {} } }, 'invalid policy at osVersion.lifecycleData'],
    ['not an object', [1], 'invalid policy at (root): expected a JSON object'],
  ])('%s is refused with the setting and why (exit 2), and nothing is stored', async (_what, document, message) => {
    const before = await history('acme');
    const outcome = await cli(['policy', 'set', '--org', 'acme', '--file', policyFile('bad.json', document)]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`device-agent-server: ${message}`);
    expect(await history('acme')).toEqual(before);
  });

  test('a file that is not JSON, and neither or both of --file and --reset, are usage errors', async () => {
    expect(await cli(['policy', 'set', '--org', 'acme', '--file', policyFile('broken.json', '{"password":')])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not valid JSON') as string,
    });
    expect((await cli(['policy', 'set', '--org', 'acme'])).stderr).toContain('give either --file <policy.json> or --reset');
    expect((await cli(['policy', 'show', '--org', 'acme', '--label', 'no label'])).code).toBe(2);
  });

  test('a label refinement is versioned with the organization and shown merged over it', async () => {
    const file = policyFile('label.json', { screenLock: { maxGraceSeconds: 0 } });
    expect((await cli(['policy', 'set', '--org', 'acme', '--label', 'team=dev', '--file', file])).code).toBe(0);
    const view = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--label', 'team=dev', '--json'])).stdout);
    expect(view).toMatchObject({ version: 3, label: 'team=dev', document: { screenLock: { maxGraceSeconds: 0 } }, labels: ['team=dev'] });
    expect(view.effective.screenLock).toEqual({ maxIdleSeconds: 600, maxGraceSeconds: 0 });
    expect((await cli(['policy', 'set', '--org', 'acme', '--label', 'team=dev', '--reset'])).code).toBe(0);
    const [removal] = await history('acme');
    expect(removal).toMatchObject({ version: 4, label: 'team=dev', removed: true, changed: ['screenLock'], document: null });
  });
});

describe('the admin API', () => {
  test('GET and PUT /policy within the token’s organization; PUT records the token as the author', async () => {
    const shown = await api('/policy?org=acme', acmeToken);
    expect(shown.status, shown.text).toBe(200);
    const before = parseJson<PolicyView>(shown.text).version;
    expect(await policyVersion(device.apiKey)).toBe(`${before}.0`);
    const put = await api('/policy?org=acme', acmeToken, { method: 'PUT', json: { password: { minLength: 12 } } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ org: 'acme', label: null, version: before + 1 });
    // The server's own change (no other process committed) is served from the next request on.
    expect(await policyVersion(device.apiKey)).toBe(`${before + 1}.0`);
    expect((await served(device.apiKey)).policy).toEqual({ password: { minLength: 12 } });
    const changes = await api('/policy/history?org=acme&limit=1', acmeToken);
    expect(parseJson<{ changes: PolicyChangeView[] }>(changes.text).changes).toMatchObject([
      {
        version: before + 1,
        changed_by: expect.stringMatching(/^token:adt_/) as string,
        changed: expect.arrayContaining(['password']) as string[],
      },
    ]);
    expectError(await api('/policy?org=acme', globexToken), 404, 'not_found');
    expectError(await api('/policy?org=acme', globexToken, { method: 'PUT', json: {} }), 404, 'not_found');
  });

  test('an invalid policy is 400 with the setting and why, and nothing is stored', async () => {
    const before = await history('acme');
    const answer = await api('/policy?org=acme', acmeToken, { method: 'PUT', json: { osVersion: { graceDaysAfterEol: -1 } } });
    expectError(answer, 400, 'bad_request');
    expect(answer.body?.message).toMatch(/^invalid policy at osVersion\.graceDaysAfterEol: /);
    expectError(await api('/policy', acmeToken), 400, 'bad_request');
    expect(await history('acme')).toEqual(before);
  });
});

describe('delivery to agents', () => {
  test('policy_version follows changes made by another process; /policy serves the policy and the platform’s lifecycle data', async () => {
    const version = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout).version;
    expect(await policyVersion(device.apiKey)).toBe(`${version}.0`);
    const body = await served(device.apiKey);
    expect(body).toMatchObject({
      version,
      policy: { password: { minLength: 12 } },
      lifecycle: { version: 0, dataset: linuxLifecycle.dataset },
    });
    expect(body.lifecycle).toEqual({ version: 0, ...linuxLifecycle });
    expect((await served(device.apiKey, 'DARWIN')).lifecycle).toMatchObject({ products: { macos: expect.any(Array) as unknown[] } });

    expect((await cli(['policy', 'set', '--org', 'acme', '--file', policyFile('next.json', { password: { minLength: 14 } })])).code).toBe(
      0,
    );
    expect(await policyVersion(device.apiKey)).toBe(`${version + 1}.0`);
    expect((await served(device.apiKey)).policy).toEqual({ password: { minLength: 14 } });
  });

  test('/policy needs the API key and a platform', async () => {
    expectError(await call(server, EXTENSION_ROUTES.policy, { json: { platform: 'LINUX' } }), 401, 'unauthorized');
    expectError(await call(server, EXTENSION_ROUTES.policy, { apiKey: device.apiKey, json: { platform: 'BEOS' } }), 400, 'bad_request');
    // Another method is refused like on the other extension routes (405 with Allow), before the key is read.
    for (const method of ['GET', 'PUT', 'HEAD']) {
      const answer = await call(server, EXTENSION_ROUTES.policy, { method });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
    }
    expectError(await call(server, EXTENSION_ROUTES.policy, { method: 'GET', apiKey: device.apiKey }), 405, 'method_not_allowed');
  });

  test('lifecycle import: a newer data set is validated, versioned and served; an invalid one changes nothing', async () => {
    const bad = await cli([
      'lifecycle',
      'import',
      policyFile('bad-lifecycle.json', { LINUX: { ...linuxLifecycle, products: { debian: [{ cycle: '12', eol: 'soon' }] } } }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid lifecycle data at LINUX.products.debian.0.eol');
    expect((await cli(['lifecycle', 'import', policyFile('empty.json', {})])).stderr).toContain('invalid lifecycle data: no platform');
    const before = (await served(device.apiKey)).version;

    const newer = { ...linuxLifecycle, dataset: { ...linuxLifecycle.dataset, committedAt: '2026-11-01' } };
    const imported = await cli(['lifecycle', 'import', policyFile('lifecycle.json', { LINUX: newer }), '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(parseJson<LifecycleVersionView>(imported.stdout)).toMatchObject({
      version: 1,
      imported_by: expect.stringMatching(/^cli/) as string,
      platforms: { LINUX: { committed_at: '2026-11-01', built_in: false }, DARWIN: { built_in: true } },
    });
    expect(await policyVersion(device.apiKey)).toBe(`${before}.1`);
    expect((await served(device.apiKey)).lifecycle).toEqual({ version: 1, ...newer });
  });
});

describe('exceptions', () => {
  const diskCounts = async () => {
    const summary = parseJson<ComplianceSummary>((await api('/compliance?org=acme', acmeToken)).text);
    const disk = summary.checks.find((c) => c.check_key === 'DISK_ENCRYPTION')!;
    return { FAIL: disk.FAIL, EXCEPTED: disk.EXCEPTED };
  };
  const diskResult = async () =>
    parseJson<DeviceView>((await api(`/devices/${device.deviceId}`, acmeToken)).text).latest.find(
      (r) => r.check_key === 'DISK_ENCRYPTION',
    )!;

  test('a FAIL under an exception stays FAIL but shows excepted until its end, counts apart, and lapses by itself', async () => {
    const uploaded = await postures(server, device.apiKey, {
      results: [result({ check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'root_not_encrypted' } })],
    });
    expect(uploaded.status, uploaded.text).toBe(204);
    expect(await diskCounts()).toEqual({ FAIL: 1, EXCEPTED: 0 });

    const granted = await api('/exceptions?org=acme', acmeToken, {
      method: 'POST',
      json: {
        device_id: device.deviceId,
        check_key: 'DISK_ENCRYPTION',
        reason: 'encryption scheduled with the hardware refresh',
        expires: '4s',
      },
    });
    expect(granted.status, granted.text).toBe(201);
    const exception = parseJson<ExceptionView>(granted.text);
    expect(exception).toMatchObject({
      org: 'acme',
      device_id: device.deviceId,
      label: null,
      created_by: expect.stringMatching(/^token:/) as string,
    });
    expect(await diskResult()).toMatchObject({ status: 'FAIL', excepted_until: exception.expires_at });
    expect(await diskCounts()).toEqual({ FAIL: 0, EXCEPTED: 1 });
    const listed = await cli(['exception', 'list', '--org', 'acme', '--json']);
    expect(parseJson<ExceptionView[]>(listed.stdout)).toEqual([exception]);
    expect(parseJson<{ exceptions: ExceptionView[] }>((await api('/exceptions?org=globex', globexToken)).text).exceptions).toEqual([]);

    await until(diskCounts, (counts) => counts.FAIL === 1, 30_000, 'the exception to lapse');
    expect(await diskCounts()).toEqual({ FAIL: 1, EXCEPTED: 0 });
    expect((await diskResult()).excepted_until).toBeUndefined();
    expect((await cli(['exception', 'list', '--org', 'acme'])).stdout).toBe('No exceptions in force.\n');
  });

  test('bad exceptions are refused and store nothing; remove ends one now', async () => {
    const grant = (json: unknown, token = acmeToken) => api('/exceptions?org=acme', token, { method: 'POST', json });
    const valid = { device_id: device.deviceId, check_key: 'FIREWALL_ENABLED', reason: 'lab machine', expires: '30d' };
    expectError(await grant({ ...valid, expires: '2020-01-01' }), 400, 'bad_request');
    expectError(await grant({ ...valid, expires: '400d' }), 400, 'bad_request');
    expectError(await grant({ ...valid, reason: ' ' }), 400, 'bad_request');
    expectError(await grant({ ...valid, check_key: 'disk' }), 400, 'bad_request');
    expectError(await grant({ ...valid, label: 'team=dev' }), 400, 'bad_request');
    expectError(await grant({ ...valid, extra: 1 }), 400, 'bad_request');
    expectError(await grant(valid, globexToken), 404, 'not_found');
    expectError(await grant({ ...valid, device_id: 'dev_00000000000000000000000000000000' }), 404, 'not_found');
    expect(parseJson<{ exceptions: ExceptionView[] }>((await api('/exceptions?org=acme', acmeToken)).text).exceptions).toEqual([]);

    const added = await cli([
      'exception',
      'add',
      '--org',
      'acme',
      '--device',
      device.deviceId,
      '--check',
      'FIREWALL_ENABLED',
      '--reason',
      'lab',
      '--expires',
      '30d',
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const { exception_id: id } = parseJson<ExceptionView>(added.stdout);
    expectError(await api(`/exceptions/${id}?org=globex`, globexToken, { method: 'DELETE' }), 404, 'not_found');
    expect((await api(`/exceptions/${id}?org=acme`, acmeToken, { method: 'DELETE' })).status).toBe(204);
    expect((await cli(['exception', 'remove', id, '--org', 'acme'])).code).toBe(2);
  });
});

describe('the console’s policy form', () => {
  test('edits the common settings (POST, then 303 to the page), refuses an invalid value with why, and needs the CSRF token', async () => {
    expect((await addAccount(server, 'ops@acme.test', { org: 'acme' }, 'acme console password')).code).toBe(0);
    const client = new ConsoleClient(server);
    expect((await client.signIn('ops@acme.test', 'acme console password')).status).toBe(303);
    const form = await client.get('/console/policy');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<code>password.minLength</code>');
    expect(form.text).toMatch(/Debian LTS counts as support<\/td>\s*<td>false<\/td>/);
    const before = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout);
    const csrf = await client.csrfToken('/console/policy');
    const fields = {
      _csrf: csrf,
      'screenLock.maxIdleSeconds': '900',
      'screenLock.maxGraceSeconds': '5',
      'password.minLength': '10',
      'malware.maxSignatureAgeDays': '7',
      'osVersion.graceDaysAfterEol': '0',
      'osVersion.acceptExtendedSupport.debianLts': 'on',
      'disabled.TIME_SYNC': 'on',
      'checks.graceSeconds': '0',
    };
    expect(await policyVersion(device.apiKey)).toMatch(new RegExp(`^${before.version}\\.`));
    const saved = await client.post('/console/policy?org=acme', fields);
    expect(saved.status, saved.text).toBe(303);
    expect(saved.headers.location).toBe('/console/policy?org=acme');
    const after = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout);
    expect(after.version).toBe(before.version + 1);
    expect(await policyVersion(device.apiKey)).toMatch(new RegExp(`^${after.version}\\.`));
    expect(after.document).toEqual({
      password: { minLength: 10 },
      osVersion: { acceptExtendedSupport: { debianLts: true } },
      checks: { disabled: ['TIME_SYNC'] },
    });
    expect((await history('acme'))[0]!.changed_by).toBe('account:ops@acme.test');

    const refused = await client.post('/console/policy?org=acme', { ...fields, 'password.minLength': '0' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('invalid policy at password.minLength: Too small: expected number to be &gt;0');
    expect((await client.post('/console/policy?org=acme', { ...fields, _csrf: 'forged' })).status).toBe(403);
    expect(parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout).version).toBe(after.version);
  });

  test('sets the grace periods (checks.graceSeconds, one check’s own), shows them with meaning and default, refuses bad ones', async () => {
    const client = new ConsoleClient(server);
    expect((await client.signIn('ops@acme.test', 'acme console password')).status).toBe(303);
    const form = await client.get('/console/policy');
    expect(form.text).toMatch(
      /<code>checks\.graceSeconds<\/code><\/th>\s*<td><input type="number" min="0" step="1" name="checks\.graceSeconds" value="0"/,
    );
    expect(form.text).toMatch(
      /before it counts as failing \(overview, device list, webhooks\); at most 30 days; 0: none<\/td>\s*<td>0<\/td>/,
    );
    expect(form.text).toContain('name="grace.DISK_ENCRYPTION" value=""');
    const current = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout);
    const fields = {
      _csrf: await client.csrfToken('/console/policy'),
      'screenLock.maxIdleSeconds': '900',
      'screenLock.maxGraceSeconds': '5',
      'password.minLength': String(current.effective.password.minLength),
      'malware.maxSignatureAgeDays': '7',
      'osVersion.graceDaysAfterEol': '0',
      'checks.graceSeconds': '3600',
      'grace.DISK_ENCRYPTION': '86400',
      'grace.FIREWALL_ENABLED': ' ',
    };
    const saved = await client.post('/console/policy?org=acme', fields);
    expect(saved.status, saved.text).toBe(303);
    const after = parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout);
    expect(after.version).toBe(current.version + 1);
    expect(after.document.checks).toEqual({ graceSeconds: 3600, graceSecondsByCheck: { DISK_ENCRYPTION: 86400 } });
    const shown = (await client.get('/console/policy')).text;
    expect(shown).toContain('name="checks.graceSeconds" value="3600"');
    expect(shown).toContain('name="grace.DISK_ENCRYPTION" value="86400"');

    // Over 30 days, and not a number: refused with the setting and why, nothing stored.
    const tooLong = await client.post('/console/policy?org=acme', { ...fields, 'grace.DISK_ENCRYPTION': String(31 * 86_400) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain(
      'invalid policy at checks.graceSecondsByCheck.DISK_ENCRYPTION: Too big: expected number to be &lt;=2592000',
    );
    const notNumber = await client.post('/console/policy?org=acme', { ...fields, 'checks.graceSeconds': '1h' });
    expect(notNumber.status).toBe(400);
    expect(notNumber.text).toContain('invalid policy at checks.graceSeconds: expected a whole number');
    const badCheck = await client.post('/console/policy?org=acme', { ...fields, 'grace.SCREEN_LOCK': '-5' });
    expect(badCheck.text).toContain('invalid policy at checks.graceSecondsByCheck.SCREEN_LOCK: expected a whole number or nothing');
    expect(parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout).version).toBe(after.version);

    // Emptied: the per-check grace goes, and 0 is the default, so neither is stored.
    expect(
      (await client.post('/console/policy?org=acme', { ...fields, 'checks.graceSeconds': '0', 'grace.DISK_ENCRYPTION': '' })).status,
    ).toBe(303);
    expect(parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--json'])).stdout).document.checks).toBeUndefined();
  });
});

describe('the console’s exception forms', () => {
  test('grant for a device and for a label (POST, then 303 to the page), refuse bad input with why and store nothing, end one', async () => {
    expect((await addAccount(server, 'exceptions@acme.test', { org: 'acme' }, 'exceptions password')).code).toBe(0);
    const client = new ConsoleClient(server);
    expect((await client.signIn('exceptions@acme.test', 'exceptions password')).status).toBe(303);
    const listed = async () => parseJson<ExceptionView[]>((await cli(['exception', 'list', '--org', 'acme', '--json'])).stdout);
    const before = await listed();
    const devicePath = `/console/devices/${device.deviceId}`;
    const csrf = await client.csrfToken(devicePath);
    const fields = { _csrf: csrf, check: 'SCREEN_LOCK', reason: 'kiosk <b>display</b>', expires: '2020-01-01' };

    const refused = await client.post(`${devicePath}/exceptions`, fields);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('expires must be in the future');
    // What was typed comes back, as text.
    expect(refused.text).toContain('value="kiosk &lt;b&gt;display&lt;/b&gt;"');
    expect(refused.text).toContain('value="2020-01-01"');
    expect(refused.text).toMatch(/<option value="SCREEN_LOCK"\s+selected>/);
    expect((await client.post(`${devicePath}/exceptions`, { ...fields, expires: '30d', _csrf: 'forged' })).status).toBe(403);
    expect((await client.post(`${devicePath}/exceptions`, { ...fields, check: 'screen' })).status).toBe(400);
    expect(await listed()).toEqual(before);

    const granted = await client.post(`${devicePath}/exceptions`, { ...fields, expires: '30d' });
    expect(granted.status, granted.text).toBe(303);
    expect(granted.headers.location).toBe(`${devicePath}#exceptions`);
    const own = (await listed()).find((e) => !before.some((b) => b.exception_id === e.exception_id))!;
    expect(own).toMatchObject({ device_id: device.deviceId, check_key: 'SCREEN_LOCK', reason: 'kiosk <b>display</b>' });
    expect(own.created_by).toBe('account:exceptions@acme.test');
    expect((await client.get(devicePath)).text).toContain(`data-exception="${own.exception_id}"`);

    // A label's, from the policy page.
    const labelRefused = await client.post('/console/exceptions?org=acme', { ...fields, label: 'site', expires: '30d' });
    expect(labelRefused.status).toBe(400);
    expect(labelRefused.text).toContain('a label is key=value');
    expect(labelRefused.text).toContain('Policy of acme');
    const labelGranted = await client.post('/console/exceptions?org=acme', { ...fields, label: 'site=kiosk', expires: '7d' });
    expect(labelGranted.status, labelGranted.text).toBe(303);
    expect(labelGranted.headers.location).toBe('/console/policy?org=acme#exceptions');
    const byLabel = (await listed()).find((e) => e.label === 'site=kiosk')!;
    expect((await client.get('/console/policy')).text).toContain(`data-exception="${byLabel.exception_id}"`);

    // Ending one: back to the page it was ended from; an unknown one is 404 and ends nothing.
    const end = (id: string, form: Record<string, string>) => client.post(`/console/exceptions/${id}/remove`, { _csrf: csrf, ...form });
    expect((await end('exc_00000000000000000000000000000000', { org: 'acme' })).status).toBe(404);
    expect((await end(own.exception_id, { org: 'acme', device: device.deviceId, _csrf: 'forged' })).status).toBe(403);
    const ended = await end(own.exception_id, { org: 'acme', device: device.deviceId });
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe(`${devicePath}#exceptions`);
    const endedLabel = await end(byLabel.exception_id, { org: 'acme' });
    expect(endedLabel.headers.location).toBe('/console/policy?org=acme#exceptions');
    expect(await listed()).toEqual(before);
  });
});

describe('label refinements', () => {
  test('a device registered with a labelled secret is served the organization’s policy refined by its label; others are not', async () => {
    const secret = await createSecret(server, ['--label', 'team=lab'], 'labs');
    const identity = heartbeatBody();
    const registered = await register(server, secret.enroll_secret, identity);
    expect(registered.status, registered.text).toBe(200);
    const enrolled = await enroll(server, registered.body?.enrollment_token);
    const labelled = String(enrolled.body?.api_key);
    expect((await heartbeat(server, labelled, identity)).status).toBe(200);
    const plain = await enrolledDevice(server, { org: 'labs' });

    expect((await cli(['policy', 'set', '--org', 'labs', '--file', policyFile('labs.json', { password: { minLength: 10 } })])).code).toBe(
      0,
    );
    const refinement = policyFile('lab.json', { password: { requireComplexity: true }, checks: { disabled: ['REMOTE_LOGIN'] } });
    expect((await cli(['policy', 'set', '--org', 'labs', '--label', 'team=lab', '--file', refinement])).code).toBe(0);
    expect((await served(labelled)).policy).toEqual({
      password: { minLength: 10, requireComplexity: true },
      checks: { disabled: ['REMOTE_LOGIN'] },
    });
    expect((await served(plain.apiKey)).policy).toEqual({ password: { minLength: 10 } });
    expect(await policyVersion(labelled)).toBe(await policyVersion(plain.apiKey));
  });
});

describe('label exceptions', () => {
  /** A device of `org` registered with a secret that gives it `label`: its API key and id. */
  async function labelledDevice(org: string, label: string): Promise<{ apiKey: string; deviceId: string }> {
    const secret = await createSecret(server, ['--label', label], org);
    const identity = heartbeatBody();
    const registered = await register(server, secret.enroll_secret, identity);
    expect(registered.status, registered.text).toBe(200);
    const apiKey = String((await enroll(server, registered.body?.enrollment_token)).body?.api_key);
    const beat = await heartbeat(server, apiKey, identity);
    expect(beat.status, beat.text).toBe(200);
    return { apiKey, deviceId: String(beat.body?.device_id) };
  }
  const failDisk = async (apiKey: string) => {
    const uploaded = await postures(server, apiKey, {
      results: [result({ check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'root_not_encrypted' } })],
    });
    expect(uploaded.status, uploaded.text).toBe(204);
  };

  test('covers the devices of the organization carrying the label: shown excepted and counted apart, until it lapses', async () => {
    const covered = await labelledDevice('field', 'site=remote');
    const unlabelled = await enrolledDevice(server, { org: 'field' });
    const elsewhere = await labelledDevice('acme', 'site=remote');
    for (const apiKey of [covered.apiKey, unlabelled.apiKey, elsewhere.apiKey]) await failDisk(apiKey);
    const fieldToken = (await createAdminToken(server, { org: 'field' })).admin_token;
    const counts = async () => {
      const summary = parseJson<ComplianceSummary>((await api('/compliance?org=field', fieldToken)).text);
      const disk = summary.checks.find((c) => c.check_key === 'DISK_ENCRYPTION')!;
      return { FAIL: disk.FAIL, EXCEPTED: disk.EXCEPTED };
    };
    const exceptedUntil = async (deviceId: string, token: string) =>
      parseJson<DeviceView>((await api(`/devices/${deviceId}`, token)).text).latest.find((r) => r.check_key === 'DISK_ENCRYPTION')!
        .excepted_until;
    expect(await counts()).toEqual({ FAIL: 2, EXCEPTED: 0 });

    const granted = await cli([
      ...['exception', 'add', '--org', 'field', '--label', 'site=remote', '--check', 'DISK_ENCRYPTION'],
      ...['--reason', 'remote site, encrypted at the next visit', '--expires', '10s', '--json'],
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    const exception = parseJson<ExceptionView>(granted.stdout);
    expect(exception).toMatchObject({ org: 'field', device_id: null, label: 'site=remote' });
    expect(await counts()).toEqual({ FAIL: 1, EXCEPTED: 1 });
    expect(await exceptedUntil(covered.deviceId, fieldToken)).toBe(exception.expires_at);
    expect(await exceptedUntil(unlabelled.deviceId, fieldToken)).toBeUndefined();
    // The same label in another organization is not covered.
    expect(await exceptedUntil(elsewhere.deviceId, acmeToken)).toBeUndefined();

    await until(counts, (c) => c.EXCEPTED === 0, 30_000, 'the label exception to lapse');
    expect(await counts()).toEqual({ FAIL: 2, EXCEPTED: 0 });
    expect(await exceptedUntil(covered.deviceId, fieldToken)).toBeUndefined();
  });
});

describe('serve --no-policy', () => {
  test('is the spec’s server: no policy_version in heartbeats and no policy route', async () => {
    const plain = await startServer({ args: ['--no-policy'] });
    try {
      const own = await enrolledDevice(plain, { org: 'acme' });
      const answer = await heartbeat(plain, own.apiKey);
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body ?? {}).sort()).toEqual([
        'device_id',
        'heartbeat_interval_seconds',
        'posture_interval_seconds',
        'server_time',
      ]);
      expectError(await call(plain, EXTENSION_ROUTES.policy, { apiKey: own.apiKey, json: { platform: 'LINUX' } }), 404, 'not_found');
      // No route for any method: not even the 405 a server with the extension answers.
      expectError(await call(plain, EXTENSION_ROUTES.policy, { method: 'GET', apiKey: own.apiKey }), 404, 'not_found');
    } finally {
      await plain.stop();
    }
  });
});

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
import { createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, runServerCli, startServer, tryServerCli, type RunningServer } from '../support/server';
import { call, enrolledDevice, expectError, heartbeat, type EnrolledDevice } from './client';

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
    const put = await api('/policy?org=acme', acmeToken, { method: 'PUT', json: { password: { minLength: 12 } } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ org: 'acme', label: null, version: before + 1 });
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
    // An extension route, so not among the spec's paths that name their methods: another method is no route.
    expectError(await call(server, EXTENSION_ROUTES.policy, { method: 'GET', apiKey: device.apiKey }), 404, 'not_found');
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
    } finally {
      await plain.stop();
    }
  });
});

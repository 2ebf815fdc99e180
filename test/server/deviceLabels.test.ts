// Labels set by an admin (docs/server.md, "Labels") over the real server, on every engine: the CLI
// (another process than the server), the admin API and the console's form each change a device's
// labels; the change is validated like a secret's labels, audited, takes the organization's next
// policy version, and the device's next heartbeat announces it and its next fetch is refined by the
// new labels, although the server had cached the old ones. Bad input changes nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXTENSION_ROUTES, type PolicyResponse } from '../../src/protocol/schemas';
import type { AuditPage } from '../../src/server/audit';
import type { DeviceView } from '../../src/server/admin';
import type { DeviceLabelsView } from '../../src/server/deviceLabels';
import type { ExceptionView } from '../../src/server/exceptions';
import type { PolicyView } from '../../src/server/policy';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, runServerCli, startServer, tryServerCli, type RunningServer } from '../support/server';
import { call, enrolledDevice, expectError, expectUsageError, heartbeat, type EnrolledDevice } from './client';

const API = '/api/admin/v1';
let server: RunningServer;
let device: EnrolledDevice;
let acmeToken: string;

beforeAll(async () => {
  server = await startServer({ args: NO_RATE_LIMITS });
  device = await enrolledDevice(server, { org: 'acme' });
  acmeToken = (await createAdminToken(server, { org: 'acme' })).admin_token;
  // A refinement for devices labelled team=lab, so that labels decide what a device is served.
  const file = join(server.dir, 'lab.json');
  writeFileSync(file, JSON.stringify({ password: { minLength: 14 } }));
  await runServerCli(['policy', 'set', '--db', server.dbPath, '--org', 'acme', '--label', 'team=lab', '--file', file]);
});
afterAll(async () => {
  await server?.stop();
});

const cli = (args: readonly string[]) => tryServerCli([...args, '--db', server.dbPath]);
const api = (path: string, token: string, options: { method?: string; json?: unknown } = {}) =>
  call(server, `${API}${path}`, { method: options.method ?? 'GET', json: options.json, headers: { authorization: `Bearer ${token}` } });

async function policyVersion(apiKey: string): Promise<unknown> {
  const answer = await heartbeat(server, apiKey);
  expect(answer.status, answer.text).toBe(200);
  return answer.body?.policy_version;
}

async function served(apiKey: string): Promise<PolicyResponse> {
  const answer = await call(server, EXTENSION_ROUTES.policy, { apiKey, json: { platform: 'LINUX' } });
  expect(answer.status, answer.text).toBe(200);
  return parseJson<PolicyResponse>(answer.text);
}

async function labelsOf(deviceId: string): Promise<Record<string, string>> {
  return parseJson<DeviceView>((await api(`/devices/${deviceId}`, acmeToken)).text).labels;
}

async function labelAudits(): Promise<AuditPage['entries']> {
  return parseJson<AuditPage>((await cli(['audit', '--action', 'device.labels', '--json'])).stdout).entries;
}

/** What the device's organization's policy looks like to it now: the heartbeat's version and the fetched policy. */
async function seenBy(apiKey: string) {
  return { version: await policyVersion(apiKey), policy: (await served(apiKey)).policy };
}

describe('device label (admin CLI, another process than the server)', () => {
  test('sets and removes labels: audited, the next heartbeat announces a new version, the next fetch is refined by them', async () => {
    const before = await seenBy(device.apiKey);
    expect(before.policy).toEqual({});
    const set = await cli(['device', 'label', device.deviceId, '--set', 'team=lab', '--set', 'site=remote hq', '--json']);
    expect(set.code, set.stderr).toBe(0);
    const view = parseJson<DeviceLabelsView>(set.stdout);
    expect(view).toMatchObject({ device_id: device.deviceId, org: 'acme', labels: { team: 'lab', site: 'remote hq' }, previous: {} });
    expect(await labelsOf(device.deviceId)).toEqual({ site: 'remote hq', team: 'lab' });

    // The server had served (and cached) the device's labels before: the change is seen at once.
    const labelled = await seenBy(device.apiKey);
    expect(labelled.version).toBe(`${view.policy_version}.0`);
    expect(labelled.version).not.toBe(before.version);
    expect(labelled.policy).toEqual({ password: { minLength: 14 } });

    const [entry] = await labelAudits();
    expect(entry).toMatchObject({
      actor: expect.stringMatching(/^cli(:.+)?$/) as string,
      address: null,
      org: 'acme',
      target_type: 'device',
      target_id: device.deviceId,
      detail: { labels: 'site=remote hq,team=lab', previous: '', policy_version: view.policy_version },
    });

    const removed = await cli(['device', 'label', device.deviceId, '--remove', 'team']);
    expect(removed, removed.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Labels of dev_\S+: site=remote hq \(policy version \d+\)\.\n$/) as string,
    });
    const unlabelled = await seenBy(device.apiKey);
    expect(unlabelled.policy).toEqual({});
    expect(unlabelled.version).not.toBe(labelled.version);

    // Shown without a change: nothing audited, the version stays.
    const audits = await labelAudits();
    const shown = await cli(['device', 'label', device.deviceId, '--json']);
    expect(parseJson<DeviceLabelsView>(shown.stdout).labels).toEqual({ site: 'remote hq' });
    expect(await labelAudits()).toEqual(audits);
    expect(await policyVersion(device.apiKey)).toBe(unlabelled.version);
  });

  test.each([
    ['a malformed label', ['--set', 'team'], /a label is key=value/],
    ['a key of the wrong form', ['--set', '-team=lab'], /a label key is 1 to 63 letters/],
    ['an empty value', ['--set', 'team='], /the value of label team must be 1 to 128 printable characters/],
    ['a key set twice', ['--set', 'team=a', '--set', 'team=b'], /each label key may be set once/],
    ['a key set and removed', ['--set', 'team=a', '--remove', 'team'], /label team is both set and removed/],
    ['a key the device does not have', ['--remove', 'colour'], /the device has no label "colour"/],
    ['a 17th label', Array.from({ length: 16 }, (_, i) => ['--set', `k${i}=v`]).flat(), /at most 16 labels/],
  ])('%s is refused (exit 2), and nothing is stored', async (_what, flags, message) => {
    const labels = await labelsOf(device.deviceId);
    const version = await policyVersion(device.apiKey);
    const audits = await labelAudits();
    expectUsageError(await cli(['device', 'label', device.deviceId, ...flags]), message);
    expect(await labelsOf(device.deviceId)).toEqual(labels);
    expect(await policyVersion(device.apiKey)).toBe(version);
    expect(await labelAudits()).toEqual(audits);
  });

  test('an unknown device is refused (exit 2)', async () => {
    expectUsageError(await cli(['device', 'label', 'dev_00000000000000000000000000000000', '--set', 'a=b']), /no device "dev_0+"/);
    expectUsageError(await cli(['device', 'label', 'laptop', '--set', 'a=b']), /no such device/);
  });
});

describe('PUT /api/admin/v1/devices/{id}/labels', () => {
  test('replaces the labels within the token’s organization: audited with the token, served from the next request on', async () => {
    const before = await seenBy(device.apiKey);
    const put = await api(`/devices/${device.deviceId}/labels`, acmeToken, { method: 'PUT', json: { labels: { team: 'lab' } } });
    expect(put.status, put.text).toBe(200);
    const view = parseJson<DeviceLabelsView>(put.text);
    expect(view).toMatchObject({ labels: { team: 'lab' }, previous: { site: 'remote hq' } });
    // This server's own change: no other process committed.
    const after = await seenBy(device.apiKey);
    expect(after).toEqual({ version: `${view.policy_version}.0`, policy: { password: { minLength: 14 } } });
    expect(after.version).not.toBe(before.version);
    expect((await labelAudits())[0]).toMatchObject({
      actor: expect.stringMatching(/^token:adt_/) as string,
      address: expect.any(String) as string,
      detail: { labels: 'team=lab', previous: 'site=remote hq' },
    });

    const other = await enrolledDevice(server, { org: 'globex' });
    expectError(await api(`/devices/${other.deviceId}/labels`, acmeToken, { method: 'PUT', json: { labels: {} } }), 404, 'not_found');
  });

  test.each([
    ['no object', [1], 'the body must be a JSON object {labels}'],
    ['an unknown field', { labels: {}, set: {} }, 'unknown field "set"'],
    ['labels not an object', { labels: ['team=lab'] }, 'labels must be an object of strings'],
    ['a value not a string', { labels: { team: 7 } }, 'a label value is a string'],
    ['a key of the wrong form', { labels: { 'team lab': 'x' } }, 'a label key is 1 to 63 letters'],
    ['a control character', { labels: { team: 'a\u0007b' } }, 'the value of label team must be 1 to 128 printable characters'],
    ['17 labels', { labels: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'at most 16 labels'],
  ])('%s is 400 with why, and nothing is stored', async (_what, body, message) => {
    const labels = await labelsOf(device.deviceId);
    const audits = await labelAudits();
    const answer = await api(`/devices/${device.deviceId}/labels`, acmeToken, { method: 'PUT', json: body });
    expectError(answer, 400, 'bad_request');
    expect(answer.body?.message).toContain(message);
    expect(await labelsOf(device.deviceId)).toEqual(labels);
    expect(await labelAudits()).toEqual(audits);
  });
});

describe('the console’s label form', () => {
  test('saves the labels (POST, then 303 to the page), refuses bad ones with why and what was typed, needs the CSRF token', async () => {
    expect((await addAccount(server, 'labels@acme.test', { org: 'acme' }, 'labels console password')).code).toBe(0);
    const client = new ConsoleClient(server);
    expect((await client.signIn('labels@acme.test', 'labels console password')).status).toBe(303);
    const path = `/console/devices/${device.deviceId}`;
    const page = await client.get(path);
    expect(page.text).toMatch(/<textarea name="labels"[^>]*>team=lab<\/textarea>/);
    const csrf = await client.csrfToken(path);
    const before = await seenBy(device.apiKey);

    const refused = await client.post(`${path}/labels`, { _csrf: csrf, labels: 'team=lab\nsite <b>' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('a label is key=value');
    expect(refused.text).toMatch(/<textarea name="labels"[^>]*>team=lab\nsite &lt;b&gt;<\/textarea>/);
    expect((await client.post(`${path}/labels`, { _csrf: csrf, labels: 'a=1\na=2' })).text).toContain('each label key may be given once');
    expect((await client.post(`${path}/labels`, { _csrf: 'forged', labels: 'site=kiosk' })).status).toBe(403);
    expect(await labelsOf(device.deviceId)).toEqual({ team: 'lab' });

    const saved = await client.post(`${path}/labels`, { _csrf: csrf, labels: 'site=kiosk\r\n\r\n' });
    expect(saved.status, saved.text).toBe(303);
    expect(saved.headers.location).toBe(`${path}#labels`);
    expect(await labelsOf(device.deviceId)).toEqual({ site: 'kiosk' });
    expect((await client.get(path)).text).toMatch(/<textarea name="labels"[^>]*>site=kiosk<\/textarea>/);
    expect((await labelAudits())[0]).toMatchObject({
      actor: 'account:labels@acme.test',
      detail: { labels: 'site=kiosk', previous: 'team=lab' },
    });
    const after = await seenBy(device.apiKey);
    expect(after.policy).toEqual({});
    expect(after.version).not.toBe(before.version);
  });
});

// One rule for the labels a device carries and those that target them (enrollSecrets.ts, labelTarget):
// a key with "/" and a value with a space, once set, are targeted everywhere a label is named.
describe('a label that can be set can be targeted', () => {
  const TEAM = 'corp.example/team=it';
  const SITE = 'site=remote hq';
  let targeted: EnrolledDevice;
  const exceptions = async () => parseJson<{ exceptions: ExceptionView[] }>((await api('/exceptions?org=acme', acmeToken)).text).exceptions;
  const history = async (label: string) =>
    (await api(`/policy/history?org=acme&label=${encodeURIComponent(label)}`, acmeToken)).body?.changes as unknown[];
  const listedBy = async (path: string) =>
    parseJson<{ devices: DeviceView[] }>((await api(path, acmeToken)).text).devices.map((d) => d.device_id);

  beforeAll(async () => {
    targeted = await enrolledDevice(server, { org: 'acme' });
    const labels = { 'corp.example/team': 'it', site: 'remote hq' };
    const put = await api(`/devices/${targeted.deviceId}/labels`, acmeToken, { method: 'PUT', json: { labels } });
    expect(put.status, put.text).toBe(200);
  });

  test('by the CLI, the admin API (URL-encoded) and the console: refinements, exceptions, the device list', async () => {
    const file = join(server.dir, 'it.json');
    writeFileSync(file, JSON.stringify({ password: { minLength: 15 } }));
    const set = await cli(['policy', 'set', '--org', 'acme', '--label', TEAM, '--file', file, '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(parseJson<{ label: string }>(set.stdout).label).toBe(TEAM);
    // A space travels as %20 or as "+"; the value is trimmed as when it was set.
    const put = await api(`/policy?org=acme&label=site%3D+remote%20hq+`, acmeToken, {
      method: 'PUT',
      json: { password: { requireComplexity: true } },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body?.label).toBe(SITE);
    expect((await served(targeted.apiKey)).policy).toEqual({ password: { minLength: 15, requireComplexity: true } });
    expect((await served(device.apiKey)).policy).not.toHaveProperty('password.requireComplexity');
    const shown = parseJson<PolicyView>((await api(`/policy?org=acme&label=${encodeURIComponent(SITE)}`, acmeToken)).text);
    expect(shown).toMatchObject({ label: SITE, document: { password: { requireComplexity: true } } });
    expect(shown.labels).toEqual(expect.arrayContaining([TEAM, SITE]));
    expect(parseJson<PolicyView>((await cli(['policy', 'show', '--org', 'acme', '--label', TEAM, '--json'])).stdout).document).toEqual({
      password: { minLength: 15 },
    });
    expect(await history(TEAM)).toHaveLength(1);

    expect(await listedBy(`/devices?label=${encodeURIComponent(TEAM)}`)).toEqual([targeted.deviceId]);
    expect(await listedBy(`/devices?label=site%3Dremote+hq`)).toEqual([targeted.deviceId]);
    const listed = await cli(['device', 'list', '--label', SITE, '--json']);
    expect(parseJson<DeviceView[]>(listed.stdout).map((d) => d.device_id)).toEqual([targeted.deviceId]);

    const byCli = await cli([
      'exception',
      'add',
      '--org',
      'acme',
      '--label',
      TEAM,
      '--check',
      'SCREEN_LOCK',
      '--reason',
      'kiosk',
      '--expires',
      '7d',
      '--json',
    ]);
    expect(byCli.code, byCli.stderr).toBe(0);
    const fields = { label: SITE, check_key: 'FIREWALL_ENABLED', reason: 'lab', expires: '7d' };
    const byApi = await api('/exceptions?org=acme', acmeToken, { method: 'POST', json: fields });
    expect(byApi.status, byApi.text).toBe(201);
    expect(byApi.body?.label).toBe(SITE);

    expect((await addAccount(server, 'targets@acme.test', { org: 'acme' }, 'targets console password')).code).toBe(0);
    const client = new ConsoleClient(server);
    expect((await client.signIn('targets@acme.test', 'targets console password')).status).toBe(303);
    const csrf = await client.csrfToken('/console/policy');
    const form = { _csrf: csrf, label: ` ${SITE} `, check: 'TIME_SYNC', reason: 'no NTP there', expires: '7d' };
    expect((await client.post('/console/exceptions?org=acme', form)).status).toBe(303);
    const granted = await exceptions();
    expect(
      granted
        .filter((e) => e.label === SITE)
        .map((e) => e.check_key)
        .sort(),
    ).toEqual(['FIREWALL_ENABLED', 'TIME_SYNC']);
    // Each applies to the device carrying the labels: its page lists them.
    const page = (await client.get(`/console/devices/${targeted.deviceId}`)).text;
    for (const e of granted.filter((e) => e.label === SITE || e.label === TEAM))
      expect(page).toContain(`data-exception="${e.exception_id}"`);
    const list = (await client.get(`/console/devices?label=${encodeURIComponent(SITE)}`)).text;
    expect(list).toContain(targeted.deviceId);
    expect(list).not.toContain(device.deviceId);
  });

  test.each([
    ['no "="', 'site', /a label is key=value/],
    ['a key of the wrong form', 'corp example/team=it', /a label key is 1 to 63 letters/],
    ['an empty value', 'site= ', /the value of label site must be 1 to 128 printable characters/],
    ['a control character', 'site=remote\u0007hq', /the value of label site must be 1 to 128 printable characters/],
    ['a value too long', `site=${'x'.repeat(129)}`, /the value of label site must be 1 to 128 printable characters/],
  ])('a target with %s is refused (400, exit 2) and changes nothing', async (_what, label, message) => {
    const before = { exceptions: await exceptions(), history: await history(SITE) };
    const query = `org=acme&label=${encodeURIComponent(label)}`;
    for (const answer of [
      await api(`/devices?${query}`, acmeToken),
      await api(`/policy?${query}`, acmeToken),
      await api(`/policy?${query}`, acmeToken, { method: 'PUT', json: {} }),
      await api('/exceptions?org=acme', acmeToken, {
        method: 'POST',
        json: { label, check_key: 'FIREWALL_ENABLED', reason: 'r', expires: '7d' },
      }),
    ]) {
      expectError(answer, 400, 'bad_request');
      expect(answer.body?.message).toMatch(message);
    }
    expectUsageError(await cli(['policy', 'set', '--org', 'acme', '--label', label, '--reset']), message);
    expectUsageError(
      await cli(['exception', 'add', '--org', 'acme', '--label', label, '--check', 'FIREWALL_ENABLED', '--reason', 'r', '--expires', '7d']),
      message,
    );
    expectUsageError(await cli(['device', 'list', '--label', label]), message);
    expect({ exceptions: await exceptions(), history: await history(SITE) }).toEqual(before);
  });

  test('refinements whose labels joined look alike are served apart', async () => {
    // A device with ka=x and kb=y matches two refinements; one with ka="x|kb=y" matches a third.
    const both = await enrolledDevice(server, { org: 'acme' });
    const joined = await enrolledDevice(server, { org: 'acme' });
    for (const [target, labels] of [
      [both, { ka: 'x', kb: 'y' }],
      [joined, { ka: 'x|kb=y' }],
    ] as const)
      expect((await api(`/devices/${target.deviceId}/labels`, acmeToken, { method: 'PUT', json: { labels } })).status).toBe(200);
    for (const [label, document] of [
      ['ka=x', { password: { minLength: 9 } }],
      ['kb=y', { password: { requireComplexity: true } }],
      ['ka=x|kb=y', { password: { minLength: 20 } }],
    ] as const) {
      const put = await api(`/policy?org=acme&label=${encodeURIComponent(label)}`, acmeToken, { method: 'PUT', json: document });
      expect(put.status, put.text).toBe(200);
    }
    expect((await served(both.apiKey)).policy).toEqual({ password: { minLength: 9, requireComplexity: true } });
    expect((await served(joined.apiKey)).policy).toEqual({ password: { minLength: 20 } });
  });
});

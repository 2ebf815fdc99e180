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

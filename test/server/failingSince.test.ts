// "Failing since" through the real agent API: when each check's current status began (the first
// observation of it after a different one, src/server/statusSince.ts), as the admin API's device
// view (`failing_since`, `status_since`) and `device show` give it, on every engine.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PostureResult } from '../../src/protocol/schemas';
import type { DeviceView, StatusChanges } from '../../src/server/admin';
import { createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { runServerCli, startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, postures, result, type EnrolledDevice } from './client';

let server: RunningServer;
let headers: Record<string, string>;
beforeAll(async () => {
  server = await startServer();
  headers = { authorization: `Bearer ${(await createAdminToken(server, { org: 'acme' })).admin_token}` };
});
afterAll(async () => {
  await server?.stop();
});

/** Minute `m` of an hour ago: observations in the past, in the order sent. */
const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m)).toISOString();
const fw = (status: PostureResult['status'], minute: number) =>
  result({ check_key: 'FIREWALL_ENABLED', status, observed_at: at(minute), evidence: { rule: 'r' } });
const disk = (status: PostureResult['status'], minute: number) =>
  result({ check_key: 'DISK_ENCRYPTION', status, observed_at: at(minute), evidence: { rule: 'r' } });

async function upload(device: EnrolledDevice, results: PostureResult[]): Promise<void> {
  const answer = await postures(server, device.apiKey, { results });
  expect(answer.status, answer.text).toBe(204);
}

async function since(device: EnrolledDevice): Promise<Record<string, [string | null, string]>> {
  const answer = await call(server, `/api/admin/v1/devices/${device.deviceId}`, { method: 'GET', headers });
  expect(answer.status, answer.text).toBe(200);
  const view = parseJson<DeviceView>(answer.text);
  return Object.fromEntries(view.latest.map((r) => [r.check_key, [r.failing_since, r.status_since]]));
}

describe.concurrent('a check fails since the first observation of FAIL after another status', () => {
  test('the history as status changes (when observed), newest first, paged; the raw log keeps every result', async () => {
    const device = await enrolledDevice(server);
    await upload(device, [fw('PASS', 1), disk('PASS', 1), fw('PASS', 2), fw('FAIL', 3), disk('PASS', 3)]);
    await upload(device, [fw('FAIL', 4), fw('FAIL', 5), disk('UNKNOWN', 5), fw('PASS', 6)]);
    const changes = async (query: string) => {
      const answer = await call(server, `/api/admin/v1/devices/${device.deviceId}/changes${query}`, { method: 'GET', headers });
      expect(answer.status, answer.text).toBe(200);
      return parseJson<StatusChanges>(answer.text);
    };
    const all = await changes('');
    expect(all.changes.map((c) => [c.check_key, c.previous_status, c.status, c.observed_at])).toEqual([
      ['FIREWALL_ENABLED', 'FAIL', 'PASS', at(6)],
      ['DISK_ENCRYPTION', 'PASS', 'UNKNOWN', at(5)],
      ['FIREWALL_ENABLED', 'PASS', 'FAIL', at(3)],
      ['DISK_ENCRYPTION', null, 'PASS', at(1)],
      ['FIREWALL_ENABLED', null, 'PASS', at(1)],
    ]);
    expect(all.next_before).toBeNull();
    expect(all.changes[0]!.remediation.summary).not.toBe('');
    const firstPage = await changes('?check=FIREWALL_ENABLED&limit=2');
    expect(firstPage.changes.map((c) => c.observed_at)).toEqual([at(6), at(3)]);
    const older = await changes(`?check=FIREWALL_ENABLED&limit=2&before=${firstPage.next_before}`);
    expect([older.changes.map((c) => c.observed_at), older.next_before]).toEqual([[at(1)], null]);
    const log = await call(server, `/api/admin/v1/devices/${device.deviceId}/history`, { method: 'GET', headers });
    expect(parseJson<{ results: unknown[] }>(log.text).results).toHaveLength(9);
    expect((await call(server, `/api/admin/v1/devices/${device.deviceId}/changes?limit=0`, { method: 'GET', headers })).status).toBe(400);
  });

  test('upload after upload: a repeated status keeps its start, a change starts it again', async () => {
    const device = await enrolledDevice(server);
    await upload(device, [fw('PASS', 1)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [null, at(1)] });
    await upload(device, [fw('FAIL', 2)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [at(2), at(2)] });
    await upload(device, [fw('FAIL', 3)]);
    await upload(device, [fw('FAIL', 4)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [at(2), at(2)] });
    await upload(device, [fw('UNKNOWN', 5)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [null, at(5)] });
    await upload(device, [fw('FAIL', 6)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [at(6), at(6)] });
  });

  test('within one upload (a queue sent at once): the last run of the status, whatever was stored', async () => {
    const device = await enrolledDevice(server);
    await upload(device, [fw('FAIL', 1), disk('PASS', 1)]);
    // A change inside the batch: the stored FAIL does not carry over to the final FAIL.
    await upload(device, [fw('FAIL', 2), disk('PASS', 2), fw('PASS', 3), disk('FAIL', 3), fw('FAIL', 4), disk('FAIL', 4)]);
    expect(await since(device)).toEqual({ DISK_ENCRYPTION: [at(3), at(3)], FIREWALL_ENABLED: [at(4), at(4)] });
    // A batch that only repeats the stored status continues it.
    await upload(device, [fw('FAIL', 5), fw('FAIL', 6), disk('PASS', 5), disk('PASS', 6)]);
    expect(await since(device)).toEqual({ DISK_ENCRYPTION: [null, at(5)], FIREWALL_ENABLED: [at(4), at(4)] });
  });

  test('a check seen for the first time in a batch of repeats began with the first of them', async () => {
    const device = await enrolledDevice(server);
    await upload(device, [fw('FAIL', 7), fw('FAIL', 8)]);
    expect(await since(device)).toEqual({ FIREWALL_ENABLED: [at(7), at(7)] });
  });

  test('device show prints it beside the failing check, and --json carries it per check', async () => {
    const device = await enrolledDevice(server);
    await upload(device, [fw('FAIL', 10), disk('PASS', 10)]);
    await upload(device, [fw('FAIL', 11), disk('PASS', 11)]);
    const shown = await server.showDevice(device.deviceId);
    expect(shown.failing_since).toEqual({ DISK_ENCRYPTION: null, FIREWALL_ENABLED: at(10) });
    const { stdout } = await runServerCli(['device', 'show', device.deviceId, '--db', server.dbPath]);
    expect(stdout).toContain('FIREWALL_ENABLED  FAIL (r), failing since 2026-01-01 00:10:00 UTC\n');
    expect(stdout).toMatch(/^DISK_ENCRYPTION {2}PASS \(r\)\n/m);
  });
});

// status and unenroll as a user runs them: the built CLI against the real reference server.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAgentState } from '../../src/agent/state';
import { listStateFiles, runAgent } from '../support/agent';
import { startFaultProxy } from '../support/faultProxy';
import {
  common,
  enrolledDir as enrollIn,
  expectNoSecrets,
  expectUserError,
  serverAccepts as accepts,
  stateDir,
  storedKey,
  useServer,
} from './cliHelpers';
import type { StatusReport } from '../../src/agent/status';
import { parseJson } from '../support/json';

const running = useServer();
const enrolledDir = () => enrollIn(running.current);
const serverAccepts = (apiKey: string) => accepts(running.current, apiKey);

describe('status', () => {
  it('reports the contract fields and the runtime status, with exit 0 when enrolled', async () => {
    const { dir, device } = await enrolledDir();
    await (
      await openAgentState(dir)
    ).status.update({
      device_id: device.device_id,
      last_heartbeat_at: '2026-05-01T10:00:00.000Z',
      last_upload_at: '2026-05-01T10:01:00.000Z',
      queued_results: 7,
      dropped_results: 2,
      clock_skew_ms: 1500,
      conflict: { message: 'hardware_uuid already used by another device', at: '2026-05-01T09:00:00.000Z' },
    });
    const json = await runAgent(['status', '--json', ...common(dir), '--log-level', 'trace']);
    expect(json.code, json.stderr).toBe(0);
    const report = parseJson<StatusReport>(json.stdout);
    expect(report).toMatchObject({
      enrolled: true,
      server_url: running.current.url,
      device_id: device.device_id,
      keystore: 'file',
      key_available: true,
      queued_results: 7,
      dropped_results: 2,
      last_heartbeat_at: '2026-05-01T10:00:00.000Z',
      last_upload_at: '2026-05-01T10:01:00.000Z',
      clock_skew_ms: 1500,
      conflict: { message: 'hardware_uuid already used by another device' },
      daemon_pid: null,
      state_dir: dir,
    });
    expect(report.enrolled_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expectNoSecrets(json);

    const human = await runAgent(['status', ...common(dir)]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Enrolled: +yes$/m);
    expect(human.stdout).toMatch(new RegExp(`^Device ID: +${device.device_id}$`, 'm'));
    expect(human.stdout).toMatch(/^Queued results: +7 \(2 dropped: queue full\)$/m);
    expect(human.stdout).toMatch(/^Conflict: +hardware_uuid already used/m);
  });

  it('exits 5 when not enrolled, and shows why after a revocation', async () => {
    const dir = stateDir();
    const none = await runAgent(['status', '--json', ...common(dir)]);
    expect(none.code).toBe(5);
    expect(JSON.parse(none.stdout)).toMatchObject({
      enrolled: false,
      server_url: null,
      device_id: null,
      keystore: 'file',
      queued_results: 0,
      last_heartbeat_at: null,
      last_upload_at: null,
    });
    expect(existsSync(dir)).toBe(false); // status creates nothing

    const { dir: revokedDir } = await enrolledDir();
    await (
      await openAgentState(revokedDir)
    ).wipe({ reason: 'API key rejected by the server (401) on heartbeat', revoked_at: '2026-05-02T00:00:00Z' });
    const revoked = await runAgent(['status', '--json', ...common(revokedDir)]);
    expect(revoked.code).toBe(5);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      enrolled: false,
      revoked_at: '2026-05-02T00:00:00.000Z',
      reason: 'API key rejected by the server (401) on heartbeat',
    });
    expect(listStateFiles(revokedDir).map((f) => f.path)).toEqual(['status.json']);
    const human = await runAgent(['status', ...common(revokedDir)]);
    expect(human.stdout).toMatch(/^Revoked: +2026-05-02T00:00:00.000Z: API key rejected/m);
  });

  it('reports a key file that went missing as unavailable (exit 1), never as not enrolled', async () => {
    const { dir } = await enrolledDir();
    rmSync(join(dir, 'api-key'));
    const result = await runAgent(['status', '--json', ...common(dir)]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ enrolled: true, key_available: false });
    expect(result.stderr).toMatch(/no longer holds this enrollment's API key; run `device-agent unenroll`/);
  });
});

describe('unenroll', () => {
  it('revokes the key at the server, wipes everything, and the old key gets 401', async () => {
    const { dir, apiKey } = await enrolledDir();
    mkdirSync(join(dir, 'queue'));
    writeFileSync(join(dir, 'queue', 'segment-1.json'), '[]');
    const result = await runAgent(['unenroll', ...common(dir), '--log-level', 'trace']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Unenrolled from ${running.current.url}. The server confirmed: the API key is revoked.`);
    expectNoSecrets(result, apiKey);
    expect(listStateFiles(dir)).toEqual([]);
    expect(await serverAccepts(apiKey)).toBe(false);

    const again = await runAgent(['unenroll', ...common(dir)]);
    expectUserError(again, 5, /not enrolled/);
  });

  it('gives up on a server that does not answer within 5 s, wipes locally, and says so', async () => {
    const proxy = await startFaultProxy(running.current.url);
    const device = await running.current.createDevice();
    const dir = stateDir();
    const enrolled = await runAgent(['enroll', '--server', proxy.url, '--token', '-', ...common(dir)], { input: device.enrollment_token });
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const apiKey = storedKey(dir);
    proxy.add({ route: 'unenroll', fault: { kind: 'delay', ms: 20_000 } });

    const started = Date.now();
    const result = await runAgent(['unenroll', ...common(dir)]);
    const took = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /The server did not confirm \(cannot reach http:\/\/127\.0\.0\.1:\d+: the request timed out\): an administrator may need to revoke/,
    );
    expect(took).toBeGreaterThanOrEqual(5_000);
    expect(took).toBeLessThan(15_000);
    expect(listStateFiles(dir)).toEqual([]);
    await proxy.stop();
    expect(await serverAccepts(apiKey)).toBe(true); // still valid at the server, as the message says
  });

  it('says so when the server had already revoked the key', async () => {
    const { dir, device } = await enrolledDir();
    await running.current.revokeDevice(device.device_id);
    const result = await runAgent(['unenroll', ...common(dir)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('The server had already revoked the API key.');
    expect(listStateFiles(dir)).toEqual([]);
  });

  it('finishes a wipe that was cut short, revoking the key it left behind', async () => {
    const { dir, apiKey } = await enrolledDir();
    // The state a crash leaves right after a wipe marked the record and before it removed anything.
    const record = join(dir, 'enrollment.json');
    writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, 'utf8')), state: 'wiping' }));
    mkdirSync(join(dir, 'queue'));

    const status = await runAgent(['status', '--json', ...common(dir)]);
    expect(status.code).toBe(5);
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: false, interrupted: 'wiping' });

    const result = await runAgent(['unenroll', ...common(dir)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('The server confirmed: the API key is revoked.');
    expect(listStateFiles(dir)).toEqual([]);
    expect(await serverAccepts(apiKey)).toBe(false);
  });

  it('wipe is idempotent, also where nothing was ever enrolled', async () => {
    const { dir } = await enrolledDir();
    const state = await openAgentState(dir);
    await state.wipe();
    await state.wipe();
    expect(listStateFiles(dir)).toEqual([]);
    await (await openAgentState(join(dir, 'never-created'))).wipe({ reason: 'x', revoked_at: '2026-05-02T00:00:00Z' });
    expect(existsSync(join(dir, 'never-created'))).toBe(false);
  });
});

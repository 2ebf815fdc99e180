// `device-agent doctor` against the real server over HTTPS with a throwaway CA: the whole chain
// passes for a working enrollment, and each broken link (revoked key, closed port, missing CA,
// another user's state directory) is one failing line with its next step. Doctor changes nothing
// locally, sends one heartbeat, and never prints the key, the token or a proxy password.
import { chownSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEnv, runAgent } from '../support/agent';
import { common, expectNoSecrets, stateDir, storedKey, useServer } from './cliHelpers';
import { startConnectProxy } from './connectProxy';
import { PROXIED_HOST, makeThrowawayCa } from './throwawayCa';
import type { EnrollmentRecord } from '../../src/agent/state';
import { readJson } from '../support/json';
import { stringContaining, stringMatching } from '../support/matchers';

const ca = makeThrowawayCa();
const running = useServer({ tls: { cert: ca.cert, key: ca.key } });

interface Report {
  ok: boolean;
  state_dir: string;
  checks: Array<{ id: string; verdict: string; detail: string; next?: string }>;
}

// Each device in its own organisation: every heartbeat from this machine carries the same hardware_uuid.
let orgs = 0;
const newDevice = () => running.current.createDevice({ org: `doctor-${(orgs += 1)}` });

async function enrolled(server = running.current.url): Promise<{ dir: string; deviceId: string; token: string }> {
  const device = await newDevice();
  const dir = stateDir();
  const result = await runAgent(['enroll', '--server', server, '--token', '-', '--ca-file', ca.caFile, ...common(dir)], {
    input: device.enrollment_token,
  });
  expect(result.code, result.stderr).toBe(0);
  return { dir, deviceId: device.device_id, token: device.enrollment_token };
}

async function doctor(dir: string, env = agentEnv()): Promise<{ code: number | null; report: Report; stdout: string; stderr: string }> {
  const result = await runAgent(['doctor', '--json', ...common(dir)], { env });
  return { code: result.code, report: JSON.parse(result.stdout) as Report, stdout: result.stdout, stderr: result.stderr };
}

const verdicts = (report: Report) => Object.fromEntries(report.checks.map((check) => [check.id, check.verdict]));
const check = (report: Report, id: string) => report.checks.find((c) => c.id === id)!;

describe('device-agent doctor', () => {
  it('passes every network link of a working enrollment, with one heartbeat and no secret (exit 0)', async () => {
    const { dir, deviceId, token } = await enrolled();
    const key = storedKey(dir);
    const before = readdirSync(dir).sort();
    expect((await running.current.showDevice(deviceId)).state).toBe('PENDING');
    const { code, report, stdout, stderr } = await doctor(dir);
    expect(verdicts(report)).toMatchObject({
      state_dir: 'pass',
      enrollment: 'pass',
      key_store: 'pass',
      server_url: 'pass',
      proxy: 'pass',
      dns: 'skip',
      tcp: 'pass',
      heartbeat: 'pass',
      clock: 'pass',
      queue: 'pass',
      last_errors: 'pass',
    });
    // The throwaway certificate lives two days: verified, and flagged as expiring (a warning passes).
    expect(check(report, 'tls')).toMatchObject({ verdict: 'warn', next: 'the server certificate expires soon: tell the server operator' });
    // No systemd in this test machine: the service line says so (a warning), and so does the daemon line.
    expect(['warn', 'pass']).toContain(check(report, 'service').verdict);
    expect(check(report, 'tls').detail).toContain(
      `verified against the system roots and ${ca.caFile}: chain 127.0.0.1 < device-agent test CA`,
    );
    expect(check(report, 'heartbeat').detail).toContain(`device ${deviceId}`);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expectNoSecrets({ code, signal: null, stdout, stderr }, key, token);
    // The heartbeat activated the device; nothing else changed locally.
    expect((await running.current.showDevice(deviceId)).state).toBe('ACTIVE');
    expect(readdirSync(dir).sort()).toEqual(before);

    const human = await runAgent(['doctor', ...common(dir)]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^PASS {2}state_dir {4}/m);
    expect(human.stdout).toContain('Verdict: everything checked works.');
  });

  it('a revoked key fails the heartbeat line with the next step, and nothing is wiped (exit 1)', async () => {
    const { dir, deviceId } = await enrolled();
    const key = storedKey(dir);
    await running.current.revokeDevice(deviceId);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(check(report, 'heartbeat')).toMatchObject({
      verdict: 'fail',
      detail: stringContaining('401'),
      next: stringContaining('revoked'),
    });
    expect(storedKey(dir)).toBe(key);
    expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).state).toBe('enrolled');
  });

  it('a server that is down fails the tcp line and skips what depends on it', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const { dir } = await enrolled();
    const file = join(dir, 'enrollment.json');
    const record = readJson<EnrollmentRecord>(file);
    (await import('node:fs')).writeFileSync(file, JSON.stringify({ ...record, server_url: `https://127.0.0.1:${port}` }), { mode: 0o600 });
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(check(report, 'tcp')).toMatchObject({ verdict: 'fail', detail: stringContaining('ECONNREFUSED') });
    expect(verdicts(report)).toMatchObject({ tls: 'skip', heartbeat: 'skip', clock: 'skip' });
  });

  it('without the CA the tls line fails and says to pass --ca-file', async () => {
    const { dir } = await enrolled();
    const file = join(dir, 'enrollment.json');
    const { ca_file: _dropped, ...record } = readJson<EnrollmentRecord>(file);
    (await import('node:fs')).writeFileSync(file, JSON.stringify(record), { mode: 0o600 });
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(check(report, 'tls')).toMatchObject({
      verdict: 'fail',
      detail: stringMatching(/not verified against the system roots: .*unable to verify/),
      next: stringContaining('--ca-file'),
    });
  });

  it('names the proxy in use without its password, and the heartbeat goes through it', async () => {
    const proxy = await startConnectProxy({ [PROXIED_HOST]: '127.0.0.1' });
    const server = running.current.url.replace('127.0.0.1', PROXIED_HOST);
    const env = agentEnv({ HTTPS_PROXY: proxy.url.replace('http://', 'http://alice:s3cret-proxy-pw@') });
    const device = await newDevice();
    const dir = stateDir();
    const enrolledResult = await runAgent(['enroll', '--server', server, '--token', '-', '--ca-file', ca.caFile, ...common(dir)], {
      input: device.enrollment_token,
      env,
    });
    expect(enrolledResult.code, enrolledResult.stderr).toBe(0);
    const { code, report, stdout } = await doctor(dir, env);
    expect(check(report, 'proxy').detail).toBe(`requests go through the proxy ${proxy.url} (with credentials)`);
    expect(verdicts(report)).toMatchObject({ dns: 'skip', tcp: 'pass', tls: 'skip', heartbeat: 'pass' });
    expect(stdout).not.toContain('s3cret-proxy-pw');
    expect(code).toBe(0);
    expect(proxy.tunnels.length).toBe(2); // enroll, then doctor's heartbeat
    await proxy.stop();
  });

  it('not enrolled, or a record edited to plain http elsewhere: the enrollment line fails and nothing is sent', async () => {
    const fresh = await doctor(stateDir());
    expect(fresh.code).toBe(1);
    expect(check(fresh.report, 'state_dir').detail).toContain('does not exist yet');
    expect(check(fresh.report, 'enrollment')).toMatchObject({ verdict: 'fail', next: stringContaining('device-agent enroll') });
    expect(verdicts(fresh.report)).toMatchObject({ key_store: 'skip', heartbeat: 'skip' });

    const { dir } = await enrolled();
    const file = join(dir, 'enrollment.json');
    (await import('node:fs')).writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), server_url: 'http://agents.example.com' }),
      { mode: 0o600 },
    );
    const tampered = await doctor(dir);
    expect(tampered.code).toBe(1);
    expect(check(tampered.report, 'enrollment')).toMatchObject({
      verdict: 'fail',
      detail: stringContaining('names a server that is not allowed'),
    });
    expect(verdicts(tampered.report)).toMatchObject({ tcp: 'skip', heartbeat: 'skip' });
  });

  it.skipIf(process.getuid?.() !== 0)('reports a state directory owned by another user as a failing line, changing nothing', async () => {
    const dir = stateDir();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(check(report, 'state_dir')).toMatchObject({ verdict: 'fail', detail: stringContaining('is owned by uid 65534') });
    expect(verdicts(report)).toMatchObject({ enrollment: 'skip', heartbeat: 'skip' });
  });
});

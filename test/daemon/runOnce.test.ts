// `device-agent run --once` against the real server (through the fault proxy): the contract's exit codes.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviceDetails, isPostureCycle, parseLogLine } from '../support/daemonWire';
import { daemonTestbed } from '../support/daemonTestbed';
import { daemonEnv, fakeResults, queueFiles, queueResults, runAgent, runtimeStatus, stopDaemon, until } from '../support/agent';

const testbed = daemonTestbed();

/** Requests made after enrollment (the enroll request itself is not the agent's run). */
const runRequests = () => testbed.proxy.requests.filter((r) => r.route !== 'enroll');

describe('run --once', () => {
  it('sends a heartbeat first, then the queued and new results, and exits 0', async () => {
    const { deviceId } = await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('EARLIER', 7)]);
    testbed.proxy.requests.length = 0;

    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(result.code, result.stderr).toBe(0);

    const routes = runRequests().map((r) => r.route);
    expect(routes[0]).toBe('heartbeat');
    expect(routes.filter((r) => r === 'heartbeat')).toHaveLength(1);
    // The server offers the policy extension: the heartbeat's policy_version is fetched once, then only uploads.
    expect(routes[1]).toBe('policy');
    expect(routes.slice(2).every((r) => r === 'postures')).toBe(true);
    const device = await deviceDetails(testbed.server, deviceId);
    expect(device.state).toBe('ACTIVE');
    const stored = device.postures.map((p) => p.check_key);
    for (const key of fakeResults('EARLIER', 7).map((r) => r.check_key)) expect(stored).toContain(key);

    const status = await runtimeStatus(testbed.stateDir);
    expect(status.device_id).toBe(deviceId);
    expect(status.last_heartbeat_at).toEqual(expect.any(String));
    expect(status.last_upload_at).toEqual(expect.any(String));
    expect(status.queued_results).toBe(0);
    expect(await queueFiles(testbed.stateDir)).toEqual([]);

    // Logs: JSON lines on stdout, one line for the cycle with its counts, no evidence, no key.
    const lines = result.stdout.trim().split('\n').map(parseLogLine);
    const cycles = lines.filter(isPostureCycle);
    expect(cycles).toHaveLength(1);
    const cycle = cycles[0]!;
    expect(cycle).toMatchObject({ sent: expect.any(Number) as unknown, queued: 0, duration_ms: expect.any(Number) as unknown });
    const counted = cycle.pass + cycle.fail + cycle.unknown + cycle.not_applicable;
    expect(counted).toBe(cycle.results);
    expect(cycle.sent).toBe(cycle.results + 7);
    expect(result.stdout).not.toContain('"index"');
    const apiKey = (await readFile(join(testbed.stateDir, 'api-key'), 'utf8')).trim();
    expect(apiKey).toMatch(/^[0-9a-f]{96}$/i);
    expect(result.stdout + result.stderr).not.toContain(apiKey);
  });

  it('exits 5 without any request when not enrolled', async () => {
    testbed.proxy.requests.length = 0;
    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], {
      env: daemonEnv({ DEVICE_AGENT_SERVER: testbed.proxy.url }),
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/not enrolled/);
    expect(testbed.proxy.requests).toHaveLength(0);
  });

  it('exits 4 after the bounded retries when the server answers 503, keeping the results queued', async () => {
    await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('KEPT', 5)]);
    testbed.proxy.add({ route: 'heartbeat', fault: { kind: 'answer', status: 503, headers: { 'retry-after': '0' } } });
    testbed.proxy.requests.length = 0;

    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/503.*5 results stay queued/);
    expect(testbed.proxy.seen('heartbeat')).toHaveLength(3); // DEVICE_AGENT_RETRY_ATTEMPTS
    expect(testbed.proxy.seen('postures')).toHaveLength(0);
    const queue = await queueFiles(testbed.stateDir);
    expect(queue).toHaveLength(1);
  });

  it('exits 4 when uploads keep failing after a successful heartbeat, and keeps everything queued', async () => {
    await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('HELD', 5)]);
    testbed.proxy.add({ route: 'postures', fault: { kind: 'drop' } });
    testbed.proxy.requests.length = 0;

    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(result.code).toBe(4);
    expect(testbed.proxy.seen('heartbeat').map((r) => r.status)).toEqual([200]);
    expect(testbed.proxy.seen('postures')).toHaveLength(3);
    expect((await runtimeStatus(testbed.stateDir)).queued_results).toBeGreaterThanOrEqual(5);
    expect((await queueFiles(testbed.stateDir)).length).toBeGreaterThanOrEqual(1);
  });

  it('exits 3 after a revocation, having wiped the key and the queue and recorded why', async () => {
    const { deviceId } = await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('DOOMED', 3)]);
    await testbed.server.revokeDevice(deviceId);
    testbed.proxy.requests.length = 0;

    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/401/);
    expect(runRequests().map((r) => `${r.route}:${r.status}`)).toEqual(['heartbeat:401']); // a 401 is never retried
    expect(existsSync(join(testbed.stateDir, 'enrollment.json'))).toBe(false);
    expect(existsSync(join(testbed.stateDir, 'api-key'))).toBe(false);
    expect(await queueFiles(testbed.stateDir)).toEqual([]);
    const status = await runtimeStatus(testbed.stateDir);
    expect(status.revoked_at).toEqual(expect.any(String));
    expect(status.reason).toMatch(/401 on \/heartbeat/);

    const again = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(again.code).toBe(5);
  });

  it('refuses a malformed retry setting with exit 2 before any request', async () => {
    await testbed.enrollNewDevice();
    testbed.proxy.requests.length = 0;
    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], {
      env: daemonEnv({ DEVICE_AGENT_RETRY_ATTEMPTS: 'many' }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/DEVICE_AGENT_RETRY_ATTEMPTS must be a positive whole number/);
    expect(testbed.proxy.requests).toHaveLength(0);
  });

  it('refuses a retry cap beyond the timer limit (it would retry every millisecond) with exit 2', async () => {
    await testbed.enrollNewDevice();
    testbed.proxy.add({ route: 'heartbeat', fault: { kind: 'answer', status: 503 } });
    testbed.proxy.requests.length = 0;
    const result = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], {
      env: daemonEnv({ DEVICE_AGENT_RETRY_MAX_MS: '99999999999' }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/DEVICE_AGENT_RETRY_MAX_MS must be at most 2147483647/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(testbed.proxy.requests).toHaveLength(0);
  });

  it('allows one agent per state directory: a second run names the pid holding it and exits 1', async () => {
    const daemon = testbed.startDaemon();
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'waiting_for_enrollment',
      60_000,
      'daemon idle',
    );
    const second = await runAgent(['run', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pid ${daemon.pid}`);
    const once = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(once.code).toBe(1);
    expect(once.stderr).toContain(`pid ${daemon.pid}`);
    expect((await stopDaemon(daemon)).code).toBe(0);
  });
});

// `device-agent run` as a long-lived process against the real server (heartbeat interval 1 s), with
// the fault proxy for what a correct server does not do. Assertions are on the requests seen and on
// the state directory, not on log text.
import { existsSync } from 'node:fs';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import type { HeartbeatResponse } from '../../src/protocol/schemas';
import { deviceDetails, heartbeatAnswer, postureBody } from '../support/daemonWire';
import { daemonTestbed } from '../support/daemonTestbed';
import type { SeenRequest } from '../support/faultProxy';
import { requireTools } from '../support/requireTools';
import { SECRET_SERVICE_TOOLS, startSecretService } from '../support/secretService';
import {
  daemonEnv,
  runAgent,
  enrollWithToken,
  fakeResults,
  makeStateDir,
  queueFiles,
  queueResults,
  removeStateDir,
  runtimeStatus,
  stopDaemon,
  until,
  type RunningDaemon,
} from '../support/agent';

const testbed = daemonTestbed(['--heartbeat-interval', '1']);

const since = (t: number) => (requests: SeenRequest[]) => requests.filter((r) => r.at >= t && r.route !== 'enroll');

describe('run (daemon)', () => {
  it('idles without credentials, sending nothing, and picks up an enrollment without a restart', async () => {
    const daemon = testbed.startDaemon({ DEVICE_AGENT_SERVER: testbed.proxy.url });
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'waiting_for_enrollment',
      60_000,
      'idle',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(testbed.proxy.requests).toHaveLength(0);

    const { deviceId } = await testbed.enrollNewDevice();
    await testbed.proxy.waitFor((requests) => requests.some((r) => r.route === 'heartbeat' && r.status === 200));
    expect((await deviceDetails(testbed.server, deviceId)).state).toBe('ACTIVE');
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active' && s.device_id === deviceId,
    );
    expect(daemon.child.exitCode).toBeNull();
    const apiKey = (await readFile(join(testbed.stateDir, 'api-key'), 'utf8')).trim();
    expect(daemon.output()).not.toContain(apiKey);
    expect(daemon.output()).not.toMatch(/bearer/i);
    const states = daemon.lines.filter((l) => l.event === 'state').map((l) => l.state);
    expect(states.slice(0, 3)).toEqual(['waiting_for_enrollment', 'starting', 'active']);
  });

  it('applies the heartbeat interval the server sends (1 s), keeping it when a later answer is invalid', async () => {
    await testbed.enrollNewDevice();
    testbed.startDaemon();
    await testbed.proxy.waitFor((r) => r.filter((x) => x.route === 'heartbeat').length >= 4, 60_000);
    const times = testbed.proxy.seen('heartbeat').map((r) => r.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(800);
      expect(gap).toBeLessThan(1600);
    }
    const status = await runtimeStatus(testbed.stateDir);
    expect(status.heartbeat_interval_seconds).toBe(1);
    expect(status.posture_interval_seconds).toBe(3600);

    // Invalid values (0, a negative) keep the previous intervals; huge ones are clamped to a day.
    testbed.proxy.add({
      route: 'heartbeat',
      fault: {
        kind: 'rewrite',
        transform: (body: unknown) => ({ ...heartbeatAnswer(body), heartbeat_interval_seconds: 0, posture_interval_seconds: 10 ** 9 }),
      },
    });
    const t0 = Date.now();
    await testbed.proxy.waitFor((r) => since(t0)(r).filter((x) => x.route === 'heartbeat').length >= 3, 60_000);
    const later = await runtimeStatus(testbed.stateDir);
    expect(later.heartbeat_interval_seconds).toBe(1);
    expect(later.posture_interval_seconds).toBe(86_400);

    // Absent or malformed fields do not fail the heartbeat either: the previous values stay.
    testbed.proxy.clearRules();
    testbed.proxy.add({
      route: 'heartbeat',
      fault: {
        kind: 'rewrite',
        transform: (body: unknown) => {
          const answer: Partial<HeartbeatResponse> = { ...heartbeatAnswer(body) };
          delete answer.heartbeat_interval_seconds;
          return { ...answer, posture_interval_seconds: 'soon' };
        },
      },
    });
    const t1 = Date.now();
    await testbed.proxy.waitFor((r) => since(t1)(r).filter((x) => x.route === 'heartbeat').length >= 2, 60_000);
    const last = await runtimeStatus(testbed.stateDir);
    expect(last.daemon_state).toBe('active');
    expect(Date.parse(last.last_heartbeat_at ?? '')).toBeGreaterThanOrEqual(t1);
    expect(last.heartbeat_interval_seconds).toBe(1);
    expect(last.posture_interval_seconds).toBe(86_400);
  });

  it('shows the clock skew read from server_time', async () => {
    testbed.proxy.add({
      route: 'heartbeat',
      fault: {
        kind: 'rewrite',
        transform: (body: unknown) => ({ ...heartbeatAnswer(body), server_time: new Date(Date.now() + 10 * 60_000).toISOString() }),
      },
    });
    await testbed.enrollNewDevice();
    testbed.startDaemon();
    const status = await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => typeof s.clock_skew_ms === 'number',
      60_000,
      'skew',
    );
    expect(status.clock_skew_ms).toBeGreaterThan(595_000);
    expect(status.clock_skew_ms).toBeLessThan(605_000);
  });

  it('after a revocation: wipes key and queue, records why, goes quiet, then takes a new enrollment without a restart', async () => {
    const { deviceId, org } = await testbed.enrollNewDevice();
    const daemon = testbed.startDaemon();
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active',
      60_000,
      'active',
    );

    await testbed.server.revokeDevice(deviceId);
    const status = await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'revoked',
      60_000,
      'revoked',
    );
    expect(status.revoked_at).toEqual(expect.any(String));
    expect(status.reason).toMatch(/401 on \/(heartbeat|postures)/);
    expect(existsSync(join(testbed.stateDir, 'enrollment.json'))).toBe(false);
    expect(existsSync(join(testbed.stateDir, 'api-key'))).toBe(false);
    expect(await queueFiles(testbed.stateDir)).toEqual([]);
    const rejected = testbed.proxy.requests.findIndex((r) => r.status === 401);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(testbed.proxy.requests.slice(rejected + 1)).toEqual([]); // nothing after the 401

    // A new device record in the same organization may reuse the revoked device's hardware_uuid.
    const fresh = await testbed.server.createDevice({ org });
    await enrollWithToken(testbed.stateDir, testbed.proxy.url, fresh.enrollment_token);
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active' && s.device_id === fresh.device_id,
      60_000,
      're-enrolled',
    );
    expect((await deviceDetails(testbed.server, fresh.device_id)).state).toBe('ACTIVE');
    expect(daemon.child.exitCode).toBeNull();
  });

  it('after a 401 on an upload in mid-flight: wipes and stops sending', async () => {
    await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('LATE', 3)]);
    testbed.proxy.add({
      route: 'postures',
      fault: { kind: 'answer', status: 401, body: { error: 'unauthorized', message: 'key revoked' } },
    });
    testbed.startDaemon();
    const status = await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'revoked',
      60_000,
      'revoked',
    );
    expect(status.reason).toMatch(/401 on \/postures/);
    expect(existsSync(join(testbed.stateDir, 'enrollment.json'))).toBe(false);
    expect(await queueFiles(testbed.stateDir)).toEqual([]);
    const count = testbed.proxy.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(testbed.proxy.requests.length).toBe(count);
  });

  it('on a hardware_uuid conflict (409): wipes nothing, says how to recover, uploads nothing', async () => {
    // Another device of the same organization already reports this machine's hardware_uuid.
    const first = await testbed.enrollNewDevice();
    let daemon = testbed.startDaemon();
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active',
      60_000,
      'first active',
    );
    await stopDaemon(daemon);

    const cloneDir = await makeStateDir();
    try {
      const clone = await testbed.server.createDevice({ org: first.org });
      await enrollWithToken(cloneDir, testbed.proxy.url, clone.enrollment_token);
      await queueResults(cloneDir, [fakeResults('CLONE', 2)]);
      const t0 = Date.now();
      daemon = testbed.startDaemon({}, cloneDir);
      const status = await until(
        () => runtimeStatus(cloneDir),
        (s) => s.daemon_state === 'conflict',
        60_000,
        'conflict',
      );
      expect(status.conflict?.message).toMatch(/hardware_uuid is already used by another device/);
      expect(status.conflict?.message).toMatch(/device revoke/);
      expect(status.daemon_message).toBe(status.conflict?.message);
      // An operator reading `status` sees the state and the recovery path.
      const shown = await runAgent(['status', '--state-dir', cloneDir], { env: daemonEnv() });
      expect(shown.stdout).toMatch(/Agent daemon:\s+running \(pid \d+, conflict\): .*device revoke/);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(since(t0)(testbed.proxy.requests).map((r) => `${r.route}:${r.status}`)).toEqual(['heartbeat:409']);
      expect(existsSync(join(cloneDir, 'enrollment.json'))).toBe(true);
      expect(existsSync(join(cloneDir, 'api-key'))).toBe(true);
      expect(await queueFiles(cloneDir)).toHaveLength(1);
      expect((await deviceDetails(testbed.server, clone.device_id)).state).toBe('PENDING');
    } finally {
      await stopDaemon(daemon);
      await removeStateDir(cloneDir);
    }
  });

  it('on a 409 after activation: pauses uploads, retries at the heartbeat interval, resumes', async () => {
    await testbed.enrollNewDevice();
    testbed.startDaemon();
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active',
      60_000,
      'active',
    );
    testbed.proxy.add({
      route: 'heartbeat',
      fault: { kind: 'answer', status: 409, body: { error: 'conflict', message: 'hardware_uuid in use' } },
      times: 2,
    });
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'conflict',
      60_000,
      'conflict',
    );
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active' && s.conflict === null,
      60_000,
      'recovered',
    );
    const conflicts = testbed.proxy.seen('heartbeat').filter((r) => r.status === 409);
    expect(conflicts).toHaveLength(2);
    const gap = conflicts[1]!.at - conflicts[0]!.at;
    expect(gap).toBeGreaterThan(800); // the heartbeat interval (1 s ± splay), not a fast retry
    expect(existsSync(join(testbed.stateDir, 'api-key'))).toBe(true);
  });

  it('waits while the key store cannot give the key, without wiping or sending, and resumes when it can', async () => {
    await testbed.enrollNewDevice();
    const keyFile = join(testbed.stateDir, 'api-key');
    await rename(keyFile, `${keyFile}.away`);
    testbed.proxy.requests.length = 0;
    testbed.startDaemon();
    const status = await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'keystore_unavailable',
      60_000,
      'keystore',
    );
    expect(status.daemon_message).toMatch(/key/);
    expect(existsSync(join(testbed.stateDir, 'enrollment.json'))).toBe(true);
    expect(testbed.proxy.requests).toHaveLength(0);

    await rename(`${keyFile}.away`, keyFile);
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'active',
      60_000,
      'active again',
    );
  });

  it('retries a dropped connection and honours Retry-After, delivering every result at least once', async () => {
    const { deviceId } = await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('FLAKY', 20)]);
    testbed.proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.check_key === 'FLAKY_0'),
      fault: { kind: 'drop' },
      times: 1,
    });
    testbed.proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.check_key === 'FLAKY_0'),
      fault: { kind: 'answer', status: 503, headers: { 'retry-after': '1' } },
      times: 1,
    });
    testbed.startDaemon({ DEVICE_AGENT_RETRY_MAX_MS: '5000' }); // Retry-After is honoured up to the cap
    const flaky = () => testbed.proxy.seen('postures').filter((r) => postureBody(r.body).results.some((x) => x.check_key === 'FLAKY_0'));
    await until(
      () => flaky().map((r) => r.status),
      (statuses) => statuses.includes(204),
      60_000,
      'delivered',
    );
    const keys = (await deviceDetails(testbed.server, deviceId)).postures.map((p) => p.check_key);
    expect(fakeResults('FLAKY', 20).every((r) => keys.includes(r.check_key))).toBe(true);
    const attempts = flaky();
    expect(attempts.map((r) => r.status)).toEqual([0, 503, 204]);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(1000); // Retry-After: 1
    expect(attempts[2]!.at - attempts[1]!.at).toBeLessThan(2500);
  });

  it('stops on SIGTERM within 5 s with exit 0, leaving an unfinished upload safely queued', async () => {
    await testbed.enrollNewDevice();
    await queueResults(testbed.stateDir, [fakeResults('SLOW', 10)]);
    testbed.proxy.add({ route: 'postures', fault: { kind: 'delay', ms: 20_000 } });
    const daemon = testbed.startDaemon();
    await testbed.proxy.waitFor((r) => r.some((x) => x.route === 'postures'), 60_000);
    const stopped = await stopDaemon(daemon);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(5000);
    expect(await countQueuedResults(testbed.stateDir)).toBeGreaterThanOrEqual(10);
    await queueFiles(testbed.stateDir); // every entry still parses
    const status = await runtimeStatus(testbed.stateDir);
    expect(status.daemon_state).toBe('stopped');
  });
});

const realSecretService = requireTools(SECRET_SERVICE_TOOLS, 'run (daemon) with a real Secret Service');
describe.skipIf(realSecretService.skip)(realSecretService.title, () => {
  // Resuming by itself once the store answers again is shown above with the file store: the same
  // path. Here the test keyring can only be unlocked by replacing its daemon, which races with a
  // client polling it, so the daemon is restarted after the unlock instead.
  it('waits while the keyring is locked, sending nothing and wiping nothing', async () => {
    const secrets = await startSecretService();
    let daemon: RunningDaemon | undefined;
    try {
      const env = { ...secrets.env, DEVICE_AGENT_KEYSTORE: 'keyring' };
      const device = await testbed.server.createDevice({ org: `org-keyring-${Date.now()}` });
      const enrolled = await runAgent(['enroll', '--server', testbed.proxy.url, '--token', '-', '--state-dir', testbed.stateDir], {
        env: daemonEnv(env),
        input: device.enrollment_token,
      });
      expect(enrolled.code, enrolled.stderr).toBe(0);
      expect(existsSync(join(testbed.stateDir, 'api-key'))).toBe(false);
      secrets.lock();
      testbed.proxy.requests.length = 0;

      daemon = testbed.startDaemon(env);
      const status = await until(
        () => runtimeStatus(testbed.stateDir),
        (s) => s.daemon_state === 'keystore_unavailable',
        60_000,
        'locked',
      );
      expect(status.daemon_message).toMatch(/secret store is unavailable.*locked/i);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(testbed.proxy.requests).toHaveLength(0);
      expect((JSON.parse(await readFile(join(testbed.stateDir, 'enrollment.json'), 'utf8')) as { state: string }).state).toBe('enrolled');
      expect((await stopDaemon(daemon)).code).toBe(0);

      await secrets.unlock();
      daemon = testbed.startDaemon(env);
      await until(
        () => runtimeStatus(testbed.stateDir),
        (s) => s.daemon_state === 'active' && s.device_id === device.device_id,
        60_000,
        'unlocked',
      );
      expect(testbed.proxy.seen('heartbeat')[0]!.status).toBe(200);
    } finally {
      if (daemon) await stopDaemon(daemon);
      await secrets.stop();
    }
  });
});

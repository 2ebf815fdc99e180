// Re-enrollment after a 401, the admin's opt-in (issue 28: `enroll --enroll-secret-file <path>
// --reenroll-with-secret`, DEVICE_AGENT_REENROLL_WITH_SECRET=1): `device-agent run` against the real
// server (heartbeat interval 1 s) through the fault proxy, which counts requests. Revoking the device
// makes the daemon wipe, register again with the secret file (read again) and come back ACTIVE as a
// new device; with the secret revoked too, it stays wiped and waits, and asks no more.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviceDetails } from '../support/daemonWire';
import { daemonTestbed } from '../support/daemonTestbed';
import { runServerCli } from '../support/server';
import { agentEnv, runAgent, runtimeStatus, tempDir, until } from '../support/agent';

const testbed = daemonTestbed(['--heartbeat-interval', '1']);

let machines = 0;
/** One test machine's identity (docs/testing.md, the test-only override). */
function identity(): NodeJS.ProcessEnv {
  const id = `reenroll-${process.pid}-${++machines}`;
  return { DEVICE_AGENT_TEST_HARDWARE_UUID: id, DEVICE_AGENT_TEST_HOSTNAME: `host-${id}` };
}

async function secretFile(): Promise<{ path: string; secretId: string; secret: string }> {
  const { stdout } = await runServerCli(['secret', 'create', '--db', testbed.server.dbPath, '--org', 'acme', '--json']);
  const created = JSON.parse(stdout) as { secret_id: string; enroll_secret: string };
  const path = join(tempDir(), 'enroll-secret');
  writeFileSync(path, `${created.enroll_secret}\n`, { mode: 0o600 });
  return { path, secretId: created.secret_id, secret: created.enroll_secret };
}

async function enrollOptedIn(path: string, env: NodeJS.ProcessEnv, optIn: string[] | NodeJS.ProcessEnv): Promise<void> {
  const flags = Array.isArray(optIn) ? optIn : [];
  const extra = Array.isArray(optIn) ? {} : optIn;
  const result = await runAgent(
    [
      'enroll',
      '--server',
      testbed.proxy.url,
      '--enroll-secret-file',
      path,
      ...flags,
      '--state-dir',
      testbed.stateDir,
      '--keystore',
      'file',
    ],
    { env: agentEnv({ ...env, ...extra }) },
  );
  expect(result.code, result.stderr).toBe(0);
}

const deviceOf = async () => String((await runtimeStatus(testbed.stateDir)).device_id);

describe('re-enrollment after a 401 (the admin opted in)', () => {
  it('the device revoked: the daemon wipes, registers again with the secret file, and a new device is ACTIVE', async () => {
    const { path, secretId, secret } = await secretFile();
    const env = identity();
    await enrollOptedIn(path, env, ['--reenroll-with-secret']);
    const record = JSON.parse(readFileSync(join(testbed.stateDir, 'enrollment.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ reenroll_secret_file: path, enrolled_with: { method: 'enroll_secret', secret_id: secretId } });
    expect(JSON.stringify(record)).not.toContain(secret.slice(4));

    const daemon = testbed.startDaemon(env);
    await until(runtimeStatusOf, (s) => s.daemon_state === 'active', 60_000, 'active');
    const first = await deviceOf();
    await testbed.server.revokeDevice(first);

    const again = await until(
      runtimeStatusOf,
      (s) => s.daemon_state === 'active' && s.device_id !== undefined && s.device_id !== first,
      90_000,
      'active again as a new device',
    );
    const second = String(again.device_id);
    expect(await deviceDetails(testbed.server, second)).toMatchObject({ state: 'ACTIVE' });
    expect(await deviceDetails(testbed.server, first)).toMatchObject({ state: 'REVOKED' });
    // The 401, then one registration and one enrollment: no loop.
    const afterRevocation = testbed.proxy.requests.slice(testbed.proxy.requests.findIndex((r) => r.status === 401));
    expect(afterRevocation.filter((r) => r.route === 'register').map((r) => r.status)).toEqual([200]);
    expect(afterRevocation.filter((r) => r.route === 'enroll').map((r) => r.status)).toEqual([200]);
    // The new enrollment keeps the opt-in, so a second revocation is handled alike.
    expect(JSON.parse(readFileSync(join(testbed.stateDir, 'enrollment.json'), 'utf8'))).toMatchObject({ reenroll_secret_file: path });
    expect(daemon.output()).not.toContain(secret.slice(4));
    expect(daemon.child.exitCode).toBeNull();
  });

  it('the device and the secret revoked (DEVICE_AGENT_REENROLL_WITH_SECRET=1): wiped, one refused registration, then it waits', async () => {
    const { path, secretId } = await secretFile();
    const env = identity();
    await enrollOptedIn(path, env, { DEVICE_AGENT_REENROLL_WITH_SECRET: '1' });
    const daemon = testbed.startDaemon(env);
    await until(runtimeStatusOf, (s) => s.daemon_state === 'active', 60_000, 'active');
    await runServerCli(['secret', 'revoke', secretId, '--db', testbed.server.dbPath]);
    await testbed.server.revokeDevice(await deviceOf());

    const revoked = await until(
      runtimeStatusOf,
      (s) => s.daemon_state === 'revoked' && /enrolling again with the enrollment secret was refused/.test(String(s.reason)),
      90_000,
      'revoked, re-enrollment refused',
    );
    expect(revoked.reason).toMatch(/401 on \/(heartbeat|postures|policy)/);
    const refusedAt = testbed.proxy.requests.length;
    const afterRevocation = testbed.proxy.requests.slice(
      testbed.proxy.requests.findIndex((r) => r.status === 401 && r.route !== 'register'),
    );
    expect(afterRevocation.filter((r) => r.route === 'register').map((r) => r.status)).toEqual([401]);
    // Heartbeat interval 1 s, retries of 50-400 ms: a loop would show within seconds.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(testbed.proxy.requests.slice(refusedAt)).toEqual([]);
    expect(readFileSync(path, 'utf8')).toMatch(/^das_/); // the secret file is left where it was
    expect(daemon.child.exitCode).toBeNull();
  });

  it('without the opt-in a 401 wipes and waits: no registration', async () => {
    const { path } = await secretFile();
    const env = identity();
    await enrollOptedIn(path, env, []);
    expect(JSON.parse(readFileSync(join(testbed.stateDir, 'enrollment.json'), 'utf8'))).not.toHaveProperty('reenroll_secret_file');
    testbed.startDaemon(env);
    await until(runtimeStatusOf, (s) => s.daemon_state === 'active', 60_000, 'active');
    const registered = testbed.proxy.seen('register').length;
    await testbed.server.revokeDevice(await deviceOf());
    await until(runtimeStatusOf, (s) => s.daemon_state === 'revoked', 60_000, 'revoked');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(testbed.proxy.seen('register')).toHaveLength(registered);
  });

  it('the opt-in needs the secret in a file: refused (exit 2) otherwise, before anything is sent', async () => {
    const { secret } = await secretFile();
    const result = await runAgent(
      [
        'enroll',
        '--server',
        testbed.proxy.url,
        '--enroll-secret',
        '-',
        '--reenroll-with-secret',
        '--state-dir',
        testbed.stateDir,
        '--keystore',
        'file',
      ],
      { env: agentEnv(identity()), input: secret },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--reenroll-with-secret \(DEVICE_AGENT_REENROLL_WITH_SECRET\) needs --enroll-secret-file <path>/);
    const malformed = await runAgent(['enroll', '--server', testbed.proxy.url, '--enroll-secret', '-', '--state-dir', testbed.stateDir], {
      env: agentEnv({ ...identity(), DEVICE_AGENT_REENROLL_WITH_SECRET: 'maybe' }),
      input: secret,
    });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/DEVICE_AGENT_REENROLL_WITH_SECRET must be 1 or 0/);
    expect(testbed.proxy.requests).toEqual([]);
  });
});

function runtimeStatusOf() {
  return runtimeStatus(testbed.stateDir);
}

// enroll with an enrollment secret (issue 28) as an admin's rollout runs it: the built CLI as a child
// process against the real reference server over HTTP, the secret made by the real admin CLI. Faults
// a correct server cannot produce (a server without the route, a stalled /enroll) come from the
// fault proxy in front of it. The identity override (DEVICE_AGENT_TEST_HARDWARE_UUID, docs/testing.md)
// gives each state directory its own device.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_IDENTITY_PREFIX } from '../../src/identity';
import { AGENT_BIN, agentEnv, listStateFiles, runAgent, tempDir, type AgentResult } from '../support/agent';
import { startFaultProxy } from '../support/faultProxy';
import { runServerCli, type RunningServer } from '../support/server';
import { common, expectNoSecrets, expectUserError, stateDir, useServer } from './cliHelpers';
import type { EnrollmentRecord } from '../../src/agent/state';
import type { StatusReport } from '../../src/agent/status';
import { parseJson, readJson } from '../support/json';

const running = useServer({ args: ['--heartbeat-interval', '1'] });

interface CreatedSecret {
  secret_id: string;
  enroll_secret: string;
}

async function createSecret(server: RunningServer, flags: string[] = []): Promise<CreatedSecret> {
  const { stdout } = await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', 'acme', '--json', ...flags]);
  return JSON.parse(stdout) as CreatedSecret;
}

function secretFile(secret: CreatedSecret): string {
  const path = join(tempDir(), 'enroll-secret');
  writeFileSync(path, `${secret.enroll_secret}\n`, { mode: 0o600 });
  return path;
}

let machines = 0;
/** The environment of one test machine: its own hardware_uuid (and hostname) through the test override. */
function machine(hardwareUuid = `machine-${process.pid}-${++machines}`, hostname = `host-${hardwareUuid}`): NodeJS.ProcessEnv {
  return agentEnv({ DEVICE_AGENT_TEST_HARDWARE_UUID: hardwareUuid, DEVICE_AGENT_TEST_HOSTNAME: hostname });
}

/** Every file of the state directory, as text: none may hold the secret. */
function stateText(dir: string): string {
  return listStateFiles(dir)
    .filter((file) => !file.isDirectory)
    .map((file) => readFileSync(join(dir, file.path), 'utf8'))
    .join('\n');
}

function expectSecretNowhere(secret: CreatedSecret, dir: string, ...results: AgentResult[]): void {
  for (const result of results) expectNoSecrets(result, secret.enroll_secret, secret.enroll_secret.slice(4));
  if (existsSync(dir)) expect(stateText(dir)).not.toContain(secret.enroll_secret.slice(4));
  expect(running.current.logs()).not.toContain(secret.enroll_secret.slice(4));
}

async function enrollWithSecret(dir: string, secret: CreatedSecret, env = machine(), server = running.current.url): Promise<AgentResult> {
  return runAgent(['enroll', '--server', server, '--enroll-secret-file', secretFile(secret), ...common(dir)], { env });
}

async function secretUses(secret: CreatedSecret): Promise<number | undefined> {
  const { stdout } = await runServerCli(['secret', 'list', '--db', running.current.dbPath, '--json']);
  return (JSON.parse(stdout) as { secret_id: string; uses: number }[]).find((s) => s.secret_id === secret.secret_id)?.uses;
}

async function status(dir: string, env: NodeJS.ProcessEnv): Promise<StatusReport> {
  const result = await runAgent(['status', '--json', ...common(dir)], { env });
  return parseJson<StatusReport>(result.stdout);
}

describe('enroll with an enrollment secret', () => {
  it('--enroll-secret-file: registers, enrolls, records the secret id (never the secret); status, doctor and the server agree', async () => {
    const secret = await createSecret(running.current);
    const dir = stateDir();
    const env = machine();
    const path = secretFile(secret);
    const result = await runAgent(['enroll', '--server', running.current.url, '--enroll-secret-file', path, ...common(dir)], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Enrolled with ${running.current.url}.`);
    // The test identity is announced, loudly, by every process that uses it.
    expect(result.stderr).toContain('WARNING: DEVICE_AGENT_TEST_HARDWARE_UUID is set');
    // The secret file stays where the admin put it.
    expect(readFileSync(path, 'utf8')).toBe(`${secret.enroll_secret}\n`);

    const record = readJson<EnrollmentRecord>(join(dir, 'enrollment.json'));
    expect(record).toMatchObject({ state: 'enrolled', enrolled_with: { method: 'enroll_secret', secret_id: secret.secret_id } });

    const once = await runAgent(['run', '--once', ...common(dir)], { env });
    expect(once.code, once.stderr).toBe(0);
    const report = await status(dir, env);
    expect(report.enrolled_with).toEqual({ method: 'enroll_secret', secret_id: secret.secret_id });
    const device = await running.current.showDevice(String(report.device_id));
    expect(device).toMatchObject({
      state: 'ACTIVE',
      enroll_secret_id: secret.secret_id,
      hardware_uuid: `${TEST_IDENTITY_PREFIX}${env.DEVICE_AGENT_TEST_HARDWARE_UUID}`,
      hostname: env.DEVICE_AGENT_TEST_HOSTNAME,
    });

    const human = await runAgent(['status', ...common(dir)], { env });
    expect(human.stdout).toMatch(new RegExp(`Enrolled with:\\s+the enrollment secret ${secret.secret_id}\\n`));
    const doctor = await runAgent(['doctor', '--json', ...common(dir)], { env });
    const enrollmentCheck = parseJson<{ checks: { id: string; detail: string }[] }>(doctor.stdout).checks.find(
      (c) => c.id === 'enrollment',
    );
    expect(enrollmentCheck?.detail).toContain(`using the enrollment secret ${secret.secret_id}`);
    expectSecretNowhere(secret, dir, result, once, human, doctor);
  });

  it('--enroll-secret - (standard input) and DEVICE_AGENT_ENROLL_SECRET (managed installs) enroll the same way', async () => {
    const secret = await createSecret(running.current);
    const [piped, fromEnv] = [stateDir(), stateDir()];
    const results = await Promise.all([
      runAgent(['enroll', '--server', running.current.url, '--enroll-secret', '-', ...common(piped)], {
        env: machine(),
        input: `${secret.enroll_secret}\n`,
      }),
      runAgent(['enroll', ...common(fromEnv)], {
        env: { ...machine(), DEVICE_AGENT_SERVER: running.current.url, DEVICE_AGENT_ENROLL_SECRET: secret.enroll_secret },
      }),
    ]);
    for (const [i, dir] of [piped, fromEnv].entries()) {
      expect(results[i]!.code, results[i]!.stderr).toBe(0);
      expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).enrolled_with).toEqual({
        method: 'enroll_secret',
        secret_id: secret.secret_id,
      });
      expectSecretNowhere(secret, dir, results[i]!);
    }
  });

  it('a token still enrolls as before, and status says so', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const env = machine();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      env,
      input: device.enrollment_token,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await status(dir, env)).enrolled_with).toEqual({ method: 'token' });
    expect((await runAgent(['status', ...common(dir)], { env })).stdout).toMatch(/Enrolled with:\s+a one-time enrollment token\n/);
  });

  it('a secret as a command-line value is refused before anything is sent, without repeating it', async () => {
    const secret = await createSecret(running.current);
    const dir = stateDir();
    for (const args of [['--enroll-secret', secret.enroll_secret], [`--enroll-secret=${secret.enroll_secret}`]]) {
      const result = await runAgent(['enroll', '--server', running.current.url, ...args, ...common(dir)], { env: machine() });
      expectUserError(result, 2, /an enrollment secret is not accepted as a command-line value .*--enroll-secret-file <path>/);
      expectSecretNowhere(secret, dir, result);
      expect(existsSync(dir)).toBe(false);
    }
    const listed = JSON.parse((await runServerCli(['secret', 'list', '--db', running.current.dbPath, '--json'])).stdout) as {
      secret_id: string;
      uses: number;
    }[];
    expect(listed.find((s) => s.secret_id === secret.secret_id)?.uses).toBe(0);
  });

  it('a secret and a token together are ambiguous (exit 2); a flag overrides the environment', async () => {
    const secret = await createSecret(running.current);
    const device = await running.current.createDevice();
    const dir = stateDir();
    const both = await runAgent(
      ['enroll', '--server', running.current.url, '--enroll-secret-file', secretFile(secret), '--token', '-', ...common(dir)],
      { env: machine(), input: device.enrollment_token },
    );
    expectUserError(both, 2, /give either an enrollment token or an enrollment secret, not both/);
    const envBoth = await runAgent(['enroll', '--server', running.current.url, ...common(dir)], {
      env: { ...machine(), DEVICE_AGENT_TOKEN: device.enrollment_token, DEVICE_AGENT_ENROLL_SECRET: secret.enroll_secret },
    });
    expectUserError(envBoth, 2, /DEVICE_AGENT_TOKEN and DEVICE_AGENT_ENROLL_SECRET are both set/);
    expect(existsSync(dir)).toBe(false);
    const flagWins = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      env: { ...machine(), DEVICE_AGENT_ENROLL_SECRET: secret.enroll_secret },
      input: device.enrollment_token,
    });
    expect(flagWins.code, flagWins.stderr).toBe(0);
    expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).enrolled_with).toEqual({ method: 'token' });
    expectSecretNowhere(secret, dir, both, envBoth, flagWins);
  });

  it('a revoked secret: exit 3, one clear message, nothing stored', async () => {
    const secret = await createSecret(running.current);
    await runServerCli(['secret', 'revoke', secret.secret_id, '--db', running.current.dbPath]);
    const dir = stateDir();
    const result = await enrollWithSecret(dir, secret);
    expectUserError(
      result,
      3,
      /^device-agent: the server refused the enrollment secret: unknown, revoked, expired or used up: .*\(nothing was stored\)$/m,
    );
    expect(listStateFiles(dir).filter((f) => !f.isDirectory)).toEqual([]);
    expectSecretNowhere(secret, dir, result);
  });

  it('a server without the route (404 or 405): exit 2, "does not support enrollment secrets", nothing stored; the secret is in no process list', async () => {
    const secret = await createSecret(running.current);
    const proxy = await startFaultProxy(running.current.url);
    try {
      for (const status of [404, 405]) {
        proxy.clearRules();
        proxy.add({ route: 'register', fault: { kind: 'answer', status, body: { error: 'not_found', message: 'no such route' } } });
        const dir = stateDir();
        const path = secretFile(secret);
        // While the agent waits for /register, its command line and every agent process's are read.
        const cmdlines: string[] = [];
        proxy.onRequest = () => cmdlines.push(...agentCommandLines());
        const child = spawn(process.execPath, [AGENT_BIN, 'enroll', '--server', proxy.url, '--enroll-secret-file', path, ...common(dir)], {
          env: machine(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const [code] = (await once(child, 'close')) as [number];
        expect({ code, stderr }).toMatchObject({ code: 2 });
        expect(stderr).toMatch(
          /this server does not support enrollment secrets; enroll with a one-time token instead \(nothing was stored\)/,
        );
        expect(stderr).not.toContain(secret.enroll_secret);
        expect(listStateFiles(dir).filter((f) => !f.isDirectory)).toEqual([]);
        expect(cmdlines.some((line) => line.includes(path))).toBe(true);
        for (const line of cmdlines) expect(line).not.toContain(secret.enroll_secret.slice(4));
      }
      expect(proxy.seen('enroll')).toEqual([]);
    } finally {
      proxy.onRequest = undefined;
      await proxy.stop();
    }
  });

  it('killed between /register and /enroll: nothing half-enrolled; the next attempt spends the kept registration, no second registration or device', async () => {
    const secret = await createSecret(running.current);
    const proxy = await startFaultProxy(running.current.url);
    try {
      // Never answered: the agent is killed while it waits, and the server never sees this one.
      proxy.add({ route: 'enroll', fault: { kind: 'hang' }, times: 1 });
      const dir = stateDir();
      const env = machine();
      const child = spawn(
        process.execPath,
        [AGENT_BIN, 'enroll', '--server', proxy.url, '--enroll-secret-file', secretFile(secret), ...common(dir)],
        { env, stdio: 'ignore' },
      );
      await proxy.waitFor((seen) => seen.some((r) => r.route === 'enroll'), 60_000);
      child.kill('SIGKILL');
      await once(child, 'close');
      expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).state).toBe('enrolling');
      // The registration is kept for the next attempt: owner-only, its token but never the secret.
      const kept = listStateFiles(dir).find((f) => f.path === 'registration.json');
      expect(kept?.mode).toBe(0o600);
      expect(kept?.content).not.toContain(secret.enroll_secret.slice(4));
      // Not enrolled meanwhile: status says an enrollment was cut short.
      expect((await status(dir, env)).interrupted).toBe('enrolling');

      const again = await enrollWithSecret(dir, secret, env, proxy.url);
      expect(again.code, again.stderr).toBe(0);
      expect(proxy.seen('register').map((r) => r.status)).toEqual([200]);
      expect(proxy.seen('enroll').map((r) => r.status)).toEqual([0, 200]);
      expect(await secretUses(secret)).toBe(1);
      expect(existsSync(join(dir, 'registration.json'))).toBe(false);
      expect((await runAgent(['run', '--once', ...common(dir)], { env: { ...env, DEVICE_AGENT_SERVER: proxy.url } })).code).toBe(0);
      expectSecretNowhere(secret, dir, again);
    } finally {
      await proxy.stop();
    }
  });

  it('an /enroll answer lost after the server issued the key: retried with the same token (refused: spent), registered again without a second use or device, then ACTIVE', async () => {
    const secret = await createSecret(running.current);
    const proxy = await startFaultProxy(running.current.url);
    try {
      proxy.add({ route: 'enroll', fault: { kind: 'drop' }, times: 1 });
      const dir = stateDir();
      const env = { ...machine(), DEVICE_AGENT_RETRY_BASE_MS: '200' };
      const result = await enrollWithSecret(dir, secret, env, proxy.url);
      expect(result.code, result.stderr).toBe(0);
      // The server processed the dropped /enroll (its key is never received); the retry with the same
      // token is refused as spent; this host registers again and the server gives its record a new token.
      expect(proxy.seen('enroll').map((r) => r.status)).toEqual([0, 401, 200]);
      const registered = proxy.seen('register');
      expect(registered.map((r) => r.status)).toEqual([200, 200]);
      expect(await secretUses(secret)).toBe(1);
      const hardwareUuid = (registered[0]!.body as { hardware_uuid: string }).hardware_uuid;
      const devices = JSON.parse(
        (await runServerCli(['device', 'list', '--db', running.current.dbPath, '--org', 'acme', '--json'])).stdout,
      ) as {
        hardware_uuid: string | null;
      }[];
      expect(devices.filter((d) => d.hardware_uuid?.endsWith(hardwareUuid))).toHaveLength(1);
      expect(listStateFiles(dir).map((f) => f.path)).not.toContain('registration.json');
      expect((await runAgent(['run', '--once', ...common(dir)], { env: { ...env, DEVICE_AGENT_SERVER: proxy.url } })).code).toBe(0);
      const deviceId = String((await status(dir, env)).device_id);
      expect(await running.current.showDevice(deviceId)).toMatchObject({ state: 'ACTIVE', supersedes: null });
      expectSecretNowhere(secret, dir, result);
    } finally {
      await proxy.stop();
    }
  });

  it('the same across runs: an enroll that gave up (exit 4) keeps its registration, and the next run spends no second use', async () => {
    const secret = await createSecret(running.current);
    const proxy = await startFaultProxy(running.current.url);
    try {
      proxy.add({ route: 'enroll', fault: { kind: 'drop' }, times: 1 });
      const dir = stateDir();
      const env = machine();
      const first = await enrollWithSecret(dir, secret, { ...env, DEVICE_AGENT_RETRY_ATTEMPTS: '1' }, proxy.url);
      expectUserError(first, 4, /^device-agent: cannot reach .*\(not enrolled; try again later\)$/m);
      expect(
        listStateFiles(dir)
          .filter((f) => !f.isDirectory)
          .map((f) => f.path),
      ).toEqual(['registration.json']);

      const second = await enrollWithSecret(dir, secret, env, proxy.url);
      expect(second.code, second.stderr).toBe(0);
      expect(proxy.seen('register').map((r) => r.status)).toEqual([200, 200]);
      expect(proxy.seen('enroll').map((r) => r.status)).toEqual([0, 401, 200]);
      expect(await secretUses(secret)).toBe(1);
      expectSecretNowhere(secret, dir, first, second);
    } finally {
      await proxy.stop();
    }
  });

  it('503 with Retry-After on /register and on /enroll: retried after the server’s delay, then enrolled', async () => {
    const secret = await createSecret(running.current);
    const proxy = await startFaultProxy(running.current.url);
    try {
      const unavailable = { error: 'database_unavailable', message: 'the database is unavailable for a moment; try again later' };
      for (const route of ['register', 'enroll'])
        proxy.add({ route, fault: { kind: 'answer', status: 503, headers: { 'retry-after': '1' }, body: unavailable }, times: 1 });
      const dir = stateDir();
      const result = await enrollWithSecret(dir, secret, machine(), proxy.url);
      expect(result.code, result.stderr).toBe(0);
      for (const route of ['register', 'enroll']) {
        const seen = proxy.seen(route);
        expect(seen.map((r) => r.status)).toEqual([503, 200]);
        expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(1_000);
      }
      expect(await secretUses(secret)).toBe(1);
    } finally {
      await proxy.stop();
    }
  });

  it('re-enrollment after the state directory was deleted supersedes the device of the same hardware_uuid', async () => {
    const secret = await createSecret(running.current);
    const env = machine();
    const dir = stateDir();
    expect((await enrollWithSecret(dir, secret, env)).code).toBe(0);
    expect((await runAgent(['run', '--once', ...common(dir)], { env })).code).toBe(0);
    const first = String((await status(dir, env)).device_id);
    rmSync(dir, { recursive: true, force: true });

    const again = await enrollWithSecret(dir, secret, env);
    expect(again.code, again.stderr).toBe(0);
    expect((await runAgent(['run', '--once', ...common(dir)], { env })).code).toBe(0);
    const second = String((await status(dir, env)).device_id);
    expect(second).not.toBe(first);
    expect(await running.current.showDevice(second)).toMatchObject({ state: 'ACTIVE', supersedes: first, duplicate_of: null });
    expect(await running.current.showDevice(first)).toMatchObject({ state: 'REVOKED' });
  });

  it('two clones with one hardware_uuid (two hosts, both live): the second is recorded as a duplicate, gets the conflict, and nothing is wiped', async () => {
    const secret = await createSecret(running.current);
    const uuid = `clone-${process.pid}-${Date.now()}`;
    const [a, b] = [stateDir(), stateDir()];
    const [envA, envB] = [machine(uuid, 'clone-a'), machine(uuid, 'clone-b')];
    expect((await enrollWithSecret(a, secret, envA)).code).toBe(0);
    expect((await runAgent(['run', '--once', ...common(a)], { env: envA })).code).toBe(0);
    const original = String((await status(a, envA)).device_id);

    const second = await enrollWithSecret(b, secret, envB);
    expect(second.code, second.stderr).toBe(0);
    const onceB = await runAgent(['run', '--once', ...common(b)], { env: { ...envB, DEVICE_AGENT_RETRY_ATTEMPTS: '1' } });
    const reportB = await status(b, envB);
    expect(reportB.enrolled).toBe(true); // a conflict is not a revoked key: nothing wiped
    expect(reportB.conflict?.message, onceB.stderr).toMatch(/hardware_uuid/);
    // The original keeps working, and the server shows the clone as its duplicate.
    expect((await runAgent(['run', '--once', ...common(a)], { env: envA })).code).toBe(0);
    const listed = JSON.parse((await runServerCli(['device', 'list', '--db', running.current.dbPath, '--json'])).stdout) as {
      device_id: string;
      duplicate_of?: string | null;
    }[];
    const clones = listed.filter((d) => d.duplicate_of === original);
    expect(clones).toHaveLength(1);
    expect(await running.current.showDevice(clones[0]!.device_id)).toMatchObject({ state: 'PENDING', duplicate_of: original });
    expect(await running.current.showDevice(original)).toMatchObject({ state: 'ACTIVE' });
  });
});

/** The command lines of this machine's running agent processes (what any local user can read). */
function agentCommandLines(): string[] {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (line.includes('device-agent')) lines.push(line);
    } catch {
      // exited meanwhile
    }
  }
  return lines;
}

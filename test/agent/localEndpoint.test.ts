// The service's local endpoint with real uids on this machine: the endpoint (src/agent/unixSocketEndpoint.ts)
// on a real socket, handing the real server's device page URL, obtained with a real enrollment, to the
// console user and root only: another user's connect() is refused by the kernel; a change of console
// user moves the socket to the new one; a mode the owner widened is put right and the connection made
// through it refused. Then the real daemon as the system service: `check --report` runs a cycle and
// the server has its results at once; a second within the minute is refused.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requestDevicePage } from '../../src/agent/devicePage';
import { askLocalEndpoint, type LocalEndpoint } from '../../src/agent/localEndpoint';
import { startSocketEndpoint } from '../../src/agent/unixSocketEndpoint';
import { createLogger } from '../../src/agent/logger';
import { openAgentState } from '../../src/agent/state';
import {
  agentEnv,
  daemonEnv,
  enrollNewDevice,
  makeStateDir,
  removeStateDir,
  runAgent,
  startDaemon,
  stopDaemon,
  until,
} from '../support/agent';
import { startServer, type RunningServer } from '../support/server';
import { call } from '../server/client';
import { systemUser } from '../support/users';

const asRoot = process.getuid?.() === 0;
const SECOND_USER = 'da-mydevice';
const NOBODY = 65534;
let other = -1;

let server: RunningServer;
let stateDir: string;
let runtimeParent: string;

beforeAll(async () => {
  if (!asRoot) return;
  other = systemUser(SECOND_USER).uid;
  server = await startServer();
  stateDir = await makeStateDir();
  await enrollNewDevice(server, stateDir, server.url);
  const once = await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 });
  expect(once.code, once.stderr).toBe(0);
  // Other users must reach the runtime directory, as they reach /run.
  runtimeParent = mkdtempSync(join(tmpdir(), 'device-agent-run-'));
  chmodSync(runtimeParent, 0o755);
});
afterAll(async () => {
  await server?.stop();
  if (stateDir) await removeStateDir(stateDir);
  if (runtimeParent) rmSync(runtimeParent, { recursive: true, force: true });
});

/** `my-device --print-url` as `uid`, without --state-dir, told where the service's endpoint is. */
function myDeviceAs(uid: number, dir: string) {
  return runAgent(['my-device', '--print-url'], {
    env: agentEnv({ DEVICE_AGENT_RUNTIME_DIR: dir }),
    uid,
    gid: uid === NOBODY ? NOBODY : uid,
  });
}

async function expectWorkingUrl(stdout: string): Promise<void> {
  const url = new URL(stdout.trim());
  const visit = await call(server, `${url.pathname}${url.search}`, { method: 'GET', headers: { accept: 'text/html' } });
  expect(visit.status).toBe(303);
}

describe.skipIf(!asRoot)('the local endpoint, with two real users', () => {
  let endpoint: LocalEndpoint;
  let dir: string;
  let consoleUser: number | null = NOBODY;

  beforeAll(async () => {
    dir = join(runtimeParent, 'endpoint');
    const state = await openAgentState(stateDir);
    endpoint = await startSocketEndpoint({
      dir,
      consoleUid: () => Promise.resolve(consoleUser),
      log: await createLogger({ level: 'error' }),
      // Only connections bring the owner in line here, so that each step below sees what it set up.
      admitEveryMs: 3_600_000,
      handlers: { devicePage: () => requestDevicePage(state, {}), check: () => Promise.resolve('not_ready') },
    });
  });
  afterAll(async () => {
    await endpoint?.close();
  });

  test('the console user gets a working URL; another user is refused by the kernel; root gets one', async () => {
    expect(statSync(endpoint.path)).toMatchObject({ uid: NOBODY });
    expect(statSync(endpoint.path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o755);

    const mine = await myDeviceAs(NOBODY, dir);
    expect(mine.code, mine.stderr).toBe(0);
    await expectWorkingUrl(mine.stdout);

    const theirs = await myDeviceAs(other, dir);
    expect(theirs.code).toBe(2);
    expect(theirs.stdout).toBe('');
    expect(theirs.stderr).toContain("answers only the user logged in at this computer's screen, and root");

    const root = await askLocalEndpoint(endpoint.path, { op: 'device-page' });
    expect(root).toMatchObject({ ok: true, url: expect.stringMatching(/\/my-device\?code=/) as unknown });
  });

  test('a new console user: the socket moves to them; the one connection made meanwhile is refused', async () => {
    consoleUser = other;
    // Root's connection comes first: the owner was stale, so the daemon cannot tell who else got in.
    expect(await askLocalEndpoint(endpoint.path, { op: 'device-page' })).toMatchObject({ ok: false, error: 'refused' });
    expect(statSync(endpoint.path)).toMatchObject({ uid: other });
    const now = await myDeviceAs(other, dir);
    expect(now.code, now.stderr).toBe(0);
    await expectWorkingUrl(now.stdout);
    expect((await myDeviceAs(NOBODY, dir)).code).toBe(2);
    consoleUser = NOBODY;
    await askLocalEndpoint(endpoint.path, { op: 'device-page' });
  });

  test('nobody at the screen: root only', async () => {
    consoleUser = null;
    await askLocalEndpoint(endpoint.path, { op: 'device-page' });
    expect(statSync(endpoint.path)).toMatchObject({ uid: 0 });
    expect((await myDeviceAs(NOBODY, dir)).code).toBe(2);
    expect((await myDeviceAs(other, dir)).code).toBe(2);
    consoleUser = NOBODY;
    await askLocalEndpoint(endpoint.path, { op: 'device-page' });
  });

  test('the console user widening the mode lets nobody else through: the daemon refuses and narrows it', async () => {
    expect(statSync(endpoint.path)).toMatchObject({ uid: NOBODY });
    execFileSync('runuser', ['-u', 'nobody', '--', 'chmod', '666', endpoint.path]);
    const sneaked = await myDeviceAs(other, dir);
    expect(sneaked.code).toBe(1);
    expect(sneaked.stdout).toBe('');
    expect(sneaked.stderr).toContain('the console user changed; try again');
    expect(statSync(endpoint.path).mode & 0o777).toBe(0o600);
    expect((await myDeviceAs(other, dir)).code).toBe(2);
  });

  test('a malformed request gets an error, and the endpoint stays', async () => {
    const { createConnection } = await import('node:net');
    const answer = await new Promise<string>((resolve) => {
      const socket = createConnection(endpoint.path, () => socket.write('{"op":"anything"}\n'));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(text));
    });
    expect(JSON.parse(answer)).toMatchObject({ ok: false, error: 'bad_request' });
    expect(await askLocalEndpoint(endpoint.path, { op: 'device-page' })).toMatchObject({ ok: true });
  });
});

describe.skipIf(!asRoot)('check --report through the running service', () => {
  test('the daemon runs a cycle at once and the server has it; a second within the minute is refused', async () => {
    const dir = join(runtimeParent, 'service');
    const env = { DEVICE_AGENT_RUNTIME_DIR: dir };
    const daemon = startDaemon(stateDir, env);
    try {
      await until(
        () => daemon.lines.filter((line) => line.event === 'posture_cycle' && line.outcome === 'delivered').length,
        (n) => n >= 1,
        60_000,
        'first cycle delivered',
      );
      const { device_id: deviceId } = JSON.parse(
        (await runAgent(['status', '--json', '--state-dir', stateDir], { env: daemonEnv() })).stdout,
      ) as { device_id: string };
      const before = (await server.showDevice(deviceId)).postures.length;
      const report = await runAgent(['check', '--report'], { env: daemonEnv(env), timeoutMs: 120_000 });
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toContain('the server has the results');
      expect((await server.showDevice(deviceId)).postures.length).toBeGreaterThan(before);
      const again = await runAgent(['check', '--report'], { env: daemonEnv(env) });
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('try again in a minute');
    } finally {
      expect((await stopDaemon(daemon)).code).toBe(0);
    }
    // The endpoint is gone with the daemon.
    const after = await runAgent(['check', '--report'], { env: daemonEnv(env) });
    expect(after.code).toBe(2);
    expect(after.stderr).toContain('not running');
  }, 180_000);
});

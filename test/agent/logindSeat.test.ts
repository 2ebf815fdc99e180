// Who is at the screen, according to a real systemd-logind (test/support/logind.ts: this machine's
// logind, its sessions opened by the real pam_systemd, in a mount namespace of its own; only the
// service manager is a stand-in). consoleUid (src/platform/localEndpoint.ts) names the user of
// seat0's active session, as loginctl does; a user logged in without a seat, as over ssh, is not at
// the screen; after logout nobody is. Then the real daemon as the system service following that
// logind: its local endpoint gives the device page URL to the user at seat0 and the kernel refuses
// the other user's connect(), while that user is logged in too; after logout both are refused.
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { consoleUid, ENDPOINT_SOCKET } from '../../src/platform/localEndpoint';
import { agentEnv, enrollNewDevice, makeStateDir, removeStateDir, runAgent, startDaemon, stopDaemon, until } from '../support/agent';
import { logindMissing, startLogind, type Logind } from '../support/logind';
import { requireTools } from '../support/requireTools';
import { startServer, type RunningServer } from '../support/server';
import { systemUser } from '../support/users';

const tools = requireTools(['unshare', 'nsenter', 'runuser', 'dbus-daemon', 'loginctl'], 'the console user according to a real logind');
const missing = tools.skip ? null : logindMissing();
const skip = tools.skip || missing !== null;
const title = missing === null ? tools.title : `${tools.title} (skipped: ${missing})`;

let logind: Logind;
let atScreen: { uid: number; gid: number };
let elsewhere: { uid: number; gid: number };

beforeAll(async () => {
  if (skip) return;
  atScreen = systemUser('da-seat-a');
  elsewhere = systemUser('da-seat-b');
  logind = await startLogind();
}, 60_000);
afterAll(async () => {
  await logind?.stop();
});

/** What consoleUid says, reading this logind's seat0. */
const consoleUser = () => consoleUid('linux', { DEVICE_AGENT_TEST_SEAT_FILE: logind.seatFile });
/** loginctl's answer: the uid of seat0's active session, or null. */
const loginctlUser = () => {
  const session = logind.loginctl(['show-seat', 'seat0', '-p', 'ActiveSession', '--value']).trim();
  return session === '' ? null : Number(logind.loginctl(['show-session', session, '-p', 'User', '--value']).trim());
};

describe.skipIf(skip)(title, () => {
  test('seat0: nobody; the user logged in there; not a user logged in without a seat; nobody after logout', async () => {
    expect(await consoleUser()).toBeNull();
    expect(loginctlUser()).toBeNull();
    const there = await logind.login('da-seat-a', 'seat0');
    expect(await consoleUser()).toBe(atScreen.uid);
    expect(loginctlUser()).toBe(atScreen.uid);
    const remote = await logind.login('da-seat-b', 'no seat');
    expect(logind.loginctl(['show-session', remote.id, '-p', 'Seat', '--value']).trim()).toBe('');
    expect(await consoleUser()).toBe(atScreen.uid);
    await there.logout();
    expect(loginctlUser()).toBeNull();
    expect(await consoleUser()).toBeNull();
    // The seatless login is still there, and still not at the screen.
    expect(logind.loginctl(['list-sessions', '--no-legend'])).toContain('da-seat-b');
    await remote.logout();
    expect(await consoleUser()).toBeNull();
  }, 60_000);

  describe('the system service follows it', () => {
    let server: RunningServer;
    let stateDir: string;
    let runtimeParent: string;
    beforeAll(async () => {
      server = await startServer();
      stateDir = await makeStateDir();
      await enrollNewDevice(server, stateDir, server.url);
      // Other users must reach the endpoint's directory, as they reach /run.
      runtimeParent = mkdtempSync(join(tmpdir(), 'device-agent-run-'));
      chmodSync(runtimeParent, 0o755);
    });
    afterAll(async () => {
      await server?.stop();
      if (stateDir) await removeStateDir(stateDir);
      if (runtimeParent) rmSync(runtimeParent, { recursive: true, force: true });
    });

    test('the user at seat0 gets the URL; the user logged in elsewhere is refused; after logout, both', async () => {
      const dir = join(runtimeParent, 'endpoint');
      const socket = join(dir, ENDPOINT_SOCKET);
      const daemon = startDaemon(stateDir, { DEVICE_AGENT_TEST_SEAT_FILE: logind.seatFile, DEVICE_AGENT_RUNTIME_DIR: dir });
      const myDevice = ({ uid, gid }: { uid: number; gid: number }) =>
        runAgent(['my-device', '--print-url'], { env: agentEnv({ DEVICE_AGENT_RUNTIME_DIR: dir }), uid, gid });
      /** Waits for the daemon to hand the socket to `uid` (it follows the console user every few seconds). */
      const ownedBy = (uid: number) =>
        until(
          () => statSync(socket, { throwIfNoEntry: false })?.uid,
          (owner) => owner === uid,
          30_000,
          `the endpoint owned by ${uid}`,
        );
      try {
        await until(() => daemon.lines.some((line) => line.event === 'posture_cycle'), Boolean, 60_000, 'a first cycle');
        await ownedBy(0);
        expect((await myDevice(atScreen)).code).toBe(2);

        const there = await logind.login('da-seat-a', 'seat0');
        const remote = await logind.login('da-seat-b', 'no seat');
        await ownedBy(atScreen.uid);
        const mine = await myDevice(atScreen);
        expect(mine.code, mine.stderr).toBe(0);
        expect(new URL(mine.stdout.trim()).pathname).toBe('/my-device');
        const theirs = await myDevice(elsewhere);
        expect(theirs.code).toBe(2);
        expect(theirs.stdout).toBe('');
        expect(theirs.stderr).toContain("answers only the user logged in at this computer's screen, and root");

        await there.logout();
        await ownedBy(0);
        for (const user of [atScreen, elsewhere]) expect((await myDevice(user)).code).toBe(2);
        await remote.logout();
      } finally {
        expect((await stopDaemon(daemon)).code, daemon.output()).toBe(0);
      }
    }, 180_000);
  });
});

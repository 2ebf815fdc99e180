// The service running as root notifies the console user on that user's own session bus. This machine
// has no logind, so the test makes what logind would: a console user (a second real uid), their
// runtime directory /run/user/<uid> (0700, theirs) and a real dbus-daemon started as them listening
// at /run/user/<uid>/bus, and a seat file in logind's format naming them (DEVICE_AGENT_TEST_SEAT_FILE,
// read only by consoleUid). The notification server stand-in connects as root, which the bus's
// configuration allows for it alone, and records each Notify with who sent it: the kernel's uid of the
// sender's connection (GetConnectionUnixUser) and the sending process's uids, gids, groups and
// environment from /proc. Then the policy that turns notifications off, with the same real daemon.
// logind itself tells the console user in test/agent/logindSeat.test.ts; not covered: a graphical
// notification server.
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { BusConnection } from '../../src/linkHandler/dbusWire';
import {
  enrollWithToken,
  makeStateDir,
  removeStateDir,
  startDaemon,
  stopDaemon,
  tempDir,
  until,
  type RunningDaemon,
} from '../support/agent';
import { requireTools } from '../support/requireTools';
import { startBareSessionBus } from '../support/secretService';
import { startServer, tryServerCli, type RunningServer } from '../support/server';
import { systemUser } from '../support/users';

const asRoot = process.getuid?.() === 0;
const tools = requireTools(['dbus-daemon'], 'the root service notifies the console user on their own session bus, running as them');
const skip = !asRoot || tools.skip;
const USER = 'da-notify';

interface Recorded {
  title: string;
  senderUid: number;
  /** From /proc/<pid>/status of the sending process. */
  uids: string;
  gids: string;
  groups: string;
  environ: string[];
}

let user: { uid: number; gid: number };
let runtime: string;
let bus: { stop: () => Promise<void> } | undefined;
let standIn: BusConnection;
let portal: BusConnection;
/** The OpenURI calls the portal stand-in got. */
let opened: Array<{ uri: string; senderUid: number }> = [];
/** The stand-in presses each notification's "Open My device" button instead of closing it. */
let pressButton = false;
let recorded: Recorded[] = [];
let seatFile: string;
let endpointDir: string;
let server: RunningServer;
const stateDirs: string[] = [];

beforeAll(async () => {
  if (skip) return;
  user = systemUser(USER);
  runtime = `/run/user/${user.uid}`;
  expect(existsSync(runtime), `${runtime} exists already: not this test's to use`).toBe(false);
  mkdirSync(runtime, { mode: 0o700 });
  chownSync(runtime, user.uid, user.gid);
  // The user's session bus; root is let in too, for the recording stand-in only.
  bus = await startBareSessionBus({ dir: runtime, as: user, alsoRoot: true });
  standIn = await BusConnection.open(`unix:path=${runtime}/bus`);
  const dbus = ['org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus'] as const;
  expect(await standIn.call(...dbus, 'RequestName', 'su', ['org.freedesktop.Notifications', 4])).toEqual([1]);
  standIn.handleCalls((call) => {
    if (call.member !== 'Notify') return standIn.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', 'stand-in');
    void (async () => {
      const [senderUid] = await standIn.call(...dbus, 'GetConnectionUnixUser', 's', [call.sender!]);
      const [pid] = await standIn.call(...dbus, 'GetConnectionUnixProcessID', 's', [call.sender!]);
      const status = readFileSync(`/proc/${Number(pid)}/status`, 'utf8');
      const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
      const environ = readFileSync(`/proc/${Number(pid)}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean);
      recorded.push({
        title: call.body[3] as string,
        senderUid: Number(senderUid),
        uids: field('Uid'),
        gids: field('Gid'),
        groups: field('Groups'),
        environ,
      });
      const id = recorded.length;
      standIn.reply(call, 'u', [id]);
      if (pressButton)
        standIn.emit('/org/freedesktop/Notifications', 'org.freedesktop.Notifications', 'ActionInvoked', 'us', [id, 'my-device']);
      else standIn.emit('/org/freedesktop/Notifications', 'org.freedesktop.Notifications', 'NotificationClosed', 'uu', [id, 2]);
    })();
  });
  // The desktop portal of the user's session, recorded: what "Open My device" asks it to open, and who asked.
  portal = await BusConnection.open(`unix:path=${runtime}/bus`);
  expect(await portal.call(...dbus, 'RequestName', 'su', ['org.freedesktop.portal.Desktop', 4])).toEqual([1]);
  portal.handleCalls((call) => {
    if (call.member !== 'OpenURI') return portal.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', 'stand-in');
    void portal.call(...dbus, 'GetConnectionUnixUser', 's', [call.sender!]).then(([senderUid]) => {
      opened.push({ uri: call.body[1] as string, senderUid: Number(senderUid) });
      portal.reply(call, 'o', ['/org/freedesktop/portal/desktop/request/1_1/t']);
    });
  });
  seatFile = join(tempDir(), 'seat0');
  // logind's format (test/agent/platformSeams.test.ts has the same lines).
  writeFileSync(
    seatFile,
    `# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\nCAN_TTY=1\nCAN_GRAPHICAL=1\nACTIVE=2\nACTIVE_UID=${user.uid}\nSESSIONS=2\n`,
  );
  // The service's local endpoint, which a root daemon opens, away from /run/device-agent; the
  // console user's my-device must reach it, as it reaches /run.
  const runParent = tempDir();
  chmodSync(runParent, 0o755);
  endpointDir = join(runParent, 'run');
  server = await startServer();
}, 60_000);

afterAll(async () => {
  await portal?.close();
  await standIn?.close();
  await bus?.stop();
  await server?.stop();
  for (const dir of stateDirs) await removeStateDir(dir);
  if (runtime && existsSync(runtime)) rmSync(runtime, { recursive: true, force: true });
});

beforeEach(() => {
  recorded = [];
  opened = [];
  pressButton = false;
});

/** The root daemon enrolled in `org`, running until `event` is logged; its log lines. */
async function rootDaemonUntil(org: string, event: string, args: string[] = []): Promise<RunningDaemon['lines']> {
  const stateDir = await makeStateDir();
  stateDirs.push(stateDir);
  const created = await server.createDevice({ org });
  await enrollWithToken(stateDir, server.url, created.enrollment_token);
  const daemon = startDaemon(stateDir, { DEVICE_AGENT_TEST_SEAT_FILE: seatFile, DEVICE_AGENT_RUNTIME_DIR: endpointDir }, args);
  try {
    await until(() => daemon.lines.some((line) => line.event === event), Boolean, 120_000, event);
  } finally {
    expect((await stopDaemon(daemon)).code, daemon.output()).toBe(0);
    await helpersGone();
  }
  return daemon.lines;
}

/**
 * Waits until no helper of the console user's runs (`notify`, and the `my-device` it runs): one the
 * daemon started just before it stopped would otherwise Notify during the next test.
 */
async function helpersGone(): Promise<void> {
  const helpers = () =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
          // The agent sets its process title ("device-agent notify"): the command line is one string.
          const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          return Number(uid) === user.uid && /\b(notify|my-device)\b/.test(command);
        } catch {
          return false;
        }
      });
  await until(helpers, (left) => left.length === 0, 60_000, "the console user's helpers ended");
}

const policyFile = (document: unknown) => {
  const file = join(tempDir(), 'policy.json');
  writeFileSync(file, JSON.stringify(document));
  return file;
};

describe.skipIf(skip)(asRoot ? tools.title : 'needs root: the root service notifies the console user (two real uids)', () => {
  test("the root daemon's notification reaches the console user's bus, sent by a process that is that user only", async () => {
    const lines = await rootDaemonUntil('notify-on', 'notification');
    // This machine fails at least one check (a container filters no inbound traffic).
    await until(
      () => recorded.length,
      (n) => n > 0,
      30_000,
      'a Notify call recorded',
    );
    const shown = lines.filter((line) => line.event === 'notification').map((line) => `${String(line.check_key)} fails on this device`);
    expect(recorded.map((r) => r.title)).toEqual(expect.arrayContaining(shown.slice(0, recorded.length)));
    const { uid, gid } = user;
    for (const r of recorded) {
      // The bus's view (the kernel's credentials of the connection) and the process's own.
      expect(r.senderUid).toBe(uid);
      expect(r.uids).toBe(`${uid}\t${uid}\t${uid}\t${uid}`);
      expect(r.gids).toBe(`${gid}\t${gid}\t${gid}\t${gid}`);
      // None of root's supplementary groups kept.
      expect(r.groups).toBe('');
      // Only what the helper needs: nothing of the service's environment (its state, its settings).
      expect(r.environ.sort()).toEqual([
        `DBUS_SESSION_BUS_ADDRESS=unix:path=${runtime}/bus`,
        // Where this test moved the service's endpoint to: the helper's my-device must find it.
        `DEVICE_AGENT_RUNTIME_DIR=${endpointDir}`,
        'PATH=/usr/bin:/bin',
        `XDG_RUNTIME_DIR=${runtime}`,
      ]);
    }
  }, 180_000);

  test('"Open My device": the console user\'s helper gets the URL from the root service\'s endpoint and their portal opens it', async () => {
    pressButton = true;
    const stateDir = await makeStateDir();
    stateDirs.push(stateDir);
    const created = await server.createDevice({ org: 'notify-open' });
    await enrollWithToken(stateDir, server.url, created.enrollment_token);
    const daemon = startDaemon(stateDir, { DEVICE_AGENT_TEST_SEAT_FILE: seatFile, DEVICE_AGENT_RUNTIME_DIR: endpointDir });
    try {
      await until(
        () => opened.length,
        (n) => n > 0,
        120_000,
        'an OpenURI call',
      );
    } finally {
      expect((await stopDaemon(daemon)).code, daemon.output()).toBe(0);
      await helpersGone();
    }
    expect(daemon.lines.some((line) => line.event === 'local_endpoint_request' && line.op === 'device-page')).toBe(true);
    const [first] = opened;
    // Asked on the user's bus by the user, not by root.
    expect(first!.senderUid).toBe(user.uid);
    const url = new URL(first!.uri);
    expect(url.origin).toBe(server.url);
    expect(url.pathname).toBe('/my-device');
    const visit = await fetch(url, { redirect: 'manual' });
    expect(visit.status).toBe(303);
    // The URL is never logged.
    expect(daemon.output()).not.toContain(url.searchParams.get('code')!);
  }, 180_000);

  test("the server's policy turns them off: the daemon says so and nothing reaches the bus", async () => {
    const set = await tryServerCli([
      'policy',
      'set',
      '--org',
      'notify-off',
      '--file',
      policyFile({ notifications: { enabled: false } }),
      '--db',
      server.dbPath,
    ]);
    expect(set.code, set.stderr).toBe(0);
    const lines = await rootDaemonUntil('notify-off', 'notifications_off');
    expect(lines.some((line) => line.event === 'policy_fetched')).toBe(true);
    expect(lines.some((line) => line.event === 'notification')).toBe(false);
    expect(recorded).toEqual([]);
  }, 180_000);

  test('a local policy file turns them off where the server sets no policy', async () => {
    const lines = await rootDaemonUntil('notify-local', 'notifications_off', [
      '--policy',
      policyFile({ notifications: { enabled: false } }),
    ]);
    expect(lines.some((line) => line.event === 'notification')).toBe(false);
    expect(recorded).toEqual([]);
  }, 180_000);
});

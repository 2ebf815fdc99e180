// Desktop notifications on a real session bus (dbus-daemon) with a stand-in for the notification
// server that claims org.freedesktop.Notifications and records each Notify call: what a cycle
// changed is notified once (FAIL, then PASS again), not again the same day, with the check's summary
// and the "Open My device" action; `device-agent notify` shows one read from standard input, and when
// the user chooses "Open My device" runs `my-device`, whose browser (a recorder) gets the device
// page's one-time URL from the real server; and the settings that turn them off (the flag, the
// environment, the policy; the policy with a real root daemon: rootNotify.test.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { LastCycle } from '../../src/agent/lastCycle';
import { notificationsWanted, PostureChanges } from '../../src/agent/notifications';
import { BusConnection, type Message, type WireValue } from '../../src/linkHandler/dbusWire';
import { showDesktopNotification } from '../../src/platform/desktopNotify';
import type { PostureResult } from '../../src/protocol/schemas';
import { agentEnv, daemonEnv, enrollNewDevice, makeStateDir, removeStateDir, runAgent, tempDir, until } from '../support/agent';
import { startServer, type RunningServer } from '../support/server';
import { requireTools } from '../support/requireTools';

const onBus = requireTools(['dbus-daemon'], 'posture notifications on a real session bus, a notification server stand-in recording Notify');

let daemon: ChildProcess;
let address: string;
let standIn: BusConnection;
let calls: Message[] = [];
/**
 * What the stand-in does once it has shown a notification: the user closes it, clicks it (`default`),
 * presses its "Open My device" button (`my-device`), or an action of another notification's is
 * signalled before this one closes.
 */
let user: 'close' | 'open' | 'button' | 'elsewhere' = 'close';

beforeAll(async () => {
  if (onBus.skip) return;
  daemon = spawn('dbus-daemon', ['--session', '--nofork', `--address=unix:path=${tempDir()}/bus`, '--print-address=1'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const first = await createInterface({ input: daemon.stdout! })[Symbol.asyncIterator]().next();
  address = first.done ? '' : first.value;
  standIn = await BusConnection.open(address);
  const [owner] = await standIn.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName', 'su', [
    'org.freedesktop.Notifications',
    4,
  ]);
  expect(owner).toBe(1);
  standIn.handleCalls((call) => {
    if (call.member !== 'Notify') return standIn.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', 'stand-in');
    calls.push(call);
    const id = calls.length;
    standIn.reply(call, 'u', [id]);
    const signal = (member: string, signature: string, body: Array<number | string>) =>
      standIn.emit('/org/freedesktop/Notifications', 'org.freedesktop.Notifications', member, signature, body);
    if (user === 'open' || user === 'button') return signal('ActionInvoked', 'us', [id, user === 'open' ? 'default' : 'my-device']);
    if (user === 'elsewhere') {
      signal('ActionInvoked', 'us', [id + 100, 'my-device']);
      signal('ActionInvoked', 'us', [id, 'snooze']);
    }
    signal('NotificationClosed', 'uu', [id, 2]);
  });
});
afterAll(async () => {
  await standIn?.close();
  daemon?.kill();
});
beforeEach(() => {
  calls = [];
  user = 'close';
});

const at = (day: string) => new Date(`${day}T10:00:00Z`);
const result = (check_key: string, status: PostureResult['status']): PostureResult => ({
  check_key,
  status,
  evidence: {},
  observed_at: '2026-11-27T10:00:00Z',
});
const cycleOf = (failing: Array<[string, string]>): LastCycle => ({
  at: '2026-11-27T10:00:00.000Z',
  results: failing.length,
  failing: failing.map(([check_key, summary]) => ({ check_key, status: 'FAIL' as const, word: null, summary })),
});
/** The Notify calls' summary and body. */
const shown = () => calls.map((call) => [call.body[3], call.body[4]]);

describe.skipIf(onBus.skip)(onBus.title, () => {
  test('one notification per change: FAIL with its summary, not again that day; PASS again once', async () => {
    const changes = new PostureChanges(async (n) => {
      expect(await showDesktopNotification(address, n, { waitMs: 60_000 })).toBe('closed');
      return true;
    });
    const firewallOff = cycleOf([['FIREWALL_ENABLED', 'Nothing filters incoming network connections.']]);
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'PASS')], firewallOff, at('2026-11-27'));
    expect(shown()).toEqual([['FIREWALL_ENABLED fails on this device', 'Nothing filters incoming network connections.']]);
    const notify = calls[0]!;
    expect(notify.signature).toBe('susssasa{sv}i');
    expect(notify.body[0]).toBe('device-agent');
    expect(notify.body[5]).toEqual(['default', 'Open My device', 'my-device', 'Open My device']);
    expect(notify.body[6]).toEqual([['urgency', { signature: 'y', value: 2 }]]);

    // Still failing, later that day: nothing new.
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'PASS')], firewallOff, new Date('2026-11-27T23:59:00Z'));
    expect(calls).toHaveLength(1);
    // Fixed: told once.
    const fixed = await changes.cycle([result('FIREWALL_ENABLED', 'PASS'), result('TIME_SYNC', 'PASS')], cycleOf([]), at('2026-11-27'));
    expect(fixed.map((n) => [n.check_key, n.change])).toEqual([['FIREWALL_ENABLED', 'recovered']]);
    expect(shown().at(-1)).toEqual(['FIREWALL_ENABLED passes again', 'Thank you: this check passes again.']);
    // Failing again the same day: not again; the next day: again.
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL')], firewallOff, new Date('2026-11-27T18:00:00Z'));
    expect(calls).toHaveLength(2);
    await changes.cycle([result('FIREWALL_ENABLED', 'PASS')], cycleOf([]), new Date('2026-11-28T00:00:01Z'));
    const again = await changes.cycle([result('FIREWALL_ENABLED', 'FAIL')], firewallOff, at('2026-11-28'));
    expect(again.map((n) => n.change)).toEqual(['failing']);
    expect(
      shown()
        .slice(2)
        .map(([title]) => title),
    ).toEqual(['FIREWALL_ENABLED passes again', 'FIREWALL_ENABLED fails on this device']);
    // UNKNOWN and NOT_APPLICABLE are no change to tell.
    await changes.cycle([result('FIREWALL_ENABLED', 'UNKNOWN'), result('TIME_SYNC', 'NOT_APPLICABLE')], cycleOf([]), at('2026-11-29'));
    expect(calls).toHaveLength(4);
    // A cycle without its explanations: the body says where to look.
    const bare = await changes.cycle([result('SCREEN_LOCK', 'FAIL')], undefined, at('2026-11-29'));
    expect(bare.map((n) => n.body)).toEqual(['See My device for what it means and how to fix it.']);
    // Still failing the next day: no change, nothing to tell.
    expect(await changes.cycle([result('SCREEN_LOCK', 'FAIL')], undefined, at('2026-11-30'))).toEqual([]);
  });

  test('device-agent notify shows the notification from standard input; "Open My device" opens the page', async () => {
    const notification = { check_key: 'SCREEN_LOCK', change: 'failing', title: 'SCREEN_LOCK fails on this device', body: 'No idle lock.' };
    const closed = await runAgent(['notify'], {
      env: agentEnv({ DBUS_SESSION_BUS_ADDRESS: address }),
      input: JSON.stringify(notification),
    });
    expect(closed.code, closed.stderr).toBe(0);
    expect(closed.stdout).toBe('shown\n');
    expect(shown()).toEqual([['SCREEN_LOCK fails on this device', 'No idle lock.']]);
    const refused = await runAgent(['notify'], { env: agentEnv({ DBUS_SESSION_BUS_ADDRESS: address }), input: '{"title": 1}' });
    expect(refused.code).toBe(2);
    expect(calls).toHaveLength(1);

    // The user chooses "Open My device": my-device runs, and xdg-open hands its URL to the browser.
    const server: RunningServer = await startServer();
    const stateDir = await makeStateDir();
    try {
      await enrollNewDevice(server, stateDir, server.url);
      expect((await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 })).code).toBe(0);
      const opened = join(tempDir(), 'opened');
      const browser = join(tempDir(), 'browser');
      writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      chmodSync(browser, 0o755);
      user = 'open';
      const clicked = await runAgent(['notify'], {
        env: daemonEnv({ DBUS_SESSION_BUS_ADDRESS: address, DEVICE_AGENT_STATE_DIR: stateDir, BROWSER: browser }),
        input: JSON.stringify(notification),
        timeoutMs: 60_000,
      });
      expect(clicked.code, clicked.stderr).toBe(0);
      await until(() => existsSync(opened), Boolean, 10_000, 'the browser opened');
      const url = new URL(readFileSync(opened, 'utf8'));
      expect(url.origin).toBe(server.url);
      expect(url.pathname).toBe('/my-device');

      // The link a Windows toast's button opens, through the registered link handler: the same page.
      rmSync(opened);
      const link = await runAgent(['open-link', 'device-agent://my-device'], {
        env: daemonEnv({ DEVICE_AGENT_STATE_DIR: stateDir, BROWSER: browser }),
        timeoutMs: 60_000,
      });
      expect(link.code, link.stderr).toBe(0);
      expect(link.stdout).toContain("Opened this device's page in your browser.");
      const again = new URL(readFileSync(opened, 'utf8'));
      expect(again.pathname).toBe('/my-device');
      expect(again.searchParams.get('code')).not.toBe(url.searchParams.get('code'));
    } finally {
      await server.stop();
      await removeStateDir(stateDir);
    }
  }, 120_000);
});

describe.skipIf(onBus.skip)('"Open My device" through the desktop portal', () => {
  let portal: BusConnection;
  let opened: Array<{ uri: WireValue; options: WireValue }> = [];
  beforeAll(async () => {
    // xdg-desktop-portal's OpenURI, recorded: what a desktop opens in the user's browser.
    portal = await BusConnection.open(address);
    const [owner] = await portal.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName', 'su', [
      'org.freedesktop.portal.Desktop',
      4,
    ]);
    expect(owner).toBe(1);
    portal.handleCalls((call) => {
      if (
        call.interface !== 'org.freedesktop.portal.OpenURI' ||
        call.member !== 'OpenURI' ||
        call.path !== '/org/freedesktop/portal/desktop'
      )
        return portal.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', 'stand-in');
      opened.push({ uri: call.body[1]!, options: call.body[2]! });
      portal.reply(call, 'o', ['/org/freedesktop/portal/desktop/request/1_1/t']);
    });
  });
  afterAll(async () => {
    await portal?.close();
  });
  beforeEach(() => {
    opened = [];
  });

  test("the button: the page's one-time URL goes to the portal, not to a program's arguments; another action or notification's: nothing", async () => {
    const notification = { check_key: 'SCREEN_LOCK', change: 'failing', title: 'SCREEN_LOCK fails on this device', body: 'No idle lock.' };
    const server: RunningServer = await startServer();
    const stateDir = await makeStateDir();
    try {
      await enrollNewDevice(server, stateDir, server.url);
      expect((await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 })).code).toBe(0);
      // A browser that records being run: the portal took the URL, so it is never run.
      const ran = join(tempDir(), 'ran');
      const browser = join(tempDir(), 'browser');
      writeFileSync(browser, `#!/bin/sh\ntouch '${ran}'\n`);
      chmodSync(browser, 0o755);
      const env = daemonEnv({ DBUS_SESSION_BUS_ADDRESS: address, DEVICE_AGENT_STATE_DIR: stateDir, BROWSER: browser });

      user = 'elsewhere';
      const ignored = await runAgent(['notify'], { env, input: JSON.stringify(notification), timeoutMs: 60_000 });
      expect(ignored.code, ignored.stderr).toBe(0);
      expect(opened).toEqual([]);

      user = 'button';
      const pressed = await runAgent(['notify'], { env, input: JSON.stringify(notification), timeoutMs: 60_000 });
      expect(pressed.code, pressed.stderr).toBe(0);
      // notify returns once the portal has answered.
      expect(opened).toHaveLength(1);
      expect(opened[0]!.options).toEqual([]);
      expect(typeof opened[0]!.uri).toBe('string');
      const url = new URL(opened[0]!.uri);
      expect(url.origin).toBe(server.url);
      expect(url.pathname).toBe('/my-device');
      expect(url.searchParams.get('code')).toMatch(/\S/);
      // The page works with it: the one-time code is exchanged for a session.
      const visit = await fetch(url, { redirect: 'manual' });
      expect(visit.status).toBe(303);
      expect(existsSync(ran)).toBe(false);
    } finally {
      await server.stop();
      await removeStateDir(stateDir);
    }
  }, 120_000);
});

describe.skipIf(onBus.skip)('turned off by the policy', () => {
  test('nothing reaches the bus while the policy says off; turned on again, only what changes from then on is told', async () => {
    const changes = new PostureChanges((n) => showDesktopNotification(address, n, { waitMs: 60_000 }).then(() => true));
    const failing = cycleOf([['FIREWALL_ENABLED', 'Nothing filters incoming network connections.']]);
    const off = await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'PASS')], failing, at('2026-11-27'), false);
    expect(off).toEqual([]);
    expect(calls).toEqual([]);
    // On again: the FAIL seen while off is no change; a new one is.
    const on = await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'FAIL')], failing, at('2026-11-27'));
    expect(on.map((n) => n.check_key)).toEqual(['TIME_SYNC']);
    expect(shown().map(([title]) => title)).toEqual(['TIME_SYNC fails on this device']);
  });

  test('nobody at the screen: nothing counts as shown', async () => {
    const changes = new PostureChanges(() => Promise.resolve(false));
    expect(await changes.cycle([result('FIREWALL_ENABLED', 'FAIL')], undefined, at('2026-11-27'))).toEqual([]);
  });
});

test('turned off by --no-notifications or DEVICE_AGENT_NOTIFICATIONS=off', () => {
  expect(notificationsWanted(undefined, {})).toBe(true);
  expect(notificationsWanted(true, {})).toBe(true);
  expect(notificationsWanted(false, {})).toBe(false);
  for (const off of ['off', 'OFF', '0', 'false', 'no'])
    expect(notificationsWanted(undefined, { DEVICE_AGENT_NOTIFICATIONS: off })).toBe(false);
  for (const on of ['on', 'offline', 'xoff', 'nope', '10'])
    expect(notificationsWanted(undefined, { DEVICE_AGENT_NOTIFICATIONS: on })).toBe(true);
});

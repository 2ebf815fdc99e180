// Desktop notifications on a real session bus (dbus-daemon) with a stand-in for the notification
// server that claims org.freedesktop.Notifications and records each Notify call: what a cycle
// changed is notified once (FAIL, then PASS again), not again the same day, with the check's summary
// and the "Open My device" action; `device-agent notify` shows one read from standard input; and
// the setting that turns them off.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { LastCycle } from '../../src/agent/lastCycle';
import { notificationsWanted, PostureChanges } from '../../src/agent/notifications';
import { BusConnection, type Message } from '../../src/linkHandler/dbusWire';
import { sendDesktopNotification } from '../../src/platform/desktopNotify';
import type { PostureResult } from '../../src/protocol/schemas';
import { agentEnv, runAgent, tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';

const onBus = requireTools(['dbus-daemon'], 'posture notifications on a real session bus, a notification server stand-in recording Notify');

let daemon: ChildProcess;
let address: string;
let standIn: BusConnection;
let calls: Message[] = [];

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
    standIn.reply(call, 'u', [calls.length]);
  });
});
afterAll(async () => {
  await standIn?.close();
  daemon?.kill();
});
beforeEach(() => {
  calls = [];
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
    const changes = new PostureChanges((n) => sendDesktopNotification(address, n).then(() => undefined));
    const firewallOff = cycleOf([['FIREWALL_ENABLED', 'Nothing filters incoming network connections.']]);
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'PASS')], firewallOff, at('2026-11-27'));
    expect(shown()).toEqual([['FIREWALL_ENABLED fails on this device', 'Nothing filters incoming network connections.']]);
    const notify = calls[0]!;
    expect(notify.signature).toBe('susssasa{sv}i');
    expect(notify.body[0]).toBe('device-agent');
    expect(notify.body[5]).toEqual(['default', 'Open My device', 'my-device', 'Open My device']);
    expect(notify.body[6]).toEqual([['urgency', { signature: 'y', value: 2 }]]);

    // Still failing: nothing new.
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL'), result('TIME_SYNC', 'PASS')], firewallOff, at('2026-11-27'));
    expect(calls).toHaveLength(1);
    // Fixed: told once.
    await changes.cycle([result('FIREWALL_ENABLED', 'PASS'), result('TIME_SYNC', 'PASS')], cycleOf([]), at('2026-11-27'));
    expect(shown().at(-1)).toEqual(['FIREWALL_ENABLED passes again', 'Thank you: this check passes again.']);
    // Failing again the same day: not again; the next day: again.
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL')], firewallOff, at('2026-11-27'));
    expect(calls).toHaveLength(2);
    await changes.cycle([result('FIREWALL_ENABLED', 'PASS')], cycleOf([]), at('2026-11-28'));
    await changes.cycle([result('FIREWALL_ENABLED', 'FAIL')], firewallOff, at('2026-11-28'));
    expect(
      shown()
        .slice(2)
        .map(([title]) => title),
    ).toEqual(['FIREWALL_ENABLED passes again', 'FIREWALL_ENABLED fails on this device']);
    // UNKNOWN and NOT_APPLICABLE are no change to tell.
    await changes.cycle([result('FIREWALL_ENABLED', 'UNKNOWN'), result('TIME_SYNC', 'NOT_APPLICABLE')], cycleOf([]), at('2026-11-29'));
    expect(calls).toHaveLength(4);
  });

  test('device-agent notify shows the notification it reads from standard input', async () => {
    const notification = { check_key: 'SCREEN_LOCK', change: 'failing', title: 'SCREEN_LOCK fails on this device', body: 'No idle lock.' };
    const outcome = await runAgent(['notify'], {
      env: agentEnv({ DBUS_SESSION_BUS_ADDRESS: address }),
      input: JSON.stringify(notification),
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(shown()).toEqual([['SCREEN_LOCK fails on this device', 'No idle lock.']]);
    const refused = await runAgent(['notify'], { env: agentEnv({ DBUS_SESSION_BUS_ADDRESS: address }), input: '{"title": 1}' });
    expect(refused.code).toBe(2);
    expect(calls).toHaveLength(1);
  });
});

test('turned off by --no-notifications or DEVICE_AGENT_NOTIFICATIONS=off', () => {
  expect(notificationsWanted(undefined, {})).toBe(true);
  expect(notificationsWanted(true, {})).toBe(true);
  expect(notificationsWanted(false, {})).toBe(false);
  for (const off of ['off', 'OFF', '0', 'false', 'no'])
    expect(notificationsWanted(undefined, { DEVICE_AGENT_NOTIFICATIONS: off })).toBe(false);
  expect(notificationsWanted(undefined, { DEVICE_AGENT_NOTIFICATIONS: 'on' })).toBe(true);
});

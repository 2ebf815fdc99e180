// Desktop notifications on Linux and FreeBSD desktops: org.freedesktop.Notifications on the session
// bus of the user at the screen (Desktop Notifications Specification), over the agent's own D-Bus
// client (src/linkHandler/dbusWire.ts). A session bus accepts its own user only, so the daemon runs
// the hidden `device-agent notify` as that user (the system service: their uid, on their bus), with
// the notification on standard input. It shows it, says so on its standard output, and waits for
// the user: "Open My device" (or a click on the notification) gets the page's URL as that user (the
// service's local endpoint answers them) and has the desktop's portal open it (cli/commands/notify.ts).
// macOS and Windows: darwinNotify.ts, windowsNotify.ts.
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Notifier, PostureNotification } from '../agent/notifications';
import type { WireValue } from '../linkHandler/dbusWire';

const NOTIFICATIONS = ['org.freedesktop.Notifications', '/org/freedesktop/Notifications', 'org.freedesktop.Notifications'] as const;
/** The spec's key for a click on the notification itself, and ours for the action button. */
const OPEN_ACTIONS = ['default', 'my-device'];
const APP_NAME = 'device-agent';
/** What `notify` prints once the notification is on the screen. */
const SHOWN = 'shown';

/**
 * Shows one notification on the session bus at `address`, then waits for the user: 'open' when
 * they chose "Open My device", 'closed' when it went away, 'timeout' after `waitMs`.
 */
export async function showDesktopNotification(
  address: string,
  notification: PostureNotification,
  options: { waitMs: number; onShown?: () => void },
): Promise<'open' | 'closed' | 'timeout'> {
  const { BusConnection } = await import('../linkHandler/dbusWire');
  const bus = await BusConnection.open(address);
  try {
    const answer = new Promise<'open' | 'closed' | 'timeout'>((resolve) => {
      let id: number | undefined;
      const seen: Array<[string, WireValue[]]> = [];
      const decide = (member: string, body: WireValue[]) => {
        if (Number(body[0]) !== id) return;
        if (member === 'ActionInvoked' && typeof body[1] === 'string' && OPEN_ACTIONS.includes(body[1])) resolve('open');
        if (member === 'NotificationClosed') resolve('closed');
      };
      bus.onSignal((signal) =>
        id === undefined ? seen.push([signal.member ?? '', signal.body]) : decide(signal.member ?? '', signal.body),
      );
      setTimeout(() => resolve('timeout'), options.waitMs).unref();
      void (async () => {
        const match = `type='signal',interface='${NOTIFICATIONS[2]}',path='${NOTIFICATIONS[1]}'`;
        await bus.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'AddMatch', 's', [match]);
        const hints: WireValue[] = [['urgency', { signature: 'y', value: notification.change === 'failing' ? 2 : 1 }]];
        const [shownId] = await bus.call(...NOTIFICATIONS, 'Notify', 'susssasa{sv}i', [
          APP_NAME,
          0,
          'security-medium',
          notification.title,
          notification.body,
          ['default', 'Open My device', 'my-device', 'Open My device'],
          hints,
          -1,
        ]);
        id = Number(shownId);
        options.onShown?.();
        // Signals about it that came before Notify's reply.
        for (const [member, body] of seen) decide(member, body);
      })().catch(() => resolve('closed'));
    });
    return await answer;
  } finally {
    await bus.close();
  }
}

const PORTAL = ['org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', 'org.freedesktop.portal.OpenURI'] as const;

/**
 * Asks the desktop's portal on the session bus at `address` to open `url` in the user's browser
 * (xdg-desktop-portal's OpenURI, which runs in the session and knows its display): true once it took
 * it, false when there is no portal or it refused.
 */
export async function openThroughPortal(address: string, url: string): Promise<boolean> {
  const { BusConnection } = await import('../linkHandler/dbusWire');
  const bus = await BusConnection.open(address);
  try {
    await bus.call(...PORTAL, 'OpenURI', 'ssa{sv}', ['', url, []]);
    return true;
  } catch {
    return false;
  } finally {
    await bus.close();
  }
}

/** What `notify` prints once shown, for the daemon waiting on it. */
export function shownLine(): string {
  return `${SHOWN}\n`;
}

/**
 * The daemon's notifier: runs `program notify` on the session bus of the user at the screen; as
 * root, as that user (their uid, the group of their runtime directory); nothing when nobody is
 * there. Resolves once the notification is shown; the helper then waits for the user by itself.
 */
export function desktopNotifier(program: readonly string[], consoleUid: () => Promise<number | null>, privileged: boolean): Notifier {
  return async (notification) => {
    const uid = privileged ? await consoleUid() : (process.getuid?.() ?? null);
    if (uid === null) return false;
    const runtime = `/run/user/${uid}`;
    const address = privileged ? `unix:path=${runtime}/bus` : process.env.DBUS_SESSION_BUS_ADDRESS;
    if (!address) return false;
    const identity = privileged ? { uid, gid: (await stat(runtime)).gid } : {};
    // The service's runtime directory goes along when it was moved: the helper's my-device asks its endpoint there.
    const moved = process.env.DEVICE_AGENT_RUNTIME_DIR ? { DEVICE_AGENT_RUNTIME_DIR: process.env.DEVICE_AGENT_RUNTIME_DIR } : {};
    const env = privileged
      ? { PATH: '/usr/bin:/bin', XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: address, ...moved }
      : { ...process.env, DBUS_SESSION_BUS_ADDRESS: address };
    return new Promise<boolean>((resolve, reject) => {
      const child = spawn(program[0]!, [...program.slice(1), 'notify'], {
        ...identity,
        env,
        stdio: ['pipe', 'pipe', 'ignore'],
        detached: true,
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`device-agent notify exited with ${code} before showing the notification`)));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      void lines.next().then((first) => {
        if (first.done || `${first.value}\n` !== shownLine()) return;
        child.removeAllListeners('exit');
        child.stdout.destroy();
        child.unref();
        resolve(true);
      });
      child.stdin.end(JSON.stringify(notification));
    });
  };
}

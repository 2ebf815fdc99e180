// Desktop notifications on Linux and FreeBSD desktops: org.freedesktop.Notifications on the session
// bus of the user at the screen (Desktop Notifications Specification), over the agent's own D-Bus
// client (src/linkHandler/dbusWire.ts). The system service runs as root and a session bus accepts
// its own user only, so the service runs `device-agent notify` as that user, with the notification
// on standard input; a daemon of the user's own sends it itself. macOS and Windows: not implemented.
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { Notifier, PostureNotification } from '../agent/notifications';
import type { WireValue } from '../linkHandler/dbusWire';

const NOTIFICATIONS = ['org.freedesktop.Notifications', '/org/freedesktop/Notifications', 'org.freedesktop.Notifications'] as const;
/** The action key of "Open My device" (the spec's "default" is the notification's own click). */
const OPEN_MY_DEVICE_ACTION = 'default';
const APP_NAME = 'device-agent';

/** Sends one notification on the session bus at `address`; resolves with the notification's id. */
export async function sendDesktopNotification(address: string, notification: PostureNotification): Promise<number> {
  const { BusConnection } = await import('../linkHandler/dbusWire');
  const bus = await BusConnection.open(address);
  try {
    const hints: WireValue[] = [['urgency', { signature: 'y', value: notification.change === 'failing' ? 2 : 1 }]];
    const [id] = await bus.call(...NOTIFICATIONS, 'Notify', 'susssasa{sv}i', [
      APP_NAME,
      0,
      'security-medium',
      notification.title,
      notification.body,
      [OPEN_MY_DEVICE_ACTION, 'Open My device', 'my-device', 'Open My device'],
      hints,
      -1,
    ]);
    return Number(id);
  } finally {
    await bus.close();
  }
}

/**
 * The service's notifier: runs `program notify` as the console user (uid and the group of their
 * runtime directory) on their session bus; nothing when nobody is at the screen.
 */
export function consoleUserNotifier(program: readonly string[], consoleUid: () => Promise<number | null>): Notifier {
  return async (notification) => {
    const uid = await consoleUid();
    if (uid === null) return;
    const runtime = `/run/user/${uid}`;
    const { gid } = await stat(runtime);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(program[0]!, [...program.slice(1), 'notify'], {
        uid,
        gid,
        env: { PATH: '/usr/bin:/bin', XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: `unix:path=${runtime}/bus` },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`device-agent notify exited with ${code}`))));
      child.stdin.end(JSON.stringify(notification));
    });
  };
}

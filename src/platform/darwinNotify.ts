// Desktop notifications on macOS: AppleScript's `display notification`, run with osascript in the
// session of the user at the screen (the owner of /dev/console). The service (a launchd daemon, root)
// is outside every user's GUI session: `launchctl asuser <uid>` runs the command in that user's
// bootstrap namespace, and `sudo -u #<uid>` drops to the user, so the banner is posted by them, in
// their session. A daemon of the user's own runs osascript directly.
//
// What macOS allows this way: a banner with a title, a subtitle and a text, attributed to osascript's
// host (Script Editor), which the user may have to allow in System Settings > Notifications. It has
// no action button, and a click opens Script Editor, not the device page: the subtitle names
// `device-agent my-device` and the "My device posture" app instead. An action needs an app bundle of
// our own posting through UNUserNotificationCenter, signed with our team's identity: not written.
//
// The notification's text is never part of the script: the script reads it from its arguments
// (`on run argv`), so nothing in a summary can change what runs. After the script, a first argument
// of our own ends osascript's options: text that starts with "-" is still an argument.
import { spawn } from 'node:child_process';
import type { Notifier, PostureNotification } from '../agent/notifications';

/** The AppleScript, one `-e` line each: the title and text are its 2nd and 3rd arguments. */
export const DARWIN_NOTIFY_SCRIPT = [
  'on run argv',
  'display notification (item 3 of argv) with title (item 2 of argv) subtitle "My device: run device-agent my-device"',
  'end run',
] as const;
/** The first argument after the script, ending osascript's options. */
const FIRST_ARGUMENT = 'device-agent';
/** Banners show about this much; longer text is cut, not wrapped. */
const MAX_TEXT = 240;

/**
 * One line of plain text: control characters (line breaks, escapes) and bidirectional overrides
 * become spaces; at most MAX_TEXT characters.
 */
export function bannerText(text: string): string {
  // eslint-disable-next-line no-control-regex -- replacing control characters is what this line is for
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ').trim();
  return line.length <= MAX_TEXT ? line : `${line.slice(0, MAX_TEXT - 1)}…`;
}

/**
 * The command that shows `notification`: osascript for a daemon of the user's own (`asUser`
 * null), or, for the root service, osascript as the console user `asUser` in their session.
 */
export function darwinNotifyCommand(notification: PostureNotification, asUser: number | null): [string, string[]] {
  const osascript = [
    '/usr/bin/osascript',
    ...DARWIN_NOTIFY_SCRIPT.flatMap((line) => ['-e', line]),
    FIRST_ARGUMENT,
    bannerText(notification.title),
    bannerText(notification.body),
  ];
  if (asUser === null) return [osascript[0]!, osascript.slice(1)];
  return ['/bin/launchctl', ['asuser', String(asUser), '/usr/bin/sudo', '-n', '-u', `#${asUser}`, ...osascript]];
}

/**
 * The daemon's notifier on macOS: shown once osascript has posted the banner; nothing when nobody is
 * at the screen. `commandOf` is darwinNotifyCommand but in tests, which cannot run osascript.
 */
export function darwinNotifier(
  consoleUid: () => Promise<number | null>,
  privileged: boolean,
  commandOf: typeof darwinNotifyCommand = darwinNotifyCommand,
): Notifier {
  return async (notification) => {
    const uid = privileged ? await consoleUid() : null;
    if (privileged && uid === null) return false;
    const [command, args] = commandOf(notification, uid);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { stdio: 'ignore', env: { PATH: '/usr/bin:/bin' } });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`osascript exited with ${code}`))));
    });
    return true;
  };
}

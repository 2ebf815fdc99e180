// Desktop notifications on macOS: AppleScript's `display notification`, run with osascript in the
// session of the user at the screen (the owner of /dev/console). The service (a launchd daemon, root)
// is outside every user's GUI session: `launchctl asuser <uid>` runs the command in that user's
// bootstrap namespace, and `sudo -u #<uid>` drops to the user, so the banner is posted by them, in
// their session. A daemon of the user's own runs osascript directly.
//
// What osascript can do: `display notification` posts a banner with a title, a subtitle and a text,
// attributed to osascript's host (Script Editor), which the user may have to allow in System Settings
// > Notifications; it cannot carry an action, and a click on it opens Script Editor. An action button
// on a banner needs an app bundle of ours posting through UNUserNotificationCenter, signed with our
// team's identity: not written. `display dialog` can carry buttons, but it is a window that waits for
// an answer. What is used: for a check that turns FAIL, a dialog with "Open My device" and "Later"
// that closes by itself after DIALOG_SECONDS; "Open My device" runs `device-agent my-device` as that
// user, in their session (the service's local endpoint answers them, `open` reaches their browser).
// A check that passes again gets a banner: there is nothing to open.
//
// The notification's text is never part of the script: the script reads it from its arguments
// (`on run argv`), so nothing in a summary can change what runs. After the script, a first argument
// of our own ends osascript's options: text that starts with "-" is still an argument.
import { spawn } from 'node:child_process';
import type { Notifier, PostureNotification } from '../agent/notifications';

/** The banner's AppleScript, one `-e` line each: the title and text are its 2nd and 3rd arguments. */
export const DARWIN_NOTIFY_SCRIPT = [
  'on run argv',
  'display notification (item 3 of argv) with title (item 2 of argv) subtitle "My device: run device-agent my-device"',
  'end run',
] as const;
/** How long the dialog waits for an answer before it closes by itself. */
const DIALOG_SECONDS = 600;
/** The button that opens My device; the dialog's script prints the button chosen. */
export const OPEN_BUTTON = 'Open My device';
/** The dialog's AppleScript, its arguments as the banner's. "Later" cancels (osascript exits 1). */
export const DARWIN_DIALOG_SCRIPT = [
  'on run argv',
  `set answer to display dialog (item 3 of argv) with title (item 2 of argv) buttons {"Later", "${OPEN_BUTTON}"} default button "${OPEN_BUTTON}" cancel button "Later" with icon caution giving up after ${DIALOG_SECONDS}`,
  'return button returned of answer',
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

/** A command as the console user `asUser`, in their GUI session, or as ourselves (`asUser` null). */
function inUserSession(argv: readonly string[], asUser: number | null): [string, string[]] {
  if (asUser === null) return [argv[0]!, argv.slice(1)];
  return ['/bin/launchctl', ['asuser', String(asUser), '/usr/bin/sudo', '-n', '-u', `#${asUser}`, ...argv]];
}

/**
 * The command that shows `notification`: osascript for a daemon of the user's own (`asUser`
 * null), or, for the root service, osascript as the console user `asUser` in their session. A check
 * that turns FAIL gets the dialog, one that passes again the banner.
 */
export function darwinNotifyCommand(notification: PostureNotification, asUser: number | null): [string, string[]] {
  const script = notification.change === 'failing' ? DARWIN_DIALOG_SCRIPT : DARWIN_NOTIFY_SCRIPT;
  return inUserSession(
    [
      '/usr/bin/osascript',
      ...script.flatMap((line) => ['-e', line]),
      FIRST_ARGUMENT,
      bannerText(notification.title),
      bannerText(notification.body),
    ],
    asUser,
  );
}

/** `program my-device`, as the user who chose "Open My device". */
export function darwinMyDeviceCommand(program: readonly string[], asUser: number | null): [string, string[]] {
  return inUserSession([...program, 'my-device'], asUser);
}

/**
 * The daemon's notifier on macOS: nothing when nobody is at the screen. A banner counts as shown
 * once osascript has posted it; a dialog once osascript runs (the daemon does not wait for the
 * answer), and when the answer is "Open My device" the page is opened for that user. `commandOf`
 * and `myDeviceOf` are darwinNotifyCommand and darwinMyDeviceCommand but in tests, which cannot run
 * osascript.
 */
export function darwinNotifier(
  consoleUid: () => Promise<number | null>,
  privileged: boolean,
  program: readonly string[],
  commandOf: typeof darwinNotifyCommand = darwinNotifyCommand,
  myDeviceOf: typeof darwinMyDeviceCommand = darwinMyDeviceCommand,
): Notifier {
  const env = { PATH: '/usr/bin:/bin' };
  return async (notification) => {
    const uid = privileged ? await consoleUid() : null;
    if (privileged && uid === null) return false;
    const [command, args] = commandOf(notification, uid);
    if (notification.change !== 'failing') {
      await new Promise<void>((resolve, reject) => {
        const child = spawn(command, args, { stdio: 'ignore', env });
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`osascript exited with ${code}`))));
      });
      return true;
    }
    return new Promise<boolean>((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], env });
      child.once('error', reject);
      child.once('spawn', () => resolve(true));
      let answer = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      child.once('close', (code) => {
        if (code !== 0 || answer.trim() !== OPEN_BUTTON) return;
        const [open, openArgs] = myDeviceOf(program, uid);
        // A user's own agent: its environment says where its state is; the service's user asks its endpoint.
        spawn(open, openArgs, { stdio: 'ignore', env: privileged ? env : process.env, detached: true })
          .once('error', () => undefined)
          .unref();
      });
    });
  };
}

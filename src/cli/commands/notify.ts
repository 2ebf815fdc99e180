// `device-agent notify` (hidden): shows one posture notification, read as JSON from standard input,
// on this user's session bus (DBUS_SESSION_BUS_ADDRESS). The system service runs it as the user at
// the screen (src/platform/desktopNotify.ts).
import { text } from 'node:stream/consumers';
import type { PostureNotification } from '../../agent/notifications';
import { sendDesktopNotification } from '../../platform/desktopNotify';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export default async function notifyCommand(): Promise<ExitCode> {
  const address = process.env.DBUS_SESSION_BUS_ADDRESS;
  if (!address) throw new CommandFailure('no session bus (DBUS_SESSION_BUS_ADDRESS is not set)', EXIT.usage);
  let notification: PostureNotification;
  try {
    const value = JSON.parse(await text(process.stdin)) as Partial<PostureNotification>;
    if (typeof value.title !== 'string' || typeof value.body !== 'string' || (value.change !== 'failing' && value.change !== 'recovered'))
      throw new Error('not a notification');
    notification = {
      check_key: String(value.check_key),
      change: value.change,
      title: value.title.slice(0, 200),
      body: value.body.slice(0, 1000),
    };
  } catch {
    throw new CommandFailure('standard input must be one notification as JSON', EXIT.usage);
  }
  await sendDesktopNotification(address, notification);
  return EXIT.ok;
}

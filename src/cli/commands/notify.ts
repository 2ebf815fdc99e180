// `device-agent notify` (hidden): shows one posture notification, read as JSON from standard input,
// on this user's session bus (DBUS_SESSION_BUS_ADDRESS); prints "shown" once it is on the screen;
// then waits (up to an hour) for the user, and runs `device-agent my-device` when they choose
// "Open My device". The daemon runs it as the user at the screen (src/platform/desktopNotify.ts).
import { spawn } from 'node:child_process';
import { text } from 'node:stream/consumers';
import type { PostureNotification } from '../../agent/notifications';
import { showDesktopNotification, shownLine } from '../../platform/desktopNotify';
import { selfCommand } from '../../service/program';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

const WAIT_FOR_USER_MS = 60 * 60_000;

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
  const choice = await showDesktopNotification(address, notification, {
    waitMs: WAIT_FOR_USER_MS,
    onShown: () => process.stdout.write(shownLine()),
  });
  if (choice === 'open') {
    const self = selfCommand();
    await new Promise<void>((resolve) => {
      spawn(self[0]!, [...self.slice(1), 'my-device'], { stdio: 'ignore' })
        .once('exit', () => resolve())
        .once('error', () => resolve());
    });
  }
  return EXIT.ok;
}

// `device-agent notify` (hidden): shows one posture notification, read as JSON from standard input,
// on this user's session bus (DBUS_SESSION_BUS_ADDRESS); prints "shown" once it is on the screen;
// then waits (up to an hour) for the user, and when they choose "Open My device" gets the page's
// one-time URL from `device-agent my-device --print-url` (as this user: the service's local endpoint,
// or their own enrollment) and has the desktop open it. The daemon runs it as the user at the screen
// (src/platform/desktopNotify.ts).
import { spawn } from 'node:child_process';
import { text } from 'node:stream/consumers';
import type { PostureNotification } from '../../agent/notifications';
import { openInBrowser } from '../../platform/browser';
import { currentPlatform } from '../../platform/current';
import { openThroughPortal, showDesktopNotification, shownLine } from '../../platform/desktopNotify';
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
  if (choice === 'open') await openMyDevice(address);
  return EXIT.ok;
}

/**
 * "Open My device": the URL from `my-device --print-url`, opened by the desktop's portal on this
 * session bus, else by xdg-open. The portal first: started by the root service, this process has
 * only the session bus, none of the session's display variables, which xdg-open needs to find a
 * browser. Nobody is told of a failure: the notification is gone.
 */
async function openMyDevice(address: string): Promise<void> {
  const self = selfCommand();
  const child = spawn(self[0]!, [...self.slice(1), 'my-device', '--print-url'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const [printed, code] = await Promise.all([
    text(child.stdout),
    new Promise<number | null>((resolve) => child.once('exit', resolve).once('error', () => resolve(null))),
  ]);
  const url = printed.trim();
  if (code !== 0 || !/^https?:\/\/\S+$/.test(url)) return;
  if (await openThroughPortal(address, url)) return;
  await openInBrowser(currentPlatform(), url).catch(() => undefined);
}

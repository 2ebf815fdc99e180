// Which module shows this platform's desktop notifications (src/agent/notifications.ts decides what
// to tell): freedesktop notifications on Linux and FreeBSD desktops, osascript on macOS, a toast on
// Windows. Each reaches the user at the screen even from the root/SYSTEM service.
import type { Notifier } from '../agent/notifications';
import { consoleUid } from './localEndpoint';

export async function platformNotifier(
  platform: NodeJS.Platform,
  program: readonly string[],
  privileged: boolean,
): Promise<Notifier | undefined> {
  if (platform === 'darwin') return (await import('./darwinNotify')).darwinNotifier(() => consoleUid(platform), privileged, program);
  if (platform === 'win32') return (await import('./windowsNotify')).windowsNotifier(privileged);
  if (platform === 'linux' || platform === 'freebsd')
    return (await import('./desktopNotify')).desktopNotifier(program, () => consoleUid(platform), privileged);
  return undefined;
}

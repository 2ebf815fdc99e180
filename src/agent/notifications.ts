// Desktop notifications of posture changes: when a check turns FAIL, and when it passes again, the
// user at the screen is told, with the check's summary and an action that opens "My device". At most
// one notification per check and change per (UTC) day; none when they are turned off (`run --no-notifications`,
// DEVICE_AGENT_NOTIFICATIONS=off, or the policy's `notifications.enabled`). What a cycle changed is decided here, from the cycle's results
// and their summaries; how a notification reaches the user is the platform's (Notifier).
import type { PostureResult } from '../protocol/schemas';
import type { LastCycle } from './lastCycle';

export interface PostureNotification {
  check_key: string;
  /** 'failing': the check turned FAIL; 'recovered': it passes again. */
  change: 'failing' | 'recovered';
  title: string;
  body: string;
}

/**
 * Delivers one notification to the user at the screen (src/platform/desktopNotify.ts): true once
 * shown, false when nobody is there to see it; rejects when it cannot be shown.
 */
export type Notifier = (notification: PostureNotification) => Promise<boolean>;

/** What `--no-notifications` and DEVICE_AGENT_NOTIFICATIONS say: true unless turned off. */
export function notificationsWanted(flag: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (flag === false) return false;
  return !/^(off|0|false|no)$/i.test(env.DEVICE_AGENT_NOTIFICATIONS ?? '');
}

export class PostureChanges {
  /** Each check's status in the previous cycle. */
  private readonly previous = new Map<string, string>();
  /** The UTC day each check was last notified about, per change ("KEY failing", "KEY recovered"). */
  private readonly notifiedOn = new Map<string, string>();

  constructor(private readonly notify: Notifier) {}

  /**
   * Notifies what this cycle changed. A FAIL the daemon had not seen before (its first cycle) counts
   * as a change: the user has not been told. With `enabled` false (the policy turns notifications
   * off) nothing is told, and the statuses are still followed, so that turning them on again
   * tells only what changes from then on. Returns those shown (nobody at the screen: none; they
   * are not told later that day). Delivery failures are the caller's to log.
   */
  async cycle(
    results: readonly PostureResult[],
    lastCycle: LastCycle | undefined,
    now: Date,
    enabled = true,
  ): Promise<PostureNotification[]> {
    const day = now.toISOString().slice(0, 10);
    const summaries = new Map((lastCycle?.failing ?? []).map((f) => [f.check_key, f.summary]));
    const due: PostureNotification[] = [];
    for (const result of results) {
      const before = this.previous.get(result.check_key);
      this.previous.set(result.check_key, result.status);
      if (!enabled) continue;
      const change =
        result.status === 'FAIL' && before !== 'FAIL' ? 'failing' : result.status === 'PASS' && before === 'FAIL' ? 'recovered' : null;
      // Once a day per check and change: a check that flaps does not flood the screen.
      const key = `${result.check_key} ${change}`;
      if (change === null || this.notifiedOn.get(key) === day) continue;
      this.notifiedOn.set(key, day);
      due.push(
        change === 'failing'
          ? {
              check_key: result.check_key,
              change,
              title: `${result.check_key} fails on this device`,
              body: summaries.get(result.check_key) ?? 'See My device for what it means and how to fix it.',
            }
          : { check_key: result.check_key, change, title: `${result.check_key} passes again`, body: 'Thank you: this check passes again.' },
      );
    }
    const shown: PostureNotification[] = [];
    for (const notification of due) if (await this.notify(notification)) shown.push(notification);
    return shown;
  }
}

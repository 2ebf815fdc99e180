// SCREEN_LOCK on macOS (research §2.1): a lock engages (sysadminctl), its grace period is within
// policy.screenLock.maxGraceSeconds, and the screen saver or display sleep starts within
// maxIdleSeconds on every power source. All of it is per-user: the console user's values are
// read in that user's context, configuration-profile (MDM) values first.
import { defineCheck, type CommandResult, type Evidence } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { plistBool, plistInt, type PlistValue } from './plist';
import { consoleUser, MANAGED_PREFERENCES, readPlistFile, runAsUser, type ConsoleUser, type PlistFile } from './probes';

const SYSADMINCTL = '/usr/sbin/sysadminctl';
const DEFAULTS = '/usr/bin/defaults';
const PMSET = '/usr/bin/pmset';

export interface ScreenLockFacts {
  user: ConsoleUser;
  /** `sysadminctl -screenLock status` as the user (answers on stderr). */
  lock?: CommandResult;
  /** `defaults -currentHost read com.apple.screensaver idleTime` as the user. */
  idleTime?: CommandResult;
  /** Profile values for this user, then for the computer. */
  managedUser?: PlistFile;
  managedComputer?: PlistFile;
  /** `pmset -g custom`: display sleep per power source. */
  pmset?: CommandResult;
}

export type LockSetting = { lock: 'off' } | { lock: 'immediate' | 'delay'; graceSeconds: number };

const LOCK_LINE = /^(?:.*\bsysadminctl\[[0-9a-fx:]+\]\s+)?screenLock (?:delay is (?:(immediate)|(-?\d+)(?:\.\d+)? seconds?)|is (off))$/;

/** Parses sysadminctl's screen-lock answer: one recognised line, or null. "-1 seconds" means off. */
export function parseScreenLockStatus(text: string): LockSetting | null {
  const answers = new Set<string>();
  let setting: LockSetting | null = null;
  for (const line of text.split('\n')) {
    const m = LOCK_LINE.exec(line.trim());
    if (!m) continue;
    if (m[1] || m[2] === '0') setting = { lock: 'immediate', graceSeconds: 0 };
    else if (m[3] || m[2] === '-1') setting = { lock: 'off' };
    else if (Number(m[2]) > 0) setting = { lock: 'delay', graceSeconds: Number(m[2]) };
    else return null;
    answers.add(JSON.stringify(setting));
  }
  return answers.size === 1 ? setting : null;
}

export type IdleTime = { state: 'set'; seconds: number } | { state: 'absent' } | { state: 'unreadable' };

/** `defaults read … idleTime`: an integer (0 = never), or "does not exist" (the OS default applies). */
export function parseDefaultsInteger(result: CommandResult): IdleTime {
  if (result.error) return { state: 'unreadable' };
  const value = /^\s*(\d+)\s*$/.exec(result.stdout);
  if (result.exitCode === 0 && value) return { state: 'set', seconds: Number(value[1]) };
  if (result.exitCode === 1 && /^.*The domain\/default pair of \(.+\) does not exist$/m.test(result.stderr)) return { state: 'absent' };
  return { state: 'unreadable' };
}

export interface DisplaySleep {
  power: 'ac' | 'battery' | 'ups';
  /** 0 = never. */
  minutes: number;
}

const POWER_SECTION: Record<string, DisplaySleep['power']> = { 'AC Power': 'ac', 'Battery Power': 'battery', 'UPS Power': 'ups' };

/** `pmset -g custom`: one section per power source ("Battery Power:", "AC Power:"), each with displaysleep. */
export function parsePmsetCustom(stdout: string): DisplaySleep[] | null {
  const out: DisplaySleep[] = [];
  let power: DisplaySleep['power'] | undefined;
  for (const line of stdout.split('\n')) {
    const section = /^(AC Power|Battery Power|UPS Power):\s*$/.exec(line);
    if (section) {
      power = POWER_SECTION[section[1]!];
      continue;
    }
    const sleep = /^\s+displaysleep\s+(\d+)\b/.exec(line);
    if (sleep && power) out.push({ power, minutes: Number(sleep[1]) });
  }
  return out.length > 0 ? out : null;
}

interface ManagedScreenSaver {
  idleTime?: number;
  askForPassword?: boolean;
  askForPasswordDelay?: number;
}

/** The user's profile wins over the computer's, key by key. */
function managedScreenSaver(files: (PlistFile | undefined)[]): ManagedScreenSaver & { present: boolean } {
  const out: ManagedScreenSaver & { present: boolean } = { present: false };
  for (const file of files) {
    if (file?.state !== 'present') continue;
    out.present = true;
    const get = (key: string): PlistValue | undefined => file.dict[key];
    const idle = plistInt(get('idleTime'));
    const ask = plistBool(get('askForPassword'));
    const delay = get('askForPasswordDelay');
    if (out.idleTime === undefined && idle !== undefined && idle >= 0) out.idleTime = idle;
    if (out.askForPassword === undefined && ask !== undefined) out.askForPassword = ask;
    if (out.askForPasswordDelay === undefined && typeof delay === 'number' && delay >= 0) out.askForPasswordDelay = Math.ceil(delay);
  }
  return out;
}

export function evaluateScreenLock(facts: ScreenLockFacts, policy: Policy) {
  const { maxIdleSeconds, maxGraceSeconds } = policy.screenLock;
  if (facts.user.state === 'none') return unknown('no_console_user', { console: facts.user.why });
  if (facts.user.state === 'unreadable') return unknown(facts.user.reason, { step: 'console_user' });

  const managed = managedScreenSaver([facts.managedUser, facts.managedComputer]);
  const reported = facts.lock && !facts.lock.error ? parseScreenLockStatus(`${facts.lock.stderr}\n${facts.lock.stdout}`) : null;
  let lock: LockSetting | null = reported;
  let lockFrom = 'sysadminctl';
  if (managed.askForPassword === false) {
    lock = { lock: 'off' };
    lockFrom = 'mdm';
  } else if (managed.askForPasswordDelay !== undefined) {
    const grace = managed.askForPasswordDelay;
    lock = { lock: grace === 0 ? 'immediate' : 'delay', graceSeconds: grace };
    lockFrom = 'mdm';
  }
  const evidence: Evidence = {
    source: lockFrom,
    managed: managed.present,
    max_idle_seconds: maxIdleSeconds,
    max_grace_seconds: maxGraceSeconds,
  };
  if (!lock) {
    const reason = facts.lock?.error ? commandFailureReason(facts.lock) : 'parse_error';
    return unknown(reason, { ...evidence, step: 'screen_lock_status' });
  }
  evidence.lock = lock.lock;
  if (lock.lock === 'off') return fail({ ...evidence, rule: 'lock_off' });
  evidence.grace_seconds = lock.graceSeconds;
  if (lock.graceSeconds > maxGraceSeconds) return fail({ ...evidence, rule: 'grace_period' });

  // Screen saver start: profile, else the user's ByHost value; absent means the OS default, whose value we do not know.
  const userIdle = facts.idleTime ? parseDefaultsInteger(facts.idleTime) : ({ state: 'unreadable' } as const);
  const saver: { seconds: number | undefined; from: string } =
    managed.idleTime !== undefined
      ? { seconds: managed.idleTime, from: 'mdm' }
      : userIdle.state === 'set'
        ? { seconds: userIdle.seconds, from: 'user' }
        : { seconds: undefined, from: userIdle.state === 'absent' ? 'default' : 'unreadable' };
  evidence.screensaver_from = saver.from;
  if (saver.seconds !== undefined) evidence.screensaver_idle_seconds = saver.seconds === 0 ? null : saver.seconds;
  const displays = facts.pmset && !facts.pmset.error && facts.pmset.exitCode === 0 ? parsePmsetCustom(facts.pmset.stdout) : null;
  for (const d of displays ?? []) evidence[`display_sleep_${d.power}_min`] = d.minutes;

  // Effective idle per power source = the earlier of screen saver and display sleep (0 = never).
  const verdicts = (displays ?? [undefined]).map((display) => {
    const known = [saver.seconds, display && display.minutes * 60].filter((s): s is number => s !== undefined && s > 0);
    if (known.some((s) => s <= maxIdleSeconds)) return 'ok';
    return saver.seconds === undefined || display === undefined ? 'undetermined' : 'too_long';
  });
  const tooLong = (displays ?? []).filter((_d, i) => verdicts[i] === 'too_long').map((d) => d.power);
  if (tooLong.length > 0) return fail({ ...evidence, rule: 'idle_time', over_limit_power: tooLong });
  if (verdicts.includes('undetermined')) return unknown('idle_time_unknown', evidence);
  return pass({ ...evidence, rule: 'within_limits' });
}

export const screenLock = defineCheck({
  key: 'SCREEN_LOCK',
  platform: 'DARWIN',
  async collect(ctx): Promise<ScreenLockFacts> {
    const user = await consoleUser(ctx);
    if (user.state !== 'user') return { user };
    // A short name never holds "/", but the path is built from scutil's text: check, do not assume.
    const userProfile =
      /^[^/\0]+$/.test(user.name) && user.name !== '..' ? `${MANAGED_PREFERENCES}/${user.name}/com.apple.screensaver.plist` : undefined;
    const [lock, idleTime, managedUser, managedComputer, pmset] = await Promise.all([
      runAsUser(ctx, user, SYSADMINCTL, ['-screenLock', 'status']),
      runAsUser(ctx, user, DEFAULTS, ['-currentHost', 'read', 'com.apple.screensaver', 'idleTime']),
      userProfile ? readPlistFile(ctx, userProfile) : ({ state: 'unreadable', reason: 'parse_error' } as const),
      readPlistFile(ctx, `${MANAGED_PREFERENCES}/com.apple.screensaver.plist`),
      ctx.host.run(PMSET, ['-g', 'custom']),
    ]);
    return { user, lock, idleTime, managedUser, managedComputer, pmset };
  },
  evaluate: (facts, policy) => evaluateScreenLock(facts, policy),
});

// SCREEN_LOCK on FreeBSD (research §2.3): without an X server or Wayland compositor there is
// no screen to lock (NOT_APPLICABLE). With one, each desktop user's locker is judged in that
// user's context: XScreenSaver from its resource files (lock, timeout, lockTimeout; the user's
// file read as the user), xss-lock from the X server's screen-saver timeout (`xset q` as the
// user). Other lockers and desktop shells (GNOME, KDE, XFCE, swayidle, …) are recognised but
// their settings are not read: UNKNOWN, never a PASS because a program exists. A session with
// no locker at all is a FAIL.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult, type DirResult, type Evidence, type FileResult } from '../types';
import {
  commandFailureReason,
  fail,
  fsFailureReason,
  notApplicable,
  pass,
  unknown,
  type CommandFailureReason,
  type FsFailureReason,
} from '../verdict';
import { ownersOf, parseProcessTable, processProbe, runningCommands, type ProcessInfo } from './processes';
import { PASSWD, parsePasswd, type Account } from '../passwd';
import { parseResources, parseXsetTimeout, xscreensaverSettings, type LockSettings } from './xsession';

const XSET = '/usr/local/bin/xset';
/** Reads a user's own file as that user: their permissions apply and a FIFO or slow mount times out. */
const CAT = '/bin/cat';
const X11_SOCKETS = '/tmp/.X11-unix';
/** Where the x11/xscreensaver port installs its defaults (newer, then older layout). */
const XSCREENSAVER_DEFAULTS = ['/usr/local/share/X11/app-defaults/XScreenSaver', '/usr/local/lib/X11/app-defaults/XScreenSaver'] as const;

/** X servers and Wayland compositors: one running means a graphical session exists. */
const DISPLAY_SERVERS = [
  'Xorg',
  'X',
  'Xwayland',
  'Xvnc',
  'sway',
  'labwc',
  'wayfire',
  'Hyprland',
  'river',
  'hikari',
  'niri',
  'weston',
  'cage',
  'kwin_wayland',
  'gnome-shell',
] as const;
/** Lockers and desktop shells with their own lock settings, which this check does not read. */
const UNEVALUATED_LOCKERS = [
  'xautolock',
  'xidle',
  'swayidle',
  'hypridle',
  'light-locker',
  'xfce4-screensaver',
  'mate-screensaver',
  'cinnamon-screensave',
  'gnome-screensaver',
  'gnome-shell',
  'ksmserver',
  'kscreenlocker_greet',
  'plasmashell',
] as const;

export interface ScreenLockFacts {
  ps: CommandResult;
  passwd?: FileResult;
  /** uid → `cat ~/.xscreensaver` run as that user */
  userResources: Record<string, CommandResult>;
  appDefaults: Record<string, FileResult>;
  x11Sockets?: DirResult;
  /** uid → `xset q` run as that user */
  xset: Record<string, CommandResult>;
}

const namesOf = (table: ProcessInfo[], names: readonly string[]) => runningCommands(table).among(names).sort();

/** The single local display (":0" from /tmp/.X11-unix/X0), or null when there is none or several. */
function singleDisplay(listing: DirResult | undefined): string | null {
  if (!listing?.ok) return null;
  const displays = listing.entries.filter((e) => /^X\d+$/.test(e));
  return displays.length === 1 ? `:${displays[0]!.slice(1)}` : null;
}

async function collectScreenLock(ctx: CheckContext): Promise<ScreenLockFacts> {
  const { host } = ctx;
  const ps = await processProbe(ctx);
  const facts: ScreenLockFacts = { ps, userResources: {}, appDefaults: {}, xset: {} };
  const table = parseProcessTable(ps);
  if (!table.ok || namesOf(table.processes, DISPLAY_SERVERS).length === 0) return facts;
  const saverUsers = ownersOf(table.processes, ['xscreensaver']);
  const xssUsers = ownersOf(table.processes, ['xss-lock']).filter((uid) => !saverUsers.includes(uid));
  if (saverUsers.length + xssUsers.length === 0) return facts;
  facts.passwd = await host.readFile(PASSWD);
  const accounts = facts.passwd.ok ? parsePasswd(facts.passwd.text) : new Map<number, Account>();
  const work: Promise<unknown>[] = [];
  for (const uid of saverUsers) {
    const account = accounts.get(uid);
    if (!account) continue;
    const asUser = { user: { uid, gid: account.gid }, env: { HOME: account.home } };
    work.push(host.run(CAT, [`${account.home}/.xscreensaver`], asUser).then((r) => (facts.userResources[uid] = r)));
  }
  if (saverUsers.length > 0) {
    for (const path of XSCREENSAVER_DEFAULTS) work.push(host.readFile(path).then((r) => (facts.appDefaults[path] = r)));
  }
  if (xssUsers.length > 0) {
    facts.x11Sockets = await host.readDir(X11_SOCKETS);
    const display = singleDisplay(facts.x11Sockets);
    for (const uid of xssUsers) {
      const account = accounts.get(uid);
      if (!display || !account) continue;
      const env = { DISPLAY: display, XAUTHORITY: `${account.home}/.Xauthority`, HOME: account.home };
      work.push(host.run(XSET, ['q'], { user: { uid, gid: account.gid }, env }).then((r) => (facts.xset[uid] = r)));
    }
  }
  await Promise.all(work);
  return facts;
}

type Unreadable = CommandFailureReason | FsFailureReason | 'no_user_account' | 'no_xscreensaver_settings' | 'no_single_display';
type UserResult = { settings: LockSettings; locker: string } | { unknown: Unreadable; locker: string };

/** `cat` as the user: the file's text, "absent", or why it could not be read. */
function userFile(result: CommandResult): { text: string } | 'absent' | { reason: CommandFailureReason } {
  if (!result.error && result.exitCode === 0) return { text: result.stdout };
  if (!result.error && /: No such file or directory$/m.test(result.stderr)) return 'absent';
  if (!result.error && /: Permission denied$/m.test(result.stderr)) return { reason: 'permission_denied' };
  return { reason: commandFailureReason(result) };
}

function xscreensaverUser(facts: ScreenLockFacts, uid: number): UserResult {
  const locker = 'xscreensaver';
  const result = facts.userResources[uid];
  if (!result) return { unknown: facts.passwd && !facts.passwd.ok ? fsFailureReason(facts.passwd.error) : 'no_user_account', locker };
  const file = userFile(result);
  if (file !== 'absent' && 'reason' in file) return { unknown: file.reason, locker };
  const defaults = XSCREENSAVER_DEFAULTS.map((p) => facts.appDefaults[p]).find((r): r is { ok: true; text: string } => !!r?.ok);
  const settings = xscreensaverSettings(
    file === 'absent' ? null : parseResources(file.text),
    defaults ? parseResources(defaults.text) : null,
  );
  return settings ? { settings, locker } : { unknown: 'no_xscreensaver_settings', locker };
}

function xssLockUser(facts: ScreenLockFacts, uid: number): UserResult {
  const locker = 'xss-lock';
  const result = facts.xset[uid];
  if (!result) return { unknown: singleDisplay(facts.x11Sockets) ? 'no_user_account' : 'no_single_display', locker };
  if (result.error || result.exitCode !== 0) return { unknown: commandFailureReason(result), locker };
  const timeout = parseXsetTimeout(result.stdout);
  if (timeout === null) return { unknown: 'parse_error', locker };
  // xss-lock starts the locker when the X screen saver activates; timeout 0 means it never does.
  return { settings: { locks: timeout > 0, idleSeconds: timeout, graceSeconds: 0 }, locker };
}

function evaluateScreenLock(facts: ScreenLockFacts, policy: Policy) {
  const table = parseProcessTable(facts.ps);
  if (!table.ok) return unknown(table.reason, { source: 'ps' });
  const servers = namesOf(table.processes, DISPLAY_SERVERS);
  if (servers.length === 0) return notApplicable('headless', { source: 'ps', graphical_session: false });
  const saverUsers = ownersOf(table.processes, ['xscreensaver']);
  const xssUsers = ownersOf(table.processes, ['xss-lock']).filter((uid) => !saverUsers.includes(uid));
  const others = namesOf(table.processes, UNEVALUATED_LOCKERS);
  const evidence: Evidence = {
    source: 'ps+xscreensaver',
    graphical_session: true,
    display_servers: servers,
    lockers: [...(saverUsers.length ? ['xscreensaver'] : []), ...(xssUsers.length ? ['xss-lock'] : []), ...others],
    max_idle_seconds: policy.screenLock.maxIdleSeconds,
    max_grace_seconds: policy.screenLock.maxGraceSeconds,
  };
  const results = [...saverUsers.map((uid) => xscreensaverUser(facts, uid)), ...xssUsers.map((uid) => xssLockUser(facts, uid))];
  if (results.length === 0 && others.length === 0) return fail({ ...evidence, rule: 'no_locker_running' });
  const judged = results.filter((r): r is { settings: LockSettings; locker: string } => 'settings' in r);
  const compliant = judged.filter(
    ({ settings: s }) =>
      s.locks && s.idleSeconds <= policy.screenLock.maxIdleSeconds && s.graceSeconds <= policy.screenLock.maxGraceSeconds,
  );
  Object.assign(evidence, { users_evaluated: judged.length, users_compliant: compliant.length });
  if (judged.length > 0) {
    Object.assign(evidence, {
      lock_enabled: judged.every((r) => r.settings.locks),
      idle_seconds: Math.max(...judged.map((r) => r.settings.idleSeconds)),
      grace_seconds: Math.max(...judged.map((r) => r.settings.graceSeconds)),
    });
  }
  const noncompliant = judged.find((r) => !compliant.includes(r));
  if (noncompliant) {
    const s = noncompliant.settings;
    const rule = !s.locks ? 'lock_disabled' : s.idleSeconds > policy.screenLock.maxIdleSeconds ? 'idle_too_long' : 'grace_too_long';
    return fail({ ...evidence, rule });
  }
  const undecided = results.find((r): r is { unknown: Unreadable; locker: string } => 'unknown' in r);
  if (undecided) return unknown(undecided.unknown, evidence);
  if (others.length > 0) return unknown('locker_not_evaluated', evidence);
  return pass({ ...evidence, rule: 'locks' });
}

export const screenLockCheck = defineCheck({
  key: 'SCREEN_LOCK',
  platform: 'FREEBSD',
  collect: collectScreenLock,
  evaluate: (facts, policy) => evaluateScreenLock(facts, policy),
});

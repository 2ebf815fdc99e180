// SCREEN_LOCK on Linux (research §2.2): only a graphical session has a screen to lock. Without one
// the control has no subject (NOT_APPLICABLE headless) - never the gsettings schema defaults a
// headless root reads. With one, each local session user's settings are read in that user's
// context; all must lock within policy.screenLock.maxIdleSeconds + maxGraceSeconds.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext } from '../types';
import { fail, notApplicable, pass, unknown } from '../verdict';
import { readLockSettings, type LockReading, type LockSettings, type LockUnreadable } from './desktopLock';
import { processTable, runningCommands } from './processes';
import { accountOf, graphicalSessions, type SessionFacts } from './sessions';

interface ScreenLockFacts {
  sessions: Omit<SessionFacts, 'sessions'> & { local: number; remote: number; sessionTypes: string[] };
  /** One reading per distinct local session user (no user identity kept). */
  users: LockReading[];
  /** Whether xfce4-screensaver runs, asked only for XFCE sessions (null: the process table is incomplete). */
  xfceLockerRunning?: boolean | null;
}

/** XFCE's settings lock the screen only through xfce4-screensaver's process (comm cut to 15 characters). */
const XFCE_LOCKER = 'xfce4-screensaver';

async function collect(ctx: CheckContext): Promise<ScreenLockFacts> {
  const found = await graphicalSessions(ctx);
  const local = found.sessions.filter((s) => !s.remote);
  const byUser = new Map(local.map((s) => [s.uid, s.desktop]));
  const ownUid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const users = await Promise.all(
    [...byUser].map(async ([uid, desktop]): Promise<LockReading> => {
      const account = await accountOf(ctx.host, uid);
      if (!account) return { ok: false, reason: 'no_user_account', desktop };
      return readLockSettings(ctx.host, account, desktop, uid !== ownUid);
    }),
  );
  const facts: ScreenLockFacts = {
    sessions: {
      source: found.source,
      desktopInstalled: found.desktopInstalled,
      local: local.length,
      remote: found.sessions.length - local.length,
      sessionTypes: [...new Set(local.map((s) => s.type))].sort(),
    },
    users,
  };
  if (users.some((u) => u.ok && u.settings.desktop === 'xfce')) {
    const table = await processTable(ctx);
    facts.xfceLockerRunning = table.complete ? runningCommands(table).has(XFCE_LOCKER) : null;
  }
  return facts;
}

type LockTooWeak = 'lock_disabled' | 'idle_activation_disabled' | 'never_idle' | 'idle_too_long' | 'grace_too_long' | 'locker_not_running';
type UserVerdict =
  | { status: 'PASS' }
  | { status: 'FAIL'; rule: LockTooWeak }
  | { status: 'UNKNOWN'; reason: LockUnreadable | 'parse_error' | 'process_table_incomplete' };

function judgeUser(s: LockSettings, policy: Policy): UserVerdict {
  const { maxIdleSeconds, maxGraceSeconds } = policy.screenLock;
  if (s.lockEnabled === false) return { status: 'FAIL', rule: 'lock_disabled' };
  if (s.idleActivation === false) return { status: 'FAIL', rule: 'idle_activation_disabled' };
  if (s.idleDelaySeconds === 0) return { status: 'FAIL', rule: 'never_idle' };
  if (s.idleDelaySeconds !== undefined && s.idleDelaySeconds > maxIdleSeconds) return { status: 'FAIL', rule: 'idle_too_long' };
  if (s.lockDelaySeconds !== undefined && s.lockDelaySeconds > maxGraceSeconds) return { status: 'FAIL', rule: 'grace_too_long' };
  if (s.lockEnabled === undefined || s.idleDelaySeconds === undefined || s.lockDelaySeconds === undefined)
    return { status: 'UNKNOWN', reason: 'parse_error' };
  return { status: 'PASS' };
}

function evaluate(facts: ScreenLockFacts, policy: Policy) {
  const { sessions } = facts;
  const evidence: Record<string, unknown> = {
    session_source: sessions.source,
    graphical_sessions: sessions.local,
    remote_sessions: sessions.remote,
  };
  if (sessions.local === 0) {
    if (sessions.source === 'none') return unknown('sessions_unreadable', evidence);
    if (!sessions.desktopInstalled && sessions.remote === 0) return notApplicable('headless', evidence);
    return unknown('no_console_user', { ...evidence, desktop_installed: sessions.desktopInstalled });
  }
  evidence.session_types = sessions.sessionTypes;
  const verdicts = facts.users.map((u): UserVerdict => {
    if (!u.ok) return { status: 'UNKNOWN', reason: u.reason };
    // The settings are only the intent: XFCE locks through xfce4-screensaver's running process.
    if (u.settings.desktop === 'xfce' && facts.xfceLockerRunning === false) return { status: 'FAIL', rule: 'locker_not_running' };
    if (u.settings.desktop === 'xfce' && facts.xfceLockerRunning === null) return { status: 'UNKNOWN', reason: 'process_table_incomplete' };
    return judgeUser(u.settings, policy);
  });
  if (facts.xfceLockerRunning !== undefined) evidence.locker_running = facts.xfceLockerRunning;
  const first = facts.users[0]!;
  if (first.ok) {
    const s = first.settings;
    Object.assign(evidence, {
      source: s.source,
      desktop: s.desktop,
      lock_enabled: s.lockEnabled ?? null,
      idle_delay_seconds: s.idleDelaySeconds ?? null,
      lock_delay_seconds: s.lockDelaySeconds ?? null,
    });
    if (s.idleActivation !== undefined) evidence.idle_activation = s.idleActivation;
    if (s.defaultsUsed !== undefined) evidence.defaults_used = s.defaultsUsed;
  } else {
    evidence.desktop = first.desktop;
  }
  Object.assign(evidence, {
    users_evaluated: verdicts.length,
    users_compliant: verdicts.filter((v) => v.status === 'PASS').length,
    max_idle_seconds: policy.screenLock.maxIdleSeconds,
    max_grace_seconds: policy.screenLock.maxGraceSeconds,
  });
  const failed = verdicts.find((v): v is Extract<UserVerdict, { status: 'FAIL' }> => v.status === 'FAIL');
  if (failed) return fail({ ...evidence, rule: failed.rule });
  const undecided = verdicts.find((v): v is Extract<UserVerdict, { status: 'UNKNOWN' }> => v.status === 'UNKNOWN');
  if (undecided) return unknown(undecided.reason, evidence);
  return pass({ ...evidence, rule: 'locks_within_policy' });
}

export const screenLock = defineCheck({ key: 'SCREEN_LOCK', platform: 'LINUX', collect, evaluate });

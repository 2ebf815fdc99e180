// SCREEN_LOCK on Windows (research §2.4). A lock engages within policy.screenLock.maxIdleSeconds if
// (1) the machine inactivity limit (InactivityTimeoutSecs) says so, or, for every interactive user
// whose hive is loaded (local/AD S-1-5-21-… and Entra ID S-1-12-1-…), (2) a secure screen saver
// runs soon enough (user Group Policy first, then the user's own values) or (3) the machine sleeps
// soon enough and asks for sign-in on wake (AC and battery). The agent runs as SYSTEM: HKCU would
// be SYSTEM's own hive, so users are read under HKU\<SID>. Evidence counts users, never names SIDs.
import * as z from 'zod/mini';
import type { Policy } from '../policy';
import type { Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import { defineProbeCheck, probeSection, registryKey, sectionUnknown, type Section } from './probe';
import { asNumber, asText, regNumber, RegistryValues } from './registry';

/**
 * One loaded HKU hive: the screen-saver values of its user Group Policy key and of its own Control
 * Panel\Desktop key, or the error that kept them out of reach (without administrator rights only
 * one's own hive opens).
 */
const UserHive = z.object({
  Sid: z.string(),
  Policy: z._default(z.nullable(RegistryValues), null),
  User: z._default(z.nullable(RegistryValues), null),
  Error: z.optional(z.string().check(z.maxLength(200))),
});
export type UserHive = z.infer<typeof UserHive>;

const PowerIndexes = z.object({
  ACConsoleLock: z.nullable(z.int()),
  DCConsoleLock: z.nullable(z.int()),
  ACStandbyIdle: z.nullable(z.int()),
  DCStandbyIdle: z.nullable(z.int()),
});
type PowerIndexes = z.infer<typeof PowerIndexes>;

export interface ScreenLockFacts {
  systemPolicy: Section<RegistryValues | null>;
  winlogon: Section<RegistryValues | null>;
  hives: Section<UserHive[]>;
  /** Active power plan values; null when no plan is active. */
  power: Section<PowerIndexes | null>;
  consoleLockPolicy: Section<RegistryValues | null>;
  standbyIdlePolicy: Section<RegistryValues | null>;
}

/** Interactive accounts: local or Active Directory (S-1-5-21-a-b-c-RID) and Entra ID (S-1-12-1-a-b-c-d). */
const LOCAL_OR_AD_SID = /^S-1-5-21-\d+-\d+-\d+-\d+$/;
const ENTRA_SID = /^S-1-12-1-\d+-\d+-\d+-\d+$/;

export function userKind(sid: string): 'local_or_ad' | 'entra' | null {
  if (LOCAL_OR_AD_SID.test(sid)) return 'local_or_ad';
  if (ENTRA_SID.test(sid)) return 'entra';
  return null;
}

/** Windows' screen-saver grace period when ScreenSaverGracePeriod is not set. */
const DEFAULT_GRACE_SECONDS = 5;

type Tri = true | false | 'undetermined';

/** The effective value: the user Group Policy value wins over the user's own (Microsoft: "takes precedence over a user setting"). */
function effective(hive: UserHive, name: string): { value: unknown; managed: boolean } {
  if (hive.Policy !== null && name in hive.Policy) return { value: hive.Policy[name], managed: true };
  return { value: hive.User?.[name], managed: false };
}

const flag = (value: unknown): 0 | 1 | 'invalid' | null => {
  const n = asNumber(value);
  return n === null || n === 0 || n === 1 ? n : 'invalid';
};

/** Mechanism (2): a secure screen saver within maxIdle and a grace period within maxGrace. */
export function secureScreenSaver(
  hive: UserHive,
  maxIdleSeconds: number,
  graceSeconds: number | 'undetermined',
  maxGraceSeconds: number,
): { ok: Tri; managed: boolean } {
  const active = effective(hive, 'ScreenSaveActive');
  const secure = effective(hive, 'ScreenSaverIsSecure');
  const timeout = effective(hive, 'ScreenSaveTimeOut');
  const executable = effective(hive, 'SCRNSAVE.EXE');
  const managed = active.managed || secure.managed || timeout.managed || executable.managed;
  // Absent ScreenSaveActive behaves as 1 (Microsoft); absent SCRNSAVE.EXE means "(None)": no screen saver runs.
  const activeFlag = flag(active.value) ?? 1;
  const secureFlag = flag(secure.value) ?? 0;
  const exe = asText(executable.value);
  const seconds = asNumber(timeout.value);
  if (activeFlag === 'invalid' || secureFlag === 'invalid' || exe === 'invalid' || seconds === 'invalid')
    return { ok: 'undetermined', managed };
  if (activeFlag === 0 || secureFlag === 0 || exe === null || exe.trim() === '') return { ok: false, managed };
  if (seconds === null) return { ok: 'undetermined', managed };
  if (seconds === 0 || seconds > maxIdleSeconds) return { ok: false, managed };
  if (graceSeconds === 'undetermined') return { ok: 'undetermined', managed };
  return { ok: graceSeconds <= maxGraceSeconds, managed };
}

export interface SleepLock {
  consoleLockAc: number | null;
  consoleLockDc: number | null;
  standbyIdleAc: number | null;
  standbyIdleDc: number | null;
}

/** Power values, the Group Policy ones (HKLM\SOFTWARE\Policies\Microsoft\Power\PowerSettings) first, then the active plan's. */
function sleepLock(facts: ScreenLockFacts): SleepLock | 'undetermined' {
  const { power, consoleLockPolicy, standbyIdlePolicy } = facts;
  if (!consoleLockPolicy.ok || !standbyIdlePolicy.ok) return 'undetermined';
  const plan = power.ok ? power.value : null;
  const pick = (policyValues: RegistryValues | null, name: 'ACSettingIndex' | 'DCSettingIndex', planValue: number | null | undefined) => {
    const managed = regNumber(policyValues, name);
    return managed === 'invalid' ? undefined : (managed ?? planValue ?? null);
  };
  const lock = {
    consoleLockAc: pick(consoleLockPolicy.value, 'ACSettingIndex', plan?.ACConsoleLock),
    consoleLockDc: pick(consoleLockPolicy.value, 'DCSettingIndex', plan?.DCConsoleLock),
    standbyIdleAc: pick(standbyIdlePolicy.value, 'ACSettingIndex', plan?.ACStandbyIdle),
    standbyIdleDc: pick(standbyIdlePolicy.value, 'DCSettingIndex', plan?.DCStandbyIdle),
  };
  const { consoleLockAc, consoleLockDc, standbyIdleAc, standbyIdleDc } = lock;
  if (consoleLockAc === undefined || consoleLockDc === undefined || standbyIdleAc === undefined || standbyIdleDc === undefined)
    return 'undetermined';
  return { consoleLockAc, consoleLockDc, standbyIdleAc, standbyIdleDc };
}

/** Mechanism (3): sleep within maxIdle and sign-in required on wake, both on AC and on battery. */
export function sleepLockEngages(lock: SleepLock | 'undetermined', maxIdleSeconds: number): Tri {
  if (lock === 'undetermined') return 'undetermined';
  const side = (consoleLock: number | null, standbyIdle: number | null): Tri => {
    if (consoleLock === 0 || standbyIdle === 0) return false;
    if (consoleLock === null || standbyIdle === null) return 'undetermined';
    if (consoleLock !== 1) return 'undetermined';
    return standbyIdle <= maxIdleSeconds;
  };
  const ac = side(lock.consoleLockAc, lock.standbyIdleAc);
  const dc = side(lock.consoleLockDc, lock.standbyIdleDc);
  if (ac === false || dc === false) return false;
  return ac === true && dc === true ? true : 'undetermined';
}

export function evaluateScreenLock(facts: ScreenLockFacts, policy: Policy) {
  const { maxIdleSeconds, maxGraceSeconds } = policy.screenLock;
  const evidence: Evidence = { source: 'registry', max_idle_seconds: maxIdleSeconds };

  // (1) Machine inactivity limit: user-independent.
  if (!facts.systemPolicy.ok) return sectionUnknown(facts.systemPolicy, evidence);
  const inactivity = regNumber(facts.systemPolicy.value, 'InactivityTimeoutSecs');
  if (inactivity === 'invalid') return unknown('parse_error', { ...evidence, value: 'InactivityTimeoutSecs' });
  evidence.inactivity_timeout_secs = inactivity === 0 ? null : inactivity;
  if (inactivity !== null && inactivity > 0 && inactivity <= maxIdleSeconds) return pass({ ...evidence, rule: 'machine_inactivity_limit' });

  const lock = sleepLock(facts);
  if (lock !== 'undetermined') {
    Object.assign(evidence, {
      console_lock_ac: lock.consoleLockAc,
      console_lock_dc: lock.consoleLockDc,
      standby_idle_ac_secs: lock.standbyIdleAc,
      standby_idle_dc_secs: lock.standbyIdleDc,
    });
  }
  const sleepEngages = sleepLockEngages(lock, maxIdleSeconds);

  if (!facts.hives.ok) return sectionUnknown(facts.hives, evidence);
  const users = facts.hives.value.filter((hive) => userKind(hive.Sid) !== null);
  if (users.length === 0) return unknown('no_user_hive', { ...evidence, rule: 'no_user_hive' });

  const configuredGrace = facts.winlogon.ok ? regNumber(facts.winlogon.value, 'ScreenSaverGracePeriod') : 'invalid';
  const grace = configuredGrace === 'invalid' ? 'undetermined' : (configuredGrace ?? DEFAULT_GRACE_SECONDS);
  if (grace !== 'undetermined') evidence.screensaver_grace_secs = grace;

  let compliant = 0;
  let nonCompliant = 0;
  let unreadable = 0;
  let managed = false;
  for (const hive of users) {
    if (hive.Error !== undefined) {
      if (sleepEngages === true) compliant++;
      else unreadable++;
      continue;
    }
    const saver = secureScreenSaver(hive, maxIdleSeconds, grace, maxGraceSeconds);
    managed ||= saver.managed;
    if (saver.ok === true || sleepEngages === true) compliant++;
    else if (saver.ok === false && sleepEngages === false) nonCompliant++;
  }
  Object.assign(evidence, {
    users_evaluated: users.length,
    users_compliant: compliant,
    entra_users: users.filter((hive) => userKind(hive.Sid) === 'entra').length,
    screensaver_policy_managed: managed,
  });
  if (unreadable > 0) evidence.users_unreadable = unreadable;
  if (nonCompliant > 0) return fail({ ...evidence, rule: 'user_without_lock' });
  // Other users' hives open only to administrators and SYSTEM (the service's account).
  if (unreadable > 0) return unknown('permission_denied', { ...evidence, value: 'other_users_hives' });
  if (compliant < users.length) return unknown('undetermined_user_settings', evidence);
  return pass({ ...evidence, rule: sleepEngages === true ? 'sleep_lock' : 'secure_screensaver' });
}

export const screenLockCheck = defineProbeCheck(
  'SCREEN_LOCK',
  (probe): ScreenLockFacts => ({
    systemPolicy: registryKey(probe, 'systemPolicy'),
    winlogon: registryKey(probe, 'winlogon'),
    hives: probeSection(probe, 'userHives', z.array(UserHive)),
    power: probeSection(probe, 'power', z.nullable(PowerIndexes)),
    consoleLockPolicy: registryKey(probe, 'consoleLockPolicy'),
    standbyIdlePolicy: registryKey(probe, 'standbyIdlePolicy'),
  }),
  (facts, policy) => evaluateScreenLock(facts, policy),
);

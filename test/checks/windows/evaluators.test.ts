// Edge cases of the Windows evaluators and parsers, on facts built directly (the fixtures cover the
// common cases end to end): productState bits, DWORD signedness, BitLocker states, hive SIDs,
// policy-over-user precedence, Defender running modes, lifecycle groups.
import { describe, expect, it } from 'vitest';
import { resolvePolicy, DEFAULT_POLICY } from '../../../checks/policy';
import type { Section, SectionReason, ServiceFacts } from '../../../checks/windows/probe';
import { evaluateAutoUpdate, type AutoUpdateFacts } from '../../../checks/windows/autoUpdate';
import { evaluateDiskEncryption, volumeState, type EncryptableVolume } from '../../../checks/windows/diskEncryption';
import { evaluateFirewall, type FirewallFacts } from '../../../checks/windows/firewall';
import { windowsLifecycle } from '../../../checks/windows/lifecycle';
import {
  evaluateMalwareProtection,
  judgeDefender,
  type DefenderStatus,
  type MalwareFacts,
} from '../../../checks/windows/malwareProtection';
import { windowsRelease } from '../../../checks/windows/osRelease';
import { evaluateOsVersion } from '../../../checks/windows/osVersion';
import { updateLineFor, UPDATE_HISTORY_RECORDED_THROUGH } from '../../../checks/windows/updateHistory';
import { evaluatePasswordPolicy, parseSystemAccess, type PasswordPolicyFacts } from '../../../checks/windows/passwordPolicy';
import { asNumber, type RegistryValues } from '../../../checks/windows/registry';
import { evaluateRemoteLogin, sshdAcceptsPasswords, type RemoteLoginFacts } from '../../../checks/windows/remoteLogin';
import {
  evaluateScreenLock,
  secureScreenSaver,
  sleepLockEngages,
  userKind,
  type ScreenLockFacts,
  type UserHive,
} from '../../../checks/windows/screenLock';
import { decodeProductState } from '../../../checks/windows/securityCenter';
import { evaluateTimeSync, parseW32tmStatus, w32tmError, type TimeSyncFacts } from '../../../checks/windows/timeSync';
import { ENTRA_USER_SID, LOCAL_USER_SID, STOCK_SERVICES, listeners } from './probeDocument';

const NOW = new Date('2026-11-21T12:00:00Z');
const ok = <T>(value: T): Section<T> => ({ ok: true, value });
const failed = (reason: SectionReason, error?: string): Section<never> => ({ ok: false, reason, ...(error ? { error } : {}) });
const services = (change: Record<string, Partial<ServiceFacts> | null> = {}): Section<ServiceFacts[]> =>
  ok([
    ...STOCK_SERVICES.map((s) => ({ ...s, ...change[s.Name] })).filter((s) => change[s.Name] !== null),
    ...Object.entries(change)
      .filter(([name, row]) => row && !STOCK_SERVICES.some((s) => s.Name === name))
      .map(([Name, row]) => ({ Name, Start: 3, Triggered: false, State: 'Stopped', ...row })),
  ]);

describe('Security Center productState', () => {
  it.each([
    [397568, { state: 'on', microsoft: true, upToDate: true }], // 0x061100 Defender on
    [393472, { state: 'off', microsoft: true, upToDate: true }], // 0x060100 Defender off
    [397584, { state: 'on', microsoft: true, upToDate: false }], // 0x061110
    [266240, { state: 'on', microsoft: false, upToDate: true }], // 0x041000 third-party on
    [266256, { state: 'on', microsoft: false, upToDate: false }], // 0x041010 out of date
    [262144, { state: 'off', microsoft: false, upToDate: true }], // 0x040000
    [270336, { state: 'snoozed', microsoft: false, upToDate: true }], // 0x042000
    [274432, { state: 'expired', microsoft: false, upToDate: true }], // 0x043000
  ])('decodes %i', (value, expected) => {
    expect(decodeProductState(value)).toEqual(expected);
  });

  it.each([344064 /* 0x054000: state nibble 4 */, 0x061200 /* owner 2 */, 0x061120 /* signatures 2 */, -1, 0x1000000, 1.5])(
    'refuses the undocumented value %d',
    (value) => {
      expect(decodeProductState(value)).toBeNull();
    },
  );
});

describe('registry numbers', () => {
  it('reads DWORDs as unsigned and REG_SZ digits as numbers, nothing else', () => {
    expect(asNumber(-1)).toBe(4294967295);
    expect(asNumber(900)).toBe(900);
    expect(asNumber(' 600 ')).toBe(600);
    expect(asNumber(undefined)).toBeNull();
    for (const bad of ['0x10', '9 min', '', 1.5, ['1']]) expect(asNumber(bad)).toBe('invalid');
  });
});

describe('DISK_ENCRYPTION', () => {
  const volume = (change: Partial<EncryptableVolume> = {}): EncryptableVolume => ({
    DriveLetter: 'C:',
    Mounted: true,
    VolumeType: 0,
    ProtectionStatus: 1,
    ConversionStatus: 1,
    EncryptionPercentage: 100,
    EncryptionMethod: 7,
    KeyProtectorTypes: [1],
    ReturnValues: [0, 0, 0, 0],
    ...change,
  });

  it.each([
    [{}, { kind: 'protected' }],
    [{ ProtectionStatus: 0 }, { kind: 'unprotected', state: 'suspended' }],
    [
      { ProtectionStatus: 0, KeyProtectorTypes: [] },
      { kind: 'unprotected', state: 'protection_off' },
    ],
    [{ ConversionStatus: 3 }, { kind: 'unprotected', state: 'decrypting' }],
    [{ ConversionStatus: 5 }, { kind: 'unprotected', state: 'decrypting' }],
    [{ ConversionStatus: 4 }, { kind: 'encrypting', state: 'encryption_paused' }],
    [{ ProtectionStatus: 2 }, { kind: 'undetermined', reason: 'protection_status_unknown' }],
    [{ ConversionStatus: 9 }, { kind: 'undetermined', reason: 'unexpected_value' }],
    [{ ProtectionStatus: null }, { kind: 'undetermined', reason: 'unexpected_value' }],
    [{ ReturnValues: [0, 2150694912, 0, 0] }, { kind: 'undetermined', reason: 'method_failed' }],
  ])('volume %j is %j', (change, expected) => {
    expect(volumeState(volume(change))).toEqual(expected);
  });

  it('finds the OS volume by drive letter when VolumeType is missing, and refuses to guess between two', () => {
    const byLetter = evaluateDiskEncryption(
      { volumes: ok([volume({ VolumeType: null, DriveLetter: 'D:' }), volume({ VolumeType: null })]), systemDrive: 'c:' },
      DEFAULT_POLICY,
    );
    expect(byLetter.status).toBe('PASS');
    const two = evaluateDiskEncryption({ volumes: ok([volume(), volume({ DriveLetter: 'E:' })]), systemDrive: 'C:' }, DEFAULT_POLICY);
    expect(two).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'os_volume_not_found' } });
  });

  it('reports key protector types, never their IDs, and ignores data volumes unless the scope asks', () => {
    const facts = {
      volumes: ok([
        volume({ KeyProtectorTypes: [4, 3, 99] }),
        volume({ VolumeType: 1, DriveLetter: 'D:', ProtectionStatus: 0, ConversionStatus: 0 }),
      ]),
      systemDrive: 'C:',
    };
    expect(evaluateDiskEncryption(facts, DEFAULT_POLICY)).toMatchObject({
      status: 'PASS',
      evidence: { os_volume: { protectors: ['TpmPin', 'NumericalPassword', 'Unknown'], method: 'XTS_AES_256' } },
    });
    expect(evaluateDiskEncryption(facts, DEFAULT_POLICY).evidence).not.toHaveProperty('fixed_data_volumes');
    const undetermined = { volumes: ok([volume(), volume({ VolumeType: 1, DriveLetter: 'D:', ProtectionStatus: 2 })]), systemDrive: 'C:' };
    expect(evaluateDiskEncryption(undetermined, resolvePolicy({ diskEncryption: { scope: 'all_local' } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'fixed_data_volume_undetermined', other_fixed_undetermined: 1 },
    });
  });

  it('skips a fixed volume only when it is known to be mounted nowhere', () => {
    const allLocal = resolvePolicy({ diskEncryption: { scope: 'all_local' } });
    const decrypted = { VolumeType: 1, DriveLetter: null, ProtectionStatus: 0, ConversionStatus: 0, KeyProtectorTypes: [] };
    const nowhere = evaluateDiskEncryption(
      { volumes: ok([volume(), volume({ ...decrypted, Mounted: false })]), systemDrive: 'C:' },
      allLocal,
    );
    expect(nowhere).toMatchObject({ status: 'PASS', evidence: { unmounted_volumes_skipped: 1, fixed_data_volumes: 0 } });
    // Mounted in a folder (no letter), or mount state unknown: a volume like any other.
    for (const Mounted of [true, null]) {
      expect(
        evaluateDiskEncryption({ volumes: ok([volume(), volume({ ...decrypted, Mounted })]), systemDrive: 'C:' }, allLocal),
      ).toMatchObject({ status: 'FAIL', evidence: { rule: 'fixed_data_volume_unprotected' } });
    }
    // A lettered volume that Win32_Volume calls unmounted still counts.
    expect(
      evaluateDiskEncryption(
        { volumes: ok([volume(), volume({ ...decrypted, DriveLetter: 'D:', Mounted: false })]), systemDrive: 'C:' },
        allLocal,
      ).status,
    ).toBe('FAIL');
  });
});

describe('SCREEN_LOCK', () => {
  const hive = (User: RegistryValues | null, Policy: RegistryValues | null = null, Sid = LOCAL_USER_SID): UserHive => ({
    Sid,
    Policy,
    User,
  });
  const secure = { ScreenSaveActive: '1', ScreenSaverIsSecure: '1', ScreenSaveTimeOut: '600', 'SCRNSAVE.EXE': 'scrnsave.scr' };
  const facts = (change: Partial<ScreenLockFacts> = {}): ScreenLockFacts => ({
    systemPolicy: ok({}),
    winlogon: ok({}),
    hives: ok([hive(secure)]),
    power: ok({ ACConsoleLock: 1, DCConsoleLock: 1, ACStandbyIdle: 1800, DCStandbyIdle: 900 }),
    consoleLockPolicy: ok(null),
    standbyIdlePolicy: ok(null),
    ...change,
  });

  it('evaluates the hives it can read and says how many it could not (no administrator rights)', () => {
    const denied: UserHive = { Sid: 'S-1-5-21-1-2-3-1002', Policy: null, User: null, Error: 'access_denied' };
    expect(evaluateScreenLock(facts({ hives: ok([hive(secure), denied]) }), DEFAULT_POLICY)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied', users_unreadable: 1, users_compliant: 1 },
    });
    expect(evaluateScreenLock(facts({ hives: ok([hive({ ScreenSaveActive: '1' }), denied]) }), DEFAULT_POLICY)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'user_without_lock', users_unreadable: 1 },
    });
    // Sleep with sign-in covers every user, readable or not.
    const sleeps = { power: ok({ ACConsoleLock: 1, DCConsoleLock: 1, ACStandbyIdle: 600, DCStandbyIdle: 300 }) };
    expect(evaluateScreenLock(facts({ ...sleeps, hives: ok([hive({ ScreenSaveActive: '1' }), denied]) }), DEFAULT_POLICY)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'sleep_lock', users_compliant: 2 },
    });
    expect(
      evaluateScreenLock(facts({ hives: ok([denied]), systemPolicy: ok({ InactivityTimeoutSecs: 600 }) }), DEFAULT_POLICY),
    ).toMatchObject({ status: 'PASS', evidence: { rule: 'machine_inactivity_limit' } });
  });

  it('classifies interactive SIDs exactly (local/AD and Entra ID), nothing else', () => {
    expect(userKind(LOCAL_USER_SID)).toBe('local_or_ad');
    expect(userKind(ENTRA_USER_SID)).toBe('entra');
    for (const sid of [
      'S-1-5-18',
      'S-1-5-19',
      '.DEFAULT',
      `${LOCAL_USER_SID}_Classes`,
      'S-1-5-21-1-2-3',
      'S-1-12-1-1-2-3',
      ` ${LOCAL_USER_SID}`,
    ]) {
      expect(userKind(sid)).toBeNull();
    }
  });

  it('lets the user Group Policy value win over the user value, in either direction', () => {
    expect(secureScreenSaver(hive(secure, { ScreenSaveActive: '0' }), 900, 5, 5)).toEqual({ ok: false, managed: true });
    expect(
      secureScreenSaver(hive({ ScreenSaveActive: '1' }, { ...secure, ScreenSaverIsSecure: 1, ScreenSaveTimeOut: 300 }), 900, 5, 5),
    ).toEqual({ ok: true, managed: true });
  });

  it.each([
    ['no screen saver chosen', { ...secure, 'SCRNSAVE.EXE': '' }, false],
    ['timeout above the maximum', { ...secure, ScreenSaveTimeOut: '1200' }, false],
    ['timeout 0', { ...secure, ScreenSaveTimeOut: '0' }, false],
    ['ScreenSaverIsSecure absent', { ...secure, ScreenSaverIsSecure: undefined }, false],
    ['ScreenSaveActive absent (behaves as 1)', { ...secure, ScreenSaveActive: undefined }, true],
    ['timeout absent', { ...secure, ScreenSaveTimeOut: undefined }, 'undetermined'],
    ['a value that is not 0/1', { ...secure, ScreenSaverIsSecure: 'yes' }, 'undetermined'],
  ])('a screen saver with %s', (_name, values, expected) => {
    const clean = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as RegistryValues;
    expect(secureScreenSaver(hive(clean), 900, 5, 5).ok).toBe(expected);
  });

  it('checks the grace period against policy.screenLock.maxGraceSeconds', () => {
    expect(evaluateScreenLock(facts({ winlogon: ok({ ScreenSaverGracePeriod: '30' }) }), DEFAULT_POLICY)).toMatchObject({
      status: 'FAIL',
      evidence: { screensaver_grace_secs: 30 },
    });
    expect(
      evaluateScreenLock(facts({ winlogon: ok({ ScreenSaverGracePeriod: '30' }) }), resolvePolicy({ screenLock: { maxGraceSeconds: 60 } }))
        .status,
    ).toBe('PASS');
  });

  it('requires sleep-with-sign-in on AC and on battery, Group Policy values first', () => {
    const lock = { consoleLockAc: 1, consoleLockDc: 1, standbyIdleAc: 600, standbyIdleDc: 300 };
    expect(sleepLockEngages(lock, 900)).toBe(true);
    expect(sleepLockEngages({ ...lock, standbyIdleDc: 0 }, 900)).toBe(false);
    expect(sleepLockEngages({ ...lock, consoleLockAc: 0 }, 900)).toBe(false);
    expect(sleepLockEngages({ ...lock, consoleLockDc: 2 }, 900)).toBe('undetermined');
    expect(sleepLockEngages({ ...lock, standbyIdleAc: null }, 900)).toBe('undetermined');
    const managed = facts({
      hives: ok([hive({ ScreenSaveActive: '1' })]),
      standbyIdlePolicy: ok({ ACSettingIndex: 600, DCSettingIndex: 300 }),
    });
    expect(evaluateScreenLock(managed, DEFAULT_POLICY)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'sleep_lock', standby_idle_ac_secs: 600 },
    });
  });

  it('goes on to the users when the machine limit is above the maximum, and never FAILs on what it could not read', () => {
    expect(evaluateScreenLock(facts({ systemPolicy: ok({ InactivityTimeoutSecs: 1800 }) }), DEFAULT_POLICY)).toMatchObject({
      status: 'PASS',
      evidence: { inactivity_timeout_secs: 1800, rule: 'secure_screensaver' },
    });
    const unreadablePower = facts({ hives: ok([hive({ ScreenSaveActive: '1' })]), power: failed('not_available', 'cim_InvalidClass') });
    expect(evaluateScreenLock(unreadablePower, DEFAULT_POLICY)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'undetermined_user_settings' },
    });
    expect(evaluateScreenLock(facts({ hives: failed('permission_denied', 'access_denied') }), DEFAULT_POLICY)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied' },
    });
  });
});

describe('FIREWALL_ENABLED', () => {
  const profile = (Name: string, Enabled = 'True', DefaultInboundAction = 'Block') => ({ Name, Enabled, DefaultInboundAction });
  const local = (EnableFirewall: number) => ({ policy: ok(null), local: ok({ EnableFirewall }) });
  const facts = (change: Partial<FirewallFacts> = {}): FirewallFacts => ({
    profiles: ok([profile('Domain'), profile('Private'), profile('Public')]),
    registry: { Domain: local(1), Private: local(1), Public: local(1) },
    services: services(),
    thirdParty: ok([]),
    ...change,
  });

  it('takes NotConfigured inbound action as Block and a NotConfigured profile state from the registry', () => {
    const notConfigured = facts({
      profiles: ok([profile('Domain', 'NotConfigured', 'NotConfigured'), profile('Private'), profile('Public')]),
    });
    expect(evaluateFirewall(notConfigured)).toMatchObject({
      status: 'PASS',
      evidence: { profiles: { domain: true }, default_inbound: { domain: 'block' } },
    });
    const offInRegistry = { ...notConfigured, registry: { ...notConfigured.registry, Domain: local(0) } };
    expect(evaluateFirewall(offInRegistry)).toMatchObject({ status: 'FAIL', evidence: { rule: 'profile_disabled' } });
  });

  it('lets a Group Policy EnableFirewall 0 override the local 1 in the registry fallback', () => {
    const registry = {
      Domain: local(1),
      Private: { policy: ok({ EnableFirewall: 0 }), local: ok({ EnableFirewall: 1 }) },
      Public: local(1),
    };
    expect(evaluateFirewall(facts({ profiles: failed('check_error', 'cim_Failed'), registry }))).toMatchObject({
      status: 'FAIL',
      evidence: { source: 'registry', profiles: { private: false } },
    });
  });

  it('applies the legacy Standard Profile policy to Private and Public, below the current policy and above the local value', () => {
    const cmdletDown = { profiles: failed('check_error', 'cim_Failed') };
    const legacyOff = { policy: ok(null), legacyPolicy: ok({ EnableFirewall: 0 }), local: ok({ EnableFirewall: 1 }) };
    expect(evaluateFirewall(facts({ ...cmdletDown, registry: { Domain: local(1), Private: legacyOff, Public: local(1) } }))).toMatchObject({
      status: 'FAIL',
      evidence: { source: 'registry', profiles: { domain: true, private: false, public: true }, rule: 'profile_disabled' },
    });
    const currentOn = { ...legacyOff, policy: ok({ EnableFirewall: 1 }) };
    expect(evaluateFirewall(facts({ ...cmdletDown, registry: { Domain: local(1), Private: currentOn, Public: currentOn } }))).toMatchObject(
      { status: 'PASS', evidence: { profiles: { private: true, public: true } } },
    );
    const legacyAllowsInbound = { policy: ok(null), legacyPolicy: ok({ DefaultInboundAction: 0 }), local: ok({ EnableFirewall: 1 }) };
    expect(
      evaluateFirewall(facts({ ...cmdletDown, registry: { Domain: local(1), Private: local(1), Public: legacyAllowsInbound } })),
    ).toMatchObject({
      status: 'FAIL',
      evidence: { default_inbound: { public: 'allow' }, rule: 'default_inbound_allow' },
    });
    const legacyUnreadable = {
      policy: ok(null),
      legacyPolicy: failed('permission_denied', 'access_denied'),
      local: ok({ EnableFirewall: 1 }),
    };
    expect(
      evaluateFirewall(facts({ ...cmdletDown, registry: { Domain: local(1), Private: legacyUnreadable, Public: local(1) } })),
    ).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'check_error', probe_error: 'cim_Failed' } });
  });

  it('falls back to the registry for a profile the cmdlet does not list, and lets the cmdlet win where it answers', () => {
    const twoProfiles = facts({
      profiles: ok([profile('Domain'), profile('Private')]),
      registry: { Domain: local(1), Private: local(1), Public: local(0) },
    });
    expect(evaluateFirewall(twoProfiles)).toMatchObject({
      status: 'FAIL',
      evidence: { source: 'registry', profiles: { public: false }, rule: 'profile_disabled' },
    });
    const registryAllows = { policy: ok(null), local: ok({ EnableFirewall: 0, DefaultInboundAction: 0 }) };
    expect(
      evaluateFirewall(facts({ registry: { Domain: registryAllows, Private: registryAllows, Public: registryAllows } })),
    ).toMatchObject({
      status: 'PASS',
      evidence: { source: 'Get-NetFirewallProfile', profiles: { domain: true }, default_inbound: { domain: 'block' } },
    });
    const registrySilent = { policy: ok(null), local: ok(null) };
    expect(evaluateFirewall(facts({ registry: { Domain: registrySilent, Private: registrySilent, Public: registrySilent } })).status).toBe(
      'PASS',
    );
  });

  it('is UNKNOWN for a DefaultInboundAction that is neither 0 nor 1, and says so in the evidence', () => {
    const odd = { policy: ok(null), local: ok({ EnableFirewall: 1, DefaultInboundAction: 2 }) };
    expect(
      evaluateFirewall(
        facts({ profiles: failed('check_error', 'cim_Failed'), registry: { Domain: local(1), Private: local(1), Public: odd } }),
      ),
    ).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unexpected_value', default_inbound: { domain: 'block', public: null } },
    });
    expect(
      evaluateFirewall(
        facts({
          profiles: ok([]),
          registry: { Domain: { policy: failed('check_error'), local: ok(null) }, Private: local(1), Public: local(1) },
        }),
      ),
    ).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error' } });
  });

  it('fails an inbound-allow profile only when it is known to be on', () => {
    const unknownState = facts({
      profiles: ok([profile('Domain', 'NotConfigured', 'Allow'), profile('Private'), profile('Public')]),
      registry: { Domain: { policy: ok(null), local: ok(null) }, Private: local(1), Public: local(1) },
    });
    expect(evaluateFirewall(unknownState)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unexpected_value', profiles: { domain: null }, default_inbound: { domain: 'allow' } },
    });
  });

  it('reports Security Center as it found it', () => {
    const off = facts({ profiles: ok([profile('Domain', 'False'), profile('Private'), profile('Public')]) });
    expect(evaluateFirewall({ ...off, thirdParty: ok([]) }).evidence).not.toHaveProperty('security_center');
    expect(
      evaluateFirewall({ ...off, thirdParty: ok([{ displayName: 'Product', productState: 262144 }]) }).evidence.security_center,
    ).toEqual([{ name: 'Product', state: 'off', microsoft: false }]);
    expect(evaluateFirewall({ ...off, thirdParty: failed('not_available', 'cim_InvalidNamespace') })).toMatchObject({
      status: 'FAIL',
      evidence: { security_center: 'not_available', rule: 'profile_disabled' },
    });
    expect(evaluateFirewall({ ...off, thirdParty: failed('permission_denied', 'cim_AccessDenied') })).toMatchObject({
      status: 'FAIL',
      evidence: { security_center: 'unreadable' },
    });
    expect(evaluateFirewall({ ...off, thirdParty: ok([{ displayName: 'Product', productState: 266240 }]) })).toMatchObject({
      status: 'PASS',
      evidence: { source: 'security_center', third_party: 'Product', rule: 'third_party_firewall' },
    });
  });

  it('counts only a third-party product that is on', () => {
    const off = facts({ profiles: ok([profile('Domain', 'False'), profile('Private', 'False'), profile('Public', 'False')]) });
    for (const productState of [270336 /* snoozed */, 262144 /* off */, 397568 /* Microsoft */]) {
      expect(evaluateFirewall({ ...off, thirdParty: ok([{ displayName: 'Product', productState }]) }).status).toBe('FAIL');
    }
    expect(evaluateFirewall({ ...off, thirdParty: ok([{ displayName: 'Odd', productState: 344064 }]) })).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'third_party_state_unknown' },
    });
  });

  it('is UNKNOWN for an unexpected profile state or an unreadable service list, FAIL when MpsSvc is missing', () => {
    expect(
      evaluateFirewall(
        facts({
          profiles: ok([profile('Domain', 'Maybe'), profile('Private'), profile('Public')]),
          registry: { Domain: { policy: ok(null), local: ok(null) }, Private: local(1), Public: local(1) },
        }),
      ),
    ).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unexpected_value' },
    });
    expect(evaluateFirewall(facts({ services: failed('check_error') }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { mpssvc: 'unreadable' },
    });
    expect(evaluateFirewall(facts({ services: services({ MpsSvc: null }) }))).toMatchObject({
      status: 'FAIL',
      evidence: { mpssvc: 'not_installed', rule: 'service_not_running' },
    });
  });
});

describe('TIME_SYNC', () => {
  /** Checkmk/checkmk tests/unit/cmk/plugins/windows/agent_based/test_w32time_status.py EN_GOOD_SYNC, tokens rejoined with single spaces. */
  const SYNCED = [
    'Leap Indicator: 0(no warning)',
    'Stratum: 4 (secondary reference - syncd by (S)NTP)',
    'Precision: -23 (119.209ns per tick)',
    'Root Delay: 0.0000758s',
    'Root Dispersion: 0.0100002s',
    'ReferenceId: 0x564D5450 (source IP:  86.77.84.80)',
    'Last Successful Sync Time: 9/15/2025 12:01:31 AM',
    'Source: VM IC Time Synchronization Provider',
    'Poll Interval: 6 (64s)',
    'Phase Offset: 0.0000869s',
    'ClockRate: 0.0156249s',
    'State Machine: 2 (Sync)',
    'Time Source Flags: 3 (Authenticated Hardware )',
    'Server Role: 0 (None)',
    'Last Sync Error: 0 (The command completed successfully.)',
    'Time since Last Good Sync Time: 19.4823644s',
  ];
  const withLine = (index: number, line: string) => SYNCED.map((l, i) => (i === index ? line : l));
  const facts = (change: Partial<TimeSyncFacts> = {}): TimeSyncFacts => ({
    parameters: ok({ Type: 'NTP', NtpServer: 'time.windows.com,0x9' }),
    parametersPolicy: ok(null),
    ntpClient: ok({ Enabled: 1 }),
    ntpClientPolicy: ok(null),
    vmicProvider: ok(null),
    services: services({ W32Time: { Start: 2, Triggered: false, State: 'Running' } }),
    computer: ok({ PartOfDomain: false, EntraJoined: false }),
    w32tm: ok({ ExitCode: 0, Lines: SYNCED }),
    events: ok([]),
    ...change,
  });
  const stopped = {
    ExitCode: 0x80070426 - 2 ** 32,
    Lines: ['The following error occurred: The service has not been started. (0x80070426)'],
  };
  const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000).toISOString().replace('.000', '');

  it.each([
    ['Type in lower case', { parameters: ok({ Type: 'allsync', NtpServer: '' }) }, 'PASS', 'synchronized'],
    ['NT5DS on a workgroup machine, W32Time stopped', { parameters: ok({ Type: 'NT5DS' }), w32tm: ok(stopped) }, 'UNKNOWN', undefined],
    ['NtpClient turned off by Group Policy', { ntpClientPolicy: ok({ Enabled: 0 }) }, 'FAIL', 'ntp_client_disabled'],
    ['Type NTP without a server', { parameters: ok({ Type: 'NTP', NtpServer: ' ' }) }, 'FAIL', 'no_ntp_server'],
    ['an unknown Type', { parameters: ok({ Type: 'Sometimes' }) }, 'UNKNOWN', undefined],
    ['no Type at all', { parameters: ok({}) }, 'UNKNOWN', undefined],
    ['W32Time not installed', { services: services({ W32Time: null }) }, 'FAIL', 'service_not_installed'],
    [
      'leap indicator 3',
      { w32tm: ok({ ExitCode: 0, Lines: withLine(0, 'Leap Indicator: 3(not synchronized)') }) },
      'FAIL',
      'not_synchronized',
    ],
    ['stratum 0', { w32tm: ok({ ExitCode: 0, Lines: withLine(1, 'Stratum: 0 (unspecified)') }) }, 'FAIL', 'not_synchronized'],
    [
      'the free-running local clock (LOCL)',
      { w32tm: ok({ ExitCode: 0, Lines: withLine(5, 'ReferenceId: 0x4C4F434C (source name:  "LOCL")') }) },
      'FAIL',
      'local_clock',
    ],
    [
      'a forest-root PDC on NT5DS free-running on its CMOS clock',
      {
        parameters: ok({ Type: 'NT5DS' }),
        computer: ok({ PartOfDomain: true, EntraJoined: false }),
        w32tm: ok({ ExitCode: 0, Lines: withLine(5, 'ReferenceId: 0x4C4F434C (source name:  "LOCL")') }),
      },
      'FAIL',
      'local_clock',
    ],
    [
      'a last good sync nine days ago',
      { w32tm: ok({ ExitCode: 0, Lines: withLine(15, 'Time since Last Good Sync Time: 777600.5s') }) },
      'FAIL',
      'sync_stale',
    ],
    [
      'a last good sync seven days ago',
      { w32tm: ok({ ExitCode: 0, Lines: withLine(15, 'Time since Last Good Sync Time: 604800.0000000s') }) },
      'PASS',
      'synchronized',
    ],
    ['a status without the verbose lines', { w32tm: ok({ ExitCode: 0, Lines: SYNCED.slice(0, 9) }) }, 'PASS', 'synchronized'],
    [
      'a status whose ReferenceId is not hex',
      { w32tm: ok({ ExitCode: 0, Lines: withLine(5, 'ReferenceId: LOCL') }), events: ok([{ Id: 35, TimeCreated: hoursAgo(1) }]) },
      'PASS',
      'synchronized',
    ],
    [
      'stopped, synchronised an hour ago',
      { w32tm: ok(stopped), events: ok([{ Id: 35, TimeCreated: hoursAgo(1) }]) },
      'PASS',
      'synchronized',
    ],
    [
      'stopped, last sync event 10 days ago',
      {
        w32tm: ok(stopped),
        events: ok([
          { Id: 37, TimeCreated: hoursAgo(240) },
          { Id: 129, TimeCreated: hoursAgo(2) },
        ]),
      },
      'FAIL',
      'sync_stale',
    ],
    ['stopped, no sync event', { w32tm: ok(stopped), events: ok([{ Id: 36, TimeCreated: hoursAgo(2) }]) }, 'UNKNOWN', undefined],
    ['stopped, System log unreadable', { w32tm: ok(stopped), events: failed('permission_denied', 'access_denied') }, 'UNKNOWN', undefined],
  ] as const)('%s', (_name, change, status, rule) => {
    const verdict = evaluateTimeSync(facts(change), DEFAULT_POLICY, NOW);
    expect(verdict.status).toBe(status);
    if (rule) expect(verdict.evidence.rule).toBe(rule);
  });

  it('reads the numbers of a Chinese, a French and a wrapped German status by position', () => {
    const zh = [
      'Leap 指示符: 0(无警告)',
      '层次: 2 (次引用 - 与(S)NTP 同步)',
      '精度: -6 (每刻度 15.625ms)',
      '根延迟: 0.0092768s',
      '根分散: 8.2606345s',
      '引用 ID: 0x81861B7B (源 IP:  129.134.27.123)',
      '上次成功同步时间: 2025/9/14 23:55:21',
      '源: time.facebook.com',
      '轮询间隔: 6 (64s)',
      '相位偏移: 0.0000012s',
      'ClockRate: 0.0156250s',
      '计算机状态: 2 (同步)',
      '时间源标志:0 (无)',
      '服务器角色: 0 (无)',
      '上次同步错误: 0 (成功地执行了命令。)',
      '上次成功同步时间后的时间: 13.4795503s',
    ];
    expect(parseW32tmStatus(zh)).toEqual({
      leapIndicator: 0,
      stratum: 2,
      referenceId: 0x81861b7b,
      phaseOffsetSeconds: 0.0000012,
      secondsSinceGoodSync: 13.4795503,
    });
    const deWrapped = [
      'Sprungindikator: 0(keine Warnung)',
      'Stratum: 5 (Sekundärreferenz - synchr. über (S)NTP)',
      'Präzision: -23 (119.209ns pro Tick)',
      'Stammverzögerung: 0.0365169s',
      'Stammabweichung: 0.0515266s',
      'Referenz-ID: 0x14653909 (Quell-IP:  20.101.57.9)',
      'Letzte erfolgr. Synchronisierungszeit: 28.09.2026 07:26:42',
      'Quelle: time.windows.com,0x8 ',
      'Abrufintervall: 8 (256s)',
      '',
      'Phasendifferenz: -0.0008992s',
      'Taktfrequenz: 0.0156250s',
      'Statuscomputer: 2 (Sync)',
      'Zeitquellenkennzeichen: 0 (Keine)',
      'Serverrolle: 0 (Keine)',
      'Letzter Synchronierungsfehler: 2 (Der Computer wurde nicht synchronisiert, da nur veraltete Zeitdaten',
      'verfügbar waren.)',
      'Zeit seit der letzten erfolgr. Synchronisierungszeit: 185.8847932s',
    ];
    expect(parseW32tmStatus(deWrapped)).toMatchObject({
      leapIndicator: 0,
      stratum: 5,
      phaseOffsetSeconds: -0.0008992,
      secondsSinceGoodSync: 185.8847932,
    });
    expect(parseW32tmStatus(['Folgender Fehler ist aufgetreten: Zugriff verweigert (0x80070005)'])).toBeNull();
  });

  it('names w32tm errors by their HRESULT, whatever the language', () => {
    expect(w32tmError({ ExitCode: -2147024891, Lines: ['Folgender Fehler ist aufgetreten: Zugriff verweigert (0x80070005)'] })).toBe(
      'access_denied',
    );
    expect(w32tmError(stopped)).toBe('service_not_running');
    expect(w32tmError({ ExitCode: 1, Lines: ['(0x800705B4)'] })).toBe('hresult_0x800705b4');
    expect(w32tmError({ ExitCode: 1, Lines: [] })).toBe('exit_1');
  });

  it('measures the phase offset against the policy', () => {
    expect(evaluateTimeSync(facts(), resolvePolicy({ timeSync: { maxOffsetSeconds: 5 } }), NOW).evidence).toMatchObject({
      offset_measured: true,
      offset_s: 0.0000869,
      rule: 'synchronized',
    });
    const far = facts({ w32tm: ok({ ExitCode: 0, Lines: withLine(9, 'Phase Offset: -7.5000000s') }) });
    expect(evaluateTimeSync(far, resolvePolicy({ timeSync: { maxOffsetSeconds: 5 } }), NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'offset_too_large', max_offset_s: 5 },
    });
    expect(evaluateTimeSync(far, DEFAULT_POLICY, NOW).status).toBe('PASS');
  });
});

describe('OS_VERSION', () => {
  const client = (values: Record<string, unknown>) =>
    windowsRelease({
      CurrentBuild: '26100',
      UBR: 1,
      DisplayVersion: '24H2',
      EditionID: 'Professional',
      ProductName: 'Windows 10 Pro',
      InstallationType: 'Client',
      ...values,
    });

  it.each([
    [{ EditionID: 'Core', ProductName: 'Windows 10 Home' }, 'windows-11-home-pro', '24H2', 'Windows 11 Home'],
    [{ EditionID: 'Education' }, 'windows-11-enterprise-education', '24H2', 'Windows 11 Pro'],
    [{ EditionID: 'ProfessionalWorkstation' }, 'windows-11-home-pro', '24H2', 'Windows 11 Pro'],
    [
      { EditionID: 'EnterpriseS', ProductName: 'Windows 10 Enterprise LTSC 2024' },
      'windows-11-ltsc',
      '2024',
      'Windows 11 Enterprise LTSC 2024',
    ],
    [
      { CurrentBuild: '19044', EditionID: 'IoTEnterpriseS', ProductName: 'Windows 10 IoT Enterprise LTSC 2021' },
      'windows-10-iot-ltsc',
      '2021',
      'Windows 10 IoT Enterprise LTSC 2021',
    ],
    [
      { CurrentBuild: '17763', EditionID: 'EnterpriseS', ProductName: 'Windows 10 Enterprise LTSC 2019' },
      'windows-10-ltsc',
      '2019',
      'Windows 10 Enterprise LTSC 2019',
    ],
    [
      { CurrentBuild: '19045', DisplayVersion: '22H2', EditionID: 'Core', ProductName: 'Windows 10 Home' },
      'windows-10-home',
      '22H2',
      'Windows 10 Home',
    ],
    [
      { CurrentBuild: '17763', EditionID: 'ServerStandard', ProductName: 'Windows Server 2019 Standard', InstallationType: 'Server Core' },
      'windows-server',
      '2019',
      'Windows Server 2019 Standard',
    ],
    [
      { CurrentBuild: '17763', EditionID: 'EnterpriseSEval', ProductName: 'Windows 10 Enterprise LTSC 2019 Evaluation' },
      'windows-10-ltsc',
      '2019',
      'Windows 10 Enterprise LTSC 2019 Evaluation',
    ],
    [
      { EditionID: 'EnterpriseEval', ProductName: 'Windows 10 Enterprise Evaluation' },
      'windows-11-enterprise-education',
      '24H2',
      'Windows 11 Enterprise Evaluation',
    ],
    [{ EditionID: 'SomethingNew' }, null, null, 'Windows 11 Pro'],
    [{ InstallationType: '' }, null, null, 'Windows 10 Pro'],
  ])('%j → %s %s', (values, product, cycle, name) => {
    const clean = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
    const release = client(clean)!;
    expect([release.lifecycleProduct, release.cycle, release.name]).toEqual([product, cycle, name]);
  });

  it('judges LTSC against its own support date only, never the feature-update floor', () => {
    const ltsc2019 = {
      currentVersion: ok({
        CurrentBuild: '17763',
        UBR: 4737,
        EditionID: 'EnterpriseS',
        ProductName: 'Windows 10 Enterprise LTSC 2019',
        InstallationType: 'Client',
      }),
    };
    const verdict = evaluateOsVersion(ltsc2019, resolvePolicy({ osVersion: { minimum: { WINDOWS: { minBuild: 26100 } } } }), NOW);
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { servicing_channel: 'ltsc', rule: 'supported' } });
    expect(verdict.evidence).not.toHaveProperty('minimum');
    const pro1809 = { currentVersion: ok({ CurrentBuild: '17763', UBR: 4737, EditionID: 'Professional', InstallationType: 'Client' }) };
    expect(evaluateOsVersion(pro1809, DEFAULT_POLICY, NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { servicing_channel: 'general_availability', rule: 'minimum' },
    });
    const eval2019 = { currentVersion: ok({ CurrentBuild: '17763', UBR: 1, EditionID: 'EnterpriseSEval', InstallationType: 'Client' }) };
    expect(evaluateOsVersion(eval2019, DEFAULT_POLICY, NOW)).toMatchObject({
      status: 'PASS',
      evidence: { evaluation_edition: true, product: 'windows-10-ltsc' },
    });
  });

  it('has no release without a numeric build', () => {
    expect(windowsRelease({ CurrentBuild: '26100a' })).toBeNull();
    expect(windowsRelease({})).toBeNull();
  });

  it('ships a lifecycle table with valid dates for the products windowsRelease names', () => {
    const products = windowsLifecycle.products;
    for (const product of [
      'windows-11-home-pro',
      'windows-11-enterprise-education',
      'windows-10-home',
      'windows-10-pro',
      'windows-server',
    ]) {
      expect(products[product]?.length).toBeGreaterThan(0);
    }
    for (const cycles of Object.values(products)) {
      for (const c of cycles) {
        if (typeof c.eol === 'string' && c.releaseDate) expect(c.eol > c.releaseDate).toBe(true);
        if (typeof c.extendedEnd === 'string' && typeof c.eol === 'string') expect(c.extendedEnd >= c.eol).toBe(true);
      }
    }
  });

  it('judges an unknown edition by the build floor, then as an unknown release', () => {
    const odd = {
      currentVersion: ok({ CurrentBuild: '26100', UBR: 1, DisplayVersion: '24H2', EditionID: 'SomethingNew', InstallationType: 'Client' }),
    };
    expect(evaluateOsVersion(odd, DEFAULT_POLICY, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', product: 'windows-unrecognized-edition' },
    });
    expect(evaluateOsVersion(odd, resolvePolicy({ osVersion: { minimum: { WINDOWS: { minBuild: 26200 } } } }), NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'minimum' },
    });
    expect(evaluateOsVersion({ currentVersion: ok(null) }, DEFAULT_POLICY, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_version' },
    });
  });

  it('ends Windows 10 Home ESU with the consumer year (2026-10-13) even when ESU is accepted', () => {
    const home = {
      currentVersion: ok({
        CurrentBuild: '19045',
        UBR: 6456,
        DisplayVersion: '22H2',
        EditionID: 'Core',
        ProductName: 'Windows 10 Home',
        InstallationType: 'Client',
      }),
    };
    expect(evaluateOsVersion(home, resolvePolicy({ osVersion: { acceptExtendedSupport: { windowsEsu: true } } }), NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'extended_eol', extended_end: '2026-10-13' },
    });
  });
});

describe('OS_VERSION patch age (policy.osVersion.maxPatchAgeDays.WINDOWS)', () => {
  const machine = (build: string, ubr: number, extra: Record<string, unknown> = {}) => ({
    currentVersion: ok({ CurrentBuild: build, UBR: ubr, EditionID: 'Enterprise', InstallationType: 'Client', ...extra }),
  });
  const days = (n: number) => resolvePolicy({ osVersion: { maxPatchAgeDays: { WINDOWS: n } } });
  const at = (iso: string) => new Date(`${iso}T12:00:00Z`);

  it('is off by default: an old patch level of a supported release passes without patch evidence', () => {
    const verdict = evaluateOsVersion(machine('26100', 2894), DEFAULT_POLICY, NOW);
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { rule: 'supported' } });
    expect(verdict.evidence).not.toHaveProperty('patch_released');
  });

  it("judges a listed UBR by its update's release date", () => {
    // 26100.4061 = KB5058411, 2025-05-13; on 2025-06-20 it is 38 days old.
    expect(evaluateOsVersion(machine('26100', 4061), days(45), at('2025-06-20'))).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'supported', patch_released: '2025-05-13', patch_age_days: 38, update_line: '26100', max_patch_age_days: 45 },
    });
    expect(evaluateOsVersion(machine('26100', 4061), days(30), at('2025-06-20'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'patch_too_old', patch_released: '2025-05-13', max_patch_age_days: 30 },
    });
  });

  it('reads 24H2 and 25H2, 22H2 and 21H2 (LTSC 2021) from their shared updates, and Server 2025 from its own numbering', () => {
    expect(evaluateOsVersion(machine('26200', 6584), days(30), at('2025-10-20'))).toMatchObject({
      status: 'PASS',
      evidence: { update_line: '26200', patch_released: '2025-09-30' },
    });
    expect(evaluateOsVersion(machine('26100', 6584), days(30), at('2025-10-20'))).toMatchObject({
      status: 'FAIL',
      evidence: { update_line: '26100', patch_released: '2025-09-09' },
    });
    expect(evaluateOsVersion(machine('19044', 6937, { EditionID: 'EnterpriseS' }), days(30), at('2026-03-01'))).toMatchObject({
      status: 'PASS',
      evidence: { update_line: '19044/19045', patch_released: '2026-02-10' },
    });
    const server2025 = machine('26100', 32370, { EditionID: 'ServerDatacenter', InstallationType: 'Server' });
    expect(evaluateOsVersion(server2025, days(30), at('2026-03-01'))).toMatchObject({
      status: 'PASS',
      evidence: { update_line: 'server-2025', patch_released: '2026-02-10' },
    });
  });

  it('bounds an unlisted UBR by its neighbours: FAIL when even the later one is too old, PASS when even the earlier one is recent enough', () => {
    // 26100.4052 (between 3915 of 2025-04-25 and 4061 of 2025-05-13), e.g. a hotpatch.
    expect(evaluateOsVersion(machine('26100', 4052), days(30), at('2025-07-01'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'patch_too_old', patch_released_after: '2025-04-25', patch_released_before: '2025-05-13' },
    });
    expect(evaluateOsVersion(machine('26100', 4052), days(45), at('2025-05-20'))).toMatchObject({ status: 'PASS' });
    expect(evaluateOsVersion(machine('26100', 4052), days(30), at('2025-06-01'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'patch_date_undetermined' },
    });
  });

  it('judges a UBR older than the first row as at least that old', () => {
    expect(evaluateOsVersion(machine('22631', 4037), days(60), at('2026-06-01'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'patch_too_old', patch_released_after: null, patch_released_before: '2025-01-14' },
    });
  });

  it('passes a UBR newer than the table while its newest row is recent enough, then says the table is outdated', () => {
    // 26100's newest row is 9711 of 2026-10-13.
    expect(evaluateOsVersion(machine('26100', 9800), days(45), NOW)).toMatchObject({
      status: 'PASS',
      evidence: { patch_released_after: '2026-10-13', patch_released_before: null },
    });
    expect(evaluateOsVersion(machine('26100', 9800), days(45), at('2026-12-01'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'patch_table_outdated', newest_listed: '9711 (2026-10-13)', table_recorded_through: '2026-11-10' },
    });
  });

  it('says which line is missing, and leaves a release that already fails alone', () => {
    expect(evaluateOsVersion(machine('28000', 1575), days(45), NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release' },
    });
    const lts2016 = machine('10240', 20947, { EditionID: 'EnterpriseS' });
    expect(evaluateOsVersion(lts2016, days(45), at('2025-03-20'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'patch_line_not_in_table', rule: 'patch_line_not_in_table' },
    });
    expect(evaluateOsVersion(machine('19045', 6456, { EditionID: 'Professional' }), days(45), NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'extended_support_not_accepted' },
    });
    expect(evaluateOsVersion(machine('26100', NaN), days(45), NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'ubr_missing' },
    });
  });

  it('keeps every line ascending by UBR with valid dates that never go back in time', () => {
    for (const build of [14393, 17763, 19044, 19045, 22621, 22631, 26100, 26200]) {
      for (const family of ['client', 'server'] as const) {
        const line = updateLineFor({ build, family });
        if (!line) continue;
        line.rows.forEach(([ubr, date], i) => {
          expect(date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          expect(date <= UPDATE_HISTORY_RECORDED_THROUGH).toBe(true);
          if (i > 0) {
            expect(ubr).toBeGreaterThan(line.rows[i - 1]![0]);
            expect(date >= line.rows[i - 1]![1]).toBe(true);
          }
        });
      }
    }
  });
});

/** CurrentVersion of a Windows 11 25H2 machine at the October 2026 security update (updateHistory.ts). */
const CURRENT_25H2 = {
  CurrentBuild: '26200',
  CurrentBuildNumber: '26200',
  UBR: 9711,
  DisplayVersion: '25H2',
  EditionID: 'Professional',
  ProductName: 'Windows 10 Pro',
  InstallationType: 'Client',
};

describe('AUTO_UPDATE', () => {
  const facts = (change: Partial<AutoUpdateFacts> = {}): AutoUpdateFacts => ({
    auPolicy: ok(null),
    auLocal: ok({}),
    updateCsp: ok(null),
    pause: ok({}),
    services: services(),
    currentVersion: ok(CURRENT_25H2),
    ...change,
  });

  it.each([
    ['local AUOptions 3 (Server sconfig DownloadOnly), no policy', { auLocal: ok({ AUOptions: 3 }) }, 'FAIL', 'download_only'],
    ['local AUOptions 4 (sconfig Automatic), no policy', { auLocal: ok({ AUOptions: 4 }) }, 'PASS', 'automatic_install'],
    ['local AUOptions 1 (automatic updates disabled)', { auLocal: ok({ AUOptions: 1 }) }, 'FAIL', 'no_auto_update'],
    ['policy AUOptions 4 over a local 1', { auPolicy: ok({ AUOptions: 4 }), auLocal: ok({ AUOptions: 1 }) }, 'PASS', 'automatic_install'],
    ['local key unreadable, no policy', { auLocal: failed('permission_denied', 'access_denied') }, 'UNKNOWN', undefined],
    [
      'local key unreadable, policy AUOptions 4',
      { auPolicy: ok({ AUOptions: 4 }), auLocal: failed('permission_denied', 'access_denied') },
      'PASS',
      'automatic_install',
    ],
    ['Update CSP AllowAutoUpdate 5 (off)', { updateCsp: ok({ AllowAutoUpdate: 5 }) }, 'FAIL', 'csp_auto_update_off'],
    ['Update CSP AllowAutoUpdate 0 (notify)', { updateCsp: ok({ AllowAutoUpdate: 0 }) }, 'FAIL', 'notify_before_download'],
    ['Update CSP AllowAutoUpdate 3', { updateCsp: ok({ AllowAutoUpdate: 3 }) }, 'PASS', 'automatic_install'],
    ['Update CSP AllowAutoUpdate 9', { updateCsp: ok({ AllowAutoUpdate: 9 }) }, 'UNKNOWN', undefined],
    ['AUOptions 7 (Server)', { auPolicy: ok({ AUOptions: 7 }) }, 'PASS', 'automatic_install'],
    ['AUOptions 4 as a string', { auPolicy: ok({ AUOptions: '4' }) }, 'PASS', 'automatic_install'],
    ['AUOptions 1', { auPolicy: ok({ AUOptions: 1 }) }, 'UNKNOWN', undefined],
    ['NoAutoUpdate not a number', { auPolicy: ok({ NoAutoUpdate: 'off' }) }, 'UNKNOWN', undefined],
    ['UsoSvc disabled', { services: services({ UsoSvc: { Start: 4, State: 'Stopped' } }) }, 'FAIL', 'usosvc_disabled'],
    ['UsoSvc absent (older Windows)', { services: services({ UsoSvc: null }) }, 'PASS', 'default'],
    ['wuauserv missing', { services: services({ wuauserv: null }) }, 'FAIL', 'wuauserv_not_installed'],
    ['policy key unreadable', { auPolicy: failed('permission_denied', 'access_denied') }, 'UNKNOWN', undefined],
  ] as const)('%s', (_name, change, status, rule) => {
    const verdict = evaluateAutoUpdate(facts(change), DEFAULT_POLICY, NOW);
    expect(verdict.status).toBe(status);
    if (rule) expect(verdict.evidence.rule).toBe(rule);
  });

  describe('the effect: the installed cumulative update', () => {
    const at = (ubr: number | undefined, build = '26200'): Section<RegistryValues | null> => {
      const { UBR: _installed, ...others } = CURRENT_25H2;
      return ok({ ...others, CurrentBuild: build, CurrentBuildNumber: build, ...(ubr === undefined ? {} : { UBR: ubr }) });
    };

    it('PASSes the settings when no newer monthly security update has waited longer than maxPendingDays', () => {
      expect(evaluateAutoUpdate(facts(), DEFAULT_POLICY, NOW)).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'default', installed_update: '26200.9711', update_line: '26200', max_pending_days: 45 },
      });
      // The October 2026 update is pending, but only since 2026-10-13: 39 days.
      expect(evaluateAutoUpdate(facts({ currentVersion: at(9445) }), DEFAULT_POLICY, NOW)).toMatchObject({
        status: 'PASS',
        evidence: { newer_update: '26200.9711', newer_update_released: '2026-10-13' },
      });
    });

    it('FAILs settings that install updates when a security update has waited longer (update_not_installed)', () => {
      expect(evaluateAutoUpdate(facts({ currentVersion: at(9168) }), DEFAULT_POLICY, NOW)).toMatchObject({
        status: 'FAIL',
        evidence: {
          rule: 'update_not_installed',
          installed_update: '26200.9168',
          newer_update: '26200.9445',
          newer_update_released: '2026-09-08',
        },
      });
      const strict = resolvePolicy({ autoUpdate: { maxPendingDays: 30 } });
      expect(evaluateAutoUpdate(facts({ currentVersion: at(9445) }), strict, NOW).evidence.rule).toBe('update_not_installed');
      expect(evaluateAutoUpdate(facts({ auPolicy: ok({ AUOptions: 4 }), currentVersion: at(9168) }), DEFAULT_POLICY, NOW).status).toBe(
        'FAIL',
      );
    });

    it('counts only Patch Tuesday releases: an optional preview or out-of-band update left uninstalled is no failure', () => {
      // 26200.7922 is the 2026-02-24 preview; 7840 the 2026-02-10 security update before it.
      const feb = new Date('2026-04-20T12:00:00Z');
      expect(evaluateAutoUpdate(facts({ currentVersion: at(7840) }), DEFAULT_POLICY, feb)).toMatchObject({
        status: 'PASS',
        evidence: { newer_update: '26200.8037', newer_update_released: '2026-03-10' },
      });
      // 26200.7627 and .7628 (2026-01-17, -24) are out-of-band releases after the 2026-01-13 update.
      expect(evaluateAutoUpdate(facts({ currentVersion: at(7623) }), DEFAULT_POLICY, new Date('2026-03-20T12:00:00Z'))).toMatchObject({
        status: 'PASS',
        evidence: { newer_update: '26200.7840' },
      });
      expect(evaluateAutoUpdate(facts({ currentVersion: at(7623) }), DEFAULT_POLICY, new Date('2026-03-27T12:00:00Z')).status).toBe('FAIL');
    });

    it('does not decide what the table cannot tell', () => {
      const later = new Date('2027-01-10T12:00:00Z');
      expect(evaluateAutoUpdate(facts(), DEFAULT_POLICY, later)).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'patch_table_outdated', table_recorded_through: UPDATE_HISTORY_RECORDED_THROUGH },
      });
      expect(evaluateAutoUpdate(facts({ currentVersion: at(1000, '22000') }), DEFAULT_POLICY, NOW)).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'update_line_not_in_table', build: 22000 },
      });
      expect(evaluateAutoUpdate(facts({ currentVersion: at(undefined) }), DEFAULT_POLICY, NOW)).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'ubr_missing' },
      });
      expect(evaluateAutoUpdate(facts({ currentVersion: ok(null) }), DEFAULT_POLICY, NOW).evidence).toEqual({
        source: 'default',
        no_auto_update: null,
        au_options: null,
        allow_auto_update_csp: null,
        wsus: false,
        wuauserv_start: 'trigger',
        wuauserv_status: 'stopped',
        usosvc_start: 'auto',
        max_pending_days: 45,
        reason: 'unrecognized_version',
      });
      expect(evaluateAutoUpdate(facts({ currentVersion: failed('permission_denied', 'access_denied') }), DEFAULT_POLICY, NOW).status).toBe(
        'UNKNOWN',
      );
    });

    it('leaves settings that do not install by themselves to the settings', () => {
      const old = { currentVersion: at(7171) };
      expect(evaluateAutoUpdate(facts({ ...old, auPolicy: ok({ AUOptions: 2 }) }), DEFAULT_POLICY, NOW).evidence.rule).toBe(
        'notify_before_download',
      );
      expect(evaluateAutoUpdate(facts({ ...old, auPolicy: ok({ AUOptions: 3 }) }), DEFAULT_POLICY, NOW).evidence.rule).toBe(
        'download_only',
      );
    });

    it('judges accepted download-only by the installed update: current PASSes, behind FAILs, never PASS from AUOptions 3 alone (issue 32)', () => {
      const accepted = resolvePolicy({ autoUpdate: { acceptDownloadOnly: true } });
      const behind = evaluateAutoUpdate(facts({ currentVersion: at(7171), auPolicy: ok({ AUOptions: 3 }) }), accepted, NOW);
      expect(behind).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'downloaded_not_installed', au_options: 3, installed_update: '26200.7171', newer_update: '26200.7462' },
      });
      expect(evaluateAutoUpdate(facts({ auPolicy: ok({ AUOptions: 3 }) }), accepted, NOW)).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'download_only_accepted', au_options: 3, max_pending_days: 45 },
      });
      expect(
        evaluateAutoUpdate(
          facts({ currentVersion: failed('permission_denied', 'access_denied'), auPolicy: ok({ AUOptions: 3 }) }),
          accepted,
          NOW,
        ).status,
      ).toBe('UNKNOWN');
    });
  });

  it('reports a pause that has not expired, and only that', () => {
    const paused = (until: string) =>
      evaluateAutoUpdate(facts({ pause: ok({ PauseUpdatesExpiryTime: until }) }), DEFAULT_POLICY, NOW).evidence;
    expect(paused('2026-12-01T09:00:00Z')).toMatchObject({ paused_until: '2026-12-01' });
    expect(paused('2026-11-01T09:00:00Z')).not.toHaveProperty('paused_until');
    expect(paused('next week')).not.toHaveProperty('paused_until');
  });
});

describe('PASSWORD_POLICY', () => {
  const access = (length: number, complexity = 0) => [
    `MinimumPasswordLength = ${length}`,
    `PasswordComplexity = ${complexity}`,
    'MaximumPasswordAge = -1',
    'NewAdministratorName = "Admin"',
  ];
  const facts = (change: Partial<PasswordPolicyFacts> = {}): PasswordPolicyFacts => ({
    secedit: ok({ ExitCode: 0, SystemAccess: access(12, 1) }),
    accountPolicy: ok({ MinPasswordLength: 12 }),
    deviceLock: ok(null),
    computer: ok({ PartOfDomain: false, EntraJoined: false }),
    elevated: true,
    ...change,
  });

  it('parses only the allow-listed numeric keys of [System Access]', () => {
    expect(
      parseSystemAccess([
        '; comment',
        'MinimumPasswordLength=14',
        'PasswordComplexity = 1',
        'MaximumPasswordAge = -1',
        'LockoutBadCount = x',
        'NewGuestName = "Guest"',
      ]),
    ).toEqual({
      minimumPasswordLength: 14,
      passwordComplexity: 1,
      maximumPasswordAge: -1,
      lockoutBadCount: null,
    });
  });

  it('reports "never expires" as no maximum age, and ignores an MDM length that is not enforced', () => {
    const verdict = evaluatePasswordPolicy(
      facts({ deviceLock: ok({ DevicePasswordEnabled: 1, MinDevicePasswordLength: 20 }) }),
      DEFAULT_POLICY,
    );
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { max_age_days: null, min_length: 12, sources: ['secedit'] } });
    expect(verdict.evidence).not.toHaveProperty('mdm_min_length');
  });

  it('decides a domain member on its local (domain-pushed) policy even when it is also Entra-joined', () => {
    const hybrid = facts({
      secedit: ok({ ExitCode: 0, SystemAccess: access(0) }),
      computer: ok({ PartOfDomain: true, EntraJoined: true }),
    });
    expect(evaluatePasswordPolicy(hybrid, DEFAULT_POLICY)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'min_length', domain_joined: true },
    });
  });

  it('is UNKNOWN with the right reason when no source answers', () => {
    const none = { accountPolicy: failed('check_error', 'error_COMException') };
    expect(evaluatePasswordPolicy(facts({ ...none, secedit: ok({ ExitCode: 1, SystemAccess: [] }) }), DEFAULT_POLICY)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error' },
    });
    expect(
      evaluatePasswordPolicy(facts({ ...none, secedit: ok({ ExitCode: 1, SystemAccess: [] }), elevated: false }), DEFAULT_POLICY),
    ).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'permission_denied' } });
    expect(evaluatePasswordPolicy(facts({ ...none, secedit: failed('timeout') }), DEFAULT_POLICY)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'timeout' },
    });
  });
});

describe('REMOTE_LOGIN', () => {
  it.each([
    ['no PasswordAuthentication line (OpenSSH default yes)', '# PasswordAuthentication no\nPort 22\n', true],
    ['PasswordAuthentication no', 'PasswordAuthentication no\r\n', false],
    ['the first value wins', 'PasswordAuthentication no\nPasswordAuthentication yes\n', false],
    ['key=value form, any case', 'passwordauthentication=NO\n', false],
    ['only inside a Match block', 'Match User admin\n  PasswordAuthentication no\n', true],
    ['an unknown value', 'PasswordAuthentication maybe\n', null],
  ])('sshd_config with %s', (_name, config, expected) => {
    expect(sshdAcceptsPasswords(config)).toBe(expected);
  });

  const facts = (change: Partial<RemoteLoginFacts> = {}): RemoteLoginFacts => ({
    rdpPolicy: ok(null),
    rdp: ok({ fDenyTSConnections: 1 }),
    rdpTcp: ok({ PortNumber: 3389 }),
    services: services(),
    listeningPorts: ok(listeners(['0.0.0.0', '::'], [135, 445])),
    sshdConfig: null,
    ...change,
  });

  it.each([
    [
      'RDP allowed but TermService stopped (not reachable)',
      { rdp: ok({ fDenyTSConnections: 0 }) },
      'PASS',
      { rdp_allowed: true, rdp_listening: false },
    ],
    ['no fDenyTSConnections anywhere (denied)', { rdp: ok({}) }, 'PASS', { rdp_allowed: false }],
    ['fDenyTSConnections 2', { rdp: ok({ fDenyTSConnections: 2 }) }, 'UNKNOWN', { reason: 'unexpected_value' }],
    [
      'RDP on a custom port, listening, while the value denies it',
      {
        rdpTcp: ok({ PortNumber: 3390 }),
        listeningPorts: ok(listeners(['0.0.0.0'], [3390])),
        services: services({ TermService: { State: 'Running' } }),
      },
      'FAIL',
      { rule: 'rdp_listening' },
    ],
    [
      'RDP listening on loopback only (a tunnel endpoint)',
      { rdp: ok({ fDenyTSConnections: 0 }), listeningPorts: ok(listeners(['127.0.0.1', '::1'], [3389])) },
      'PASS',
      { rdp_listening: false, loopback_only_ports: [3389] },
    ],
    [
      'RDP allowed, TermService running, listeners unreadable',
      {
        rdp: ok({ fDenyTSConnections: 0 }),
        listeningPorts: failed('check_error'),
        services: services({ TermService: { State: 'Running' } }),
      },
      'FAIL',
      { rule: 'rdp_enabled', rdp_listening: null },
    ],
    [
      'WinRM listening on every address',
      { listeningPorts: ok(listeners(['::'], [5985])), services: services({ WinRM: { Start: 2, State: 'Running' } }) },
      'FAIL',
      { winrm_listening: true, winrm: 'running', rule: 'winrm_listening' },
    ],
    [
      'WinRM listening on an IPv4-mapped loopback only',
      { listeningPorts: ok(listeners(['::ffff:127.0.0.1'], [5985])) },
      'PASS',
      { winrm_listening: false, loopback_only_ports: [5985] },
    ],
    [
      'WinRM running, listeners unreadable',
      { listeningPorts: failed('permission_denied', 'cim_AccessDenied'), services: services({ WinRM: { Start: 2, State: 'Running' } }) },
      'UNKNOWN',
      { reason: 'permission_denied', value: 'listeners' },
    ],
    [
      'sshd installed but stopped',
      { services: services({ sshd: { Start: 3, State: 'Stopped' } }) },
      'PASS',
      { openssh_server: 'stopped', openssh_server_start: 'manual' },
    ],
  ] as const)('%s', (_name, change, status, evidence) => {
    expect(evaluateRemoteLogin(facts(change as Partial<RemoteLoginFacts>), DEFAULT_POLICY)).toMatchObject({ status, evidence });
  });
});

describe('MALWARE_PROTECTION', () => {
  const status = (change: Partial<DefenderStatus> = {}): DefenderStatus => ({
    AMRunningMode: 'Normal',
    AMServiceEnabled: true,
    AntivirusEnabled: true,
    RealTimeProtectionEnabled: true,
    AntivirusSignatureAge: 0,
    ...change,
  });
  const defenderOn = { displayName: 'Windows Defender', productState: 397568 };
  const defenderOff = { displayName: 'Windows Defender', productState: 393472 };

  it.each([
    [{}, { verdict: 'pass', rule: 'defender_active' }],
    [{ AMRunningMode: null }, { verdict: 'pass', rule: 'defender_active' }],
    [{ AMRunningMode: null, AntivirusEnabled: false }, { verdict: 'not_primary' }],
    [{ AMRunningMode: 'EDR Block Mode' }, { verdict: 'not_primary' }],
    [{ AMRunningMode: 'SxS Passive Mode' }, { verdict: 'not_primary' }],
    [{ AMRunningMode: 'Normal Mode?' }, { verdict: 'undetermined', reason: 'unexpected_running_mode' }],
    [{ AMServiceEnabled: false }, { verdict: 'fail', rule: 'defender_disabled' }],
    [{ AntivirusSignatureAge: 4294967295 }, { verdict: 'fail', rule: 'signatures_out_of_date' }],
    [{ AntivirusSignatureAge: null }, { verdict: 'undetermined', reason: 'unexpected_value' }],
  ])('Defender %j', (change, expected) => {
    expect(judgeDefender(status(change as Partial<DefenderStatus>), 7)).toEqual(expected);
  });

  it.each([
    [
      'Defender unreadable, Security Center shows it on and current',
      { antivirus: ok([defenderOn]), defender: failed('check_error', 'cim_Failed') },
      'PASS',
      { rule: 'security_center_antivirus' },
    ],
    [
      'Defender unreadable, nothing registered',
      { antivirus: ok([]), defender: failed('check_error', 'cim_Failed') },
      'UNKNOWN',
      { reason: 'check_error', probe_error: 'cim_Failed' },
    ],
    [
      'Defender unreadable, Defender off in Security Center',
      { antivirus: ok([defenderOff]), defender: failed('command_not_found', 'command_not_found') },
      'FAIL',
      { rule: 'no_active_antivirus' },
    ],
    [
      'Defender passive, nothing else registered',
      { antivirus: ok([]), defender: ok(status({ AMRunningMode: 'Passive Mode' })) },
      'FAIL',
      { rule: 'no_active_antivirus' },
    ],
    [
      'Defender passive, Security Center says Defender is on (conflict)',
      { antivirus: ok([defenderOn]), defender: ok(status({ AMRunningMode: 'Passive Mode' })) },
      'UNKNOWN',
      { reason: 'defender_not_primary' },
    ],
    [
      'third-party snoozed, Defender passive',
      {
        antivirus: ok([defenderOff, { displayName: 'Other AV', productState: 270336 }]),
        defender: ok(status({ AMRunningMode: 'Passive Mode' })),
      },
      'FAIL',
      { rule: 'no_active_antivirus' },
    ],
    [
      'an undecodable product, Defender passive',
      { antivirus: ok([{ displayName: 'Odd AV', productState: 344064 }]), defender: ok(status({ AMRunningMode: 'Passive Mode' })) },
      'UNKNOWN',
      { reason: 'product_state_undecodable' },
    ],
  ] as const)('%s', (_name, facts, expected, evidence) => {
    expect(evaluateMalwareProtection(facts as unknown as MalwareFacts, DEFAULT_POLICY)).toMatchObject({ status: expected, evidence });
  });

  it('uses policy.malware.maxSignatureAgeDays', () => {
    const facts = { antivirus: ok([defenderOn]), defender: ok(status({ AntivirusSignatureAge: 12 })), family: 'client' as const };
    expect(evaluateMalwareProtection(facts, DEFAULT_POLICY).status).toBe('FAIL');
    expect(evaluateMalwareProtection(facts, resolvePolicy({ malware: { maxSignatureAgeDays: 14 } })).status).toBe('PASS');
  });
});

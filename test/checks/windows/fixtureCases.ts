// The Windows check fixtures, as cases over the baseline probe document (probeDocument.ts). The
// probe is one PowerShell script shared by all nine checks, so every fixture records the same argv
// and that script's JSON; `npx tsx test/checks/windows/writeFixtures.ts` writes them to
// test/fixtures/checks/windows/<CHECK_KEY>/<name>.json, and fixtureFiles.test.ts keeps the files in
// step with these cases and with the script.
import type { CheckKey, PostureStatus } from '../../../src/protocol/schemas';
import type { RecordedCommand } from '../../support/fakeHost';
import {
  ENTRA_USER_SID,
  LOCAL_USER_SID,
  bitlockerOs,
  defender,
  err,
  listen,
  ok,
  osValues,
  registry,
  secureSaver,
  setService,
  userHives,
  type ProbeDocument,
} from './probeDocument';
import { REAL_WORLD_CASES } from './realWorldCases';
import { LINUXFABRIK, LINUXFABRIK_W32TM, TIME_SYNC_RECORDINGS, w32tm } from './timeSyncRecordings';

export interface WindowsFixtureCase {
  check: CheckKey;
  name: string;
  source: string;
  description: string;
  now?: string;
  policy?: Record<string, unknown>;
  /** Changes to the baseline machine. */
  machine?: (doc: ProbeDocument) => void;
  /** Replaces the probe's result (a failure of powershell.exe itself). */
  probeResult?: Omit<RecordedCommand, 'argv'>;
  /** Outputs recorded on the same machine that the collector must never need (translated text). */
  unusedCommands?: RecordedCommand[];
  files?: Record<string, string | string[]>;
  expect: { status: PostureStatus; evidence?: Record<string, unknown> };
}

const MS_BITLOCKER = 'Microsoft Learn, Win32_EncryptableVolume GetProtectionStatus/GetConversionStatus/GetKeyProtectors';
const WSC_STATES = 'productState samples: idera "Identifying Antivirus Engine State", neophob.com SecurityCenter2, StackOverflow 4700897';
const MP_STATUS = 'Microsoft Learn, Get-MpComputerStatus example (2024) and "Microsoft Defender Antivirus compatibility" (AMRunningMode)';

export const WINDOWS_FIXTURE_CASES: WindowsFixtureCase[] = [
  // ---- DISK_ENCRYPTION -------------------------------------------------------------------------
  {
    check: 'DISK_ENCRYPTION',
    name: 'pass-bitlocker-on',
    source: `research §1.4 (evidence sample: XTS-AES 128, Tpm + NumericalPassword; manage-bde "Protection On / Fully Encrypted"); ${MS_BITLOCKER}`,
    description: 'OS volume C: fully encrypted with protection on',
    expect: {
      status: 'PASS',
      evidence: {
        source: 'wmi',
        state: 'protected',
        os_volume: { protection: 'on', conversion: 'fully_encrypted', method: 'XTS_AES_128', protectors: ['Tpm', 'NumericalPassword'] },
      },
    },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-suspended',
    source: `research §1.4 decision table (suspended: ConversionStatus 1, ProtectionStatus 0, key protectors present) and pitfalls; ${MS_BITLOCKER}`,
    description: 'Suspend-BitLocker before a firmware update: still encrypted, key in the clear, protection off',
    machine: (doc) => bitlockerOs(doc, { ProtectionStatus: 0 }),
    expect: {
      status: 'FAIL',
      evidence: { state: 'suspended', rule: 'suspended', os_volume: { protection: 'off', conversion: 'fully_encrypted' } },
    },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-bitlocker-off',
    source: `research §1.4 fixture "Conversion Status: Fully Decrypted / Protection Status: Protection Off"; ${MS_BITLOCKER}`,
    description: 'OS volume fully decrypted, no key protectors',
    machine: (doc) =>
      bitlockerOs(doc, { ProtectionStatus: 0, ConversionStatus: 0, EncryptionPercentage: 0, EncryptionMethod: 0, KeyProtectorTypes: [] }),
    expect: { status: 'FAIL', evidence: { state: 'decrypted', rule: 'decrypted' } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-encryption-in-progress',
    source: `research §1.4 (ConversionStatus 2 → FAIL state encrypting, configurable); ${MS_BITLOCKER}`,
    description: 'Encryption 47% done, default policy (diskEncryption.inProgress = FAIL)',
    machine: (doc) => bitlockerOs(doc, { ProtectionStatus: 0, ConversionStatus: 2, EncryptionPercentage: 47 }),
    expect: { status: 'FAIL', evidence: { state: 'encrypting', rule: 'in_progress', os_volume: { percent: 47 } } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'pass-encryption-in-progress-accepted',
    source: `research §1.4 and §0.9 (diskEncryption.inProgress is a policy); ${MS_BITLOCKER}`,
    description: 'Encryption in progress with policy diskEncryption.inProgress = PASS',
    policy: { diskEncryption: { inProgress: 'PASS' } },
    machine: (doc) => bitlockerOs(doc, { ProtectionStatus: 1, ConversionStatus: 2, EncryptionPercentage: 80 }),
    expect: { status: 'PASS', evidence: { state: 'encrypting', rule: 'in_progress_accepted' } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-data-volume-unprotected',
    source: `research §1.4 (scope=all_local: fixed data volumes, VolumeType 1, must be protected too); ${MS_BITLOCKER}`,
    description: 'OS volume protected, fixed data volume D: not encrypted, policy scope all_local',
    policy: { diskEncryption: { scope: 'all_local' } },
    machine: (doc) =>
      (doc.bitlocker as { value: unknown[] }).value.push({
        DriveLetter: 'D:',
        VolumeType: 1,
        ProtectionStatus: 0,
        ConversionStatus: 0,
        EncryptionPercentage: 0,
        EncryptionMethod: 0,
        KeyProtectorTypes: [],
        ReturnValues: [0, 0, 0, 0],
      }),
    expect: { status: 'FAIL', evidence: { rule: 'fixed_data_volume_unprotected', other_fixed_unprotected: 1 } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'unknown-not-administrator',
    source: 'research §1.4 (WMI access denied 0x80041003 → UNKNOWN; [probo] fixture stderr "Access is denied." → UNKNOWN); §11 #3',
    description: 'device-agent check run by a standard user: the MicrosoftVolumeEncryption namespace refuses access',
    machine: (doc) => {
      doc.elevated = false;
      doc.bitlocker = err('cim_AccessDenied');
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'permission_denied', probe_error: 'cim_AccessDenied' } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-edition-without-bitlocker',
    source: 'research §1.4 decision table (class/namespace missing → FAIL not_supported_by_edition)',
    description: 'Win32_EncryptableVolume namespace absent (Home edition without Device Encryption support)',
    machine: (doc) => {
      osValues(doc, { EditionID: 'Core', ProductName: 'Windows 10 Home' });
      doc.bitlocker = err('cim_InvalidNamespace');
    },
    expect: { status: 'FAIL', evidence: { rule: 'not_supported_by_edition' } },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'unknown-powershell-missing',
    source: 'research §0.1 (missing tool → UNKNOWN command_not_found)',
    description: 'powershell.exe absent from System32 (stripped image): nothing is known',
    probeResult: { error: 'not_found' },
    expect: { status: 'UNKNOWN', evidence: { reason: 'command_not_found' } },
  },

  // ---- SCREEN_LOCK -----------------------------------------------------------------------------
  {
    check: 'SCREEN_LOCK',
    name: 'pass-machine-inactivity-limit',
    source:
      '[probo] fixture {"backend":"machine_inactivity_limit","policy":{"InactivityTimeoutSecs":"900"}}; [fleet] HKLM\\...\\Policies\\System\\InactivityTimeoutSecs; research §2.4',
    description: 'Machine inactivity limit 900 s set by policy; no user setting needed',
    machine: (doc) => registry(doc, 'systemPolicy', { InactivityTimeoutSecs: 900 }),
    expect: { status: 'PASS', evidence: { rule: 'machine_inactivity_limit', inactivity_timeout_secs: 900 } },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'pass-entra-and-local-users-secure-screensaver',
    source:
      'research §2.4 (HKU\\<SID> for S-1-5-21-* and S-1-12-1-*; user policy key over user key; REG_SZ values); Microsoft Learn ScreenSaveActive / SCRNSAVE.EXE entries',
    description:
      'A local user and an Entra ID user, each with a password-protected screen saver after 10 min (the Entra user by user Group Policy/Intune)',
    machine: (doc) =>
      userHives(doc, [
        { Sid: LOCAL_USER_SID, Policy: null, User: secureSaver },
        { Sid: ENTRA_USER_SID, Policy: secureSaver, User: { ScreenSaveActive: '1' } },
      ]),
    expect: {
      status: 'PASS',
      evidence: { rule: 'secure_screensaver', users_evaluated: 2, users_compliant: 2, entra_users: 1, screensaver_policy_managed: true },
    },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'fail-entra-user-without-lock',
    source: 'research §2.4 and §11 #7 ([probo] filters ^S-1-5-21- and would skip this Entra ID user and PASS)',
    description: 'Local user locks after 10 min; the Entra ID user has no screen saver and the laptop sleeps only after 30 min on AC',
    machine: (doc) =>
      userHives(doc, [
        { Sid: LOCAL_USER_SID, Policy: null, User: secureSaver },
        { Sid: ENTRA_USER_SID, Policy: null, User: { ScreenSaveActive: '1', ScreenSaveTimeOut: '900' } },
      ]),
    expect: { status: 'FAIL', evidence: { rule: 'user_without_lock', users_evaluated: 2, users_compliant: 1, entra_users: 1 } },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'pass-sleep-with-sign-in',
    source: 'research §2.4 mechanism 3 (CONSOLELOCK = 1 and STANDBYIDLE seconds, AC and DC; [drata] reads these)',
    description: 'No screen saver, but the machine sleeps after 10 min (AC) / 5 min (battery) and asks for sign-in on wake',
    machine: (doc) => {
      doc.power = ok({ ACConsoleLock: 1, DCConsoleLock: 1, ACStandbyIdle: 600, DCStandbyIdle: 300 });
    },
    expect: { status: 'PASS', evidence: { rule: 'sleep_lock', users_evaluated: 1, users_compliant: 1, standby_idle_ac_secs: 600 } },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'fail-stock-laptop-sleeps-late',
    source: 'research §2.4 (no screen saver; sleep after 30 min plugged in exceeds screenLock.maxIdleSeconds 900)',
    description: 'Screen saver "(None)", no inactivity policy, sleep after 30 min on AC',
    expect: { status: 'FAIL', evidence: { rule: 'user_without_lock', users_evaluated: 1, users_compliant: 0, standby_idle_ac_secs: 1800 } },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'fail-screensaver-not-secure',
    source: 'research §2.4 (secure = ScreenSaveActive "1", ScreenSaverIsSecure "1", timeout ≤ maxIdle)',
    description: 'Screen saver after 5 min but "On resume, display logon screen" unticked (ScreenSaverIsSecure "0")',
    machine: (doc) =>
      userHives(doc, [{ Sid: LOCAL_USER_SID, Policy: null, User: { ...secureSaver, ScreenSaverIsSecure: '0', ScreenSaveTimeOut: '300' } }]),
    expect: { status: 'FAIL', evidence: { rule: 'user_without_lock', users_compliant: 0 } },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'unknown-no-user-hive',
    source: 'research §2.4 decision ("no interactive hive loaded and (1) unset → UNKNOWN reason no_user_hive"; [probo] fixture)',
    description: 'Nobody signed in: only the system hives are loaded',
    machine: (doc) => userHives(doc, []),
    expect: { status: 'UNKNOWN', evidence: { reason: 'no_user_hive' } },
  },

  // ---- FIREWALL_ENABLED ------------------------------------------------------------------------
  {
    check: 'FIREWALL_ENABLED',
    name: 'pass-all-profiles',
    source:
      'research §3.4 (Get-NetFirewallProfile -PolicyStore ActiveStore; Autopilot documentation sample: Enabled True, DefaultInboundAction Block)',
    description: 'Domain, Private and Public profiles on, inbound blocked, MpsSvc running',
    expect: {
      status: 'PASS',
      evidence: {
        source: 'Get-NetFirewallProfile',
        profiles: { domain: true, private: true, public: true },
        mpssvc: 'running',
        rule: 'all_profiles_enabled',
      },
    },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'fail-public-profile-off',
    source: '[probo] fixture raw "Domain=True;Private=True;Public=False" → FAIL; research §3.4',
    description: 'Public profile turned off',
    machine: (doc) => {
      doc.firewallProfiles = ok([
        { Name: 'Domain', Enabled: 'True', DefaultInboundAction: 'Block' },
        { Name: 'Private', Enabled: 'True', DefaultInboundAction: 'Block' },
        { Name: 'Public', Enabled: 'False', DefaultInboundAction: 'Block' },
      ]);
    },
    expect: { status: 'FAIL', evidence: { rule: 'profile_disabled', profiles: { public: false } } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'pass-third-party-firewall',
    source: `research §3.4 (third-party firewall in Security Center → PASS third_party; pitfall: Windows Firewall off on purpose); ${WSC_STATES}`,
    description: 'ESET firewall registered and on (productState 266240 = 0x041000); Windows Firewall profiles off',
    machine: (doc) => {
      doc.firewallProfiles = ok(['Domain', 'Private', 'Public'].map((Name) => ({ Name, Enabled: 'False', DefaultInboundAction: 'Block' })));
      doc.firewallProducts = ok([{ displayName: 'ESET Firewall', productState: 266240 }]);
    },
    expect: { status: 'PASS', evidence: { rule: 'third_party_firewall', third_party: 'ESET Firewall' } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'fail-mpssvc-disabled',
    source: 'research §3.4 (service MpsSvc stopped/disabled → profiles are moot → FAIL)',
    description: 'Profiles say on, but the Windows Defender Firewall service is disabled and stopped',
    machine: (doc) => setService(doc, 'MpsSvc', { Start: 4, State: 'Stopped' }),
    expect: { status: 'FAIL', evidence: { rule: 'service_not_running', mpssvc: 'stopped', mpssvc_start: 'disabled' } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'fail-default-inbound-allow',
    source: 'research §3.4 pitfall (DefaultInboundAction=Allow with Enabled=True is effectively open → FAIL)',
    description: 'Private profile enabled but allowing inbound connections by default',
    machine: (doc) => {
      doc.firewallProfiles = ok([
        { Name: 'Domain', Enabled: 'True', DefaultInboundAction: 'Block' },
        { Name: 'Private', Enabled: 'True', DefaultInboundAction: 'Allow' },
        { Name: 'Public', Enabled: 'True', DefaultInboundAction: 'Block' },
      ]);
    },
    expect: { status: 'FAIL', evidence: { rule: 'default_inbound_allow', default_inbound: { private: 'allow' } } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'pass-registry-fallback-gpo',
    source:
      'research §3.4 source 2 (GPO HKLM\\SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\<Profile>\\EnableFirewall over the local FirewallPolicy keys)',
    description: 'Get-NetFirewallProfile failed (NetSecurity provider error); Group Policy enables all profiles in the registry',
    machine: (doc) => {
      doc.firewallProfiles = err('cim_Failed');
      for (const p of ['Domain', 'Private', 'Public']) registry(doc, `firewallPolicy${p}`, { EnableFirewall: 1, DefaultInboundAction: 1 });
      registry(doc, 'firewallLocalPublic', { EnableFirewall: 0 });
    },
    expect: { status: 'PASS', evidence: { source: 'registry', profiles: { public: true } } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'pass-german-locale',
    source: 'research §0.4 (netsh prints translated text; use structured sources) and §11 #13 ([probo] parses English "State" lines only)',
    description: 'German Windows: the probe JSON is the same as on English Windows; the translated netsh output is never read',
    unusedCommands: [
      {
        argv: ['C:\\Windows\\System32\\netsh.exe', 'advfirewall', 'show', 'allprofiles', 'state'],
        stdout: [
          '',
          'Domänenprofil-Einstellungen:',
          '----------------------------------------------------------------------',
          'Status                                EIN',
          '',
          'OK.',
          '',
        ],
      },
    ],
    expect: { status: 'PASS', evidence: { rule: 'all_profiles_enabled' } },
  },
  {
    check: 'FIREWALL_ENABLED',
    name: 'unknown-probe-timeout',
    source: 'research §0.1 (timeout → UNKNOWN); prior-art A.6 (slow hosts)',
    description: 'The PowerShell probe did not finish in time',
    probeResult: { error: 'timeout' },
    expect: { status: 'UNKNOWN', evidence: { reason: 'timeout' } },
  },

  // ---- TIME_SYNC -------------------------------------------------------------------------------
  {
    check: 'TIME_SYNC',
    name: 'pass-stopped-trigger-start-workgroup',
    source:
      'research §4.4 pitfall (workgroup Windows 10/11: W32Time Manual (Trigger Start), often stopped; [probo] first FAILed this, later added w32time_service_start=3)',
    description: 'Workgroup laptop: Type NTP (time.windows.com), W32Time trigger-start and stopped right now',
    expect: {
      status: 'PASS',
      evidence: {
        type: 'NTP',
        provider: 'ntp',
        service_start: 'trigger',
        service_status: 'stopped',
        domain_joined: false,
        w32tm_error: 'service_not_running',
        state_source: 'time_service_events',
        last_sync_age_s: 7069,
        rule: 'synchronized',
      },
    },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-domain-hierarchy',
    source: `research §4.4 (domain members use NT5DS, NtpServer irrelevant); w32tm: ${LINUXFABRIK}/stratum-5-dc-authenticated`,
    description: 'Domain member: Type NT5DS, W32Time automatic and running',
    machine: (doc) => {
      registry(doc, 'w32time', { Type: 'NT5DS', NtpServer: 'time.windows.com,0x9' });
      setService(doc, 'W32Time', { Start: 2, Triggered: false, State: 'Running' });
      doc.computer = ok({ PartOfDomain: true, EntraJoined: false });
      w32tm(doc, LINUXFABRIK_W32TM['stratum-5-dc-authenticated']);
    },
    expect: { status: 'PASS', evidence: { type: 'NT5DS', provider: 'domain', service_status: 'running', domain_joined: true } },
  },
  ...TIME_SYNC_RECORDINGS,
  {
    check: 'TIME_SYNC',
    name: 'fail-service-disabled',
    source: 'research §4.4 decision (service disabled → FAIL); Start 4 = disabled',
    description: 'W32Time start type disabled',
    machine: (doc) => setService(doc, 'W32Time', { Start: 4, Triggered: true, State: 'Stopped' }),
    expect: { status: 'FAIL', evidence: { rule: 'service_disabled', service_start: 'disabled' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-nosync-by-policy',
    source: 'research §4.4 (Type NoSync → FAIL); Group Policy W32Time Parameters key over the local one',
    description: 'Group Policy sets Type NoSync while the local value still says NTP',
    machine: (doc) => registry(doc, 'w32timePolicy', { Type: 'NoSync' }),
    expect: { status: 'FAIL', evidence: { rule: 'no_sync', type: 'NoSync' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'unknown-registry-denied',
    source: 'research §4.4 (unreadable → UNKNOWN)',
    description: 'The W32Time Parameters key could not be read',
    machine: (doc) => {
      doc.registry.w32time = err('access_denied');
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'permission_denied', probe_error: 'access_denied' } },
  },

  // ---- OS_VERSION ------------------------------------------------------------------------------
  {
    check: 'OS_VERSION',
    name: 'pass-windows-11-named-windows-10',
    source:
      'research §5.4 pitfall (ProductName still says "Windows 10" on Windows 11: gopsutil #1143, RegRipper3.0 #67, mql PR #5238; build 22631 = 23H2); endoflife.date windows.md (11 23H2 (W) until 2025-11-11)',
    description: 'ProductName "Windows 10 Pro" with build 22631: Windows 11 Pro 23H2, judged in June 2025',
    now: '2025-06-01T12:00:00Z',
    machine: (doc) => osValues(doc, { CurrentBuild: '22631', CurrentBuildNumber: '22631', UBR: 4460, DisplayVersion: '23H2' }),
    expect: {
      status: 'PASS',
      evidence: {
        name: 'Windows 11 Pro',
        product: 'windows-11-home-pro',
        cycle: '23H2',
        version: '22631.4460',
        build: 22631,
        rule: 'supported',
      },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-11-25h2',
    source: 'research §5.4 (26200 = 25H2, AshleyHow/WindowsOSBuild #58); Microsoft: 25H2 Home/Pro serviced until 2027-10-12',
    description: 'Windows 11 Pro 25H2 (26200.7171), ProductName still "Windows 10 Pro"',
    expect: {
      status: 'PASS',
      evidence: {
        name: 'Windows 11 Pro',
        cycle: '25H2',
        version: '26200.7171',
        display_version: '25H2',
        edition: 'Professional',
        installation_type: 'Client',
      },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-windows-11-24h2-home-pro-ended',
    source: 'research §5.4 evidence sample (26100.4351, 24H2, Professional); endoflife.date windows.md (11 24H2 (W) eol 2026-10-13)',
    description: 'Windows 11 Pro 24H2: Home/Pro servicing ended 2026-10-13',
    machine: (doc) => osValues(doc, { CurrentBuild: '26100', CurrentBuildNumber: '26100', UBR: 4351, DisplayVersion: '24H2' }),
    expect: { status: 'FAIL', evidence: { rule: 'eol', eol: '2026-10-13', cycle: '24H2', product: 'windows-11-home-pro' } },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-11-24h2-enterprise',
    source: 'endoflife.date windows.md (11 24H2 (E) eol 2027-10-12); research §5.4',
    description: 'Windows 11 Enterprise 24H2: Enterprise/Education are serviced 36 months',
    machine: (doc) =>
      osValues(doc, {
        CurrentBuild: '26100',
        CurrentBuildNumber: '26100',
        UBR: 7171,
        DisplayVersion: '24H2',
        EditionID: 'Enterprise',
        ProductName: 'Windows 10 Enterprise',
      }),
    expect: { status: 'PASS', evidence: { name: 'Windows 11 Enterprise', product: 'windows-11-enterprise-education', eol: '2027-10-12' } },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-windows-10-22h2-ended',
    source:
      'research §5.5 (Windows 10 22H2 regular servicing ended 2025-10-14, ESU extra); endoflife.date windows.md @ a70eca3 (10 22H2 eol 2025-10-14, eoes 2028-10-10)',
    description:
      'Windows 10 Pro 22H2 (19045): regular support over, ESU still running but not accepted by the policy, which the evidence names',
    machine: (doc) => osValues(doc, { CurrentBuild: '19045', CurrentBuildNumber: '19045', UBR: 6456, DisplayVersion: '22H2' }),
    expect: {
      status: 'FAIL',
      evidence: {
        name: 'Windows 10 Pro',
        rule: 'extended_support_not_accepted',
        eol: '2025-10-14',
        extended_end: '2028-10-10',
        extended_support: 'Windows ESU',
        extended_support_setting: 'osVersion.acceptExtendedSupport.windowsEsu',
        extended_support_accepted: false,
      },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-10-22h2-esu',
    source: 'research §5.5 (acceptExtendedSupport.windowsEsu); endoflife.date windows.md (10 22H2 eoes 2028-10-10)',
    description: 'Windows 10 Pro 22H2 with policy osVersion.acceptExtendedSupport.windowsEsu',
    policy: { osVersion: { acceptExtendedSupport: { windowsEsu: true } } },
    machine: (doc) => osValues(doc, { CurrentBuild: '19045', CurrentBuildNumber: '19045', UBR: 6456, DisplayVersion: '22H2' }),
    expect: { status: 'PASS', evidence: { rule: 'extended_support', extended_end: '2028-10-10', extended_support_accepted: true } },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-below-minimum-build',
    source: 'research §5.5 (minimum.WINDOWS.minBuild, e.g. 22631 → FAIL rule minimum)',
    description: 'Windows 11 Enterprise 22H2 (22621) below a policy floor of build 22631',
    policy: { osVersion: { minimum: { WINDOWS: { minBuild: 22631 } } } },
    machine: (doc) =>
      osValues(doc, {
        CurrentBuild: '22621',
        CurrentBuildNumber: '22621',
        UBR: 4317,
        DisplayVersion: '22H2',
        EditionID: 'Enterprise',
        ProductName: 'Windows 10 Enterprise',
      }),
    expect: { status: 'FAIL', evidence: { rule: 'minimum', minimum: '22631', version: '22621.4317' } },
  },
  {
    check: 'OS_VERSION',
    name: 'unknown-unverified-26h2',
    source:
      'research §5.4 and §12 (26H2 = build 26300 appears in third-party sources only: unverified); endoflife.date windows.md @ a70eca3 lists 26H1 as the newest',
    description:
      'Build 26300 "26H2": newer than the table, and the data set\'s cadence says no release is due since 26H1 (2026-02-10): UNKNOWN',
    machine: (doc) => osValues(doc, { CurrentBuild: '26300', CurrentBuildNumber: '26300', UBR: 1000, DisplayVersion: '26H2' }),
    expect: { status: 'UNKNOWN', evidence: { reason: 'unknown_release', cycle: '26H2', newest_listed: '26H1' } },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-11-26h1',
    source: 'research §5.4 (26H1 = build 28000); endoflife.date windows.md @ a70eca3 (11 26H1 (W): released 2026-02-10, eol 2028-03-14)',
    description: 'Build 28000 "26H1" Pro: listed by the data set since its release, supported',
    machine: (doc) => osValues(doc, { CurrentBuild: '28000', CurrentBuildNumber: '28000', UBR: 1000, DisplayVersion: '26H1' }),
    expect: { status: 'PASS', evidence: { rule: 'supported', cycle: '26H1', eol: '2028-03-14' } },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-server-2022',
    source: 'endoflife.date windows-server.md (2022: eol 2031-10-14, build 20348); research §5.4 (InstallationType Server)',
    description: 'Windows Server 2022 Datacenter (20348.2849)',
    machine: (doc) =>
      osValues(doc, {
        CurrentBuild: '20348',
        CurrentBuildNumber: '20348',
        UBR: 2849,
        DisplayVersion: '21H2',
        EditionID: 'ServerDatacenter',
        ProductName: 'Windows Server 2022 Datacenter',
        InstallationType: 'Server',
      }),
    expect: {
      status: 'PASS',
      evidence: { name: 'Windows Server 2022 Datacenter', product: 'windows-server', cycle: '2022', minimum: '14393' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-windows-server-2019',
    source:
      'endoflife.date windows-server.md (2019: build 17763, eol 2029-01-09); Microsoft Learn "Windows Server release information" (2019 = 1809, no DisplayVersion before 20H2); policy osVersion.minimum.WINDOWS.minServerBuild',
    description:
      'Windows Server 2019 Standard (17763.6532): below the client floor 19045, but judged by the server floor 14393, and supported',
    machine: (doc) =>
      registry(doc, 'os', {
        CurrentBuild: '17763',
        CurrentBuildNumber: '17763',
        UBR: 6532,
        ReleaseId: '1809',
        EditionID: 'ServerStandard',
        ProductName: 'Windows Server 2019 Standard',
        InstallationType: 'Server',
      }),
    expect: {
      status: 'PASS',
      evidence: { product: 'windows-server', cycle: '2019', version: '17763.6532', minimum: '14393', rule: 'supported' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-windows-server-2012-r2-below-server-floor',
    source:
      'Microsoft Learn lifecycle (Windows Server 2012 R2: build 9600, extended support ended 2023-10-10, ESU 2026-10-13); research §5.4 (InstallationType Server)',
    description:
      'Windows Server 2012 R2 Standard (9600): older than every supported Server release, FAIL minimum by the default server floor',
    machine: (doc) =>
      registry(doc, 'os', {
        CurrentBuild: '9600',
        CurrentBuildNumber: '9600',
        EditionID: 'ServerStandard',
        ProductName: 'Windows Server 2012 R2 Standard',
        InstallationType: 'Server',
      }),
    expect: { status: 'FAIL', evidence: { product: 'windows-server', version: '9600', minimum: '14393', rule: 'minimum' } },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-windows-server-below-policy-floor',
    source: 'policy osVersion.minimum.WINDOWS.minServerBuild (20348 = Server 2022); endoflife.date windows-server.md (2019: build 17763)',
    description: 'Windows Server 2019 Datacenter (17763.6532) where the policy requires Server 2022 or later',
    policy: { osVersion: { minimum: { WINDOWS: { minServerBuild: 20348 } } } },
    machine: (doc) =>
      registry(doc, 'os', {
        CurrentBuild: '17763',
        CurrentBuildNumber: '17763',
        UBR: 6532,
        ReleaseId: '1809',
        EditionID: 'ServerDatacenter',
        ProductName: 'Windows Server 2019 Datacenter',
        InstallationType: 'Server Core',
      }),
    expect: { status: 'FAIL', evidence: { minimum: '20348', version: '17763.6532', installation_type: 'Server Core', rule: 'minimum' } },
  },

  // ---- AUTO_UPDATE -----------------------------------------------------------------------------
  {
    check: 'AUTO_UPDATE',
    name: 'fail-default-demand-start-wuauserv-update-not-installed',
    source:
      "research §6.4 (no policy, services not disabled → the default installs by itself; trigger-start services are normally stopped) and §11 #16; the baseline machine's own patch level 26200.7171 (the 2025-11-11 update)",
    description:
      'No Windows Update policy; wuauserv trigger-start and stopped, UsoSvc running: the settings install by themselves, yet the machine as recorded still runs the November 2025 update',
    expect: {
      status: 'FAIL',
      evidence: {
        source: 'default',
        rule: 'update_not_installed',
        wuauserv_start: 'trigger',
        wuauserv_status: 'stopped',
        au_options: null,
        installed_update: '26200.7171',
        newer_update: '26200.7462',
        newer_update_released: '2025-12-09',
        max_pending_days: 45,
      },
    },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-auoptions-4-update-not-installed',
    source:
      '[probo] fixture {"no_auto_update":"0","au_options":"4"} → PASS by the settings; research §6.4; the baseline machine\'s own patch level 26200.7171 (the 2025-11-11 update)',
    description:
      'Group Policy: NoAutoUpdate 0, AUOptions 4 (download and schedule the install), on a machine that still runs the November 2025 update',
    machine: (doc) => registry(doc, 'auPolicy', { NoAutoUpdate: 0, AUOptions: 4 }),
    expect: {
      status: 'FAIL',
      evidence: {
        rule: 'update_not_installed',
        au_options: 4,
        no_auto_update: 0,
        installed_update: '26200.7171',
        newer_update: '26200.7462',
        newer_update_released: '2025-12-09',
      },
    },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-auoptions-2',
    source: '[probo] fixture {"au_options":"2"} → FAIL; research §6.4',
    description: 'Group Policy AUOptions 2: notify before downloading',
    machine: (doc) => registry(doc, 'auPolicy', { AUOptions: 2 }),
    expect: { status: 'FAIL', evidence: { rule: 'notify_before_download' } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-wuauserv-disabled',
    source: '[probo] fixture {"no_auto_update":"","au_options":"","wuauserv_service_start":"4"} → FAIL; research §6.4',
    description: 'No policy, but the Windows Update service is disabled',
    machine: (doc) => setService(doc, 'wuauserv', { Start: 4, State: 'Stopped' }),
    expect: { status: 'FAIL', evidence: { rule: 'wuauserv_disabled', wuauserv_start: 'disabled' } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-no-auto-update',
    source: 'research §6.4 (NoAutoUpdate=1 → FAIL)',
    description: 'Group Policy NoAutoUpdate 1 with WSUS configured',
    machine: (doc) => registry(doc, 'auPolicy', { NoAutoUpdate: 1, AUOptions: 4, UseWUServer: 1 }),
    expect: { status: 'FAIL', evidence: { rule: 'no_auto_update', wsus: true } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-download-only',
    source: 'research §6.4 (AUOptions=3 → PASS only if download-only is accepted) and §0.9',
    description: 'AUOptions 3 (download, notify for install) with the default policy',
    machine: (doc) => registry(doc, 'auPolicy', { AUOptions: 3 }),
    expect: { status: 'FAIL', evidence: { rule: 'download_only' } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-download-only-accepted-update-not-installed',
    source:
      "research §6.4 and §0.9 (autoUpdate.acceptDownloadOnly); the baseline machine's own patch level 26200.7171 (the 2025-11-11 update). Renamed from pass-download-only-accepted (issue 32: it passed from the settings alone)",
    description:
      'AUOptions 3 with policy autoUpdate.acceptDownloadOnly, on a machine that still runs the November 2025 update: installing by hand is accepted, an update left uninstalled longer than maxPendingDays is not',
    policy: { autoUpdate: { acceptDownloadOnly: true } },
    machine: (doc) => registry(doc, 'auPolicy', { AUOptions: 3 }),
    expect: {
      status: 'FAIL',
      evidence: {
        rule: 'downloaded_not_installed',
        au_options: 3,
        installed_update: '26200.7171',
        newer_update: '26200.7462',
        newer_update_released: '2025-12-09',
        max_pending_days: 45,
      },
    },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'unknown-local-admin-chooses',
    source: 'research §6.4 pitfalls ([probo] treats AUOptions=5 as PASS: debatable, the local administrator decides)',
    description: 'AUOptions 5: the policy hands the choice to the local administrator',
    machine: (doc) => registry(doc, 'auPolicy', { AUOptions: 5 }),
    expect: { status: 'UNKNOWN', evidence: { reason: 'local_admin_chooses', au_options: 5 } },
  },

  // ---- PASSWORD_POLICY -------------------------------------------------------------------------
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-stock-minimum-zero',
    source: '[probo] fixture {"min_password_length":0} → FAIL; research §7.4 (Windows default local minimum is 0)',
    description: 'Stock local policy: minimum length 0, complexity off',
    expect: {
      status: 'FAIL',
      evidence: { source: 'secedit', min_length: 0, complexity: false, lockout_threshold: 10, rule: 'min_length' },
    },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'pass-gpo-length-and-complexity',
    source: 'research §7.4 (secedit /export [System Access]: MinimumPasswordLength, PasswordComplexity); CIS-style 14 characters',
    description: 'Group Policy: minimum 14 characters, complexity on; policy requires complexity',
    policy: { password: { minLength: 12, requireComplexity: true } },
    machine: (doc) => {
      const lines = (doc.secedit as { value: { SystemAccess: string[] } }).value.SystemAccess.map((line) =>
        line.startsWith('MinimumPasswordLength')
          ? 'MinimumPasswordLength = 14'
          : line.startsWith('PasswordComplexity')
            ? 'PasswordComplexity = 1'
            : line,
      );
      doc.secedit = ok({ ExitCode: 0, SystemAccess: lines });
      doc.accountPolicy = ok({ MinPasswordLength: 14 });
    },
    expect: { status: 'PASS', evidence: { source: 'secedit', min_length: 14, complexity: true, rule: 'meets_policy' } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'pass-mdm-raises-minimum',
    source:
      '[probo] fixture {"backend":"max","min_password_length":6,"raw":"MinDevicePasswordLength=6;MinimumPasswordLength=0"}; research §7.4 source 4 (DeviceLock CSP)',
    description: 'Local minimum 0, Intune DeviceLock minimum 6; policy asks for 6',
    policy: { password: { minLength: 6 } },
    machine: (doc) => registry(doc, 'deviceLock', { DevicePasswordEnabled: 0, MinDevicePasswordLength: 6 }),
    expect: { status: 'PASS', evidence: { source: 'max', sources: ['secedit', 'mdm'], min_length: 6, mdm_min_length: 6 } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-complexity-required',
    source: 'research §7.4 (complexity from secedit PasswordComplexity); policy password.requireComplexity',
    description: 'Minimum 10 characters, complexity off, policy requires complexity',
    policy: { password: { requireComplexity: true } },
    machine: (doc) => {
      const lines = (doc.secedit as { value: { SystemAccess: string[] } }).value.SystemAccess.map((line) =>
        line.startsWith('MinimumPasswordLength') ? 'MinimumPasswordLength = 10' : line,
      );
      doc.secedit = ok({ ExitCode: 0, SystemAccess: lines });
    },
    expect: { status: 'FAIL', evidence: { rule: 'complexity', min_length: 10, complexity: false } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'pass-standard-user-netusermodals',
    source: 'research §7.4 source 3 (NetUserModalsGet / ADSI WinNT MinPasswordLength: no administrator needed, no complexity)',
    description: 'Run by a standard user: secedit exports nothing useful, ADSI reports minimum 8',
    machine: (doc) => {
      doc.elevated = false;
      doc.secedit = ok({ ExitCode: 3, SystemAccess: [] });
      doc.accountPolicy = ok({ MinPasswordLength: 8 });
    },
    expect: { status: 'PASS', evidence: { source: 'netusermodals', min_length: 8 } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'unknown-standard-user-complexity',
    source: 'research §7.4 (secedit needs administrator rights; net accounts has no complexity and is translated)',
    description: 'Standard user, policy requires complexity: only secedit could tell, and it was denied',
    policy: { password: { requireComplexity: true } },
    machine: (doc) => {
      doc.elevated = false;
      doc.secedit = ok({ ExitCode: 3, SystemAccess: [] });
      doc.accountPolicy = ok({ MinPasswordLength: 8 });
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'permission_denied', min_length: 8 } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'unknown-entra-joined',
    source: 'research §7 (directory-backed accounts get their policy centrally: do not pretend the local policy applies) and §7.4 pitfalls',
    description: 'Entra ID joined laptop with the stock local policy (minimum 0)',
    machine: (doc) => {
      doc.computer = ok({ PartOfDomain: false, EntraJoined: true });
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'directory_managed', entra_joined: true, min_length: 0 } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-german-locale',
    source: 'research §7.4 (net accounts is translated; the secedit INF keys are not); [probo] fixture {"min_password_length":0}',
    description: 'German Windows with minimum length 7: the translated net accounts output is never parsed',
    unusedCommands: [
      {
        argv: ['C:\\Windows\\System32\\net.exe', 'accounts'],
        stdout: ['Minimale Kennwortlänge:                               7', 'Der Befehl wurde erfolgreich ausgeführt.'],
      },
    ],
    machine: (doc) => {
      const lines = (doc.secedit as { value: { SystemAccess: string[] } }).value.SystemAccess.map((line) =>
        line.startsWith('MinimumPasswordLength') ? 'MinimumPasswordLength = 7' : line,
      );
      doc.secedit = ok({ ExitCode: 0, SystemAccess: lines });
    },
    expect: { status: 'FAIL', evidence: { source: 'secedit', min_length: 7, rule: 'min_length' } },
  },

  // ---- REMOTE_LOGIN ----------------------------------------------------------------------------
  {
    check: 'REMOTE_LOGIN',
    name: 'pass-nothing-exposed',
    source: 'research §8.4 (fDenyTSConnections 1, no OpenSSH Server → PASS)',
    description: 'Remote Desktop denied, TermService stopped, OpenSSH Server not installed',
    expect: {
      status: 'PASS',
      evidence: {
        rdp_allowed: false,
        rdp_listening: false,
        openssh_server: 'not_installed',
        winrm_listening: false,
        rule: 'no_remote_login',
      },
    },
  },
  {
    check: 'REMOTE_LOGIN',
    name: 'fail-rdp-enabled-by-policy',
    source: 'research §8.4 (policy key first) and §11 #20 ([probo] reads only the local fDenyTSConnections and misses GPO-enabled RDP)',
    description: 'Group Policy allows Remote Desktop while the local value still denies it; TermService listens on 3389',
    machine: (doc) => {
      registry(doc, 'rdpPolicy', { fDenyTSConnections: 0 });
      setService(doc, 'TermService', { State: 'Running' });
      listen(doc, ['0.0.0.0', '::'], [3389]);
    },
    expect: {
      status: 'FAIL',
      evidence: { rule: 'rdp_enabled', rdp_allowed: true, rdp_policy_managed: true, rdp_listening: true, rdp_nla: true },
    },
  },
  {
    check: 'REMOTE_LOGIN',
    name: 'fail-openssh-server-running',
    source: 'research §8.4 (OpenSSH Server optional feature: sshd running → FAIL) and §11 #20',
    description: 'OpenSSH Server installed, automatic and running',
    machine: (doc) => {
      setService(doc, 'sshd', { Start: 2, State: 'Running' });
      listen(doc, ['0.0.0.0', '::'], [22]);
    },
    expect: { status: 'FAIL', evidence: { rule: 'sshd_running', openssh_server: 'running', openssh_server_start: 'auto' } },
  },
  {
    check: 'REMOTE_LOGIN',
    name: 'pass-openssh-hardened-allowed',
    source:
      'research §8 (remoteLogin.allowSshIfHardened: PasswordAuthentication no); OpenSSH for Windows default C:\\ProgramData\\ssh\\sshd_config',
    description: 'sshd running with password authentication off, policy accepts a hardened SSH server',
    policy: { remoteLogin: { allowSshIfHardened: true } },
    machine: (doc) => setService(doc, 'sshd', { Start: 2, State: 'Running' }),
    files: {
      'C:\\ProgramData\\ssh\\sshd_config': [
        '# This is the sshd server system-wide configuration file.',
        'AuthorizedKeysFile\t.ssh/authorized_keys',
        'PasswordAuthentication no',
        'Subsystem\tsftp\tsftp-server.exe',
        'Match Group administrators',
        '       AuthorizedKeysFile __PROGRAMDATA__/ssh/administrators_authorized_keys',
      ],
    },
    expect: { status: 'PASS', evidence: { rule: 'ssh_hardened', ssh_password_authentication: false } },
  },
  {
    check: 'REMOTE_LOGIN',
    name: 'unknown-registry-denied',
    source: 'research §8.4 (registry unreadable → UNKNOWN)',
    description: 'The Terminal Server key could not be read',
    machine: (doc) => {
      doc.registry.rdp = err('access_denied');
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'permission_denied' } },
  },

  // ---- MALWARE_PROTECTION ----------------------------------------------------------------------
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-defender-active',
    source: `${MP_STATUS}; research §9.4 fixture (Normal, RTP True, signature age 1); ${WSC_STATES} (397568)`,
    description: 'Defender is the primary antivirus, real-time protection on, signatures 1 day old',
    expect: {
      status: 'PASS',
      evidence: {
        source: 'defender',
        rule: 'defender_active',
        defender: { mode: 'normal', rtp: true, signature_age_days: 1, tamper_protected: true },
      },
    },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-third-party-defender-passive',
    source: `research §9.4 pitfalls (third-party AV turns Defender passive/disabled; a Defender-only check FAILs a protected machine) and §11 #21; ${WSC_STATES} (266240 third-party on, 393472 Microsoft off); ${MP_STATUS}`,
    description: 'ESET registered in Security Center and on; Defender in passive mode with real-time protection off',
    machine: (doc) => {
      doc.antivirusProducts = ok([
        { displayName: 'Windows Defender', productState: 393472 },
        { displayName: 'ESET Security', productState: 266240 },
      ]);
      defender(doc, { AMRunningMode: 'Passive Mode', RealTimeProtectionEnabled: false });
    },
    expect: { status: 'PASS', evidence: { source: 'wsc', rule: 'third_party_antivirus', product: 'ESET Security' } },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'fail-signatures-old',
    source: `${MP_STATUS}; research §9.4 (signature age ≤ N days; policy malware.maxSignatureAgeDays)`,
    description: 'Defender active but signatures 12 days old (policy: 7)',
    machine: (doc) => {
      doc.antivirusProducts = ok([{ displayName: 'Windows Defender', productState: 397584 }]);
      defender(doc, { AntivirusSignatureAge: 12, DefenderSignaturesOutOfDate: true });
    },
    expect: { status: 'FAIL', evidence: { rule: 'signatures_out_of_date', defender: { signature_age_days: 12 } } },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'fail-realtime-protection-off',
    source: `${MP_STATUS}; research §9.4 (RealTimeProtectionEnabled required)`,
    description: 'Defender is primary, but real-time protection is turned off',
    machine: (doc) => {
      doc.antivirusProducts = ok([{ displayName: 'Windows Defender', productState: 393472 }]);
      defender(doc, { RealTimeProtectionEnabled: false });
    },
    expect: { status: 'FAIL', evidence: { rule: 'realtime_protection_off', defender: { rtp: false } } },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'fail-third-party-out-of-date',
    source: `${WSC_STATES} (266256 = 0x041010: on, signatures out of date); research §9.4`,
    description: 'Third-party antivirus on but out of date, Defender passive',
    machine: (doc) => {
      doc.antivirusProducts = ok([
        { displayName: 'Windows Defender', productState: 393472 },
        { displayName: 'ESET Security', productState: 266256 },
      ]);
      defender(doc, { AMRunningMode: 'Passive Mode', RealTimeProtectionEnabled: false });
    },
    expect: { status: 'FAIL', evidence: { rule: 'signatures_out_of_date' } },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-server-defender',
    source:
      'research §9.4 source 3 (Server SKUs have no SecurityCenter2: Defender via Get-MpComputerStatus); [osquery] windows_security_products "Not compatible with Windows Server"',
    description: 'Windows Server 2022: root/SecurityCenter2 does not exist, Defender active',
    machine: (doc) => {
      osValues(doc, {
        CurrentBuild: '20348',
        CurrentBuildNumber: '20348',
        UBR: 2849,
        DisplayVersion: '21H2',
        EditionID: 'ServerStandard',
        ProductName: 'Windows Server 2022 Standard',
        InstallationType: 'Server',
      });
      doc.antivirusProducts = err('cim_InvalidNamespace');
      doc.firewallProducts = err('cim_InvalidNamespace');
    },
    expect: {
      status: 'PASS',
      evidence: {
        source: 'defender',
        security_center: 'absent_on_server',
        third_party_antivirus: 'not_visible_on_server',
        rule: 'defender_active',
      },
    },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'unknown-server-defender-passive',
    source:
      'research §9.4 (Passive Mode = Defender is not the primary AV: not a PASS alone; servers have no Security Center to show the primary one)',
    description: 'Windows Server with Defender in passive mode next to an unregistered third-party product',
    machine: (doc) => {
      osValues(doc, {
        CurrentBuild: '20348',
        CurrentBuildNumber: '20348',
        UBR: 2849,
        DisplayVersion: '21H2',
        EditionID: 'ServerStandard',
        ProductName: 'Windows Server 2022 Standard',
        InstallationType: 'Server',
      });
      doc.antivirusProducts = err('cim_InvalidNamespace');
      defender(doc, { AMRunningMode: 'Passive Mode', RealTimeProtectionEnabled: false });
    },
    expect: {
      status: 'UNKNOWN',
      evidence: { reason: 'defender_not_primary', security_center: 'absent_on_server', third_party_antivirus: 'not_visible_on_server' },
    },
  },
  ...REAL_WORLD_CASES,
];

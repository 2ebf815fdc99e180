// Fixture cases for the Windows fixes of issue 14 other than TIME_SYNC (timeSyncRecordings.ts): the
// editions other tools misjudged, volumes mounted nowhere, WinRM, a standard user's view of other
// users' hives, servers without Security Center, the Server-only AUOptions location and the legacy
// firewall policy; and password policies and antivirus states as users pasted them (secedit
// exports, net accounts, Security Center listings, Get-MpComputerStatus). Each names what it rests
// on; where no recording of the probe's view was found, the case says which values were completed
// and from what.
import type { WindowsFixtureCase } from './fixtureCases';
import {
  LOCAL_USER_SID,
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

const LTSC_BUILDS = 'MicrosoftDocs/msix-docs#366 (LTSC builds: 2015 = 10240, LTSB 2016 = 14393, LTSC 2019 = 17763, LTSC 2021 = 19044)';
const OTHER_TOOL_MISJUDGED =
  'netwrix/pingcastle#96 (Windows 1607 and 1809 LTSB/LTSC reported obsolete by a tool that applied the general-availability dates)';
const EDITION_IDS = 'MicrosoftDocs/sdk-api#1030 (GetProductInfo: IoT Enterprise LTSC); EditionID EnterpriseS / IoTEnterpriseS';

const client = (doc: ProbeDocument, values: Record<string, unknown>) => registry(doc, 'os', { InstallationType: 'Client', ...values });
const windows11 = (build: number, ubr: number, displayVersion: string) => ({
  CurrentBuild: String(build),
  CurrentBuildNumber: String(build),
  UBR: ubr,
  DisplayVersion: displayVersion,
  EditionID: 'Enterprise',
  ProductName: 'Windows 10 Enterprise',
});
const UPDATE_TABLE =
  "checks/windows/updateHistoryData.ts, generated from altrhombus/DataForGeeks (Microsoft's update history pages), with rows from Microsoft's release information via Alitai12/Windows-Updatelist and Microsoft's CVE records in CVEProject/cvelistV5";

/** Win32_EncryptableVolume rows as the probe prints them (GetProtectionStatus, GetConversionStatus, GetEncryptionMethod, GetKeyProtectorType). */
const volume = (
  DriveLetter: string | null,
  VolumeType: number,
  ProtectionStatus: number,
  ConversionStatus: number,
  EncryptionPercentage: number,
  KeyProtectorTypes: number[],
  Mounted: boolean,
) => ({
  DriveLetter,
  Mounted,
  VolumeType,
  ProtectionStatus,
  ConversionStatus,
  EncryptionPercentage,
  EncryptionMethod: ConversionStatus === 0 ? 0 : 6,
  KeyProtectorTypes,
  ReturnValues: [0, 0, 0, 0],
});

const WINDOWS_SERVER_2022 = {
  CurrentBuild: '20348',
  CurrentBuildNumber: '20348',
  UBR: 2849,
  DisplayVersion: '21H2',
  EditionID: 'ServerStandard',
  ProductName: 'Windows Server 2022 Standard',
  InstallationType: 'Server',
};

export const REAL_WORLD_CASES: WindowsFixtureCase[] = [
  // ---- OS_VERSION: each edition against its own servicing channel ------------------------------
  {
    check: 'OS_VERSION',
    name: 'pass-ltsc-2019-below-client-floor',
    source: `${OTHER_TOOL_MISJUDGED}; pruggitorg/detect-windows-version#23 (a Windows 10 LTSC 2019 machine at 17763.4737, August 2023); ${LTSC_BUILDS}; completed: the other CurrentVersion values`,
    description:
      'Windows 10 Enterprise LTSC 2019 (17763.4737): below the client floor 19045, but LTSC has no feature updates and is serviced until 2029-01-09',
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '17763',
        CurrentBuildNumber: '17763',
        UBR: 4737,
        ReleaseId: '1809',
        EditionID: 'EnterpriseS',
        ProductName: 'Windows 10 Enterprise LTSC 2019',
      }),
    expect: {
      status: 'PASS',
      evidence: {
        product: 'windows-10-ltsc',
        cycle: '2019',
        version: '17763.4737',
        servicing_channel: 'ltsc',
        eol: '2029-01-09',
        rule: 'supported',
      },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-ltsb-2016-own-support-ended',
    source: `${OTHER_TOOL_MISJUDGED} ("Windows 10 Enterprise 2016 LTSB", extended support end 13.10.2026); ${LTSC_BUILDS}; completed: UBR and the other CurrentVersion values`,
    description:
      'Windows 10 Enterprise 2016 LTSB (14393): FAILs because its own support ended on 2026-10-13, not because of the client build floor',
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '14393',
        CurrentBuildNumber: '14393',
        UBR: 7428,
        ReleaseId: '1607',
        EditionID: 'EnterpriseS',
        ProductName: 'Windows 10 Enterprise 2016 LTSB',
      }),
    expect: { status: 'FAIL', evidence: { product: 'windows-10-ltsc', cycle: '2016', eol: '2026-10-13', rule: 'eol' } },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-ltsc-2021-build-19044',
    source: `${LTSC_BUILDS}; ${EDITION_IDS}; completed: UBR and the other CurrentVersion values`,
    description: 'Windows 10 Enterprise LTSC 2021 (19044, one build below the client floor): serviced until 2027-01-12',
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '19044',
        CurrentBuildNumber: '19044',
        UBR: 6456,
        DisplayVersion: '21H2',
        EditionID: 'EnterpriseS',
        ProductName: 'Windows 10 Enterprise LTSC 2021',
      }),
    expect: { status: 'PASS', evidence: { product: 'windows-10-ltsc', cycle: '2021', eol: '2027-01-12', rule: 'supported' } },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-iot-ltsc-2021-until-2032',
    source: `${EDITION_IDS}; ${LTSC_BUILDS}; endoflife.date windows.md (IoT Enterprise LTSC 2021: 2032-01-13); completed: UBR and the other CurrentVersion values`,
    description: "Windows 10 IoT Enterprise LTSC 2021 (19044) on a kiosk: its own ten-year channel, not Enterprise LTSC 2021's 2027 date",
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '19044',
        CurrentBuildNumber: '19044',
        UBR: 6456,
        DisplayVersion: '21H2',
        EditionID: 'IoTEnterpriseS',
        ProductName: 'Windows 10 IoT Enterprise LTSC 2021',
      }),
    expect: {
      status: 'PASS',
      evidence: { product: 'windows-10-iot-ltsc', cycle: '2021', eol: '2032-01-13', servicing_channel: 'ltsc', rule: 'supported' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-server-2022-evaluation',
    source:
      'Microsoft Learn "Upgrade and conversion options for Windows Server" (DISM /Online /Get-CurrentEdition shows ServerStandardEval on evaluation media); endoflife.date windows-server.md (2022: eol 2031-10-14); completed: the CurrentVersion values',
    description: 'Windows Server 2022 Standard Evaluation: an evaluation edition is serviced like the edition it evaluates',
    machine: (doc) =>
      osValues(doc, { ...WINDOWS_SERVER_2022, EditionID: 'ServerStandardEval', ProductName: 'Windows Server 2022 Standard Evaluation' }),
    expect: {
      status: 'PASS',
      evidence: { product: 'windows-server', cycle: '2022', evaluation_edition: true, servicing_channel: 'server', rule: 'supported' },
    },
  },

  // ---- OS_VERSION: the patch level (UBR) against its update's release date ----------------------
  {
    check: 'OS_VERSION',
    name: 'pass-patch-age-24h2-may-2025-update',
    source: `stascorp/rdpwrap#3619 ("Windows 11 24H2 (26100.4061)", reported 2025-05-22); 26100.4061 = KB5058411 of 2025-05-13 (${UPDATE_TABLE}); completed: EditionID Enterprise and the other CurrentVersion values`,
    description: 'Windows 11 24H2 at 26100.4061 nine days after its release: within a 45-day patch age',
    now: '2025-05-22T12:00:00Z',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => client(doc, windows11(26100, 4061, '24H2')),
    expect: {
      status: 'PASS',
      evidence: { version: '26100.4061', update_line: '26100', patch_released: '2025-05-13', patch_age_days: 9, rule: 'supported' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-patch-age-24h2-autopilot-stuck-at-release',
    source: `mtniehaus/UpdateOS#14 (an Autopilot VM left on 26100.1742, the September 2024 build, not offered 26100.2033; reported 2024-11-01); 26100.1742 = the 24H2 release of 2024-10-01 (${UPDATE_TABLE}); completed: EditionID Enterprise and the other CurrentVersion values`,
    description: 'Windows 11 24H2 still at its release build a month later: older than a 30-day patch age',
    now: '2024-11-01T12:00:00Z',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 30 } } },
    machine: (doc) => client(doc, windows11(26100, 1742, '24H2')),
    expect: {
      status: 'FAIL',
      evidence: { version: '26100.1742', patch_released: '2024-10-01', max_patch_age_days: 30, rule: 'patch_too_old' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-patch-age-24h2-unlisted-ubr',
    source: `sebaxakerhtc/rdpwrap.ini#620 ("Windows 11 24H2 10.0.26100.7920", reported 2026-04-15); the table lists 26100.7840 (2026-02-10) and 26100.7922 (2026-02-24) but not 7920 (${UPDATE_TABLE}); completed: EditionID Enterprise and the other CurrentVersion values`,
    description:
      'Windows 11 24H2 at an unlisted 26100.7920: released between 2026-02-10 and 2026-02-24, so older than 45 days on 2026-04-15 either way',
    now: '2026-04-15T12:00:00Z',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => client(doc, windows11(26100, 7920, '24H2')),
    expect: {
      status: 'FAIL',
      evidence: { patch_released_after: '2026-02-10', patch_released_before: '2026-02-24', rule: 'patch_too_old' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-patch-age-25h2-march-preview',
    source: `sebaxakerhtc/rdpwrap.ini#617 ("Version 25H2 26200.8116", reported 2026-03-30); 26200.8116 = the 2026-03-26 preview KB5079391 (${UPDATE_TABLE}); completed: EditionID Professional and the other CurrentVersion values`,
    description: 'Windows 11 25H2 at 26200.8116, the March 2026 preview, four days after its release',
    now: '2026-03-30T12:00:00Z',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => client(doc, { ...windows11(26200, 8116, '25H2'), EditionID: 'Professional', ProductName: 'Windows 10 Pro' }),
    expect: {
      status: 'PASS',
      evidence: { update_line: '26200', patch_released: '2026-03-26', patch_age_days: 4, rule: 'supported' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'pass-patch-age-25h2-june-2026-update',
    source: `stascorp/rdpwrap#4308 ("OS: Windows 11 Pro, Version: 25H2, Build: 10.0.26200.8655", reported 2026-06-21); 26200.8655 = the 2026-06-09 security update (CVE-2026-45653's fixed build; ${UPDATE_TABLE}); completed: the CurrentVersion values other than build, UBR, edition and display version`,
    description: 'Windows 11 Pro 25H2 at the June 2026 security update, twelve days after its release',
    now: '2026-06-21T12:00:00Z',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => client(doc, { ...windows11(26200, 8655, '25H2'), EditionID: 'Professional', ProductName: 'Windows 10 Pro' }),
    expect: {
      status: 'PASS',
      evidence: { version: '26200.8655', patch_released: '2026-06-09', patch_age_days: 12, rule: 'supported' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-patch-age-24h2-stuck-at-july-2026-preview',
    source: `stascorp/rdpwrap#4392 ("Windows: 24H2 build 26100.8973", reported 2026-08-04), judged on 2026-11-21: between the 2026-07-14 (8875) and 2026-08-11 (9168) security updates (${UPDATE_TABLE}); completed: EditionID Enterprise and the other CurrentVersion values`,
    description: 'Windows 11 24H2 still at a July 2026 build in November: older than 45 days even if released on 2026-08-11',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => client(doc, windows11(26100, 8973, '24H2')),
    expect: {
      status: 'FAIL',
      evidence: { patch_released_after: '2026-07-14', patch_released_before: '2026-08-11', max_patch_age_days: 45, rule: 'patch_too_old' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-patch-age-windows-10-esu-not-updating',
    source: `stascorp/rdpwrap#4247 ("Windows 10 22H2 19045.6466", reported 2026-05-11); 19045.6466 = KB5071959, the out-of-band ESU enrollment fix of 2025-11-11 (${UPDATE_TABLE}); completed: EditionID Professional and the other CurrentVersion values`,
    description:
      'Windows 10 Pro 22H2 with ESU accepted by policy, but still at the November 2025 update in May 2026: not actually receiving ESU updates',
    now: '2026-05-11T12:00:00Z',
    policy: { osVersion: { acceptExtendedSupport: { windowsEsu: true }, maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '19045',
        CurrentBuildNumber: '19045',
        UBR: 6466,
        DisplayVersion: '22H2',
        EditionID: 'Professional',
        ProductName: 'Windows 10 Pro',
      }),
    expect: {
      status: 'FAIL',
      evidence: { extended_support_accepted: true, update_line: '19044/19045', patch_released: '2025-11-11', rule: 'patch_too_old' },
    },
  },
  {
    check: 'OS_VERSION',
    name: 'fail-patch-age-server-2022-unpatched-since-2023',
    source: `Slion/VirtualDesktop#10 (a Windows Server 2022 machine at OS Build 20348.1906, 2023-09-01), judged on 2026-11-21: older than the table's first 20348 row, 2025-01-14 (${UPDATE_TABLE}); completed: the other CurrentVersion values`,
    description: 'Windows Server 2022 still at its August 2023 update: older than every listed update, so at least as old as the first',
    policy: { osVersion: { maxPatchAgeDays: { WINDOWS: 45 } } },
    machine: (doc) => osValues(doc, { ...WINDOWS_SERVER_2022, UBR: 1906 }),
    expect: {
      status: 'FAIL',
      evidence: { update_line: '20348', patch_released_after: null, patch_released_before: '2025-01-14', rule: 'patch_too_old' },
    },
  },

  // ---- DISK_ENCRYPTION: volumes mounted nowhere -------------------------------------------------
  {
    check: 'DISK_ENCRYPTION',
    name: 'fail-docs-example-every-volume',
    source:
      'MicrosoftDocs/windows-powershell-docs docset/winserver2022-ps/bitlocker/Get-BitLockerVolume.md, Example 1 (C: FullyDecrypted {Tpm}; D: EncryptionInProgress 1 % {RecoveryPassword, Password}; E:, F:, G: FullyDecrypted); completed: the same rows as Win32_EncryptableVolume method results',
    description: 'Policy scope all_local: the OS volume has a TPM protector but is decrypted, and four data volumes are not protected',
    policy: { diskEncryption: { scope: 'all_local' } },
    machine: (doc) => {
      doc.bitlocker = ok([
        volume('D:', 1, 0, 2, 1, [3, 8], true),
        volume('E:', 1, 0, 0, 0, [], true),
        volume('C:', 0, 0, 0, 0, [1], true),
        volume('F:', 1, 0, 0, 0, [], true),
        volume('G:', 1, 0, 0, 0, [], true),
      ]);
    },
    expect: {
      status: 'FAIL',
      evidence: { rule: 'decrypted', fixed_data_volumes: 4, other_fixed_unprotected: 4, os_volume: { protectors: ['Tpm'] } },
    },
  },
  {
    check: 'DISK_ENCRYPTION',
    name: 'pass-azure-key-volume-mounted-nowhere',
    source:
      'Microsoft Learn "Azure Disk Encryption for Windows VMs" (the BEK volume holding the key is a small volume without a drive letter); completed: its row as Win32_EncryptableVolume and Win32_Volume give it (no recording found)',
    description:
      'Azure VM with C: protected and Azure Disk Encryption\'s key volume, decrypted and mounted nowhere: not a volume to encrypt under "all local volumes"',
    policy: { diskEncryption: { scope: 'all_local' } },
    machine: (doc) => (doc.bitlocker as { value: unknown[] }).value.push(volume(null, 1, 0, 0, 0, [], false)),
    expect: { status: 'PASS', evidence: { rule: 'protected', fixed_data_volumes: 0, unmounted_volumes_skipped: 1 } },
  },

  // ---- REMOTE_LOGIN: WinRM ---------------------------------------------------------------------
  {
    check: 'REMOTE_LOGIN',
    name: 'fail-winrm-server-default',
    source:
      'Microsoft Learn "Installation and configuration for Windows Remote Management" (Windows Server 2012 and later: WinRM enabled, HTTP listener on all addresses); MicrosoftDocs/SupportArticles-docs#440 (5985 HTTP, 5986 HTTPS); completed: the listener rows (System, 0.0.0.0 and ::)',
    description: 'Windows Server 2022 as installed: RDP off, WinRM running and listening on 5985: PowerShell remoting is remote login',
    machine: (doc) => {
      osValues(doc, WINDOWS_SERVER_2022);
      setService(doc, 'WinRM', { Start: 2, State: 'Running' });
      listen(doc, ['0.0.0.0', '::'], [5985, 47001]);
    },
    expect: { status: 'FAIL', evidence: { rdp_allowed: false, winrm_listening: true, winrm: 'running', rule: 'winrm_listening' } },
  },
  {
    check: 'REMOTE_LOGIN',
    name: 'pass-winrm-loopback-only',
    source:
      'Microsoft Learn "Installation and configuration for Windows Remote Management" (winrm create winrm/config/Listener?Address=IP:127.0.0.1+Transport=HTTP binds a listener to one address); completed: the listener rows',
    description: 'WinRM running with its only listener on 127.0.0.1 (local automation): reachable from this machine only',
    machine: (doc) => {
      setService(doc, 'WinRM', { Start: 2, State: 'Running' });
      listen(doc, ['127.0.0.1'], [5985]);
    },
    expect: { status: 'PASS', evidence: { winrm_listening: false, loopback_only_ports: [5985], rule: 'no_remote_login' } },
  },

  // ---- SCREEN_LOCK: a standard user ------------------------------------------------------------
  {
    check: 'SCREEN_LOCK',
    name: 'unknown-standard-user-other-hive-denied',
    source:
      'issue 14 (least privilege); .NET RegistryKey.OpenSubKey throws SecurityException without read access; Microsoft Learn HKCU\\Control Panel\\Desktop values; completed: the hives as the probe reports them',
    description:
      "`device-agent check` run by a standard user: their own hive locks after 10 minutes, another user's hive is closed to them",
    machine: (doc) => {
      doc.elevated = false;
      userHives(doc, [
        { Sid: LOCAL_USER_SID, Policy: null, User: secureSaver },
        { Sid: 'S-1-5-21-1004336348-1177238915-682003330-1002', Error: 'access_denied' },
      ]);
    },
    expect: {
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied', value: 'other_users_hives', users_evaluated: 2, users_compliant: 1, users_unreadable: 1 },
    },
  },
  {
    check: 'SCREEN_LOCK',
    name: 'fail-standard-user-own-hive-without-lock',
    source:
      "issue 14 (least privilege: a denied hive must not hide the user's own settings); Microsoft Learn ScreenSaveActive / SCRNSAVE.EXE; completed: the hives as the probe reports them",
    description:
      'Standard user whose own screen saver is "(None)" and whose laptop sleeps after 30 minutes; another user\'s hive is denied',
    machine: (doc) => {
      doc.elevated = false;
      userHives(doc, [
        { Sid: LOCAL_USER_SID, Policy: null, User: { ScreenSaveActive: '1' } },
        { Sid: 'S-1-5-21-1004336348-1177238915-682003330-1002', Error: 'access_denied' },
      ]);
    },
    expect: { status: 'FAIL', evidence: { rule: 'user_without_lock', users_unreadable: 1, users_compliant: 0 } },
  },

  // ---- AUTO_UPDATE: the Server AUOptions location -----------------------------------------------
  {
    check: 'AUTO_UPDATE',
    name: 'fail-server-sconfig-download-only',
    source:
      'Microsoft Learn "Configure a Server Core installation with Sconfig" (Windows Update settings: Automatic, DownloadOnly, Manual; DownloadOnly by default); Windows Update Agent AUOptions values (3 = download and notify); completed: the value as HKLM\\...\\WindowsUpdate\\Auto Update holds it',
    description: 'Windows Server 2022 without Group Policy whose sconfig setting is DownloadOnly: updates wait for an administrator',
    machine: (doc) => {
      osValues(doc, WINDOWS_SERVER_2022);
      registry(doc, 'auLocal', { AUOptions: 3 });
    },
    expect: { status: 'FAIL', evidence: { au_options: 3, au_options_source: 'local', rule: 'download_only' } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-server-sconfig-automatic-update-not-installed',
    source:
      'Microsoft Learn "Configure a Server Core installation with Sconfig" (Automatic = download and install); Windows Update Agent AUOptions 4; completed: the value as the local key holds it; the Server 2022 patch level 20348.2849 as the other Server 2022 cases record it',
    description:
      'Windows Server 2022 set to Automatic in sconfig, no Group Policy, still at 20348.2849, older than every update the table lists (from January 2025)',
    machine: (doc) => {
      osValues(doc, WINDOWS_SERVER_2022);
      registry(doc, 'auLocal', { AUOptions: 4 });
    },
    expect: {
      status: 'FAIL',
      evidence: {
        au_options: 4,
        au_options_source: 'local',
        rule: 'update_not_installed',
        installed_update: '20348.2849',
        update_line: '20348',
        newer_update: '20348.3091',
        newer_update_released: '2025-01-14',
      },
    },
  },

  // ---- AUTO_UPDATE: what the settings installed (the UBR against the monthly security updates) ---
  {
    check: 'AUTO_UPDATE',
    name: 'pass-installed-june-2026-update',
    source: `stascorp/rdpwrap#4308 ("OS: Windows 11 Pro, Version: 25H2, Build: 10.0.26200.8655", reported 2026-06-21); 26200.8655 = the 2026-06-09 security update, the next one 2026-07-14 (${UPDATE_TABLE}); completed: no Windows Update policy (the default) and the CurrentVersion values other than build, UBR, edition and display version`,
    description: 'Windows 11 Pro 25H2 with the default settings and the June 2026 security update installed twelve days after its release',
    now: '2026-06-21T12:00:00Z',
    machine: (doc) => client(doc, { ...windows11(26200, 8655, '25H2'), EditionID: 'Professional', ProductName: 'Windows 10 Pro' }),
    expect: { status: 'PASS', evidence: { rule: 'default', installed_update: '26200.8655', update_line: '26200' } },
  },
  {
    check: 'AUTO_UPDATE',
    name: 'fail-default-settings-updates-not-installing',
    source: `stascorp/rdpwrap#4247 ("Windows 10 22H2 19045.6466", reported 2026-05-11); 19045.6466 = the out-of-band ESU enrollment fix of 2025-11-11, and 19045.6575 the security update of the same day (${UPDATE_TABLE}); completed: no Windows Update policy (the default) and EditionID Professional and the other CurrentVersion values`,
    description:
      'Windows 10 Pro 22H2 whose settings install updates by themselves, yet in May 2026 still without the November 2025 security update: the intent looks fine, the effect is not',
    now: '2026-05-11T12:00:00Z',
    machine: (doc) =>
      client(doc, {
        CurrentBuild: '19045',
        CurrentBuildNumber: '19045',
        UBR: 6466,
        DisplayVersion: '22H2',
        EditionID: 'Professional',
        ProductName: 'Windows 10 Pro',
      }),
    expect: {
      status: 'FAIL',
      evidence: {
        rule: 'update_not_installed',
        installed_update: '19045.6466',
        newer_update: '19045.6575',
        newer_update_released: '2025-11-11',
        max_pending_days: 45,
      },
    },
  },

  // ---- FIREWALL_ENABLED: the legacy Standard Profile policy -------------------------------------
  {
    check: 'FIREWALL_ENABLED',
    name: 'fail-legacy-standard-profile-policy-off',
    source:
      'Microsoft Learn "Windows Firewall Group Policy settings" (Network\\Network Connections\\Windows Firewall\\Standard Profile: "Protect all network connections", HKLM\\SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\StandardProfile EnableFirewall; applied to the private and public profiles on Vista and later); completed: the cmdlet failing, so the registry decides',
    description: 'An old domain GPO still turns the firewall off through the Standard Profile key; Get-NetFirewallProfile unavailable',
    machine: (doc) => {
      doc.firewallProfiles = err('cim_InvalidClass');
      registry(doc, 'firewallPolicyStandard', { EnableFirewall: 0 });
    },
    expect: {
      status: 'FAIL',
      evidence: { source: 'registry', profiles: { domain: true, private: false, public: false }, rule: 'profile_disabled' },
    },
  },
  // ---- PASSWORD_POLICY: [System Access] sections pasted in issue threads --------------------------
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-fresh-install-no-lockout',
    source:
      '0x6d69636b/windows_hardening#18 (secedit /export of "a new installed Windows, out-of-the-box without any hardening settings": the [System Access] lines as pasted, before Windows 11 22H2 set a lockout threshold); completed: the other probe sections (the baseline machine)',
    description: 'A freshly installed Windows: minimum length 0, complexity off, no account lockout',
    machine: (doc) => {
      doc.secedit = ok({
        ExitCode: 0,
        SystemAccess: [
          'MinimumPasswordAge = 0',
          'MaximumPasswordAge = 42',
          'MinimumPasswordLength = 0',
          'PasswordComplexity = 0',
          'PasswordHistorySize = 0',
          'LockoutBadCount = 0',
          'RequireLogonToChangePassword = 0',
          'ForceLogoffWhenHourExpire = 0',
          'NewAdministratorName = "Administrator"',
          'NewGuestName = "Guest"',
          'ClearTextPassword = 0',
          'LSAAnonymousNameLookup = 0',
          'EnableAdminAccount = 0',
          'EnableGuestAccount = 0',
        ],
      });
    },
    expect: {
      status: 'FAIL',
      evidence: { source: 'secedit', min_length: 0, complexity: false, lockout_threshold: 0, max_age_days: 42, rule: 'min_length' },
    },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-complexity-without-length',
    source:
      'ChrisAWalker/cSecurityOptions#6 (the top of a secedit export pasted by the reporter: PasswordComplexity 1, MinimumPasswordLength 0, EnableAdminAccount 1); completed: the other probe sections (the baseline machine) and the ADSI minimum (0, the same NetUserModalsGet value)',
    description:
      'Complexity required but no minimum length, policy asks for 8 characters and complexity: complexity alone is not a passing policy',
    policy: { password: { minLength: 8, requireComplexity: true } },
    machine: (doc) => {
      doc.secedit = ok({
        ExitCode: 0,
        SystemAccess: [
          'MinimumPasswordAge = 0',
          'MaximumPasswordAge = 42',
          'MinimumPasswordLength = 0',
          'PasswordComplexity = 1',
          'PasswordHistorySize = 0',
          'LockoutBadCount = 0',
          'RequireLogonToChangePassword = 0',
          'ForceLogoffWhenHourExpire = 0',
          'NewAdministratorName = "Administrator"',
          'NewGuestName = "Guest"',
          'ClearTextPassword = 0',
          'LSAAnonymousNameLookup = 0',
          'EnableAdminAccount = 1',
          'EnableGuestAccount = 0',
        ],
      });
    },
    expect: {
      status: 'FAIL',
      evidence: { source: 'secedit', min_length: 0, complexity: true, lockout_threshold: 0, required_min_length: 8, rule: 'min_length' },
    },
  },

  {
    check: 'PASSWORD_POLICY',
    name: 'pass-standard-user-sql-mi-minimum-14',
    source:
      'MicrosoftDocs/sql-docs#10196 (`net accounts` run by a SQL Agent job on Azure SQL Managed Instance hosts: minimum length 14, history 24, lockout threshold 10, computer role SERVER); completed: the run without administrator rights (secedit refused, as in pass-standard-user-netusermodals), the ADSI MinPasswordLength 14 (NetUserModalsGet, the value net accounts printed) and the other probe sections (the baseline machine)',
    description:
      'A server whose account policy asks for 14 characters, checked by a standard user: the ADSI minimum decides, the translated net accounts text is never parsed',
    unusedCommands: [
      {
        argv: ['C:\\Windows\\System32\\net.exe', 'accounts'],
        stdout: [
          'Force user logoff how long after time expires?:       Never',
          'Minimum password age (days):                          1',
          'Maximum password age (days):                          60',
          'Minimum password length:                              14',
          'Length of password history maintained:                24',
          'Lockout threshold:                                    10',
          'Lockout duration (minutes):                           10',
          'Lockout observation window (minutes):                 10',
          'Computer role:                                        SERVER',
        ],
      },
    ],
    machine: (doc) => {
      doc.elevated = false;
      doc.secedit = ok({ ExitCode: 3, SystemAccess: [] });
      doc.accountPolicy = ok({ MinPasswordLength: 14 });
    },
    expect: { status: 'PASS', evidence: { source: 'netusermodals', min_length: 14, rule: 'meets_policy' } },
  },
  {
    check: 'PASSWORD_POLICY',
    name: 'fail-standard-user-workstation-minimum-6',
    source:
      'kolide/launcher#580 (`net accounts` on a workstation: minimum length 6, lockout threshold Never, computer role WORKSTATION); completed: the run without administrator rights (secedit refused), the ADSI MinPasswordLength 6 (NetUserModalsGet, the value net accounts printed) and the other probe sections (the baseline machine)',
    description: "A workstation whose minimum is 6 characters, below the policy's 8, checked by a standard user",
    unusedCommands: [
      {
        argv: ['C:\\Windows\\System32\\net.exe', 'accounts'],
        stdout: [
          'Force user logoff how long after time expires?:       Never',
          'Minimum password age (days):                          0',
          'Maximum password age (days):                          42',
          'Minimum password length:                              6',
          'Length of password history maintained:                None',
          'Lockout threshold:                                    Never',
          'Lockout duration (minutes):                           30',
          'Lockout observation window (minutes):                 30',
          'Computer role:                                        WORKSTATION',
          'The command completed successfully.',
        ],
      },
    ],
    machine: (doc) => {
      doc.elevated = false;
      doc.secedit = ok({ ExitCode: 3, SystemAccess: [] });
      doc.accountPolicy = ok({ MinPasswordLength: 6 });
    },
    expect: { status: 'FAIL', evidence: { source: 'netusermodals', min_length: 6, required_min_length: 8, rule: 'min_length' } },
  },

  // ---- MALWARE_PROTECTION: Security Center and Get-MpComputerStatus as users pasted them ------------
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-bitdefender-registered-defender-off',
    source:
      'prakashchand72/All-Hack-Notes Red-Teaming-Stuffs/README.md (Get-CimInstance root/SecurityCenter2 AntivirusProduct: "Bitdefender Antivirus" productState 266240, "Windows Defender" productState 393472; Get-MpComputerStatus RealTimeProtectionEnabled False); completed: the other Get-MpComputerStatus values (the source printed RealTimeProtectionEnabled only; AMRunningMode set to Passive Mode, one of the values Defender reports beside another antivirus; the verdict does not rest on it) and the other probe sections (the baseline client)',
    description:
      'Bitdefender registered in Security Center, on and up to date; Defender off in Security Center and its real-time protection off',
    machine: (doc) => {
      doc.antivirusProducts = ok([
        { displayName: 'Bitdefender Antivirus', productState: 266240 },
        { displayName: 'Windows Defender', productState: 393472 },
      ]);
      defender(doc, { AMRunningMode: 'Passive Mode', RealTimeProtectionEnabled: false });
    },
    expect: { status: 'PASS', evidence: { source: 'wsc', rule: 'third_party_antivirus', product: 'Bitdefender Antivirus' } },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-defender-not-tamper-protected',
    source:
      'nickjeffrey/nagios_powershell_passive_check Get-Windows-Defender-Antivirus-Status.ps1 (the Get-MpComputerStatus output its author recorded: AMRunningMode Normal, AMServiceEnabled/AntivirusEnabled/RealTimeProtectionEnabled True, AntivirusSignatureAge 0, IsTamperProtected False, IsVirtualMachine True; DefenderSignaturesOutOfDate not printed by that platform, 4.18.2011.6); completed: the Security Center section (Defender on and up to date, 397568) and the other probe sections (the baseline client)',
    description:
      'A monitored virtual machine: Defender primary with real-time protection on and signatures from the same day, tamper protection off (recorded in the evidence, not a verdict)',
    machine: (doc) => defender(doc, { AntivirusSignatureAge: 0, IsTamperProtected: false, DefenderSignaturesOutOfDate: null }),
    expect: {
      status: 'PASS',
      evidence: {
        source: 'defender',
        rule: 'defender_active',
        defender: { mode: 'normal', rtp: true, signature_age_days: 0, tamper_protected: false },
      },
    },
  },
  {
    check: 'MALWARE_PROTECTION',
    name: 'pass-docs-example-before-running-mode',
    source:
      'MicrosoftDocs/windows-powershell-docs docset/winserver2022-ps/defender/Get-MpComputerStatus.md, Example 1 (platform 4.3.9463.0, 2013: AMServiceEnabled, AntivirusEnabled, RealTimeProtectionEnabled True, AntivirusSignatureAge 0; no AMRunningMode, DefenderSignaturesOutOfDate or IsTamperProtected on that platform); completed: the Security Center section (Defender on and up to date, 397568) and the other probe sections (the baseline client)',
    description:
      'A Defender platform older than AMRunningMode: the antivirus being enabled makes it the active one; real-time protection on, signatures current',
    machine: (doc) => {
      doc.defender = ok({
        AMRunningMode: null,
        AMServiceEnabled: true,
        AntivirusEnabled: true,
        RealTimeProtectionEnabled: true,
        AntivirusSignatureAge: 0,
        DefenderSignaturesOutOfDate: null,
        IsTamperProtected: null,
      });
    },
    expect: {
      status: 'PASS',
      evidence: {
        source: 'defender',
        rule: 'defender_active',
        defender: { mode: null, rtp: true, signature_age_days: 0, tamper_protected: null },
      },
    },
  },
];

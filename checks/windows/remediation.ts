// What each Windows verdict means and what to do (checks/remediation.ts explains the catalogue).
// Settings moved between Windows 10 and 11; the steps name both where they differ.
import type { CheckKey } from '../../src/protocol/schemas';
import {
  duration,
  maxIdle,
  maxSignatureAge,
  minLength,
  num,
  passing,
  releaseRemedies,
  word,
  requires,
  sharedRemedies,
  type PlatformCatalogue,
  type SharedWord,
  type RemedyContext,
  type Variant,
} from '../remediation';
import type { checks } from './index';

/** The words this platform's shared entries explain for every check. */
type Shared = SharedWord | 'not_available' | 'unexpected_value';
/** One check's entries: exactly the words it returns that the shared entries do not explain. */
type Entries<K extends CheckKey> = PlatformCatalogue<typeof checks, Shared>['checks'][K];

const windows11 = (c: RemedyContext) => /^windows-11/.test(c.os.product ?? '');
const windows10 = (c: RemedyContext) => /^windows-10/.test(c.os.product ?? '');
const settings = (eleven: string, ten: string): readonly Variant[] => [
  { for: 'Windows 11', applies: windows11, steps: eleven },
  { for: 'Windows 10', applies: windows10, steps: ten },
];

const SERVICE = 'the device-agent Windows service (runs as LocalSystem)';
const UNDECIDED = 'Nothing to change; tell your IT team if it persists.';

const bitlockerFix = settings(
  'Settings > Privacy & security > Device encryption (Home) or Control Panel > System and Security > BitLocker Drive Encryption > Turn on BitLocker (Pro, Enterprise).',
  'Control Panel > System and Security > BitLocker Drive Encryption > Turn on BitLocker (Home: Settings > Update & Security > Device encryption).',
);
const bitlockerAdmin =
  'Intune: Endpoint security > Disk encryption > BitLocker profile ("Require Device Encryption", silent encryption with TPM, recovery key escrow to Entra ID); GPO: Computer Configuration > Administrative Templates > Windows Components > BitLocker Drive Encryption, then `manage-bde -on C: -RecoveryPassword` from a script.';

const diskEncryption: Entries<'DISK_ENCRYPTION'> = {
  protected: passing('BitLocker protects the system drive.'),
  in_progress_accepted: passing('BitLocker is encrypting the system drive, which your organization accepts until it finishes.'),
  decrypted: {
    summary: 'The system drive is not encrypted: BitLocker is off, so anyone with the disk can read its data.',
    fix: bitlockerFix,
    admin: bitlockerAdmin,
  },
  protection_off: {
    summary: 'The system drive is encrypted but BitLocker protection is off, so the key sits unprotected on the disk.',
    fix: 'Control Panel > BitLocker Drive Encryption > Turn on BitLocker (it adds a protector), or in an administrator terminal: `manage-bde -protectors -add C: -TPM`.',
    admin: bitlockerAdmin,
  },
  suspended: {
    summary:
      'BitLocker protection is suspended on the system drive (often left so after an update), so the drive is readable without unlocking.',
    fix: 'Control Panel > BitLocker Drive Encryption > Resume protection, or in an administrator terminal: `manage-bde -protectors -enable C:`.',
    admin:
      'Resume protection with `Resume-BitLocker -MountPoint C:` from Intune (remediation script) or your RMM; check that updaters suspend with a reboot count.',
  },
  decrypting: {
    summary: 'BitLocker is being turned off and the system drive is being decrypted.',
    fix: bitlockerFix,
    admin: `Someone turned BitLocker off: ${bitlockerAdmin}`,
  },
  in_progress: {
    summary: (c) => {
      const os = c.evidence.os_volume as Record<string, unknown> | undefined;
      const percent = typeof os?.percent === 'number' ? os.percent : undefined;
      return `BitLocker is still encrypting the system drive${percent !== undefined ? ` (${percent}% done)` : ''}.`;
    },
    fix: 'Keep the computer on and plugged in until encryption finishes.',
    admin: 'Wait for the conversion; policy `diskEncryption.inProgress: PASS` counts it as compliant.',
  },
  not_supported_by_edition: {
    summary: 'This Windows edition has no BitLocker, and Device encryption is not available on this hardware.',
    fix: 'Ask your IT team: an upgrade to Windows Pro (Settings > System > Activation) adds BitLocker.',
    admin:
      'Upgrade these devices to Pro/Enterprise (subscription activation), or replace hardware that cannot do Device encryption (no TPM 2.0/Modern Standby).',
  },
  fixed_data_volume_unprotected: {
    summary: 'The system drive is protected, but another fixed drive in this computer is not encrypted.',
    fix: 'Control Panel > BitLocker Drive Encryption > Fixed data drives > Turn on BitLocker (choose "Automatically unlock").',
    admin:
      'Intune BitLocker profile: "Fixed data-drive settings" require encryption; or `Enable-BitLocker -MountPoint D: -RecoveryPasswordProtector` then `Enable-BitLockerAutoUnlock`. Policy `diskEncryption.scope: root` judges the system drive only.',
  },
  fixed_data_volume_undetermined: {
    summary: 'The state of another fixed drive could not be read, so the agent cannot tell whether every drive is encrypted.',
    fix: UNDECIDED,
    admin: `Run the agent as ${SERVICE}; the Win32_EncryptableVolume class must answer for every fixed drive.`,
  },
  os_volume_not_found: {
    summary: 'The agent could not find which drive holds Windows.',
    fix: UNDECIDED,
    admin: 'Win32_EncryptableVolume listed no volume (or several) for the system drive: report the storage layout with the agent version.',
  },
  method_failed: {
    summary: "Windows did not answer the agent's question about BitLocker.",
    fix: UNDECIDED,
    admin: `A Win32_EncryptableVolume method returned an error: run the agent as ${SERVICE}, and check \`manage-bde -status\` on the device.`,
  },
  protection_status_unknown: {
    summary: 'The drive is locked, so Windows cannot say whether BitLocker protects it.',
    fix: 'Unlock the drive, then wait for the next check.',
    admin: 'ProtectionStatus 2 (unknown) is reported for a locked volume: judge it again when unlocked.',
  },
};

const lockFix = settings(
  'Settings > Accounts > Sign-in options > "If you\'ve been away, when should Windows require you to sign in again?" When PC wakes up from sleep; Settings > System > Power & battery > Screen and sleep within the required time. Press Windows+L to lock at once.',
  'Settings > Accounts > Sign-in options > "Require sign-in" When PC wakes up from sleep; Settings > Personalization > Lock screen > Screen saver settings: a screen saver, "On resume, display logon screen", within the required time.',
);
const lockAdmin = (c: RemedyContext) =>
  `GPO: Computer Configuration > Windows Settings > Security Settings > Local Policies > Security Options > "Interactive logon: Machine inactivity limit" ${maxIdle(c) ?? 900} seconds; Intune: Settings catalog "Local Policies Security Options > Interactive Logon Machine Inactivity Limit" (or Device restrictions > Password > "Maximum minutes of inactivity until screen locks").`;

const screenLock: Entries<'SCREEN_LOCK'> = {
  machine_inactivity_limit: passing(
    (c) =>
      `Windows locks after ${num(c, 'inactivity_timeout_secs') !== undefined ? duration(num(c, 'inactivity_timeout_secs')!) : 'a short time'} of inactivity (machine policy).`,
  ),
  secure_screensaver: passing('A password-protected screen saver locks the screen when idle.'),
  sleep_lock: passing('The computer sleeps when idle and asks for sign-in when it wakes.'),
  user_without_lock: {
    summary: (c) =>
      `At least one user's screen does not lock by itself within ${maxIdle(c) !== undefined ? duration(maxIdle(c)!) : 'the required time'}${num(c, 'users_evaluated') !== undefined ? ` (${num(c, 'users_compliant') ?? 0} of ${num(c, 'users_evaluated')} users comply)` : ''}.`,
    fix: lockFix,
    admin: lockAdmin,
  },
  undetermined_user_settings: {
    summary: 'The screen-lock settings of some users could not be read.',
    fix: lockFix,
    admin: (c) => `${lockAdmin(c)} A machine inactivity limit decides without reading per-user settings.`,
  },
  no_user_hive: {
    summary: "No user's settings are loaded (nobody is signed in), so the per-user screen-lock settings cannot be read.",
    fix: 'Nothing to change; the next check after you sign in decides.',
    admin: lockAdmin,
  },
};

const firewallFix = [
  ...settings(
    'Start > Windows Security > Firewall & network protection: turn Microsoft Defender Firewall on for Domain, Private and Public networks.',
    'Start > Windows Security > Firewall & network protection: turn Windows Defender Firewall on for Domain, Private and Public networks.',
  ),
  {
    for: 'Command (administrator)',
    steps: '`Set-NetFirewallProfile -Profile Domain,Private,Public -Enabled True -DefaultInboundAction Block`',
  },
];
const firewallAdmin =
  'Intune: Endpoint security > Firewall > Windows Firewall profile (enable all three profiles, default inbound action Block); GPO: Computer Configuration > Windows Settings > Security Settings > Windows Defender Firewall with Advanced Security > Properties: Firewall state On, Inbound connections Block, for each profile.';

const firewall: Entries<'FIREWALL_ENABLED'> = {
  all_profiles_enabled: passing('Windows Firewall is on for every network profile and blocks unsolicited incoming connections.'),
  third_party_firewall: passing('Another firewall product, registered with Windows Security, protects this computer.'),
  profile_disabled: {
    summary: (c) => {
      const profiles = c.evidence.profiles as Record<string, unknown> | undefined;
      const off = profiles ? ['domain', 'private', 'public'].filter((p) => profiles[p] === false) : [];
      return `Windows Firewall is off for ${off.length ? `the ${off.join(', ')} network profile${off.length > 1 ? 's' : ''}` : 'a network profile'}.`;
    },
    fix: firewallFix,
    admin: firewallAdmin,
  },
  default_inbound_allow: {
    summary: 'Windows Firewall is on but one network profile allows every incoming connection by default.',
    fix: [{ for: 'Command (administrator)', steps: '`Set-NetFirewallProfile -Profile Domain,Private,Public -DefaultInboundAction Block`' }],
    admin: firewallAdmin,
  },
  service_not_running: {
    summary: 'The Windows Defender Firewall service (mpssvc) is not running, so no firewall rule applies.',
    fix: 'Ask your IT team: the firewall service must run (it cannot be started from Settings once disabled).',
    admin: 'Set the mpssvc service back to Automatic (GPO: System Services > Windows Defender Firewall: Automatic) and reboot.',
  },
  third_party_state_unknown: {
    summary: 'Windows Firewall is off and another firewall product is registered, but its state could not be read.',
    fix: UNDECIDED,
    admin:
      "Security Center lists a third-party firewall whose state is not readable: check the product's own console, or turn Windows Firewall on.",
  },
};

const timeSync: Entries<'TIME_SYNC'> = {
  synchronized: passing('Windows Time keeps the clock synchronised with its time source.'),
  not_synchronized: {
    summary: 'Windows Time is configured, but the clock is not synchronised with any time source.',
    fix: [
      ...settings('Settings > Time & language > Date & time: "Sync now".', 'Settings > Time & Language > Date & time: "Sync now".'),
      {
        for: 'Command (administrator)',
        steps: '`w32tm /resync`, then `w32tm /query /status` should show a source other than "Local CMOS Clock".',
      },
    ],
    admin:
      "Make sure the configured time source answers (UDP 123 from the device; domain members need a reachable domain controller) and that W32Time runs: `w32tm /query /peers` on the device shows each peer's state.",
  },
  local_clock: {
    summary: 'The clock runs on its own hardware clock ("Local CMOS Clock") instead of a network time source, so it drifts.',
    fix: 'Ask your IT team; in an administrator terminal `w32tm /config /syncfromflags:manual /manualpeerlist:time.windows.com /update` then `w32tm /resync` points a standalone computer at a time server.',
    admin:
      'On the forest-root PDC emulator configure an external source (`w32tm /config /manualpeerlist:<ntp servers> /syncfromflags:manual /reliable:yes /update`); other machines: GPO "Configure Windows NTP Client" with a reachable NtpServer.',
  },
  sync_stale: {
    summary: (c) =>
      `The clock last synchronised with its time source ${num(c, 'last_sync_age_s') !== undefined ? `${Math.round(num(c, 'last_sync_age_s')! / 86_400)} days ago` : 'too long ago'}, so it may have drifted.`,
    fix: [
      ...settings('Settings > Time & language > Date & time: "Sync now".', 'Settings > Time & Language > Date & time: "Sync now".'),
      { for: 'Command (administrator)', steps: '`w32tm /resync`' },
    ],
    admin:
      'The time source has not answered for days: check that the device reaches it (UDP 123, or the domain controller) and that W32Time starts (its trigger start on workgroup machines).',
  },
  offset_too_large: {
    summary: (c) =>
      `The clock is ${num(c, 'offset_s') !== undefined ? `${Math.abs(num(c, 'offset_s')!)} seconds` : 'too far'} off its time source${requires(num(c, 'max_offset_s') !== undefined ? `${num(c, 'max_offset_s')} seconds or less` : undefined)}.`,
    fix: 'In an administrator terminal: `w32tm /resync /force`.',
    admin: 'Check the time source and the path to it; `w32tm /stripchart /computer:<source>` from the device shows the offset.',
  },
  no_sync_record: {
    summary: 'The agent found no record of a recent time synchronisation and Windows Time could not report its state, so it cannot decide.',
    fix: UNDECIDED,
    admin:
      'Run the agent as the service (LocalSystem), which can query W32Time, and make sure the System log keeps Time-Service events (IDs 35/37).',
  },
  no_sync: {
    summary: 'Windows Time is set not to synchronise the clock (type NoSync).',
    fix: [
      ...settings(
        'Settings > Time & language > Date & time: "Set time automatically" on, then "Sync now".',
        'Settings > Time & Language > Date & time: "Set time automatically" on, then "Sync now".',
      ),
      { for: 'Command (administrator)', steps: '`w32tm /config /syncfromflags:manual /manualpeerlist:time.windows.com /update`' },
    ],
    admin:
      'GPO: Administrative Templates > System > Windows Time Service > Time Providers: "Configure Windows NTP Client" (Type NTP, NtpServer) and "Enable Windows NTP Client"; domain members use NT5DS.',
  },
  service_disabled: {
    summary: 'The Windows Time service is disabled, so the clock is never synchronised.',
    fix: 'Ask your IT team, or in an administrator terminal: `Set-Service W32Time -StartupType Automatic; Start-Service W32Time`.',
    admin: 'GPO: System Services > Windows Time: Automatic (or Manual with its trigger).',
  },
  service_not_installed: {
    summary: 'The Windows Time service is not installed.',
    fix: 'Ask your IT team.',
    admin: 'Re-register it: `w32tm /register` and set W32Time to start automatically.',
  },
  ntp_client_disabled: {
    summary: 'The Windows NTP client is turned off, so the clock is not synchronised.',
    fix: 'Ask your IT team.',
    admin:
      'GPO: Windows Time Service > Time Providers > "Enable Windows NTP Client": Enabled (registry W32Time\\TimeProviders\\NtpClient Enabled = 1).',
  },
  no_ntp_server: {
    summary: 'Windows Time is set to use NTP but no time server is configured.',
    fix: 'In an administrator terminal: `w32tm /config /manualpeerlist:time.windows.com /syncfromflags:manual /update`.',
    admin: 'Set NtpServer in "Configure Windows NTP Client" (GPO) or Intune Settings catalog "Time Provider > Ntp Server".',
  },
  nt5ds_without_domain: {
    summary: 'Windows Time is set to follow a domain controller, but this computer is not in a domain.',
    fix: 'Settings > Time & language > Date & time: "Set time automatically" on.',
    admin:
      'A leftover domain time setting: set Type NTP with a server (GPO or `w32tm /config /syncfromflags:manual /manualpeerlist:<server> /update`).',
  },
  not_configured: {
    summary: 'Windows Time has no synchronisation type configured.',
    fix: UNDECIDED,
    admin: 'Configure the NTP client explicitly (GPO "Configure Windows NTP Client").',
  },
};

const windowsUpdateFix = settings(
  'Settings > Windows Update: "Check for updates", install what is offered and restart.',
  'Settings > Update & Security > Windows Update: "Check for updates", install what is offered and restart.',
);
const patchTableAdmin =
  "The agent's table of Windows update release dates (checks/windows/updateHistory.ts) does not cover this: update the agent, or unset `osVersion.maxPatchAgeDays.WINDOWS` until it does.";

const installedTableAdmin =
  "The agent's table of Windows update release dates (checks/windows/updateHistory.ts) does not cover this: update the agent.";

const osVersion: Entries<'OS_VERSION'> = {
  ...releaseRemedies<keyof Entries<'OS_VERSION'>>(
    [
      ...settings(
        'Settings > Windows Update: "Check for updates" and install them (a feature update appears as "Download and install").',
        'Settings > Update & Security > Windows Update: "Check for updates"; Windows 10 support has ended: upgrade to Windows 11 if the PC is eligible.',
      ),
    ],
    'Intune: Windows Update for Business "Feature updates" profile targeting a supported release, plus a quality-update ring; WSUS/ConfigMgr: approve the feature update. Enroll in ESU (and set `osVersion.acceptExtendedSupport.windowsEsu`) only for devices that cannot upgrade.',
  ),
  patch_too_old: {
    summary: (c) => {
      const released = word(c, 'patch_released') ?? word(c, 'patch_released_before');
      const limit = num(c, 'max_patch_age_days');
      return `The newest Windows update installed here${released ? ` was released ${word(c, 'patch_released') ? 'on' : 'by'} ${released}` : ' is old'}, longer ago than your organization allows${limit !== undefined ? ` (${limit} days)` : ''}.`;
    },
    fix: windowsUpdateFix,
    admin:
      'Intune: a Windows Update for Business quality-update ring with a short deferral and deadline (or Expedite quality updates); WSUS/ConfigMgr: approve and deploy the latest cumulative update. On Windows 10 with ESU accepted, a device stuck at the October 2025 update is not enrolled in ESU.',
  },
  patch_table_outdated: {
    summary: "The agent cannot tell when this device's Windows update was released: it is newer than every update the agent knows.",
    fix: UNDECIDED,
    admin: patchTableAdmin,
  },
  patch_date_undetermined: {
    summary:
      "The agent cannot tell exactly when this device's Windows update was released, and the limit falls between the dates it could be.",
    fix: UNDECIDED,
    admin: `The UBR is not listed (a hotpatch or an update the table skipped) and its neighbours straddle the limit. ${patchTableAdmin}`,
  },
  patch_line_not_in_table: {
    summary: 'The agent does not know the release dates of the updates for this Windows release, so it cannot judge its patch level.',
    fix: UNDECIDED,
    admin: patchTableAdmin,
  },
  ubr_missing: {
    summary: 'The agent could not read the patch level (UBR) of this Windows installation.',
    fix: UNDECIDED,
    admin:
      'HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion has no UBR value: check the registry is intact (`Get-ItemProperty` on that key), or unset `osVersion.maxPatchAgeDays.WINDOWS`.',
  },
};

const wuAdmin =
  'GPO: Administrative Templates > Windows Components > Windows Update > "Configure Automatic Updates": Enabled, 4 – Auto download and schedule the install; Intune: Update rings "Automatic update behavior": Auto install at maintenance time / Reset to default. Policy `autoUpdate.acceptDownloadOnly` accepts download-only.';
const wuFix = settings(
  'Settings > Windows Update > Advanced options: "Get me up to date" and "Receive updates for other Microsoft products" on; updates then install automatically.',
  'Settings > Update & Security > Windows Update > Advanced options: "Automatically download updates, even over metered data connections" on.',
);

const autoUpdate: Entries<'AUTO_UPDATE'> = {
  automatic_install: passing('Windows Update downloads and installs updates automatically.'),
  default: passing('Windows Update runs with its default, which downloads and installs updates automatically.'),
  download_only_accepted: passing('Windows Update downloads updates and installs them on request, which your organization accepts.'),
  notify_before_download: {
    summary: 'Windows Update only notifies before downloading: updates wait until someone installs them.',
    fix: wuFix,
    admin: wuAdmin,
  },
  download_only: {
    summary: 'Windows Update downloads updates but waits for someone to install them.',
    fix: wuFix,
    admin: wuAdmin,
  },
  no_auto_update: {
    summary: 'Automatic updates are turned off by policy (NoAutoUpdate).',
    fix: 'Ask your IT team: the setting comes from a policy.',
    admin: `Remove NoAutoUpdate = 1 (HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate\\AU). ${wuAdmin}`,
  },
  csp_auto_update_off: {
    summary: 'Automatic updates are turned off by your MDM (Update/AllowAutoUpdate = 5).',
    fix: 'Ask your IT team: the setting comes from device management.',
    admin: 'Set the Update/AllowAutoUpdate CSP to 1–4 (Intune update ring "Automatic update behavior"), not 5 (turn off).',
  },
  wuauserv_disabled: {
    summary: 'The Windows Update service is disabled, so no update is ever installed.',
    fix: 'Ask your IT team, or in an administrator terminal: `Set-Service wuauserv -StartupType Manual`.',
    admin: 'GPO: System Services > Windows Update: Manual (trigger start); remove tools that disable it.',
  },
  usosvc_disabled: {
    summary: 'The Update Orchestrator service is disabled, so updates are not scheduled or installed.',
    fix: 'Ask your IT team.',
    admin: 'Set UsoSvc back to Automatic (Delayed Start); it cannot be safely disabled on Windows 10/11.',
  },
  wuauserv_not_installed: {
    summary: 'The Windows Update service is missing from this computer.',
    fix: 'Ask your IT team.',
    admin: 'A stripped image without wuauserv: repair it (DISM /RestoreHealth) or reinstall.',
  },
  local_admin_chooses: {
    summary: 'Windows Update is set to let the local administrator choose how updates install, so the agent cannot tell what happens.',
    fix: wuFix,
    admin: `AUOptions 5 delegates the choice: ${wuAdmin}`,
  },
  downloaded_not_installed: {
    summary: (c) =>
      `Windows Update downloads updates for you to install, which your organization accepts, but the security update of ${word(c, 'newer_update_released') ?? 'an earlier month'} is still not installed.`,
    fix: 'Settings > Windows Update: install what it offers and restart.',
    admin:
      'AUOptions 3 (download, notify for install) with `autoUpdate.acceptDownloadOnly`: installing by hand is accepted, but not an update left uninstalled longer than `autoUpdate.maxPendingDays`. Install the pending update on these devices, or set AUOptions 4 so they install by themselves.',
  },
  update_not_installed: {
    summary: (c) =>
      `Windows Update is set to install updates, but the security update of ${word(c, 'newer_update_released') ?? 'an earlier month'} is still not installed.`,
    fix: 'Settings > Windows Update: "Check for updates", install what it offers and restart. If it fails, ask your IT team.',
    admin:
      'The device installs no monthly cumulative update although its settings allow it: check Windows Update history and errors (`Get-WindowsUpdateLog`), WSUS/Intune approvals and deferrals, free disk space and pending restarts. Policy `autoUpdate.maxPendingDays` sets how long an update may wait.',
  },
  patch_table_outdated: {
    summary: 'The agent cannot tell whether a newer Windows update is waiting: its list of updates ends too long ago.',
    fix: UNDECIDED,
    admin: installedTableAdmin,
  },
  update_line_not_in_table: {
    summary: 'The agent does not know the updates of this Windows release, so it cannot tell whether they install.',
    fix: UNDECIDED,
    admin: installedTableAdmin,
  },
  ubr_missing: {
    summary: 'The agent could not read the patch level (UBR) of this Windows installation, so it cannot tell whether updates install.',
    fix: UNDECIDED,
    admin:
      'HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion has no UBR value: check the registry is intact (`Get-ItemProperty` on that key).',
  },
  unrecognized_version: {
    summary: 'The agent could not read which Windows build is installed, so it cannot tell whether updates install.',
    fix: UNDECIDED,
    admin: 'HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion lacks CurrentBuild: check the registry is intact.',
  },
};

const passwordAdmin = (c: RemedyContext) =>
  `GPO: Computer Configuration > Windows Settings > Security Settings > Account Policies > Password Policy: "Minimum password length" ${minLength(c) ?? 8} and "Password must meet complexity requirements" Enabled; Intune: Settings catalog "Device Lock" or Account Protection policy; domain accounts follow the domain's Default Domain Policy.`;
const passwordFix =
  'Ask your IT team: password rules are set by an administrator (Local Security Policy > Account Policies > Password Policy on a standalone computer).';

const passwordPolicy: Entries<'PASSWORD_POLICY'> = {
  meets_policy: passing("Windows requires passwords that meet your organization's length and complexity rules."),
  min_length: {
    summary: (c) =>
      `Windows accepts passwords of ${num(c, 'min_length') ?? 'only a few'} characters${requires(minLength(c) !== undefined ? `at least ${minLength(c)}` : undefined)}.`,
    fix: passwordFix,
    admin: passwordAdmin,
  },
  complexity: {
    summary: 'Windows does not require complex passwords (a mix of character types), which your organization requires.',
    fix: passwordFix,
    admin: passwordAdmin,
  },
  complexity_unknown: {
    summary: 'The password complexity setting could not be read.',
    fix: UNDECIDED,
    admin: `Run the agent as ${SERVICE}; \`secedit /export\` needs administrator rights.`,
  },
  directory_managed: {
    summary: 'This computer signs in with Microsoft Entra ID accounts, whose password rules are set in the directory, not on the computer.',
    fix: 'Nothing to change on this computer.',
    admin:
      'Entra ID password rules apply to these accounts (cloud password policy, Windows Hello for Business PIN complexity in Intune); the local policy does not decide.',
  },
};

const rdpFix = settings('Settings > System > Remote Desktop: off.', 'Settings > System > Remote Desktop: "Enable Remote Desktop" off.');
const remoteLogin: Entries<'REMOTE_LOGIN'> = {
  no_remote_login: passing('Remote Desktop and the SSH server are off.'),
  ssh_hardened: passing('The OpenSSH server runs but accepts keys only, which your organization allows.'),
  rdp_enabled: {
    summary: 'Remote Desktop is on, so others can sign in to this computer over the network.',
    fix: rdpFix,
    admin:
      'GPO: Administrative Templates > Windows Components > Remote Desktop Services > Remote Desktop Session Host > Connections > "Allow users to connect remotely…": Disabled; Intune: Settings catalog "Remote Desktop Services > Allow users to connect remotely": Disabled.',
  },
  rdp_listening: {
    summary: 'Remote Desktop is listening for connections from the network.',
    fix: rdpFix,
    admin: 'Disable Remote Desktop by policy (fDenyTSConnections = 1) and stop TermService where it is not needed.',
  },
  winrm_listening: {
    summary:
      'Windows Remote Management (WinRM) is listening for connections from the network, so others can run commands on this computer remotely.',
    fix: 'Ask your IT team; in an administrator terminal `Disable-PSRemoting -Force; Stop-Service WinRM; Set-Service WinRM -StartupType Disabled` turns it off.',
    admin:
      'GPO: Windows Components > Windows Remote Management > WinRM Service > "Allow remote server management through WinRM": Disabled (or limit its IPv4/IPv6 filters), and the service Disabled where nobody manages the machine remotely; Windows Server enables it by default.',
  },
  sshd_running: {
    summary: 'The OpenSSH server is running, so others can log in to this computer over the network.',
    fix: [
      ...settings(
        'Settings > System > Optional features: remove "OpenSSH Server".',
        'Settings > Apps > Optional features: remove "OpenSSH Server".',
      ),
      { for: 'Command (administrator)', steps: '`Stop-Service sshd; Set-Service sshd -StartupType Disabled`' },
    ],
    admin:
      'Remove the OpenSSH.Server capability (`Remove-WindowsCapability -Online -Name OpenSSH.Server~~~~0.0.1.0`), or allow hardened SSH with policy `remoteLogin.allowSshIfHardened` and `PasswordAuthentication no` in C:\\ProgramData\\ssh\\sshd_config.',
  },
  sshd_accepts_passwords: {
    summary: 'The OpenSSH server accepts password logins.',
    fix: 'Set `PasswordAuthentication no` in C:\\ProgramData\\ssh\\sshd_config and restart it: `Restart-Service sshd` (administrator).',
    admin: 'Deploy sshd_config with `PasswordAuthentication no` (Intune remediation script or GPO file preference).',
  },
};

const defenderFix = [
  ...settings(
    'Start > Windows Security > Virus & threat protection > Manage settings: "Real-time protection" on; "Protection updates" > Check for updates.',
    'Start > Windows Security > Virus & threat protection > Virus & threat protection settings > Manage settings: "Real-time protection" on.',
  ),
  { for: 'Command (administrator)', steps: '`Set-MpPreference -DisableRealtimeMonitoring $false; Update-MpSignature`' },
];
const defenderAdmin =
  'Intune: Endpoint security > Antivirus > Microsoft Defender Antivirus ("Allow Realtime Monitoring", signature update interval); GPO: Administrative Templates > Windows Components > Microsoft Defender Antivirus > Real-time Protection: "Turn off real-time protection" Disabled. Turn on Tamper Protection so users cannot switch it off.';

const malwareProtection: Entries<'MALWARE_PROTECTION'> = {
  defender_active: passing('Microsoft Defender Antivirus is on, with real-time protection and current signatures.'),
  third_party_antivirus: passing('Another antivirus product, registered with Windows Security, is on and up to date.'),
  security_center_antivirus: passing('Microsoft antivirus is on and up to date according to Windows Security.'),
  defender_disabled: {
    summary: 'Microsoft Defender Antivirus is turned off and no other antivirus is active.',
    fix: defenderFix,
    admin: defenderAdmin,
  },
  realtime_protection_off: {
    summary: "Microsoft Defender's real-time protection is off, so files are not scanned as they are opened.",
    fix: defenderFix,
    admin: defenderAdmin,
  },
  signatures_out_of_date: {
    summary: (c) => {
      const defender = c.evidence.defender as Record<string, unknown> | undefined;
      const age = typeof defender?.signature_age_days === 'number' ? defender.signature_age_days : undefined;
      return `The antivirus signatures are out of date${age !== undefined ? ` (${age} days old)` : ''}${requires(maxSignatureAge(c) !== undefined ? `at most ${maxSignatureAge(c)} days` : undefined)}.`;
    },
    fix: [
      { for: 'Windows Security', steps: 'Virus & threat protection > Protection updates > Check for updates (or `Update-MpSignature`).' },
    ],
    admin:
      'Let devices reach Microsoft Update or your WSUS/file share for definitions; Intune/GPO "Signature update interval" (hours) and "Define the order of sources for downloading definition updates".',
  },
  no_active_antivirus: {
    summary: 'No antivirus product is active on this computer.',
    fix: defenderFix,
    admin: defenderAdmin,
  },
  defender_not_primary: {
    summary: 'Microsoft Defender runs in passive mode (another product is meant to protect), but that product could not be found.',
    fix: UNDECIDED,
    admin:
      "Security Center is not available (Windows Server?) and Defender is passive: check the third-party product's console, or make Defender active (`ForceDefenderPassiveMode` = 0).",
  },
  product_state_undecodable: {
    summary: 'Windows Security reported an antivirus state the agent cannot decode.',
    fix: UNDECIDED,
    admin:
      "The productState of a registered antivirus has an unknown layout: check the product's console; report the product name with the agent version.",
  },
  unexpected_running_mode: {
    summary: 'Microsoft Defender reported a running mode the agent does not know.',
    fix: UNDECIDED,
    admin: '`Get-MpComputerStatus` AMRunningMode has a value this agent does not know: update the agent.',
  },
};

export const windowsRemediation: PlatformCatalogue<typeof checks, Shared> = {
  platform: 'WINDOWS',
  shared: {
    ...sharedRemedies({
      service: `${SERVICE} (\`sc.exe query device-agent\`)`,
      elevated: 'an administrator terminal: `device-agent check`',
    }),
    not_available: {
      summary: 'The Windows component the agent reads for this check is not available on this computer.',
      fix: UNDECIDED,
      admin:
        'A WMI class or namespace is missing (Windows Server without the feature, a stripped image): install the feature (e.g. BitLocker on Server) or accept UNKNOWN.',
    },
    unexpected_value: {
      summary: 'Windows reported a setting value the agent does not know, so it cannot decide.',
      fix: UNDECIDED,
      admin:
        'A registry or WMI value is outside what the check knows (evidence `value` names which): check it on the device; update the agent.',
    },
  },
  checks: {
    DISK_ENCRYPTION: diskEncryption,
    SCREEN_LOCK: screenLock,
    FIREWALL_ENABLED: firewall,
    TIME_SYNC: timeSync,
    OS_VERSION: osVersion,
    AUTO_UPDATE: autoUpdate,
    PASSWORD_POLICY: passwordPolicy,
    REMOTE_LOGIN: remoteLogin,
    MALWARE_PROTECTION: malwareProtection,
  },
};

// What each macOS verdict means and what to do (checks/remediation.ts explains the catalogue).
// System Settings replaced System Preferences in macOS 13; the steps name both where they differ.
import type { CheckKey } from '../../src/protocol/schemas';
import {
  duration,
  healthOf,
  majorVersion,
  maxGrace,
  maxIdle,
  minLength,
  num,
  passing,
  releaseRemedies,
  requires,
  sharedRemedies,
  sshRemedies,
  type PlatformCatalogue,
  type SharedWord,
  type Remedy,
  type RemedyContext,
  type Variant,
  word,
} from '../remediation';
import type { checks } from './index';

/** The words this platform's shared entries explain for every check. */
type Shared = SharedWord;
/** One check's entries: exactly the words it returns that the shared entries do not explain. */
type Entries<K extends CheckKey> = PlatformCatalogue<typeof checks, Shared>['checks'][K];

const ventura = (c: RemedyContext) => (majorVersion(c.os) ?? 0) >= 13;
const beforeVentura = (c: RemedyContext) => {
  const major = majorVersion(c.os);
  return major !== undefined && major < 13;
};
/** Steps in System Settings (macOS 13 and later) and System Preferences (macOS 12 and earlier). */
const settings = (modern: string, legacy: string): readonly Variant[] => [
  { for: 'macOS 13 and later', applies: ventura, steps: `Apple menu > System Settings > ${modern}` },
  { for: 'macOS 12 and earlier', applies: beforeVentura, steps: `Apple menu > System Preferences > ${legacy}` },
];

const UNDECIDED = 'Nothing to change; tell your IT team if it persists.';

const FDA =
  'Grant the agent Full Disk Access with a PPPC profile (Privacy Preferences Policy Control payload, `SystemPolicyAllFiles` for the device-agent binary) and run it as the launchd daemon (root).';

/** A Declarative Device Management software-update setting with a value other than AlwaysOn. */
const DDM_UNRECOGNIZED: Remedy = {
  summary:
    "Your organization's device management sets a software-update option to a value the agent does not recognise, so it cannot tell whether updates install by themselves.",
  fix: 'Nothing to change; tell your IT team.',
  admin:
    'The DDM declaration com.apple.configuration.softwareupdate.settings sets an automatic-update key to a value other than AlwaysOn (1). Set it to AlwaysOn, or update the agent if Apple added a value.',
};

const FDA_REQUIRED = {
  summary: 'macOS did not let the agent read this setting without Full Disk Access.',
  fix: 'Nothing to change; your IT team grants this access.',
  admin: FDA,
};

const diskEncryption: Entries<'DISK_ENCRYPTION'> = {
  filevault_on: passing('FileVault encrypts the startup disk.'),
  encryption_in_progress: {
    summary: (c) =>
      `FileVault is encrypting the startup disk${num(c, 'percent') !== undefined ? ` (${num(c, 'percent')}% done)` : ''}; until it finishes, part of the disk is readable.`,
    fix: 'Keep the Mac on power and awake until encryption finishes; progress shows in the FileVault settings.',
    admin: 'Nothing to push: wait for the conversion. Policy `diskEncryption.inProgress: PASS` counts encryption in progress as compliant.',
  },
  filevault_off: {
    summary: 'FileVault is off: the startup disk is not encrypted, so anyone with the Mac can read its data.',
    fix: settings(
      'Privacy & Security > FileVault > Turn On… (keep the recovery key somewhere safe, or let your organization escrow it).',
      'Security & Privacy > FileVault > Turn On FileVault…',
    ),
    admin:
      'Push a FileVault payload (com.apple.MCX.FileVault2 with `Enable = On`, `Defer = true`) plus FDERecoveryKeyEscrow so the personal recovery key is escrowed to your MDM.',
  },
  deferred: {
    summary: 'FileVault is set to turn on at the next login, and that has not happened yet.',
    fix: 'Log out and back in (or restart) and enter your password when macOS asks to enable FileVault.',
    admin:
      "The deferred enablement from the FileVault payload waits for the user's next login; `DeferForceAtUserLoginMaxBypassAttempts` limits how often it can be skipped.",
  },
  decrypting: {
    summary: (c) =>
      `FileVault is being turned off and the startup disk is being decrypted${num(c, 'percent') !== undefined ? ` (${num(c, 'percent')}% done)` : ''}.`,
    fix: settings(
      'Privacy & Security > FileVault > Turn On… again once decryption finishes.',
      'Security & Privacy > FileVault > Turn On FileVault…',
    ),
    admin:
      'Someone turned FileVault off: push the FileVault payload (and `dontAllowFDEDisable` in com.apple.MCX) so it cannot be turned off.',
  },
  restart_pending: {
    summary: 'FileVault is turned on but waits for a restart before it protects the startup disk; until then the disk is not encrypted.',
    fix: 'Restart the Mac (Apple menu > Restart…) and log in; FileVault then starts encrypting.',
    admin: 'Nothing to push: the Mac must restart. Send the MDM RestartDevice command, or give users a deadline to restart.',
  },
  unrecognized_output: {
    summary: 'The agent could not understand what macOS reported about FileVault.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: '`fdesetup status` printed lines this agent version does not know (a newer macOS). Update the agent.',
  },
};

const lockFix = settings(
  'Lock Screen: "Start Screen Saver when inactive" and "Turn display off when inactive" within the required time, "Require password after screen saver begins or display is turned off" Immediately.',
  'Security & Privacy > General: "Require password immediately after sleep or screen saver begins"; Desktop & Screen Saver > "Start after" and Battery/Energy Saver > "Turn display off after" within the required time.',
);
const lockAdmin =
  'Push com.apple.screensaver with `askForPassword = true`, `askForPasswordDelay = 0` and `idleTime` ≤ the limit in seconds (macOS 14 and later also honour the DDM declaration com.apple.configuration.passcode.settings with `MaximumInactivityInMinutes`).';

const screenLock: Entries<'SCREEN_LOCK'> = {
  within_limits: passing(
    (c) => `The screen locks by itself when the Mac is idle${maxIdle(c) !== undefined ? ` within ${duration(maxIdle(c)!)}` : ''}.`,
  ),
  lock_off: {
    summary: 'No password is required when the screen saver starts or the display sleeps, so the screen never locks by itself.',
    fix: lockFix,
    admin: lockAdmin,
  },
  grace_period: {
    summary: (c) =>
      `After the screen saver starts, the Mac stays unlocked for ${num(c, 'grace_seconds') !== undefined ? duration(num(c, 'grace_seconds')!) : 'too long'}${requires(maxGrace(c) !== undefined ? `${duration(maxGrace(c)!)} or less` : undefined)}.`,
    fix: lockFix,
    admin: lockAdmin,
  },
  idle_time: {
    summary: (c) => {
      const idle = num(c, 'screensaver_idle_seconds');
      return `Your screen locks after ${idle !== undefined ? duration(idle) : 'too long'} of inactivity${requires(maxIdle(c) !== undefined ? `${duration(maxIdle(c)!)} or less` : undefined)}.`;
    },
    fix: lockFix,
    admin: lockAdmin,
  },
  idle_time_unknown: {
    summary: 'The agent could not tell after how long the screen saver or display sleep starts, so it cannot decide.',
    fix: lockFix,
    admin: `${lockAdmin} A managed idleTime makes the check decide without reading per-user settings.`,
  },
  no_console_user: {
    summary:
      'Nobody is logged in at the Mac now; the screen-lock settings are per user and are read at the next check with someone logged in.',
    fix: 'Nothing to change.',
    admin:
      'Normal at the login window; the next cycle with a console user decides. A managed com.apple.screensaver payload applies to every user.',
  },
};

const firewallFix = settings('Network > Firewall: turn it on.', 'Security & Privacy > Firewall > Turn On Firewall.');
const firewall: Entries<'FIREWALL_ENABLED'> = {
  firewall_on: passing('The macOS application firewall is on.'),
  firewall_off: {
    summary: 'The macOS firewall is off, so any app can accept incoming connections.',
    fix: [...firewallFix, { for: 'Command', steps: '`sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setglobalstate on`' }],
    admin: 'Push com.apple.security.firewall with `EnableFirewall = true` (optionally `EnableStealthMode`, `BlockAllIncoming`).',
  },
  managed_refused: {
    summary: 'The firewall is managed by a configuration profile and macOS did not report whether it is on.',
    fix: 'Nothing to change; tell your IT team.',
    admin:
      '`socketfilterfw --getglobalstate` answered "Firewall settings cannot be modified from command line on managed Mac computers." instead of the state. A profile\'s `EnableFirewall` (evidence `enable_firewall`) asks for the firewall but does not show it on, so it does not decide. Check the state on the device (`socketfilterfw --getglobalstate` as root) and report the macOS version with this answer.',
  },
};

const timeSync: Entries<'TIME_SYNC'> = {
  offset_within_limit: passing(
    (c) =>
      `The Mac sets its clock automatically and was ${num(c, 'offset_s') !== undefined ? `${Math.abs(num(c, 'offset_s')!)} seconds` : 'within the limit'} off the time server when measured${num(c, 'max_offset_s') !== undefined ? ` (limit ${num(c, 'max_offset_s')} seconds)` : ''}.`,
  ),
  network_time_off: {
    summary: 'The Mac does not set its clock automatically, so it can drift and break logins and certificates.',
    fix: [
      ...settings('General > Date & Time: "Set time and date automatically" on.', 'Date & Time: "Set date and time automatically" on.'),
      { for: 'Command', steps: '`sudo systemsetup -setusingnetworktime on`' },
    ],
    admin:
      "Push com.apple.MCX with `timeServer` and `timeZone` and turn network time on (`systemsetup -setusingnetworktime on` from your MDM's script runner).",
  },
  offset: {
    summary: (c) =>
      `The clock is ${num(c, 'offset_s') !== undefined ? `${Math.abs(num(c, 'offset_s')!)} seconds` : 'too far'} off the time server${requires(num(c, 'max_offset_s') !== undefined ? `${num(c, 'max_offset_s')} seconds or less` : undefined)}.`,
    fix: 'Turn "Set time and date automatically" off and on again (General > Date & Time), or run `sudo sntp -sS time.apple.com`.',
    admin: 'Check that the Macs reach the time server (UDP 123) set in com.apple.MCX `timeServer`.',
  },
  offset_unknown: {
    summary: "chrony is synchronised, but it did not report the clock's offset, which your organization checks.",
    fix: UNDECIDED,
    admin:
      '`chronyc -n tracking` printed no "System time" line: update chrony, or unset `timeSync.maxOffsetSeconds` to let its synchronised state decide.',
  },
  time_server_unreachable: {
    summary: (c) => {
      const why: Record<string, string> = {
        timeout: 'it did not answer',
        dns_lookup_failure: 'its name could not be looked up (DNS)',
        kiss_of_death: 'it refused the request (kiss of death)',
      };
      const reason = why[word(c, 'sntp_error') ?? ''];
      return `Network time is on, but the agent could not measure the clock against the time server${reason ? `: ${reason}` : ''}, so it cannot tell whether the clock is right.`;
    },
    fix: 'Check the network connection; if the Mac is on a network that blocks time servers, tell your IT team. `sntp time.apple.com` shows whether a time server answers.',
    admin:
      'The Mac must reach its configured time server (`systemsetup -getnetworktimeserver`, com.apple.MCX `timeServer`) over UDP 123, and resolve its name: open UDP 123 to it, or set a server the network allows.',
  },
  time_server_unknown: {
    summary: 'Network time is on, but the agent could not read which time server the Mac uses, so it could not measure the clock.',
    fix: UNDECIDED,
    admin:
      'The offset is measured against `systemsetup -getnetworktimeserver`, which needs root (and Full Disk Access on recent macOS) and a server name of letters, digits, dots, colons and dashes: run the agent as the launchd daemon (root) and set a plain server name.',
  },
  chrony_synchronized: passing("chrony keeps the Mac's clock synchronised with a network time server."),
  chrony_unsynchronized: {
    summary: 'The Mac does not set its time automatically, and chrony, which runs instead, is not synchronised with a time server.',
    fix: [
      ...settings('General > Date & Time: "Set time and date automatically" on.', 'Date & Time: "Set date and time automatically" on.'),
      {
        for: 'Or keep chrony',
        steps: '`chronyc sources` shows whether its servers answer; fix the `server`/`pool` lines of its configuration.',
      },
    ],
    admin:
      "Either turn network time back on (`systemsetup -setusingnetworktime on` from the MDM's script runner) or make chrony's servers reachable (UDP 123).",
  },
  full_disk_access_required: FDA_REQUIRED,
};

const osUpgrade: Remedy['fix'] = [
  ...settings(
    'General > Software Update: install the offered update or upgrade.',
    'Software Update: install the offered update or upgrade.',
  ),
  { for: 'Command', steps: '`softwareupdate --list`, then `sudo softwareupdate --install --all --restart`' },
];
const osUpgradeAdmin =
  'Use DDM software update enforcement (com.apple.configuration.softwareupdate.enforcement.specific with `TargetOSVersion` and `TargetLocalDateTime`) or the MDM ScheduleOSUpdate command; replace Macs that cannot run a supported macOS.';

const osVersion: Entries<'OS_VERSION'> = releaseRemedies<keyof Entries<'OS_VERSION'>>(osUpgrade, osUpgradeAdmin);

const KEY_LABELS: Record<string, string> = {
  AutomaticCheckEnabled: 'Check for updates',
  AutomaticDownload: 'Download new updates when available',
  AutomaticallyInstallMacOSUpdates: 'Install macOS updates',
  CriticalUpdateInstall: 'Install Security Responses and system files',
  ConfigDataInstall: 'Install Security Responses and system files',
  AutomaticallyInstallAppUpdates: 'Install application updates from the App Store',
};

/** "macOS 15.7.9 (released 2026-08-06)": the release the Mac lacks, from AUTO_UPDATE's evidence. */
const newestRelease = (c: RemedyContext) =>
  word(c, 'latest')
    ? `macOS ${word(c, 'latest')}${word(c, 'latest_released') ? ` (released ${word(c, 'latest_released')})` : ''}`
    : 'A newer macOS update';
const installed = (c: RemedyContext) => (word(c, 'installed_version') ? `macOS ${word(c, 'installed_version')}` : 'this Mac');
const installUpdate: Remedy['fix'] = [
  ...settings(
    'General > Software Update: install the update it offers, then restart.',
    'Software Update: install the update it offers, then restart.',
  ),
  { for: 'Command', steps: '`softwareupdate --list`, then `sudo softwareupdate --install --all --restart`' },
];
const lifecycleDataAdmin =
  "The agent's macOS release dates (the lifecycle data set) are too old to tell: import a newer one on the server (`device-agent-server lifecycle import`) or update the agent.";

const autoUpdate: Entries<'AUTO_UPDATE'> = {
  up_to_date: passing(
    (c) =>
      `Automatic updates are on and ${installed(c)} is the newest release of its line${word(c, 'latest_released') ? ` (released ${word(c, 'latest_released')})` : ''}.`,
  ),
  newer_than_table: passing(
    (c) =>
      `Automatic updates are on and ${installed(c)} is newer than every macOS release the agent's data lists, so it is taken as up to date.`,
  ),
  update_pending: {
    summary: (c) =>
      `Automatic updates are on, but ${newestRelease(c)} is still not installed${num(c, 'pending_days') !== undefined ? ` after ${num(c, 'pending_days')} days` : ''}; ${installed(c)} is installed${num(c, 'max_pending_days') !== undefined ? ` and your organization allows ${num(c, 'max_pending_days')} days` : ''}.`,
    fix: installUpdate,
    admin:
      'The settings let updates install but this Mac did not: updates wait for a restart or for the user, for free disk space, or for a deferral (com.apple.applicationaccess `enforcedSoftwareUpdateDelay`) or DDM enforcement date. `softwareupdate --history` shows what it installed. Policy `autoUpdate.maxPendingDays` sets how long an update may wait.',
  },
  update_pending_recent: {
    summary: (c) =>
      `${newestRelease(c)} is not installed yet; it is recent, but the agent cannot tell whether an earlier update has waited longer than your organization allows.`,
    fix: installUpdate,
    admin: 'The data set dates only the newest release of each macOS line: installing it decides the check.',
  },
  lifecycle_data_outdated: {
    summary: (c) =>
      `${installed(c)} is the newest release the agent knows, but its list of releases is too old to tell whether a newer one is waiting.`,
    fix: UNDECIDED,
    admin: lifecycleDataAdmin,
  },
  latest_release_unknown: {
    summary: 'The agent does not know the newest release of this macOS line, so it cannot tell whether updates install.',
    fix: UNDECIDED,
    admin: lifecycleDataAdmin,
  },
  unknown_release: osVersion.unknown_release,
  unrecognized_version: osVersion.unrecognized_version,
  required_setting_off: {
    summary: (c) => {
      const keys = Array.isArray(c.evidence.disabled_keys)
        ? c.evidence.disabled_keys.filter((k): k is string => typeof k === 'string' && Object.hasOwn(KEY_LABELS, k))
        : [];
      const labels = [...new Set(keys.map((k) => `"${KEY_LABELS[k]}"`))];
      return `Automatic updates are not fully on${labels.length ? `: ${labels.join(', ')} ${labels.length === 1 ? 'is' : 'are'} off` : ''}.`;
    },
    fix: settings(
      'General > Software Update > Automatic Updates (the small "i" button beside it): turn every option on.',
      'Software Update > Advanced…: tick every box.',
    ),
    admin:
      'Push com.apple.SoftwareUpdate with `AutomaticCheckEnabled`, `AutomaticDownload`, `AutomaticallyInstallMacOSUpdates`, `CriticalUpdateInstall` and `ConfigDataInstall` true (macOS 14 and later: the DDM declaration com.apple.configuration.softwareupdate.settings).',
  },
  ddm_setting_unrecognized: DDM_UNRECOGNIZED,
};

const passwordFix =
  "Your Mac's password rules come from your organization's profile; a local account's rules cannot be set from System Settings. Ask your IT team.";
const passwordAdmin = (c: RemedyContext) =>
  `Push com.apple.mobiledevice.passwordpolicy with \`minLength\` ${minLength(c) ?? 8} or more (and \`requireAlphanumeric\`/\`minComplexChars\` when complexity is required), or the DDM declaration com.apple.configuration.passcode.settings; for local accounts without MDM: \`pwpolicy -setglobalpolicy\`.`;

const passwordPolicy: Entries<'PASSWORD_POLICY'> = {
  meets_policy: passing("Account passwords must meet your organization's length and complexity rules."),
  profile_meets_policy: passing("Your organization's profile sets password rules that meet its requirements."),
  no_length_policy: {
    summary: (c) =>
      `No minimum password length is set on this Mac${requires(minLength(c) !== undefined ? `at least ${minLength(c)} characters` : undefined)}.`,
    fix: passwordFix,
    admin: passwordAdmin,
  },
  min_length: {
    summary: (c) =>
      `Passwords on this Mac need only ${num(c, 'min_length') ?? 'a few'} characters${requires(minLength(c) !== undefined ? `at least ${minLength(c)}` : undefined)}.`,
    fix: passwordFix,
    admin: passwordAdmin,
  },
  complexity: {
    summary: 'Passwords on this Mac are not required to mix letters, numbers and symbols, which your organization requires.',
    fix: passwordFix,
    admin: passwordAdmin,
  },
  unrecognized_policy: {
    summary: "The Mac has password rules the agent does not understand, so it cannot tell whether they meet your organization's.",
    fix: 'Nothing to change; tell your IT team.',
    admin:
      'A pwpolicy content rule uses a form the check does not parse (see docs/checks/darwin.md). Express the length as a profile `minLength`, or a plain `.{N,}` regex.',
  },
};

const { ssh_hardened, sshd_config_unreadable, ssh_not_hardened } = sshRemedies(
  '/etc/ssh/sshd_config.d/',
  'turn Remote Login off and on again',
);
const remoteFix = settings(
  'General > Sharing: turn "Remote Login" (and "Screen Sharing", "Remote Management") off.',
  'Sharing: untick "Remote Login" (and "Screen Sharing", "Remote Management").',
);

const remoteLogin: Entries<'REMOTE_LOGIN'> = {
  ssh_disabled: passing('Remote Login (SSH) is off.'),
  loopback_only: passing(
    "Remote Login (SSH) is on, but launchd listens for it on this Mac's loopback address only, so no other computer can connect.",
  ),
  ssh_hardened,
  sshd_config_unreadable,
  ssh_not_hardened: { ...ssh_not_hardened, fix: [...remoteFix, { for: 'Or keep it and harden it', steps: ssh_not_hardened.fix }] },
  ssh_enabled: {
    summary: 'Remote Login (SSH) is on, so others can log in to this Mac over the network, which your organization does not allow.',
    fix: [...remoteFix, { for: 'Command', steps: '`sudo systemsetup -setremotelogin off`' }],
    admin:
      'Turn Remote Login off from the MDM (script `systemsetup -f -setremotelogin off`), or allow hardened SSH with policy `remoteLogin.allowSshIfHardened` and an sshd_config.d drop-in.',
  },
  full_disk_access_required: FDA_REQUIRED,
};

/** A number of Defender's own fields (`defender.signature_age_days`, `.max_signature_age_days`). */
const defenderNumber = (c: RemedyContext, key: string) => {
  const fields = c.evidence.defender;
  const value = typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>)[key] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};
const ASK_IT = 'Ask your IT team; it is managed for your organization.';

const malwareProtection: Entries<'MALWARE_PROTECTION'> = {
  protected_and_current: passing("Gatekeeper is on and XProtect's malware definitions are current."),
  protected_and_agents_healthy: passing(
    "Gatekeeper is on, XProtect's malware definitions are current, and every security product your organization requires reports that it protects this Mac.",
  ),
  required_agent_not_installed: {
    summary: 'A security product your organization requires is not installed on this Mac.',
    fix: 'Install it from Self Service or as your IT team explains.',
    admin:
      "Deploy every product named in policy `malware.requiredAgents.DARWIN` with its configuration profiles (system extension, Full Disk Access, network filter) from your MDM; the evidence's `not_installed` lists which tools were not found.",
  },
  agent_health_unreadable: {
    summary:
      'A security product your organization requires is installed, but its health report could not be read, so whether it protects this Mac is not known.',
    fix: [
      {
        for: 'Microsoft Defender',
        applies: healthOf('microsoft-defender'),
        steps: 'open Microsoft Defender and follow what it asks, or run `mdatp health` in Terminal.',
      },
      {
        for: 'CrowdStrike Falcon',
        applies: healthOf('falcon-sensor'),
        steps:
          'run `sudo /Applications/Falcon.app/Contents/Resources/falconctl stats agent_info` in Terminal; tell your IT team what it says.',
      },
      {
        for: 'SentinelOne',
        applies: healthOf('sentinelone'),
        steps:
          'run `sudo /Library/Sentinel/sentinel-agent.bundle/Contents/MacOS/sentinelctl status` in Terminal; tell your IT team what it says.',
      },
    ],
    admin:
      "Run the agent as the launchd daemon (root): falconctl and sentinelctl answer root only. The evidence's `agent` names the product, `health_error` (the tool failed or refused) or `fields_unread` (a field missing, or a word whose meaning the agent does not know) what was not read.",
  },
  sensor_not_operational: {
    summary: 'CrowdStrike Falcon is installed but says it is not operational: it does not protect this Mac.',
    fix: 'Apple menu > System Settings > Privacy & Security: allow the Falcon system extension and give Falcon Full Disk Access if macOS asks; otherwise tell your IT team.',
    admin:
      'Deploy the Falcon profiles (system extension, Full Disk Access, network filter) from your MDM and license the sensor (`sudo falconctl license <CCID>`); `sudo falconctl stats agent_info` then says `Sensor operational: true`.',
  },
  agent_disabled: {
    summary: "SentinelOne is installed but its agent's operational state is disabled: it does not protect this Mac.",
    fix: ASK_IT,
    admin:
      'Enable the agent from the SentinelOne management console (Actions > Enable Agent) and find out who disabled it; `sentinelctl status` then says `Agent Operational State: enabled`.',
  },
  protection_disabled: {
    summary: 'SentinelOne is installed but says its protection is disabled.',
    fix: ASK_IT,
    admin:
      'Turn protection back on for this Mac in the SentinelOne console, and check that its system extension and Full Disk Access profiles are installed; `sentinelctl status` then says `Protection: enabled`.',
  },
  agent_unlicensed: {
    summary: 'Microsoft Defender is installed but reports no license: it is not onboarded and does not protect this Mac.',
    fix: 'Ask your IT team to onboard this Mac; `mdatp health --field licensed` then says true.',
    admin: 'Deploy the Defender onboarding profile (or run the onboarding script from the Defender portal) to this Mac from your MDM.',
  },
  realtime_protection_off: {
    summary: 'Microsoft Defender is installed, but its real-time protection is off.',
    fix: 'Open Microsoft Defender > Manage settings: turn real-time protection on, or `mdatp config real-time-protection --value enabled`.',
    admin: 'Set `enableRealTimeProtection` to true in the com.microsoft.wdav configuration profile.',
  },
  passive_mode: {
    summary: 'Microsoft Defender runs in passive mode: it detects but does not block or remove threats.',
    fix: 'Ask your IT team whether another product is meant to protect this Mac.',
    admin: 'Set `passiveMode` to false in the com.microsoft.wdav configuration profile, unless another required product protects the Mac.',
  },
  signatures_outdated: {
    summary: (c) =>
      `Microsoft Defender's definitions are ${defenderNumber(c, 'signature_age_days') ?? 'too many'} days old${requires(defenderNumber(c, 'max_signature_age_days') !== undefined ? `at most ${defenderNumber(c, 'max_signature_age_days')} days` : undefined)}.`,
    fix: 'Connect to the internet, then Microsoft Defender > Check for updates, or `mdatp definitions update`.',
    admin: "Let Macs reach Microsoft's definition servers; raise `malware.maxSignatureAgeDays` only if updates are deliberately slower.",
  },
  agent_unhealthy: {
    summary: 'Microsoft Defender reports itself unhealthy.',
    fix: 'Open Microsoft Defender and follow what it asks (often: allow its system extensions and Full Disk Access in System Settings > Privacy & Security).',
    admin:
      'Run `mdatp health --field health_issues` on the Mac (the evidence counts its issues) and deploy the profiles Defender needs (system extensions, Full Disk Access, network filter).',
  },
  definitions_status_unrecognized: {
    summary: 'Microsoft Defender reports a definitions status the agent does not know, so their state is not decided.',
    fix: 'Update the definitions: Microsoft Defender > Check for updates, or `mdatp definitions update`.',
    admin: "Check the evidence's `defender.definitions_status`; report it so the agent learns its meaning.",
  },
  gatekeeper_disabled: {
    summary: 'Gatekeeper is off, so apps from anywhere can run without being checked.',
    fix: [
      ...settings(
        'Privacy & Security > Security: "Allow applications from" App Store and identified developers.',
        'Security & Privacy > General: "Allow apps downloaded from" App Store and identified developers.',
      ),
      { for: 'Command', steps: '`sudo spctl --global-enable`' },
    ],
    admin: 'Push com.apple.systempolicy.control with `EnableAssessment = true` and `AllowIdentifiedDevelopers = true`.',
  },
  data_updates_disabled: {
    summary: 'Automatic installation of security data (XProtect definitions) is off.',
    fix: settings(
      'General > Software Update > Automatic Updates: "Install Security Responses and system files" on.',
      'Software Update > Advanced…: "Install system data files and security updates".',
    ),
    admin: 'Push com.apple.SoftwareUpdate with `ConfigDataInstall = true` and `CriticalUpdateInstall = true`.',
  },
  ddm_setting_unrecognized: DDM_UNRECOGNIZED,
  signature_age: {
    summary: (c) =>
      `XProtect's malware definitions are ${num(c, 'signature_age_days') ?? 'too many'} days old${requires(num(c, 'max_signature_age_days') !== undefined ? `at most ${num(c, 'max_signature_age_days')} days` : undefined)}.`,
    fix: 'Connect to the internet and let macOS update (General > Software Update); `sudo xprotect update` on macOS 15 and later fetches them at once.',
    admin:
      "Make sure Macs reach Apple's update servers (or your content cache) and that ConfigDataInstall is on; raise `malware.xprotectMaxAgeDays` only if deliveries are deliberately slower.",
  },
  signature_age_unknown: {
    summary: "The age of XProtect's malware definitions could not be read.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: "The XProtect bundle's version plist could not be read: run the agent as root (with Full Disk Access on recent macOS).",
  },
  xprotect_missing: {
    summary: "XProtect, macOS's built-in malware protection, was not found on this Mac.",
    fix: 'Install all macOS updates (General > Software Update); tell your IT team if it persists.',
    admin: 'Neither XProtect location exists: the Mac is likely damaged or very old. Reinstall or update macOS.',
  },
};

export const darwinRemediation: PlatformCatalogue<typeof checks, Shared> = {
  platform: 'DARWIN',
  shared: sharedRemedies({
    service: `the launchd daemon (/Library/LaunchDaemons, runs as root). ${FDA}`,
    elevated: '`sudo device-agent check` from Terminal',
  }),
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

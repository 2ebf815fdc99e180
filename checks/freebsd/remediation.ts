// What each FreeBSD verdict means and what to do (checks/remediation.ts explains the catalogue).
// Fleet-wide fixes are rc.conf lines (`sysrc`), root's crontab and files under /etc.
import type { CheckKey } from '../../src/protocol/schemas';
import {
  containerRemedy,
  duration,
  maxGrace,
  maxIdle,
  maxSignatureAge,
  minLength,
  num,
  passing,
  releaseRemedies,
  requires,
  sharedRemedies,
  sshRemedies,
  wazuhRemedies,
  word,
  type PlatformCatalogue,
  type SharedWord,
} from '../remediation';
import type { checks } from './index';

/** The words this platform's shared entries explain for every check. */
type Shared = SharedWord | 'process_table_partial';
/** One check's entries: exactly the words it returns that the shared entries do not explain. */
type Entries<K extends CheckKey> = PlatformCatalogue<typeof checks, Shared>['checks'][K];

const JAIL = containerRemedy('jail');
const RUN_AS_ROOT =
  'Run the agent as its rc.d service (root): `sysrc device_agent_enable=YES && service device_agent start`, or `doas device-agent check` / `sudo device-agent check` to see what the service sees.';
const UNDECIDED = 'Nothing to change; tell your IT team if it persists.';

const diskEncryption: Entries<'DISK_ENCRYPTION'> = {
  encrypted: passing('Every filesystem the policy covers is encrypted (GELI or ZFS native encryption).'),
  unencrypted_filesystem: {
    summary: (c) => {
      const total = num(c, 'filesystems_evaluated');
      const done = num(c, 'filesystems_encrypted');
      return `${total !== undefined && done !== undefined ? `${total - done} of ${total} local filesystems are` : 'A local filesystem is'} not encrypted, so anyone with the disk can read their data.`;
    },
    fix: 'FreeBSD cannot encrypt a filesystem in place: back up, reinstall with bsdinstall choosing "Auto (ZFS)" with "Encrypt Disks? YES" (GELI), or create an encrypted dataset (`zfs create -o encryption=on -o keyformat=passphrase pool/data`) and move the data into it. Ask your IT team first.',
    admin:
      'Install with GELI full-disk encryption (bsdinstall `ZFSBOOT_GELI_ENCRYPTION=1` in an installerconfig) or ZFS native encryption for data datasets; policy `diskEncryption.scope: root` judges only the root filesystem.',
  },
  unsupported_filesystem: {
    summary: 'A filesystem here is of a type whose encryption the agent cannot judge.',
    fix: UNDECIDED,
    admin:
      'Only UFS/ZFS on GELI providers and ZFS native encryption are recognised; judge this filesystem by hand or exclude it with `diskEncryption.scope: root`.',
  },
  inconsistent_geli: {
    summary: 'The system reports GELI-encrypted devices but the GELI kernel module looks unloaded, so the agent cannot trust what it sees.',
    fix: UNDECIDED,
    admin: 'Check `geli status` and `kldstat -m g_eli` on the device; load geom_eli at boot (`geom_eli_load="YES"` in /boot/loader.conf).',
  },
  zfs_key_unavailable: {
    summary: "An encrypted ZFS dataset's key is not loaded, so the agent cannot confirm it is the one in use.",
    fix: 'Load the key (`zfs load-key pool/dataset`) and mount the dataset, or tell your IT team.',
    admin: 'Make keys load at boot (`zfskeys_enable="YES"` in rc.conf with keylocation set), then the check decides.',
  },
  zfs_unreadable: {
    summary: 'The ZFS encryption properties could not be read.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} \`zfs get\` must be able to run.`,
  },
  zpool_unreadable: {
    summary: 'The ZFS pool layout could not be read, so the agent cannot tell whether the pool sits on encrypted devices.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} \`zpool status\` must be able to run.`,
  },
  jail: JAIL,
};

const lockFix =
  'In xscreensaver-settings (or `xscreensaver-demo`): Mode "Blank screen only" or a screen saver, "Blank After" within the required minutes, "Lock Screen After" 0 minutes; or start `xss-lock -- xsecurelock &` from your ~/.xinitrc / session startup with `xset s <seconds>`.';
const lockAdmin =
  "Ship /usr/local/etc/xscreensaver/XScreenSaver.ad (or ~/.xscreensaver defaults) with `lock: True`, `lockTimeout: 0:00:00` and `timeout` within the limit, and start xscreensaver from the system session scripts (/usr/local/etc/X11/xinit/xinitrc or the display manager's Xsession).";

const screenLock: Entries<'SCREEN_LOCK'> = {
  locks: passing('The screen locker locks the screen by itself within the required time.'),
  headless: passing('No graphical session is running, so there is no screen to lock.'),
  no_locker_running: {
    summary: 'A graphical session is running but no screen locker (xscreensaver, xss-lock) is, so the screen never locks by itself.',
    fix: `Install and start one: \`pkg install xscreensaver\`, then add \`xscreensaver -nosplash &\` to your session startup. ${lockFix}`,
    admin: lockAdmin,
  },
  lock_disabled: {
    summary: 'The screen saver starts but does not lock the screen.',
    fix: lockFix,
    admin: lockAdmin,
  },
  idle_too_long: {
    summary: (c) =>
      `Your screen locks after ${num(c, 'idle_seconds') !== undefined ? duration(num(c, 'idle_seconds')!) : 'too long'} of inactivity${requires(maxIdle(c) !== undefined ? `${duration(maxIdle(c)!)} or less` : undefined)}.`,
    fix: lockFix,
    admin: lockAdmin,
  },
  grace_too_long: {
    summary: (c) =>
      `After the screen saver starts, the screen stays unlocked for ${num(c, 'grace_seconds') !== undefined ? duration(num(c, 'grace_seconds')!) : 'too long'}${requires(maxGrace(c) !== undefined ? `${duration(maxGrace(c)!)} or less` : undefined)}.`,
    fix: lockFix,
    admin: lockAdmin,
  },
  locker_not_evaluated: {
    summary: 'The screen locker running here is one whose settings the agent does not read.',
    fix: 'Make sure your desktop locks the screen when idle, then tell your IT team which desktop you use.',
    admin:
      'Only xscreensaver and xss-lock are read on FreeBSD; GNOME/KDE sessions on FreeBSD stay UNKNOWN. Standardise the locker or accept UNKNOWN.',
  },
  no_xscreensaver_settings: {
    summary: 'xscreensaver runs but neither your settings nor system defaults could be found.',
    fix: 'Open xscreensaver-settings once and save, which writes ~/.xscreensaver.',
    admin: lockAdmin,
  },
  no_user_account: {
    summary: 'The user of the graphical session has no local account entry the agent can read.',
    fix: UNDECIDED,
    admin: "The session's owner is not in /etc/passwd (directory accounts): accept UNKNOWN, or enforce the locker through system defaults.",
  },
  no_single_display: {
    summary: "Several X displays are running, so the agent cannot tell which session's locker settings to read.",
    fix: UNDECIDED,
    admin: 'The xss-lock check reads `xset q` on the only display; multi-display hosts stay UNKNOWN.',
  },
};

const firewallFix =
  'As root: `sysrc pf_enable=YES`, write /etc/pf.conf with `block in all` and `pass out all keep state` (plus `pass in proto tcp to port ssh` if needed), then `service pf start`; or `sysrc firewall_enable=YES firewall_type=workstation && service ipfw start`.';
const firewallAdmin =
  'Deploy rc.conf lines (`sysrc pf_enable=YES` with a default-block /etc/pf.conf, or `firewall_enable="YES"` + `firewall_type="workstation"` for ipfw) from your configuration management, and reboot or `service pf start`.';

const firewall: Entries<'FIREWALL_ENABLED'> = {
  default_block: passing('A packet filter (pf or ipfw) is running and blocks unsolicited incoming traffic by default.'),
  no_firewall_enabled: {
    summary: 'No packet filter (pf, ipfw or ipfilter) is running, so nothing filters incoming connections.',
    fix: firewallFix,
    admin: firewallAdmin,
  },
  default_pass: {
    summary: 'A packet filter is running but lets incoming traffic through by default.',
    fix: 'Make the ruleset block by default: pf `block in all` before the pass rules; ipfw `firewall_type="workstation"` (or a final `deny ip from any to any`).',
    admin: firewallAdmin,
  },
  undetermined_ruleset: {
    summary: 'A packet filter is running, but the agent could not tell from its rules whether it blocks incoming traffic by default.',
    fix: UNDECIDED,
    admin:
      'The ruleset uses anchors or constructs the check does not follow: add an explicit `block in all` (pf) or default deny (ipfw), which the check reads.',
  },
  ipfilter_not_evaluated: {
    summary: 'IPFilter is running; the agent does not read its rules.',
    fix: UNDECIDED,
    admin: 'Only pf and ipfw rulesets are judged: migrate to pf, or accept UNKNOWN for these hosts.',
  },
  jail: JAIL,
};

const timeSync: Entries<'TIME_SYNC'> = {
  synced: passing('The clock is synchronised with a network time server.'),
  no_time_daemon: {
    summary: 'No time synchronisation daemon (ntpd, chronyd, openntpd) is running, so the clock can drift.',
    fix: 'As root: `sysrc ntpd_enable=YES ntpd_sync_on_start=YES && service ntpd start`.',
    admin: 'Deploy `ntpd_enable="YES"` and `ntpd_sync_on_start="YES"` in rc.conf with your servers in /etc/ntp.conf.',
  },
  not_synced: {
    summary: 'A time daemon runs but the clock is not synchronised with any server.',
    fix: 'Check the network, then `service ntpd restart`; `ntpq -p` should show a server marked with `*`.',
    admin: 'Allow UDP 123 to your time servers and check /etc/ntp.conf.',
  },
  offset: {
    summary: (c) =>
      `The clock is ${num(c, 'offset_seconds') !== undefined ? `${Math.abs(num(c, 'offset_seconds')!)} seconds` : 'too far'} off the time server${requires(num(c, 'max_offset_seconds') !== undefined ? `${num(c, 'max_offset_seconds')} seconds or less` : undefined)}.`,
    fix: 'Step the clock: `service ntpd stop && ntpd -gq && service ntpd start`.',
    admin: 'Set `ntpd_sync_on_start="YES"` and check the servers agree.',
  },
  daemon_not_answering: {
    summary: "The time daemon runs but did not answer the agent's query.",
    fix: UNDECIDED,
    admin: 'ntpq/chronyc got no answer (restricted query access): allow queries from localhost (`restrict 127.0.0.1` in ntp.conf).',
  },
  sync_pending: {
    summary: 'The computer started moments ago and its clock has not synchronised yet.',
    fix: 'Nothing to change; the next check will decide.',
    admin: 'Normal just after boot.',
  },
  jail: JAIL,
};

const osVersion: Entries<'OS_VERSION'> = {
  ...releaseRemedies<keyof Entries<'OS_VERSION'>>(
    'As root: `freebsd-update fetch install` for patches; for a newer release `freebsd-update -r <RELEASE> upgrade`, then `freebsd-update install` (twice, with a reboot between), then `pkg upgrade`. pkgbase systems: `pkg upgrade -r FreeBSD-base`.',
    'Upgrade hosts to a supported release (`freebsd-update -r` from your automation, or a new boot environment with `bectl`); see the FreeBSD security page for support dates.',
  ),
  invalid_policy: {
    summary: "The organization's minimum FreeBSD version in the policy is not a valid version, so the check cannot compare.",
    fix: 'Nothing to change on this device.',
    admin: 'Fix `osVersion.minimum.FREEBSD` in the policy file (e.g. "14.1").',
  },
};

const autoUpdate: Entries<'AUTO_UPDATE'> = {
  installs: passing('Updates are fetched and installed automatically by a scheduled job.'),
  fetch_only_accepted: passing('Updates are fetched automatically and installed by hand, which your organization accepts.'),
  fetch_only: {
    summary: 'Updates are downloaded automatically (freebsd-update cron) but only installed when someone runs the install by hand.',
    fix: 'Install what was fetched: `freebsd-update install` as root, and add an install job after the fetch to /etc/crontab, e.g. `0 5 * * * root freebsd-update install`.',
    admin:
      'Schedule `freebsd-update install` after the `freebsd-update cron` fetch (or `pkg upgrade -y -r FreeBSD-base` on pkgbase) from /etc/crontab or /usr/local/etc/cron.d, or accept download-only with `autoUpdate.acceptDownloadOnly`.',
  },
  manual: {
    summary: 'Nothing fetches or installs updates automatically: no update job is scheduled.',
    fix: 'Add to /etc/crontab: `@daily root freebsd-update cron` and an install job, or run `freebsd-update fetch install` regularly.',
    admin:
      'Deploy a cron entry for `freebsd-update cron` plus an install job (pkgbase: `pkg upgrade -y -r FreeBSD-base`) from configuration management.',
  },
  fetched_not_installed: {
    summary: (c) =>
      `Updates are fetched automatically, but the newest one fetched (${word(c, 'fetched_release') ?? 'this release'}-p${num(c, 'fetched_patch') ?? '?'}) is not installed: the system is at ${word(c, 'installed_userland') ?? 'an older patch level'}.`,
    fix: 'Install what was fetched: `freebsd-update install` as root (then reboot if the kernel changed), and check that the install job in /etc/crontab runs after the fetch: its mail to root says why it did not install.',
    admin:
      "These devices fetch updates but do not install them: the scheduled `freebsd-update install` is missing, fails, or runs before the fetch. The evidence gives the patch level fetched (freebsd-update's tag) and the installed kernel and userland (`freebsd-version -ku`).",
  },
  not_run_recently: {
    summary: (c) =>
      `An update job is scheduled, but freebsd-update last fetched ${num(c, 'last_fetch_age_days') !== undefined ? `${num(c, 'last_fetch_age_days')} days ago` : 'too long ago'}${num(c, 'max_fetch_age_days') !== undefined ? ` (at most ${num(c, 'max_fetch_age_days')} expected)` : ''}: updates are not arriving.`,
    fix: 'Run `freebsd-update fetch` as root to see why it fails (no network to update.FreeBSD.org, a release past its end of life), and check that cron runs: `service cron status`.',
    admin:
      "freebsd-update rewrites /var/db/freebsd-update/tag on every successful fetch; these devices' tag is older than `autoUpdate.maxPendingDays`. Check the cron job's mail to root and the devices' access to the update servers.",
  },
  no_fetch_recorded: {
    summary: 'An update job is scheduled, but freebsd-update has never fetched on this system, so whether updates install is not known.',
    fix: 'Run `freebsd-update fetch install` once as root; the scheduled job does the rest.',
    admin:
      'A first successful fetch writes /var/db/freebsd-update/tag; devices that stay UNKNOWN here never fetched: check the job and its mail to root.',
  },
  fetched_other_release: {
    summary: (c) =>
      `An update job is scheduled, but freebsd-update's last fetch was for ${word(c, 'fetched_release') ?? 'another release'}, not the installed ${word(c, 'installed_userland') ?? 'release'}, so whether this release's updates install is not known.`,
    fix: 'Finish any upgrade under way (`freebsd-update install` until it says there is nothing to install), then run `freebsd-update fetch` once.',
    admin: 'These devices were upgraded to another release and have not fetched since: the fetch job fails or does not run.',
  },
  version_unreadable: {
    summary:
      'An update job is scheduled, but the agent could not read the installed version (freebsd-version), so whether updates install is not known.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} /bin/freebsd-version -kru must run.`,
  },
  no_recent_package_fetch: {
    summary: (c) =>
      `\`pkg upgrade -F\` is scheduled to download updates, but the newest package it left in pkg's cache dates from ${num(c, 'newest_cached_package_age_days') !== undefined ? `${num(c, 'newest_cached_package_age_days')} days ago` : 'long ago'}${num(c, 'max_fetch_age_days') !== undefined ? ` (at most ${num(c, 'max_fetch_age_days')} expected)` : ''}: updates are not arriving.`,
    fix: 'Run the job by hand as root to see it work or fail: `pkg upgrade -F -y` (pkgbase: `pkg upgrade -F -y -r FreeBSD-base`), and check that cron runs: `service cron status`.',
    admin:
      "pkg gives each fetched file the repository's time for it; the newest `*.pkg` in these devices' PKG_CACHEDIR (/var/cache/pkg unless pkg.conf moves it) is older than `autoUpdate.maxPendingDays`. Look at the job's mail to root and the repositories it uses, or schedule `pkg upgrade -y` so updates install.",
  },
  no_package_fetched: {
    summary:
      "`pkg upgrade -F` is scheduled to download updates, but pkg's cache holds no downloaded package, so whether updates arrive is not known.",
    fix: 'Run the job once by hand as root: `pkg upgrade -F -y`; the scheduled job does the rest.',
    admin: `${RUN_AS_ROOT} The check reads the times of the \`*.pkg\` files in PKG_CACHEDIR (/var/cache/pkg unless /usr/local/etc/pkg.conf moves it); \`pkg clean\` or AUTOCLEAN empties it, after which the next fetch refills it.`,
  },
  no_recent_install: {
    summary: (c) =>
      `\`pkg upgrade\` is scheduled, but nothing has been installed for ${num(c, 'packages_changed_age_days') !== undefined ? `${num(c, 'packages_changed_age_days')} days` : 'a long time'}${num(c, 'max_install_age_days') !== undefined ? ` (at most ${num(c, 'max_install_age_days')} expected)` : ''}: the job is probably not running or failing.`,
    fix: 'Run the job by hand as root to see it work or fail: `pkg upgrade -y` (pkgbase: `pkg upgrade -y -r FreeBSD-base`), and check that cron runs: `service cron status`.',
    admin:
      "pkg's database (/var/db/pkg/local.sqlite) on these devices has not changed for longer than `autoUpdate.maxPendingDays`; look at the job's mail to root and the repositories it uses.",
  },
  no_install_recorded: {
    summary: 'An update job is scheduled, but the agent found no record of what pkg installed, so whether updates install is not known.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} The check reads the modification time of /var/db/pkg/local.sqlite.`,
  },
  pkgbase_unknown: {
    summary:
      "An update job is scheduled, but the agent could not tell whether this system's base is updated with pkg (pkgbase) or freebsd-update.",
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} \`pkg which /bin/sh\` must be able to run.`,
  },
  jail: JAIL,
};

const passwdqcFix = (req?: number) =>
  `Edit /etc/pam.d/passwd: make the pam_passwdqc line \`password requisite pam_passwdqc.so enforce=everyone min=disabled,disabled,disabled,${req ?? 12},${req ?? 12}\` (as root).`;
const passwordAdmin =
  'Deploy /etc/pam.d/passwd with a `requisite` pam_passwdqc line (`enforce=everyone`, `min=` with the required lengths) and, for login classes, `passwd_format`/`minpasswordlen` in /etc/login.conf followed by `cap_mkdb /etc/login.conf`.';

const passwordPolicy: Entries<'PASSWORD_POLICY'> = {
  passwdqc: passing("pam_passwdqc enforces password rules that meet your organization's."),
  passwdqc_not_configured: {
    summary: 'No password quality module (pam_passwdqc) is configured, so any password is accepted.',
    fix: (c) => passwdqcFix(minLength(c)),
    admin: passwordAdmin,
  },
  passwdqc_not_enforcing: {
    summary: 'pam_passwdqc is configured but only advises: weak passwords are still accepted.',
    fix: (c) => passwdqcFix(minLength(c)),
    admin: passwordAdmin,
  },
  enforce_none: {
    summary: 'pam_passwdqc is set to `enforce=none`, so weak passwords are accepted after a warning.',
    fix: (c) => passwdqcFix(minLength(c)),
    admin: passwordAdmin,
  },
  min_length: {
    summary: (c) =>
      `New passwords may be ${num(c, 'effective_min_length') ?? 'only a few'} characters long${requires(minLength(c) !== undefined ? `at least ${minLength(c)}` : undefined)}.`,
    fix: (c) => passwdqcFix(minLength(c)),
    admin: passwordAdmin,
  },
  complexity: {
    summary: 'New passwords are not required to mix character classes, which your organization requires.',
    fix: "Disable the single-class lengths in pam_passwdqc's `min=` (the first values `disabled`).",
    admin: passwordAdmin,
  },
  no_password_class_allowed: {
    summary: "pam_passwdqc's settings allow no password at all, so the agent cannot judge a minimum length.",
    fix: UNDECIDED,
    admin: 'Every value of `min=` is disabled: set the lengths you require.',
  },
  invalid_min: {
    summary: "pam_passwdqc's `min=` setting is not valid, so the agent cannot tell what it requires.",
    fix: UNDECIDED,
    admin: 'Fix `min=` (five comma-separated values, each `disabled` or a number) in /etc/pam.d/passwd or passwdqc.conf.',
  },
  invalid_enforce: {
    summary: "pam_passwdqc's `enforce=` setting is not valid.",
    fix: UNDECIDED,
    admin: 'Set `enforce=everyone` (or users) in /etc/pam.d/passwd.',
  },
  config_unreadable: {
    summary: 'The password rules file could not be read.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} /etc/pam.d and passwdqc.conf must be readable.`,
  },
};

const { ssh_hardened, sshd_config_unreadable } = sshRemedies('/etc/ssh/sshd_config', 'run `service sshd reload`');
const sshOff = 'If you do not need remote login: `sysrc sshd_enable=NO && service sshd stop` (as root).';
const remoteLogin: Entries<'REMOTE_LOGIN'> = {
  not_listening: passing('No remote login service accepts connections from the network.'),
  loopback_only: passing('The SSH server only accepts connections from this machine itself.'),
  ssh_hardened,
  sshd_config_unreadable,
  listening: {
    summary: 'The SSH server accepts logins from the network, which your organization does not allow on this device.',
    fix: sshOff,
    admin:
      'Deploy `sshd_enable="NO"` in rc.conf, or allow hardened SSH with policy `remoteLogin.allowSshIfHardened` and `PasswordAuthentication no`, `KbdInteractiveAuthentication no`, `PermitRootLogin no` in /etc/ssh/sshd_config.',
  },
  remote_desktop_listening: {
    summary: 'A remote desktop server (RDP or VNC) accepts connections from the network, so others can use this computer remotely.',
    fix: 'Ask your IT team; as root, stop and disable it: `service xrdp stop && sysrc xrdp_enable=NO` (or stop the VNC server), or bind it to 127.0.0.1 and reach it over an SSH tunnel.',
    admin:
      'Remove xrdp/VNC servers from the package set or deploy `xrdp_enable="NO"` in rc.conf; where remote desktop is needed, bind it to loopback (`address=127.0.0.1` in xrdp.ini, `-localhost` for VNC) and tunnel it over hardened SSH.',
  },
  unrecognized_lines: {
    summary:
      'Some lines of the listening-socket table could not be read, and the rest shows nothing exposed: one of them may be a remote login service.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "The evidence's `unrecognized_lines` numbers the rows of `sockstat -4 -6 -l -P tcp` that were not understood; send them (run sockstat on the device) so the parser can learn their form.",
  },
  running_enabled: {
    summary: 'The SSH server is enabled and running (though not reachable at the moment), so remote logins can resume at any time.',
    fix: sshOff,
    admin: 'Deploy `sshd_enable="NO"` in rc.conf, or allow hardened SSH with policy `remoteLogin.allowSshIfHardened`.',
  },
  telnet_listening: {
    summary: 'A telnet server accepts logins from the network, sending passwords in clear text.',
    fix: 'Turn it off: comment out the telnet line in /etc/inetd.conf and `service inetd restart` (or `sysrc inetd_enable=NO && service inetd stop`).',
    admin: 'Remove telnetd from /etc/inetd.conf and disable inetd where unused.',
  },
};

const malwareProtection: Entries<'MALWARE_PROTECTION'> = {
  no_builtin_antimalware: passing('FreeBSD has no built-in anti-malware and your organization requires no agent here.'),
  agents_running: passing('The security agents your organization requires are running.'),
  agent_not_running: {
    summary: 'A security agent your organization requires is not running on this device.',
    fix: 'Start it as your IT team explains (ClamAV: `sysrc clamav_clamd_enable=YES clamav_freshclam_enable=YES && service clamav-clamd start && service clamav-freshclam start`).',
    admin:
      "Deploy and enable every agent named in policy `malware.requiredAgents.FREEBSD` (pkg + rc.conf `_enable` lines); the evidence's `agents_missing` lists which are not running.",
  },
  signatures_outdated: {
    summary: (c) =>
      `ClamAV's signatures are ${num(c, 'signature_age_days') !== undefined ? `${num(c, 'signature_age_days')} days` : 'too'} old${requires(maxSignatureAge(c) !== undefined ? `at most ${maxSignatureAge(c)} days` : undefined)}: freshclam runs but does not update them.`,
    fix: 'As root, update them now with `freshclam`, and look at /var/log/clamav/freshclam.log for why the updates fail.',
    admin:
      'Let freshclam reach the signature mirror (or your local mirror) and keep `clamav_freshclam_enable="YES"`; raise `malware.maxSignatureAgeDays` only if updates are deliberately slower.',
  },
  signatures_unreadable: {
    summary: 'ClamAV runs, but the age of its signatures could not be read.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "The agent dates /var/db/clamav/daily.cld or daily.cvd (the port's DatabaseDirectory); run it as root, or keep the database there.",
  },
  ...wazuhRemedies,
  agent_health_unreadable: {
    summary: 'The Wazuh agent runs, but its state file could not be read, so whether it reaches its manager is not known.',
    fix: UNDECIDED,
    admin: `${RUN_AS_ROOT} The check reads /var/ossec/var/run/wazuh-agentd.state (the security/wazuh-agent port's); \`agent.state_interval\` 0 stops the agent writing it. The evidence's \`health_error\` or \`fields_unread\` says what failed.`,
  },
};

export const freebsdRemediation: PlatformCatalogue<typeof checks, Shared> = {
  platform: 'FREEBSD',
  shared: {
    ...sharedRemedies({
      service: 'the rc.d service `device_agent`, which runs as root (`sysrc device_agent_enable=YES`)',
      elevated: '`doas device-agent check` or `sudo device-agent check`',
    }),
    process_table_partial: {
      summary:
        "The agent could see only its own user's processes (other users' are hidden on this system), so it cannot tell what runs here.",
      fix: 'Nothing to change; run the check as root (`doas device-agent check`) to see what the service sees.',
      admin: `${RUN_AS_ROOT} With \`security.bsd.see_other_uids=0\` only root sees every process and socket.`,
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

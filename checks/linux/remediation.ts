// What each Linux verdict means and what to do (checks/remediation.ts explains the catalogue).
// One section per check, in the order of checks/linux/index.ts; words are the ones that check returns.
import type { CheckKey } from '../../src/protocol/schemas';
import {
  containerRemedy,
  duration,
  linuxFamily,
  maxGrace,
  maxIdle,
  healthOf,
  maxSignatureAge,
  minLength,
  num,
  passing,
  plural,
  releaseRemedies,
  requires,
  sharedRemedies,
  sshRemedies,
  word,
  type PlatformCatalogue,
  type SharedWord,
  type RemedyContext,
  type Variant,
  wazuhRemedies,
} from '../remediation';
import type { checks } from './index';

/** The words this platform's shared entries explain for every check. */
type Shared = SharedWord;
/** One check's entries: exactly the words it returns that the shared entries do not explain. */
type Entries<K extends CheckKey> = PlatformCatalogue<typeof checks, Shared>['checks'][K];

const debian = (c: RemedyContext) => linuxFamily(c.os, 'debian', 'ubuntu');
const redHat = (c: RemedyContext) => linuxFamily(c.os, 'rhel', 'fedora', 'centos', 'rocky', 'almalinux');
/** RHCOS (ID=rhcos, ID_LIKE="rhel fedora") takes its OS from its OpenShift release, not from dnf. */
const rhcos = (c: RemedyContext) => c.os.product === 'rhcos';
const suse = (c: RemedyContext) => linuxFamily(c.os, 'suse', 'opensuse', 'sles', 'opensuse-leap', 'opensuse-tumbleweed');
const desktop = (name: string) => (c: RemedyContext) => c.evidence.desktop === name;

const RUN_AS_ROOT =
  'Run the agent as its system service (root): `sudo systemctl enable --now device-agent`, or `sudo device-agent check` to see what the service sees.';
const CONTAINER = containerRemedy('container');
const PROCESS_TABLE_INCOMPLETE = {
  summary: 'The agent could not see every running program, so it cannot tell whether the service it looks for is running.',
  fix: 'Nothing to change; tell your IT team if it persists.',
  admin: `${RUN_AS_ROOT} With /proc mounted \`hidepid=\`, only root sees other users' processes.`,
};

const diskEncryption: Entries<'DISK_ENCRYPTION'> = {
  root_encrypted: passing('The disk holding the system is encrypted (LUKS/dm-crypt or encrypted ZFS).'),
  root_not_encrypted: {
    summary: (c) =>
      `The disk holding the system${word(c, 'root_fstype') ? ` (${word(c, 'root_fstype')})` : ''} is not encrypted, so anyone with the disk can read its data.`,
    fix: 'Linux cannot encrypt an installed system in place safely: back up your files, reinstall choosing "Encrypt the new installation" (Debian/Ubuntu installer: "Guided - use entire disk and set up encrypted LVM"; Fedora: "Encrypt my data"), then restore. Ask your IT team first: they may do it for you.',
    admin:
      'Reinstall with LUKS2 full-disk encryption (Debian preseed `partman-auto/method string crypto`, Kickstart `autopart --encrypted`, Ubuntu autoinstall `storage: layout: {name: lvm, password: …}`), escrowing the recovery passphrase; `cryptsetup reencrypt --encrypt` exists for offline conversion but needs a backup first.',
  },
  no_zpool_tooling: {
    summary:
      'The system sits on a ZFS pool without ZFS encryption, and the ZFS tools are missing, so the agent cannot see whether the disks below the pool are encrypted.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      'Install the ZFS userland (`zfsutils-linux`, which provides `zpool`) so the check can walk the pool down to its disks, or use ZFS native encryption (`encryption=aes-256-gcm`) on the datasets.',
  },
  zfs_pool_unreadable: {
    summary:
      'The system sits on a ZFS pool without ZFS encryption, and the agent could not read which disks the pool uses, so it cannot decide.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} \`zpool status -P\` must list each vdev by a device path the agent can resolve (use /dev/disk/by-id or /dev/mapper names); or use ZFS native encryption on the datasets.`,
  },
  unencrypted_local_volume: {
    summary: (c) => {
      const n = num(c, 'unencrypted_local_mounts');
      return `The system disk is encrypted, but ${n === undefined ? 'another local volume is' : `${plural(n, 'other local volume')} ${n === 1 ? 'is' : 'are'}`} not.`;
    },
    fix: 'Move the data off the unencrypted volume, re-create it as a LUKS volume (`sudo cryptsetup luksFormat <device>`, or GNOME Disks: Format Partition with "Password protect volume (LUKS)"), and move the data back. Ask your IT team first.',
    admin:
      'Policy `diskEncryption.scope` is `all_local`: every persistent local volume must be LUKS. Provision data volumes encrypted (crypttab with a keyfile on the encrypted root), or set the scope back to `root`.',
  },
  unencrypted_swap: {
    summary: 'The system disk is encrypted but swap is written to an unencrypted device, where memory contents (keys, documents) can land.',
    fix: 'Put swap inside the encrypted volume or use a random-key swap: add `swap /dev/<device> /dev/urandom swap,cipher=aes-xts-plain64,size=512` to /etc/crypttab and point /etc/fstab at /dev/mapper/swap. Ask your IT team first.',
    admin:
      'Provision swap on the encrypted LVM, a random-key crypttab entry, or zram only. Policy `diskEncryption.failUnencryptedSwap` is what makes this a failure.',
  },
  unreadable_local_volume: {
    summary: 'One of the local volumes could not be examined, so the agent cannot tell whether all of them are encrypted.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} The device's block-device tree in /sys/class/block must be readable.`,
  },
  network_root: {
    summary: (c) =>
      `The system runs from a network filesystem${word(c, 'root_fstype') ? ` (${word(c, 'root_fstype')})` : ''}, whose encryption is the server's business, not this device's.`,
    fix: 'Nothing to change on this device.',
    admin:
      'Encryption of a network root is decided on its server (and the transport). Judge it there, or treat these diskless devices as their own class.',
  },
  virtual_root: {
    summary: 'The system runs from a virtual filesystem (overlay or tmpfs) outside a detected container, so there is no disk to judge.',
    fix: 'Nothing to change on this device.',
    admin: 'A live or image-based system: check the image and its storage where it is kept, or run the agent on the host.',
  },
  unrecognized_dm_layer: {
    summary: 'The system disk sits on a device-mapper layer the agent cannot identify, so it cannot tell whether it is encrypted.',
    fix: 'Nothing to change; tell your IT team how this disk was set up.',
    admin:
      'A dm device without a cryptsetup UUID (hand-made with dmsetup, or a third-party tool). Use cryptsetup/LUKS so that the layer is recognisable.',
  },
  unresolved_device: {
    summary: 'The agent could not find which disk holds the system.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: "The root mount's device did not resolve in /sys (an unusual storage stack). Report the storage layout with the agent version.",
  },
  container: CONTAINER,
};

const lockSteps: readonly Variant[] = [
  {
    for: 'GNOME',
    applies: desktop('gnome'),
    steps: (c) =>
      `Settings > Privacy > Screen Lock (GNOME 42 and later: Settings > Privacy > Screen; GNOME 46: Settings > Privacy & Security > Screen Lock): turn "Automatic Screen Lock" on, set "Automatic Screen Lock Delay" to "Screen Turns Off", and set Power > "Screen Blank" to the required time. Command: \`gsettings set org.gnome.desktop.screensaver lock-enabled true; gsettings set org.gnome.desktop.screensaver lock-delay 0; gsettings set org.gnome.desktop.session idle-delay ${maxIdle(c) ?? 900}\` (seconds).`,
  },
  {
    for: 'KDE Plasma',
    applies: desktop('kde'),
    steps:
      'System Settings > Screen Locking (Plasma 6: System Settings > Security & Privacy > Screen Locking): "Lock screen automatically" after the required minutes, "Delay before password required" 0 seconds.',
  },
  {
    for: 'XFCE',
    applies: desktop('xfce'),
    steps:
      'Settings > Screensaver: Screensaver tab "Enable Screensaver" with the required "Activate screensaver when computer is idle", Lock Screen tab "Enable Lock Screen" and "Lock Screen with Screensaver".',
  },
  {
    for: 'Cinnamon',
    applies: desktop('cinnamon'),
    steps:
      'System Settings > Screensaver: "Delay before starting the screensaver" to the required time, "Lock the computer when put to sleep" and "Lock the computer after the screensaver starts" on.',
  },
];

const lockAdmin =
  'GNOME/Cinnamon: ship a dconf profile with locks (`/etc/dconf/db/local.d/00-screensaver`: `[org/gnome/desktop/screensaver] lock-enabled=true lock-delay=uint32 0`, `[org/gnome/desktop/session] idle-delay=uint32 900`, plus `/etc/dconf/db/local.d/locks/`; then `dconf update`). KDE: `/etc/xdg/kscreenlockerrc` `[Daemon] Autolock=true Timeout=15 LockGrace=0` marked immutable (`[$i]`). XFCE: `/etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-screensaver.xml`.';

const screenLock: Entries<'SCREEN_LOCK'> = {
  locks_within_policy: passing(
    (c) => `The screen locks by itself when the computer is idle${maxIdle(c) !== undefined ? ` within ${duration(maxIdle(c)!)}` : ''}.`,
  ),
  locker_not_running: {
    summary: "XFCE's screen saver (xfce4-screensaver) is not running, so its lock settings do nothing: the screen never locks by itself.",
    fix: 'Start it now with `xfce4-screensaver &`, and keep it in Settings > Session and Startup > Application Autostart ("Screensaver").',
    admin: 'Keep /etc/xdg/autostart/xfce4-screensaver.desktop enabled (no per-user `Hidden=true` override) on XFCE devices.',
  },
  process_table_incomplete: PROCESS_TABLE_INCOMPLETE,
  lock_disabled: {
    summary: 'The screen never locks by itself: the screen saver starts but no password is asked.',
    fix: lockSteps,
    admin: lockAdmin,
  },
  idle_activation_disabled: {
    summary: 'The screen saver never starts when the computer is idle, so the screen never locks by itself.',
    fix: lockSteps,
    admin: lockAdmin,
  },
  never_idle: {
    summary: (c) =>
      `The screen is set never to blank when idle, so it never locks by itself${requires(maxIdle(c) !== undefined ? `${duration(maxIdle(c)!)} or less` : undefined)}.`,
    fix: lockSteps,
    admin: lockAdmin,
  },
  idle_too_long: {
    summary: (c) => {
      const idle = num(c, 'idle_delay_seconds');
      const limit = maxIdle(c);
      return `Your screen locks after ${idle !== undefined ? duration(idle) : 'too long'} of inactivity${requires(limit !== undefined ? `${duration(limit)} or less` : undefined)}.`;
    },
    fix: lockSteps,
    admin: lockAdmin,
  },
  grace_too_long: {
    summary: (c) => {
      const grace = num(c, 'lock_delay_seconds');
      const limit = maxGrace(c);
      return `After the screen blanks, it stays unlocked for ${grace !== undefined ? duration(grace) : 'too long'}${requires(limit !== undefined ? `${duration(limit)} or less` : undefined)}.`;
    },
    fix: lockSteps,
    admin: lockAdmin,
  },
  headless: passing('No desktop is installed and nobody is logged in graphically, so there is no screen to lock.'),
  no_console_user: {
    summary:
      'A desktop is installed but nobody is logged in at the screen now, so the screen-lock settings (which are per user) cannot be read.',
    fix: 'Nothing to change; the next check after you log in will decide.',
    admin:
      'Per-user desktop settings exist only while a user is logged in locally: the check decides at the next cycle with a local graphical session. Enforce the lock with a dconf/kscreenlockerrc default so that every user has it.',
  },
  gsettings_defaults_only: {
    summary: "The agent could read only the desktop's built-in defaults, not your own screen-lock settings.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      'gsettings fell back to its in-memory backend (no dconf for that user: dconf-gsettings-backend missing, or the session bus not reachable at /run/user/<uid>/bus). Install `dconf-gsettings-backend` (Debian) / `dconf` (Fedora) and run the agent as root.',
  },
  unsupported_desktop: {
    summary: (c) =>
      `The agent does not know how to read the screen-lock settings of this desktop${word(c, 'desktop') ? ` (${word(c, 'desktop')})` : ''}.`,
    fix: 'Make sure your desktop locks the screen when idle (for tiling window managers, an idle locker such as swayidle with swaylock, or xss-lock with i3lock), then tell your IT team.',
    admin:
      'Only GNOME-family, Cinnamon, KDE Plasma and XFCE (xfce4-screensaver) are read. Standardise on one of them, or accept UNKNOWN for these devices.',
  },
  unsupported_locker: {
    summary: 'XFCE locks the screen here with light-locker or xscreensaver, whose settings the agent does not read.',
    fix: "Use XFCE's own screensaver: install xfce4-screensaver (`sudo apt install xfce4-screensaver`) and set it in Settings > Screensaver.",
    admin:
      'Deploy xfce4-screensaver with a system xfconf default (/etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-screensaver.xml), or accept UNKNOWN for these devices.',
  },
  no_user_account: {
    summary: 'The logged-in user has no local account entry the agent can read, so their screen-lock settings cannot be found.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "Directory users (SSSD, LDAP) are not in /etc/passwd: the check needs a local account entry for the session's uid. Accept UNKNOWN or enforce the lock system-wide with dconf locks.",
  },
  sessions_unreadable: {
    summary: 'The agent could not list who is logged in, so it cannot check the screen lock.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} /run/systemd/sessions or /proc must be readable.`,
  },
};

const firewallFix: readonly Variant[] = [
  {
    for: 'Debian, Ubuntu',
    applies: debian,
    steps:
      'install and turn on ufw: `sudo apt install ufw && sudo ufw default deny incoming && sudo ufw allow OpenSSH && sudo ufw enable` (drop the OpenSSH line if nobody logs in remotely). Desktop: install "gufw" (Firewall Configuration) and switch Status on.',
  },
  {
    for: 'Fedora, RHEL',
    applies: redHat,
    steps: '`sudo dnf install firewalld && sudo systemctl enable --now firewalld` (the default zone drops unsolicited inbound traffic).',
  },
  {
    for: 'openSUSE',
    applies: suse,
    steps: '`sudo zypper install firewalld && sudo systemctl enable --now firewalld`, or YaST > Security and Users > Firewall.',
  },
];

const firewallAdmin =
  'Deploy a host firewall with a default-deny inbound policy for IPv4 and IPv6: the `ufw` package with `ufw default deny incoming` + `ufw enable` (Debian/Ubuntu), `firewalld` enabled with a non-trusted default zone (RHEL/Fedora/SUSE), or an nftables ruleset (`/etc/nftables.conf` with an `inet` input chain, `policy drop`, and `systemctl enable nftables`) from your configuration management.';

const firewall: Entries<'FIREWALL_ENABLED'> = {
  inbound_filtered: passing('A firewall filters incoming connections for IPv4 and IPv6.'),
  no_inbound_filtering: {
    summary: (c) =>
      `Nothing filters incoming network connections: no firewall is active (ufw and firewalld are not running, and the kernel has no filtering input rules${c.evidence.ipv6_enabled === true ? ' for IPv4 or IPv6' : ''}).`,
    fix: firewallFix,
    admin: firewallAdmin,
  },
  ipv6_unfiltered: {
    summary: 'Incoming IPv4 connections are filtered, but IPv6 ones are not, and this device has IPv6 addresses.',
    fix: 'Add the same filtering for IPv6: with ufw set `IPV6=yes` in /etc/default/ufw and run `sudo ufw reload`; with plain rules, use an `inet` nftables table (both families) instead of `ip`, or add the ip6tables rules.',
    admin:
      'Make the firewall ruleset cover both families (nftables `inet` family, ufw `IPV6=yes`, firewalld does both by default), or disable IPv6 on these devices if it is not used.',
  },
  zone_accept_all: {
    summary: 'firewalld is running but its default zone is "trusted", which accepts every incoming connection.',
    fix: 'Set a filtering default zone: `sudo firewall-cmd --set-default-zone=public` (or Settings > Network > Firewall zone on desktops that show it).',
    admin:
      'Set `DefaultZone=public` (or another non-trusted zone) in /etc/firewalld/firewalld.conf through configuration management, and do not bind interfaces to the trusted zone.',
  },
  manager_rules_not_loaded: {
    summary: (c) =>
      `${Array.isArray(c.evidence.managers) && c.evidence.managers.length > 0 ? c.evidence.managers.join(' and ') : 'The firewall manager'} reports itself active, but the kernel holds no firewall rules for incoming connections, so nothing filters them.`,
    fix: 'Load the firewall rules again: `sudo ufw reload` (ufw) or `sudo firewall-cmd --reload` (firewalld). If they vanish again, tell your IT team.',
    admin:
      "The manager's state says active while the kernel's input chains are empty (flushed by hand or by another tool such as a container runtime or a script calling `iptables -F`, or never loaded at boot). Reload the manager, find what flushes the rules, and keep the manager's service enabled.",
  },
  manager_ruleset_mismatch: {
    summary:
      'A firewall manager is running, but the kernel rules the agent reads do not show it filtering, so the agent cannot tell which is right.',
    fix: 'Nothing to change; tell your IT team (the firewall may be mid-reload).',
    admin:
      'ufw/firewalld is active while the nftables ruleset shows no filtering input chain the check recognises (a drop behind a jump it does not follow, or a stale manager state). Check `nft list ruleset` on the device and reload the manager.',
  },
  manager_unconfirmed: {
    summary: (c) =>
      `A firewall manager (${Array.isArray(c.evidence.managers) && c.evidence.managers.length > 0 ? c.evidence.managers.join(', ') : 'ufw or firewalld'}) reports itself active, but the agent could not read the kernel's firewall rules to confirm that they filter incoming connections.`,
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} ufw's "Status: active" says only that its chains exist and firewalld's "running" that its last start or reload applied its rules; the check reads the loaded rules themselves (\`nft list ruleset\`, or \`iptables-nft -S\` where \`nft\` is missing: install nftables). \`ruleset_error\` says why they could not be read.`,
  },
  nftables_unreadable: {
    summary:
      'The firewall rules visible through iptables do not filter incoming connections, and the nftables rules that iptables cannot show could not be read (the `nft` tool is missing).',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `Install nftables (it provides \`nft\`, which the check reads): iptables-nft shows only the tables made through iptables, not those made by nft itself. ${firewallAdmin}`,
  },
  no_firewall_tooling: {
    summary: 'No firewall software (nftables, ufw or firewalld) is installed, so the agent cannot read any firewall rules.',
    fix: firewallFix,
    admin: `Install nftables (it provides \`nft\`, which the check reads) and a firewall configuration. ${firewallAdmin}`,
  },
  legacy_iptables_unreadable: {
    summary: 'Legacy iptables rules are loaded but could not be read, so the agent cannot tell whether they filter incoming connections.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} Install the \`iptables\` package (for \`iptables-legacy\`), or migrate the legacy rules to nftables.`,
  },
  container: CONTAINER,
};

const timeFix: readonly Variant[] = [
  {
    for: 'Debian, Ubuntu',
    applies: debian,
    steps:
      'install a time service and let it start: `sudo apt install systemd-timesyncd` (or `chrony`), then `sudo timedatectl set-ntp true`. GNOME: Settings > Date & Time > "Automatic Date & Time" on.',
  },
  {
    for: 'Fedora, RHEL, openSUSE',
    applies: (c) => redHat(c) || suse(c),
    steps: '`sudo dnf install chrony` (openSUSE: `sudo zypper install chrony`), then `sudo systemctl enable --now chronyd`.',
  },
];

const timeSync: Entries<'TIME_SYNC'> = {
  synchronized: passing('The clock is kept in sync with a network time source.'),
  no_time_sync_service: {
    summary:
      'No time synchronisation service (systemd-timesyncd, chrony, ntpd) is running, so the clock can drift and logs, logins and certificates can go wrong.',
    fix: timeFix,
    admin:
      'Deploy and enable one NTP client with your time servers: chrony (`/etc/chrony/chrony.conf` `pool`/`server` lines, `systemctl enable --now chrony`) or systemd-timesyncd (`/etc/systemd/timesyncd.conf` `NTP=`, `timedatectl set-ntp true`).',
  },
  sync_daemon_not_running: {
    summary: 'The kernel still says the clock is synchronised, but no time service is running any more, so nothing keeps it in time.',
    fix: timeFix,
    admin:
      'The NTP client stopped or was removed after the last synchronisation: enable it again (`systemctl enable --now systemd-timesyncd` or `chrony`) and find why it stopped (`journalctl -u <service>`).',
  },
  not_synchronized: {
    summary: 'A time service is running but the clock is not synchronised with any time server.',
    fix: 'Check the network connection, then restart the time service: `sudo systemctl restart systemd-timesyncd` (or `chrony`); `timedatectl` should then say "System clock synchronized: yes".',
    admin:
      'The NTP client cannot reach a server: allow UDP 123 to your time servers, configure reachable servers (`NTP=` / `server` lines), and check `chronyc sources` or `timedatectl timesync-status` on the device.',
  },
  offset_too_large: {
    summary: (c) => {
      const offset = num(c, 'offset_s');
      const max = num(c, 'max_offset_s');
      return `The clock is ${offset !== undefined ? `${Math.abs(offset)} seconds` : 'too far'} off the time server${requires(max !== undefined ? `${max} seconds or less` : undefined)}.`;
    },
    fix: 'Let the time service step the clock: `sudo chronyc makestep` (chrony) or `sudo systemctl restart systemd-timesyncd`.',
    admin:
      'Allow the NTP client to step large offsets (chrony `makestep 1 3`), check that the servers are reachable and agree, and look for something else setting the clock (a hypervisor agent).',
  },
  sync_pending: {
    summary: 'The computer started moments ago and its clock has not synchronised yet.',
    fix: 'Nothing to change; the next check will decide.',
    admin: 'Normal just after boot; the next cycle decides.',
  },
  sync_state_unreadable: {
    summary: 'A time service is running but the agent could not ask it whether the clock is synchronised.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} The daemon's query tool (\`timedatectl\`, \`chronyc\`, \`ntpq\`) must be installed and answer.`,
  },
  process_table_incomplete: PROCESS_TABLE_INCOMPLETE,
  container: CONTAINER,
};

const upgradeFix: readonly Variant[] = [
  {
    for: 'Debian',
    applies: (c) => c.os.product === 'debian',
    steps:
      'upgrade to the current Debian release (see the release notes\' "Upgrades from the previous release": update /etc/apt/sources.list to the new codename, then `sudo apt update && sudo apt full-upgrade`). Ask your IT team first.',
  },
  {
    for: 'Ubuntu',
    applies: (c) => c.os.product === 'ubuntu',
    steps:
      '`sudo do-release-upgrade` (desktop: Software & Updates > Updates > "Notify me of a new Ubuntu version", then Software Updater).',
  },
  {
    for: 'Red Hat Enterprise Linux CoreOS',
    applies: rhcos,
    steps:
      'RHCOS is upgraded with its OpenShift cluster, never on its own: a cluster administrator upgrades the cluster to a supported OpenShift release (`oc adm upgrade --to=<version>`, or the web console: Administration > Cluster Settings).',
  },
  {
    for: 'Fedora, RHEL',
    applies: (c) => redHat(c) && !rhcos(c),
    steps:
      'Fedora: `sudo dnf system-upgrade download --releasever=<N>` then `sudo dnf system-upgrade reboot`; RHEL: `sudo dnf update` for minor releases, Leapp for a major one.',
  },
  {
    for: 'other distributions',
    applies: (c) => !debian(c) && !redHat(c),
    steps: "upgrade to a supported release with your distribution's upgrade tool, or install all pending updates.",
  },
];

const osVersion: Entries<'OS_VERSION'> = {
  ...releaseRemedies<keyof Entries<'OS_VERSION'>>(
    upgradeFix,
    'Upgrade these devices to a supported release (Debian: sources to the new codename + `apt full-upgrade`; Ubuntu: `do-release-upgrade`; RHEL: Leapp), or, where your policy accepts it, enable extended support (Debian LTS / Ubuntu Pro ESM with `osVersion.acceptExtendedSupport`).',
  ),
  rolling_stale: {
    summary: (c) =>
      `This rolling-release system was last upgraded ${num(c, 'last_upgrade_age_days') !== undefined ? `${num(c, 'last_upgrade_age_days')} days ago` : 'too long ago'}${requires(num(c, 'rolling_max_age_days') !== undefined ? `an upgrade at least every ${num(c, 'rolling_max_age_days')} days` : undefined)}.`,
    fix: 'Upgrade the whole system: Arch `sudo pacman -Syu`, openSUSE Tumbleweed `sudo zypper dup`.',
    admin:
      'Schedule full upgrades (a systemd timer running `pacman -Syu --noconfirm` or `zypper dup -y`), or raise `osVersion.rollingMaxAgeDays`.',
  },
  update_age_unknown: {
    summary: "This rolling-release system's last upgrade date could not be read.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "The check reads the package manager's log (/var/log/pacman.log, zypper history) for the last full upgrade: keep that log, and run the agent as root.",
  },
};

const autoUpdateFix: readonly Variant[] = [
  {
    for: 'Debian, Ubuntu',
    applies: debian,
    steps:
      '`sudo apt install unattended-upgrades && sudo dpkg-reconfigure -plow unattended-upgrades` (answer Yes). Ubuntu desktop: Software & Updates > Updates > "When there are security updates: Download and install automatically".',
  },
  {
    for: 'Fedora, RHEL',
    applies: redHat,
    steps:
      '`sudo dnf install dnf-automatic`, set `apply_updates = yes` in /etc/dnf/automatic.conf, then `sudo systemctl enable --now dnf-automatic.timer` (Fedora 41 and later ship it as `dnf5-plugin-automatic`: `systemctl list-timers --all` names its timer).',
  },
  {
    for: 'Alpine',
    applies: (c) => c.os.product === 'alpine',
    steps:
      'add `apk upgrade --available` to a periodic cron script (/etc/periodic/daily/) and make sure crond runs (`rc-update add crond`).',
  },
];

const autoUpdateAdmin =
  'Deploy unattended-upgrades with `APT::Periodic::Update-Package-Lists "1"` and `APT::Periodic::Unattended-Upgrade "1"` in /etc/apt/apt.conf.d/20auto-upgrades (Debian/Ubuntu), or dnf-automatic with `apply_updates = yes` and its timer enabled (RHEL/Fedora). Policy `autoUpdate.acceptDownloadOnly` accepts download-only set-ups.';

const autoUpdate: Entries<'AUTO_UPDATE'> = {
  unattended_upgrades: passing('Security updates are downloaded and installed automatically (unattended-upgrades).'),
  dnf_automatic_apply: passing('Updates are downloaded and installed automatically (dnf-automatic).'),
  dnf_automatic_install: passing('Updates are downloaded and installed automatically (dnf-automatic-install timer).'),
  transactional_update: passing('Updates are installed automatically (transactional-update).'),
  online_update_cron: passing('Updates are installed automatically by a scheduled online update.'),
  periodic_apk_upgrade: passing('Packages are upgraded automatically by a periodic job.'),
  download_only_accepted: passing('Updates are downloaded automatically and installed by hand, which your organization accepts.'),
  not_installed: {
    summary:
      'Automatic security updates are not set up: the unattended-upgrades package is not installed, so updates wait until someone installs them by hand.',
    fix: autoUpdateFix,
    admin: autoUpdateAdmin,
  },
  not_run_recently: {
    summary: (c) => {
      // APT: the age of unattended-upgrade's last completed install run, not of its log.
      const installAge = num(c, 'last_install_age_days');
      const age = installAge ?? num(c, 'last_run_age_days');
      return `Automatic updates are configured, but ${word(c, 'job') ?? 'unattended-upgrades'} last ${installAge !== undefined ? 'completed an install run' : 'ran'} ${age !== undefined ? `${age} days ago` : 'too long ago'}${num(c, 'max_run_age_days') !== undefined ? ` (at most ${num(c, 'max_run_age_days')} days expected)` : ''}: updates are not being installed.`;
    },
    fix: (c) =>
      word(c, 'job')?.endsWith('.timer')
        ? `Look at why it stopped: \`systemctl list-timers ${word(c, 'job')}\` (is it active and waiting?) and \`journalctl -u ${word(c, 'job')!.replace(/\.timer$/, '.service')}\`; \`sudo systemctl restart ${word(c, 'job')}\` re-arms it.`
        : word(c, 'job')
          ? `Run it once by hand to see it work or fail: \`sudo ${word(c, 'job')}\`, and make sure cron runs.`
          : 'Look at why it stopped: `systemctl list-timers apt-daily-upgrade.timer` and `journalctl -u apt-daily-upgrade.service`; run `sudo unattended-upgrade -d` once to see it work.',
    admin:
      "Check the update job on these devices (a stopped or elapsed timer, failed runs, a held package lock, no network to the mirror); the evidence gives the job and its last run (systemd's LastTriggerUSec; for unattended-upgrades the time of its last completed install run, /var/lib/apt/periodic/unattended-upgrades-stamp, beside its log's; where downloading only is accepted, /var/lib/apt/periodic/download-upgradeable-stamp).",
  },
  no_run_recorded: {
    summary: (c) =>
      `Automatic updates are configured, but ${word(c, 'job') ?? 'unattended-upgrades'} has no recorded run yet, so whether updates install is not known.`,
    fix: (c) =>
      word(c, 'job')?.endsWith('.timer')
        ? `Wait a day (it runs daily), or start it once: \`sudo systemctl start ${word(c, 'job')!.replace(/\.timer$/, '.service')}\`; if it still records no run, check \`systemctl list-timers ${word(c, 'job')}\`.`
        : 'Wait a day (it runs daily), or run `sudo unattended-upgrade -d` once; if it still has no log, check `systemctl list-timers apt-daily-upgrade.timer`.',
    admin:
      "A first run records itself (systemd: the timer's LastTriggerUSec; APT: /var/log/unattended-upgrades/unattended-upgrades.log and, once an install run completes, /var/lib/apt/periodic/unattended-upgrades-stamp, or /var/lib/apt/periodic/download-upgradeable-stamp where downloading only is accepted); devices that stay UNKNOWN here never ran the job: check that its timer is active, not only enabled.",
  },
  last_run_failed: {
    summary: (c) =>
      `Automatic updates are configured, but the last run of ${word(c, 'job') ?? 'the update job'}${word(c, 'last_run') ? ` (${word(c, 'last_run')})` : ''} failed${word(c, 'run_result') ? ` (${word(c, 'run_result')}${num(c, 'exit_status') !== undefined ? `, exit status ${num(c, 'exit_status')}` : ''})` : ''}: updates are not being installed.`,
    fix: (c) =>
      `See why: \`journalctl -u ${(word(c, 'job') ?? 'dnf-automatic.timer').replace(/\.timer$/, '.service')}\` (a repository that cannot be reached, a new signing key to accept, a package conflict); fix it, then run it once: \`sudo systemctl start ${(word(c, 'job') ?? 'dnf-automatic.timer').replace(/\.timer$/, '.service')}\`.`,
    admin:
      "These devices' update service exits with an error on every run (dnf-automatic reports no failure by mail: rpm-software-management/dnf#1918). Fix the repositories or keys from configuration management; the evidence gives systemd's Result and exit status.",
  },
  run_result_unknown: {
    summary: (c) =>
      `Automatic updates are configured and ${word(c, 'job') ?? 'the update job'} last ran ${word(c, 'last_run') ?? 'recently'}, but its result is no longer recorded (systemd keeps it until the next reboot), so whether it installed updates is not known.`,
    fix: (c) =>
      `Nothing to change: the next scheduled run records its result (within a day). To decide now, run it once: \`sudo systemctl start ${(word(c, 'job') ?? 'dnf-automatic.timer').replace(/\.timer$/, '.service')}\`.`,
    admin:
      'A device rebooted since its last update run shows this until the next run; one that stays here has a timer whose service never starts (see `systemctl status` of the service).',
  },
  run_in_progress: {
    summary: 'The automatic update job is running right now, so its result is not known yet.',
    fix: 'Nothing to change; the next check sees its result.',
    admin: 'Transitional: the service the evidence names was starting or stopping when the agent looked.',
  },
  run_record_unreadable: {
    summary:
      "Automatic updates are configured, but the agent could not read systemd's record of their last run, so whether updates install is not known.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} The check runs \`systemctl show\` on the update timer and its service (the evidence's \`record_error\` says what failed).`,
  },
  no_recent_install: {
    summary: (c) =>
      `An update job is configured, but nothing has been installed for ${num(c, 'packages_changed_age_days') !== undefined ? `${num(c, 'packages_changed_age_days')} days` : 'a long time'}${num(c, 'max_install_age_days') !== undefined ? ` (at most ${num(c, 'max_install_age_days')} expected)` : ''}: the job is probably not running or failing.`,
    fix: [
      {
        for: 'Alpine',
        applies: (c) => linuxFamily(c.os, 'alpine'),
        steps:
          'run the job by hand to see it work or fail: `sudo run-parts /etc/periodic/daily` (or the folder holding it), and check that crond starts at boot: `rc-update add crond`.',
      },
      {
        for: 'openSUSE, SUSE',
        applies: suse,
        steps: 'run the update by hand to see it work or fail: `sudo zypper patch`; check /var/log/zypp/history afterwards.',
      },
    ],
    admin:
      "These devices have a scheduled update job but their package database has not changed for longer than `autoUpdate.maxPendingDays`; look at the job's output (cron mail, syslog) and the repositories it uses.",
  },
  no_install_recorded: {
    summary:
      'An update job is configured, but the agent found no record of any package installation, so whether updates install is not known.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} The check reads the modification time of the package database (/lib/apk/db/installed, /var/log/zypp/history), or for unattended-upgrades its stamp of a completed install run (/var/lib/apt/periodic/unattended-upgrades-stamp: a log without it means only download runs, or install runs that failed; see /var/log/unattended-upgrades/).`,
  },
  package_state_transitional: {
    summary:
      'The unattended-upgrades package is part-way through being installed, upgraded or removed (dpkg has not finished with it), so automatic updates are not decided.',
    fix: 'If no installation is running, finish the interrupted one: `sudo dpkg --configure -a`, then `sudo apt-get -f install`.',
    admin:
      "Look for interrupted package runs on these devices (the evidence's `package_state` is dpkg's word for it); `dpkg --configure -a` completes them.",
  },
  allowed_origins_not_fetched: {
    summary:
      'unattended-upgrades runs, but none of the package sources this system downloads from is one it is allowed to install from, so it installs nothing.',
    fix: 'Make its allowed origins name your system\'s archives: compare `apt-cache policy` (the `o=` and `n=`/`a=` of each source) with `Unattended-Upgrade::Origins-Pattern` in /etc/apt/apt.conf.d/50unattended-upgrades, then check with `sudo unattended-upgrade --dry-run -d` (it should list packages, not only "No packages found that can be upgraded unattended").',
    admin:
      "The evidence lists the allowed origins (substituted) and the archives fetched (`Origin/Suite`, from the InRelease files in /var/lib/apt/lists). Typical causes: a derivative (Raspberry Pi OS, Kali, Mint) keeping Debian's or Ubuntu's patterns, or a mirror whose Release file carries another Origin; deploy a 50unattended-upgrades whose Origins-Pattern matches what the devices fetch.",
  },
  security_archive_not_allowed: {
    summary:
      'unattended-upgrades runs, but the security updates archive this system downloads from is not among the sources it may install from, so security updates wait for someone to install them.',
    fix: 'Allow the security archive in /etc/apt/apt.conf.d/50unattended-upgrades: Debian `"origin=Debian,codename=${distro_codename}-security,label=Debian-Security";` under `Unattended-Upgrade::Origins-Pattern`, Ubuntu `"${distro_id}:${distro_codename}-security";` under `Unattended-Upgrade::Allowed-Origins`; check with `sudo unattended-upgrade --dry-run -d`.',
    admin:
      "The evidence's `archives_not_allowed` names the security archives fetched (suite or codename ending in -security, or a -Security label) that no allowed origin matches; restore the distribution's default security pattern on these devices.",
  },
  distribution_archive_not_allowed: {
    summary:
      "unattended-upgrades runs, but none of this distribution's own archives is among the sources it may install from, so the system's packages are not updated automatically.",
    fix: 'Make its allowed origins name your distribution\'s archives: compare `apt-cache policy` (each source\'s `o=`, `n=`, `a=`) with `Unattended-Upgrade::Origins-Pattern` in /etc/apt/apt.conf.d/50unattended-upgrades (Raspberry Pi OS on Raspbian: `"origin=Raspbian,codename=${distro_codename},label=Raspbian";`), then check with `sudo unattended-upgrade --dry-run -d`.',
    admin:
      "The archives whose Origin is the distribution's own (`lsb_release -i`) are fetched but no allowed origin matches them (the evidence names both): typically a derivative whose patterns name its base distribution only.",
  },
  origin_pattern_unreadable: {
    summary: "unattended-upgrades' list of allowed package sources contains an entry it cannot read, so what it installs is not known.",
    fix: 'Fix the entry the evidence names in /etc/apt/apt.conf.d/50unattended-upgrades (each `key=value` separated by commas, keys o, a, n, l, c, site; placeholders only ${distro_id}, ${distro_codename}, ${distro_release}); `sudo unattended-upgrade --dry-run -d` shows whether it reads them.',
    admin:
      "unattended-upgrades stops with an error on such an entry (an unknown key, a token without `=`, an unknown `${…}` placeholder); the evidence's `pattern_error` names it.",
  },
  archive_lists_unreadable: {
    summary:
      'unattended-upgrades is set up, but the agent could not read which package sources this system downloads from (the APT lists), so whether it can install anything is not known.',
    fix: 'Refresh the package lists once: `sudo apt update`; if this persists, tell your IT team.',
    admin: `${RUN_AS_ROOT} The check reads the InRelease (or Release) files in /var/lib/apt/lists; none there (\`lists\`: \`no_release_files\`) means \`apt update\` never ran or the lists were cleaned (container images).`,
  },
  periodic_disabled: {
    summary: 'unattended-upgrades is installed, but APT is configured not to run it (APT::Periodic is 0).',
    fix: 'Turn it on: `sudo dpkg-reconfigure -plow unattended-upgrades` (answer Yes), which writes /etc/apt/apt.conf.d/20auto-upgrades.',
    admin: autoUpdateAdmin,
  },
  not_scheduled: {
    summary: 'Automatic updates are configured, but nothing schedules them (the APT timers or the cron job are off).',
    fix: 'Re-enable the schedule: `sudo systemctl enable --now apt-daily.timer apt-daily-upgrade.timer` (systems without systemd: make sure cron runs).',
    admin:
      'Keep apt-daily.timer and apt-daily-upgrade.timer enabled (or cron running where systemd is not PID 1); do not mask them in images.',
  },
  download_only: {
    summary: 'Updates are downloaded automatically but not installed until someone does it by hand.',
    fix: [
      {
        for: 'Debian, Ubuntu',
        applies: debian,
        steps:
          'set `APT::Periodic::Unattended-Upgrade "1";` in /etc/apt/apt.conf.d/20auto-upgrades (or `sudo dpkg-reconfigure -plow unattended-upgrades`).',
      },
      {
        for: 'Fedora, RHEL',
        applies: redHat,
        steps: 'set `apply_updates = yes` in /etc/dnf/automatic.conf, or `sudo systemctl enable --now dnf-automatic-install.timer`.',
      },
    ],
    admin: autoUpdateAdmin,
  },
  no_auto_update: {
    summary: 'No automatic update mechanism is enabled on this system.',
    fix: autoUpdateFix,
    admin: autoUpdateAdmin,
  },
  no_auto_update_mechanism: {
    summary: (c) =>
      `This distribution${word(c, 'source') ? `'s package manager (${word(c, 'source')})` : ''} has no automatic update mechanism the agent recognises.`,
    fix: 'Install updates regularly by hand (Arch: `sudo pacman -Syu`), and ask your IT team about scheduling them.',
    admin:
      "Schedule upgrades with a systemd timer or cron job from configuration management, and judge these devices on OS_VERSION's rolling age; AUTO_UPDATE will stay FAIL.",
  },
  package_manager_unknown: {
    summary: "The agent does not recognise this distribution's package manager, so it cannot read its update settings.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      'Only APT, DNF, zypper, apk and pacman are read, found by their programs (/usr/bin/apt-get, /usr/bin/dnf5, /usr/bin/dnf, /usr/bin/zypper, /sbin/apk, /usr/bin/pacman), the distribution family choosing among several. Accept UNKNOWN for these devices or standardise the distribution.',
  },
  config_unreadable: {
    summary: 'The update settings could not be read.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} /etc/dnf/automatic.conf (or the APT configuration) must be readable.`,
  },
  scheduler_unreadable: {
    summary: 'The agent could not tell whether the automatic update job is scheduled.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} Without systemd the check needs a complete process table to see cron.`,
  },
  systemd_not_running: {
    summary:
      'Automatic updates here run from systemd timers, but systemd is not running, so the agent cannot tell whether they are scheduled.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: 'The device (or container) does not boot with systemd: schedule updates with cron instead, or accept UNKNOWN.',
  },
  process_table_incomplete: PROCESS_TABLE_INCOMPLETE,
  container: CONTAINER,
};

const passwordFix: readonly Variant[] = [
  {
    for: 'Debian, Ubuntu',
    applies: debian,
    steps: (c) =>
      `\`sudo apt install libpam-pwquality\`, then set \`minlen = ${minLength(c) ?? 12}\` in /etc/security/pwquality.conf. New passwords then need that length.`,
  },
  {
    for: 'Fedora, RHEL',
    applies: redHat,
    steps: (c) =>
      `set \`minlen = ${minLength(c) ?? 12}\` in /etc/security/pwquality.conf (pam_pwquality is in the stack by default; \`authselect\` manages it).`,
  },
];

const passwordAdmin = (c: RemedyContext) =>
  `Ship /etc/security/pwquality.conf with \`minlen = ${minLength(c) ?? 12}\` (and \`minclass\`/credits when complexity is required) and keep pam_pwquality in the password stack (Debian: libpam-pwquality + pam-auth-update; RHEL: authselect). Directory-managed accounts follow the directory's policy.`;

const passwordPolicy: Entries<'PASSWORD_POLICY'> = {
  min_length_met: passing(
    (c) => `New passwords must be at least ${num(c, 'min_length') ?? minLength(c) ?? 'the required'} characters long.`,
  ),
  min_length: {
    summary: (c) => {
      const current = num(c, 'min_length');
      const required = minLength(c);
      return `New passwords need only ${current !== undefined ? plural(current, 'character') : 'a few characters'}${requires(required !== undefined ? `at least ${required}` : undefined)}.`;
    },
    fix: passwordFix,
    admin: passwordAdmin,
  },
  pwquality_version_unknown: {
    summary:
      "The password-quality library's version could not be read, and its older and newer releases would judge this configuration differently, so the agent cannot decide.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      'Set `minlen` (and the credits) explicitly in /etc/security/pwquality.conf so both libpwquality generations agree, or make the package database readable to the agent (dpkg/rpm/pacman query).',
  },
  complexity: {
    summary: 'New passwords are not required to mix character types, which your organization requires.',
    fix: 'Set `minclass = 3` (or negative `dcredit`/`ucredit`/`lcredit`/`ocredit`) in /etc/security/pwquality.conf (Debian/Ubuntu: `sudo apt install libpam-pwquality` first).',
    admin: passwordAdmin,
  },
  no_pam_stack: {
    summary: 'The password rules could not be found: this system has no PAM configuration for changing passwords.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "No /etc/pam.d/passwd (or common-password/system-auth): a minimal system without PAM password changes. Accept UNKNOWN or install the distribution's PAM configuration.",
  },
  pam_file_missing: {
    summary: 'A file the password configuration includes is missing, so the password rules cannot be read.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      'A PAM include points at a file that does not exist: repair the PAM stack (`pam-auth-update --force` on Debian/Ubuntu, `authselect check` on RHEL).',
  },
  no_password_module: {
    summary: 'No module that sets password rules is configured, so any password length is accepted.',
    fix: passwordFix,
    admin: passwordAdmin,
  },
  directory_accounts_only: {
    summary: 'Accounts on this device come from a directory service, whose password rules are set there, not on the device.',
    fix: 'Nothing to change on this device.',
    admin:
      'Passwords are set through SSSD/LDAP/Kerberos: enforce length and complexity in the directory (FreeIPA pwpolicy, AD fine-grained policy). The device-side check stays UNKNOWN.',
  },
  invalid_min: {
    summary: 'The passwdqc password rules on this device are not valid, so the agent cannot tell what they require.',
    fix: 'Nothing to change; tell your IT team.',
    admin:
      'pam_passwdqc has a `min=` value the check cannot read: fix it in /etc/security/passwdqc.conf or the PAM line (five comma-separated values, `disabled` or numbers).',
  },
  invalid_enforce: {
    summary: 'The passwdqc password rules on this device are not valid, so the agent cannot tell whether they are enforced.',
    fix: 'Nothing to change; tell your IT team.',
    admin:
      'pam_passwdqc has an `enforce=` value other than none, users or everyone: fix it in /etc/security/passwdqc.conf or the PAM line.',
  },
  config_unreadable: {
    summary: 'The password rules file could not be read.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} /etc/security/pwquality.conf and /etc/pam.d must be readable.`,
  },
};

const { ssh_hardened, sshd_config_unreadable } = sshRemedies(
  '/etc/ssh/sshd_config (or a file in /etc/ssh/sshd_config.d/)',
  'run `sudo systemctl reload ssh`',
);

const remoteLogin: Entries<'REMOTE_LOGIN'> = {
  no_remote_login_listening: passing('No remote login service (SSH, VNC, RDP, telnet) accepts connections from the network.'),
  ssh_hardened,
  sshd_config_unreadable,
  unrecognized_lines: {
    summary:
      "Some rows of the kernel's socket table could not be read, and the rest shows nothing exposed: one of them may be a remote login service.",
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "The evidence's `unrecognized_lines` numbers the rows of /proc/net/tcp and /proc/net/tcp6 that were not in the kernel's usual columns; send them (`cat /proc/net/tcp6` on the device) so the parser can learn their form.",
  },
  remote_login_exposed: {
    summary: (c) =>
      `A remote login service accepts connections from the network${c.evidence.ssh_listening === true ? ' (an SSH server)' : ''}, which your organization does not allow on this device.`,
    fix: 'If you do not need to log in remotely, turn the service off: `sudo systemctl disable --now ssh` (Fedora: `sshd`), or uninstall it with `sudo apt remove openssh-server`. For VNC/RDP, turn off Screen Sharing / Remote Desktop in Settings > Sharing (GNOME).',
    admin:
      'Remove or disable openssh-server, xrdp and VNC servers in the device image, or allow hardened SSH with policy `remoteLogin.allowSshIfHardened` and an sshd_config drop-in (`PasswordAuthentication no`, `KbdInteractiveAuthentication no`, `PermitRootLogin no`).',
  },
};

const malwareProtection: Entries<'MALWARE_PROTECTION'> = {
  no_builtin_antimalware: passing('Linux has no built-in anti-malware and your organization requires no agent here.'),
  required_agents_running: passing('The security agents your organization requires are running.'),
  required_agent_not_running: {
    summary: 'A security agent your organization requires is not running on this device.',
    fix: 'Start it (for ClamAV: `sudo systemctl enable --now clamav-daemon clamav-freshclam`), or install it as your IT team explains.',
    admin:
      "Deploy and enable every agent named in policy `malware.requiredAgents.LINUX` (package + service unit from your configuration management); the evidence's `not_running` lists which are missing.",
  },
  signatures_outdated: {
    summary: (c) =>
      `The anti-malware signatures are ${num(c, 'signature_age_days') !== undefined ? `${num(c, 'signature_age_days')} days` : 'too'} old${requires(maxSignatureAge(c) !== undefined ? `at most ${maxSignatureAge(c)} days` : undefined)}.`,
    fix: 'Update them: ClamAV `sudo systemctl restart clamav-freshclam` (or `sudo freshclam`), and keep the freshclam service enabled; Microsoft Defender `sudo mdatp definitions update`.',
    admin:
      'Keep clamav-freshclam enabled and allow it to reach the signature mirror (or your local mirror); raise `malware.maxSignatureAgeDays` only if updates are deliberately slower.',
  },
  signatures_unreadable: {
    summary: 'The anti-malware agent runs, but the age of its signatures could not be read.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin: `${RUN_AS_ROOT} ClamAV's database directory (/var/lib/clamav) must be readable.`,
  },
  agent_unlicensed: {
    summary: 'Microsoft Defender runs but reports no license: it is not onboarded and does not protect this device.',
    fix: 'Ask your IT team for the onboarding package and run it; `mdatp health --field licensed` then says true.',
    admin:
      'Onboard the device with the Defender onboarding script (MicrosoftDefenderATPOnboardingLinuxServer.py) from your configuration management.',
  },
  realtime_protection_off: {
    summary: 'Microsoft Defender runs, but its real-time protection is off.',
    fix: 'Turn it on: `sudo mdatp config real-time-protection --value enabled`.',
    admin: 'Set `enableRealTimeProtection: true` in the managed configuration (/etc/opt/microsoft/mdatp/managed/mdatp_managed.json).',
  },
  passive_mode: {
    summary: 'Microsoft Defender runs in passive mode: it detects but does not block or remove threats.',
    fix: 'Ask your IT team whether another anti-malware product is meant to protect this device; otherwise `sudo mdatp config passive-mode --value disabled`.',
    admin:
      'Set `passiveMode: false` (or `enforcementLevel: "real_time"`) in the managed configuration, unless another required agent protects the device.',
  },
  agent_unhealthy: {
    summary: 'Microsoft Defender reports itself unhealthy.',
    fix: 'Run `mdatp health --field health_issues` to see why, then follow Microsoft\'s "Investigate agent health issues" page.',
    admin: 'Collect `mdatp health` from the device (the evidence counts its health issues) and fix the issues it lists.',
  },
  agent_health_unreadable: {
    summary: 'The required security agent runs, but its health report could not be read, so whether it protects this device is not known.',
    fix: [
      {
        for: 'Microsoft Defender',
        applies: healthOf('microsoft-defender'),
        steps: 'run `mdatp health`; if it says it cannot connect to the daemon, restart it with `sudo systemctl restart mdatp`.',
      },
      {
        for: 'CrowdStrike Falcon',
        applies: healthOf('falcon-sensor'),
        steps:
          'run `sudo /opt/CrowdStrike/falconctl -g --rfm-state --aid`; if it fails, restart the sensor with `sudo systemctl restart falcon-sensor`.',
      },
      {
        for: 'SentinelOne',
        applies: healthOf('sentinelone'),
        steps:
          'run `sudo /opt/sentinelone/bin/sentinelctl control status`; if it fails, restart the agent with `sudo systemctl restart sentinelone`.',
      },
      {
        for: 'Wazuh',
        applies: healthOf('wazuh-agent'),
        steps:
          "run `sudo cat /var/ossec/var/run/wazuh-agentd.state`; if it is missing, the agent's `agent.state_interval` is 0 or the agent is older than this check knows: restart it with `sudo systemctl restart wazuh-agent`.",
      },
    ],
    admin: `${RUN_AS_ROOT} The agent's own tool must answer as root (/usr/bin/mdatp, /opt/CrowdStrike/falconctl, /opt/sentinelone/bin/sentinelctl; Wazuh's /var/ossec/var/run/wazuh-agentd.state must be readable); the evidence's \`agent\` names the product, \`health_error\` or \`fields_unread\` what failed.`,
  },
  agent_not_registered: {
    summary:
      'CrowdStrike Falcon runs but has never registered with the CrowdStrike cloud (it has no agent ID): it receives no policy and does not protect this device.',
    fix: "Ask your IT team to check the sensor's customer ID (CID) and that this device can reach the CrowdStrike cloud; `sudo /opt/CrowdStrike/falconctl -g --aid` then shows an ID.",
    admin:
      "Set the CID with `sudo /opt/CrowdStrike/falconctl -s --cid=<CID with checksum>` (or your deployment's installer options), allow the sensor to reach the CrowdStrike cloud (proxy: `--aph`/`--app`), then restart falcon-sensor.",
  },
  reduced_functionality_mode: {
    summary:
      'CrowdStrike Falcon runs in reduced functionality mode: it only reports that it is installed and does not detect or block threats.',
    fix: 'Ask your IT team; usually the running kernel is newer than the sensor supports: a sensor update or booting a supported kernel ends it.',
    admin:
      "Update the sensor to a version that supports this kernel, or let it use the eBPF user-mode backend (`falconctl -s --backend=auto`); the evidence's `falcon.rfm_reason` and `rfm_code` say why. Pin kernel updates to supported ones (CrowdStrike's kernel support list).",
  },
  ...wazuhRemedies,
  agent_disabled: {
    summary: 'SentinelOne runs but its agent is disabled: it does not protect this device.',
    fix: 'Ask your IT team to enable the agent again (from the SentinelOne console, or `sudo /opt/sentinelone/bin/sentinelctl control enable`).',
    admin:
      'Enable the agent from the SentinelOne management console (Actions > Enable Agent), or locally with `sentinelctl control enable`; find out who disabled it.',
  },
  protection_engine_disabled: {
    summary: (c) =>
      `SentinelOne runs, but ${Array.isArray(c.evidence.engines_disabled) && c.evidence.engines_disabled.length > 1 ? 'its detection engines are' : 'a detection engine is'} disabled.`,
    fix: 'Ask your IT team: the engines are switched by the SentinelOne policy for this device.',
    admin:
      "Turn the engines back on in the device's SentinelOne policy (Engines: Static AI for the DFI engine, Behavioral AI for the dynamic engine); the evidence's `engines_disabled` names them.",
  },
  definitions_status_unrecognized: {
    summary: 'Microsoft Defender reports a definitions status the agent does not know, so their state is not decided.',
    fix: 'Update the definitions: `sudo mdatp definitions update`.',
    admin: "Check the evidence's `defender.definitions_status`; report it so the agent learns its meaning.",
  },
  process_table_incomplete: PROCESS_TABLE_INCOMPLETE,
};

export const linuxRemediation: PlatformCatalogue<typeof checks, Shared> = {
  platform: 'LINUX',
  shared: sharedRemedies({
    service: 'the systemd unit `device-agent.service`, which runs as root (`sudo systemctl enable --now device-agent`)',
    elevated: '`sudo device-agent check`',
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

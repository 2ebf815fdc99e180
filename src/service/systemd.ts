// Linux: a hardened systemd unit. The agent runs as root (it reads root-only machine facts such as
// the DMI product UUID and the firewall ruleset) but inside a read-only view of the system, with
// write access to its state directory only and a capability set cut down to what the checks use.
import { posix } from 'node:path';
import type { PlanStep } from './plan';
import { daemonArgs, SERVICE_DESCRIPTION, SERVICE_NAME, type ServiceModule, type ServiceSpec, posixProgramLayout } from './types';

export const UNIT_NAME = `${SERVICE_NAME}.service`;
/** Where `device-agent install` puts the unit; packages use their vendor directory instead. */
const ADMIN_UNIT_DIR = '/etc/systemd/system';

/**
 * Capabilities the checks need as root, nothing else:
 * - CAP_DAC_READ_SEARCH: read a desktop user's settings under a 0700 home (screen lock);
 * - CAP_SETUID, CAP_SETGID: run a command as the session user (gsettings in the user's context);
 * - CAP_NET_ADMIN: read the firewall ruleset (nft, iptables).
 */
const CAPABILITIES = ['CAP_DAC_READ_SEARCH', 'CAP_NET_ADMIN', 'CAP_SETGID', 'CAP_SETUID'] as const;

/** A word as systemd's unit parser reads it: quoted when needed, `%` and `$` escaped. */
function systemdWord(word: string): string {
  const escaped = word.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (escaped !== '' && !/[\s"'\\;]/.test(escaped)) return escaped;
  return `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** `StateDirectory=` takes a path relative to /var/lib; other places need `ReadWritePaths=`. */
function stateDirectives(stateDir: string): string[] {
  const relative = posix.relative('/var/lib', stateDir);
  if (relative !== '' && !relative.startsWith('..') && !posix.isAbsolute(relative)) {
    return [`StateDirectory=${systemdWord(relative)}`, 'StateDirectoryMode=0700'];
  }
  return [`ReadWritePaths=${systemdWord(stateDir)}`];
}

export function systemdUnit(spec: ServiceSpec): string {
  return [
    '[Unit]',
    `Description=${SERVICE_DESCRIPTION}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${daemonArgs(spec).map(systemdWord).join(' ')}`,
    // `run` exits only on SIGTERM (code 0) or a fatal error: restart only on the latter.
    'Restart=on-failure',
    'RestartSec=10s',
    'TimeoutStopSec=15s',
    'UMask=0077',
    ...stateDirectives(spec.stateDir),
    'ProtectSystem=strict',
    'ProtectHome=read-only',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'NoNewPrivileges=yes',
    `CapabilityBoundingSet=${CAPABILITIES.join(' ')}`,
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'RestrictSUIDSGID=yes',
    'RestrictRealtime=yes',
    'RestrictNamespaces=yes',
    'LockPersonality=yes',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    'SystemCallArchitectures=native',
    `SyslogIdentifier=${SERVICE_NAME}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

function unitPath(): string {
  return posix.join(ADMIN_UNIT_DIR, UNIT_NAME);
}

export const systemdService: ServiceModule = {
  platform: 'LINUX',
  style: 'posix',
  programLayout: () => posixProgramLayout('/usr', 'lib'),
  installSteps(spec: ServiceSpec): PlanStep[] {
    return [
      { kind: 'write', path: unitPath(), content: systemdUnit(spec), mode: 0o644 },
      { kind: 'run', argv: ['systemctl', 'daemon-reload'] },
      // restart, not start: a re-install must pick up a new executable or unit.
      { kind: 'run', argv: ['systemctl', 'enable', UNIT_NAME] },
      { kind: 'run', argv: ['systemctl', 'restart', UNIT_NAME] },
    ];
  },
  uninstallSteps(): PlanStep[] {
    return [
      { kind: 'run', argv: ['systemctl', 'disable', '--now', UNIT_NAME], mayFail: true },
      { kind: 'remove', path: unitPath() },
      { kind: 'run', argv: ['systemctl', 'daemon-reload'], mayFail: true },
      { kind: 'run', argv: ['systemctl', 'reset-failed', UNIT_NAME], mayFail: true },
    ];
  },
  logLocation: () => `the journal: journalctl -u ${SERVICE_NAME}`,
};

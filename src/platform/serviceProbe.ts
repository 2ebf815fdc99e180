// Whether the system service is installed, enabled and running, for `device-agent doctor`. Asks the
// service manager itself (a unit file on disk is not a running service). systemd is probed; on the
// other platforms doctor says UNKNOWN and names the command that answers.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Platform } from '../protocol/schemas';
import { LAUNCHD_LABEL } from '../service/launchd';
import { RC_NAME } from '../service/rcd';
import { UNIT_NAME as UNIT } from '../service/systemd';
import { SERVICE_NAME } from '../service/types';
import { currentPlatform } from './current';

export type ServiceState =
  | { kind: 'known'; name: string; installed: boolean; enabled: boolean; running: boolean; fix: string }
  | { kind: 'unknown'; reason: string; next: string }
  /** The machine runs no service manager the installer supports (a container, say). */
  | { kind: 'no_manager'; reason: string };

const ASK_BY_HAND: Record<Exclude<Platform, 'LINUX'>, string> = {
  DARWIN: `run: sudo launchctl print system/${LAUNCHD_LABEL}`,
  FREEBSD: `run: service ${RC_NAME} status; sysrc -n ${RC_NAME}_enable`,
  WINDOWS: `run: sc.exe query ${SERVICE_NAME}`,
};

export function serviceProbe(platform: Platform = currentPlatform()): ServiceState {
  if (platform !== 'LINUX')
    return { kind: 'unknown', reason: "doctor does not ask this platform's service manager yet", next: ASK_BY_HAND[platform] };
  // sd_booted(3): systemd is the running init exactly when this directory exists.
  if (!existsSync('/run/systemd/system'))
    return {
      kind: 'no_manager',
      reason: 'systemd is not running on this machine (no /run/systemd/system): no system service can run here',
    };
  return systemdState(
    spawnSync('systemctl', ['show', '--property=LoadState,UnitFileState,ActiveState', UNIT], { encoding: 'utf8', timeout: 5000 }),
  );
}

/** Reads `systemctl show` output (KEY=value lines). */
function systemdState(result: { status: number | null; stdout?: string | null; stderr?: string | null; error?: Error }): ServiceState {
  const next = `run: systemctl status ${UNIT}`;
  if (result.error) return { kind: 'unknown', reason: `systemctl could not run: ${result.error.message}`, next };
  if (result.status !== 0) {
    return {
      kind: 'unknown',
      reason: `systemctl failed: ${(result.stderr ?? '').trim().split('\n', 1)[0] || `exit ${result.status}`}`,
      next,
    };
  }
  const values = Object.fromEntries(
    (result.stdout ?? '')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  if (!values.LoadState) return { kind: 'unknown', reason: 'systemctl show printed no LoadState', next };
  const installed = values.LoadState !== 'not-found';
  const enabled = values.UnitFileState === 'enabled';
  const running = values.ActiveState === 'active';
  const fix = !enabled ? `sudo systemctl enable --now ${UNIT}` : `sudo systemctl restart ${UNIT}; journalctl -u ${SERVICE_NAME}`;
  return { kind: 'known', name: UNIT, installed, enabled, running, fix };
}

// TIME_SYNC on Linux (research §4.2): the clock is disciplined by a network time source. State
// first (the kernel's sync flag via timedatectl, chrony's leap status, ntpd's system variables),
// then whether any sync daemon runs at all (/proc, so it works without systemd or procps).
import type { Policy } from '../policy';
import { defineCheck, type CheckContext } from '../types';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { containerEvidence, containerFacts, containerVerdict, type ContainerFacts } from './container';
import { processTable, runningCommands } from './processes';
import { systemdBooted } from './systemd';
import { parseBoolean, parseKeyValue } from '../text';
import { chronyTrackingText, ntpctlClockSync, ntpqClockSync, type ClockSync } from '../timeDaemons';
import { runTool } from './tools';

const TIMEDATECTL = '/usr/bin/timedatectl';
const CHRONYC = '/usr/bin/chronyc';
const NTPQ = '/usr/bin/ntpq';
const NTPCTL = '/usr/sbin/ntpctl';

/** Time daemons by program name (checks/linux/processes.ts matches the kernel's cut comm too). */
const TIME_DAEMONS = ['chronyd', 'ntpd', 'systemd-timesyncd', 'openntpd', 'ptp4l', 'phc2sys'];

/** A backend's answer: synchronised or not (with what it measured), or why it could not say. */
export interface SyncState extends ClockSync {
  /** timedatectl only: a sync service is enabled. */
  ntpEnabled?: boolean;
}
type SyncReading = SyncState | { unreadable: CommandFailureReason };

interface TimeSyncFacts {
  container: ContainerFacts;
  /** Daemons seen running; null when the process table is incomplete or unreadable. */
  daemons: string[] | null;
  timedatectl?: SyncReading;
  chrony?: SyncReading;
  ntpd?: SyncReading;
  uptimeSeconds?: number;
}

/** `timedatectl show` (systemd ≥ 239) or the older `timedatectl status` text. */
export function parseTimedatectl(stdout: string): SyncState | undefined {
  const kv = parseKeyValue(stdout);
  let synced = parseBoolean(kv.NTPSynchronized);
  let ntp = parseBoolean(kv.NTP);
  if (synced === undefined) {
    synced = parseBoolean(/^\s*(?:System clock synchronized|NTP synchronized):\s*(\S+)/m.exec(stdout)?.[1]);
    const service = /^\s*(?:NTP service|NTP enabled|systemd-timesyncd\.service active):\s*(\S+)/m.exec(stdout)?.[1];
    ntp = service === 'active' ? true : service === 'inactive' ? false : parseBoolean(service);
  }
  if (synced === undefined) return undefined;
  return ntp === undefined ? { synchronized: synced } : { synchronized: synced, ntpEnabled: ntp };
}

async function query(
  ctx: CheckContext,
  command: string,
  args: string[],
  parse: (s: string) => SyncState | undefined,
): Promise<SyncReading> {
  const result = await runTool(ctx.host, command, args);
  if (result.error) return { unreadable: commandFailureReason(result) };
  return (result.exitCode === 0 ? parse(result.stdout) : undefined) ?? { unreadable: 'parse_error' };
}

async function collect(ctx: CheckContext): Promise<TimeSyncFacts> {
  const [container, table, booted, uptime] = await Promise.all([
    containerFacts(ctx),
    processTable(ctx),
    systemdBooted(ctx),
    ctx.host.readFile('/proc/uptime'),
  ]);
  const running = runningCommands(table);
  const daemons = table.complete ? running.among(TIME_DAEMONS) : null;
  const facts: TimeSyncFacts = { container, daemons };
  if (uptime.ok) facts.uptimeSeconds = Number.parseFloat(uptime.text);
  const queries: Promise<void>[] = [];
  // timedatectl talks to systemd-timedated over D-Bus: only useful when systemd runs.
  if (booted)
    queries.push(
      query(ctx, TIMEDATECTL, ['show', '-p', 'NTP', '-p', 'NTPSynchronized', '-p', 'CanNTP'], parseTimedatectl).then(async (r) => {
        // systemd < 239 has no "show": fall back to the status text.
        facts.timedatectl = 'unreadable' in r ? await query(ctx, TIMEDATECTL, ['status'], parseTimedatectl) : r;
      }),
    );
  if (running.has('chronyd'))
    queries.push(query(ctx, CHRONYC, ['-n', 'tracking'], chronyTrackingText).then((r) => void (facts.chrony = r)));
  if (running.has('ntpd')) {
    // ntpd is the comm name of ntpd, ntpsec, OpenNTPD and busybox ntpd alike: ask each tool.
    queries.push(
      query(ctx, NTPQ, ['-c', 'rv'], ntpqClockSync).then(async (r) => {
        facts.ntpd = 'unreadable' in r ? await query(ctx, NTPCTL, ['-s', 'status'], ntpctlClockSync) : r;
      }),
    );
  }
  await Promise.all(queries);
  return facts;
}

const STARTUP_GRACE_SECONDS = 15 * 60;

function evaluate(facts: TimeSyncFacts, policy: Policy) {
  const inContainer = containerVerdict(facts.container, policy);
  if (inContainer) return inContainer;
  const backends = [
    ['timedatectl', facts.timedatectl],
    ['chrony', facts.chrony],
    ['ntpd', facts.ntpd],
  ] as const;
  const readable = backends.filter((b): b is [(typeof b)[0], SyncState] => b[1] !== undefined && 'synchronized' in b[1]);
  const synced = readable.find(([, r]) => r.synchronized);
  const evidence: Record<string, unknown> = { daemons: facts.daemons, ...containerEvidence(facts.container) };
  if (facts.timedatectl && 'ntpEnabled' in facts.timedatectl) evidence.ntp_enabled = facts.timedatectl.ntpEnabled;
  const detail = synced ?? readable[0];
  if (detail) {
    evidence.source = detail[0];
    evidence.synchronized = detail[1].synchronized;
    if (detail[1].stratum !== undefined) evidence.stratum = detail[1].stratum;
    if (detail[1].offsetSeconds !== undefined) evidence.offset_s = detail[1].offsetSeconds;
  }
  // The kernel's synchronised flag (all timedatectl reads) stays set for hours after the daemon
  // that set it stopped: without a running daemon nothing keeps the clock right.
  if (synced && synced[0] === 'timedatectl' && facts.daemons?.length === 0) return fail({ ...evidence, rule: 'sync_daemon_not_running' });
  if (synced) {
    const max = policy.timeSync.maxOffsetSeconds;
    const offset = synced[1].offsetSeconds;
    if (max !== null && offset !== undefined && Math.abs(offset) > max)
      return fail({ ...evidence, max_offset_s: max, rule: 'offset_too_large' });
    return pass({ ...evidence, rule: 'synchronized' });
  }
  const serviceOn = (facts.daemons?.length ?? 0) > 0 || evidence.ntp_enabled === true;
  if (readable.length > 0 && serviceOn) {
    // Right after boot a daemon has not converged yet.
    if (facts.uptimeSeconds !== undefined && facts.uptimeSeconds < STARTUP_GRACE_SECONDS)
      return unknown('sync_pending', { ...evidence, uptime_s: Math.round(facts.uptimeSeconds) });
    return fail({ ...evidence, rule: 'not_synchronized' });
  }
  if (facts.daemons !== null && facts.daemons.length === 0 && !serviceOn) {
    return fail({
      ...evidence,
      source: evidence.source ?? 'procfs',
      synchronized: evidence.synchronized ?? null,
      rule: 'no_time_sync_service',
    });
  }
  const failed = backends.map(([, r]) => r).find((r): r is { unreadable: CommandFailureReason } => r !== undefined && 'unreadable' in r);
  return unknown(facts.daemons === null ? 'process_table_incomplete' : (failed?.unreadable ?? 'sync_state_unreadable'), evidence);
}

export const timeSync = defineCheck({ key: 'TIME_SYNC', platform: 'LINUX', collect, evaluate });

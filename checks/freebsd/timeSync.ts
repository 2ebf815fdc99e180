// TIME_SYNC on FreeBSD (research §4.3): a time daemon runs (base ntpd, or chronyd / OpenNTPD
// from ports) and says the clock is synchronised. The process table decides "running", not
// `service … status`, whose non-zero exit for a service merely not enabled in rc.conf is no
// evidence; each daemon's own query tool decides "synchronised". rc.conf intent is evidence.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import { chronyTrackingCsv, ntpctlClockSync, ntpqClockSync, type ClockSync } from '../timeDaemons';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { parseProcessTable, processProbe, runningCommands } from './processes';
import { parseRcVars, rcEnabled, rcEvidence, rcProbe, type RcVars } from './rc';
import { interpretSysctl, jailProbe, jailVerdict, readSysctl } from './sysctl';

const NTPQ = '/usr/bin/ntpq';
const NTPQ_ARGS = ['-n', '-c', 'rv 0 leap,stratum,offset'] as const;
const NTPCTL = '/usr/local/sbin/ntpctl';
const CHRONYC = '/usr/local/bin/chronyc';
/** A daemon that started this recently may not have synchronised yet. */
const SYNC_GRACE_SECONDS = 1200;

interface TimeFacts {
  jailed: CommandResult;
  ps: CommandResult;
  rc: CommandResult;
  ntpq?: CommandResult;
  ntpctl?: CommandResult;
  chronyc?: CommandResult;
  boottime?: CommandResult;
}

const refused = (r: CommandResult) => !r.error && /Connection refused/.test(r.stderr);
/** ntpd up but refusing mode-6 queries ("restrict … noquery"): ntpq waits and gives up. */
const timedOut = (r: CommandResult) => !r.error && /timed out/.test(`${r.stdout}\n${r.stderr}`);

async function collectTime(ctx: CheckContext): Promise<TimeFacts> {
  const { host } = ctx;
  const [jailed, ps, rc] = await Promise.all([jailProbe(ctx), processProbe(ctx), rcProbe(ctx)]);
  const facts: TimeFacts = { jailed, ps, rc };
  const table = parseProcessTable(ps);
  if (!table.ok) return facts;
  const rcVars = parseRcVars(rc);
  const openntpd = rcVars.ok && rcEnabled(rcVars.values.openntpd_enable) === true;
  const queries: Promise<unknown>[] = [];
  // Base ntpd and OpenNTPD both run as "ntpd"; OpenNTPD does not answer ntpq (mode 6) queries.
  const running = runningCommands(table.processes);
  if (running.has('ntpd')) {
    queries.push(
      (async () => {
        if (!openntpd) facts.ntpq = await host.run(NTPQ, NTPQ_ARGS);
        if (openntpd || refused(facts.ntpq!)) facts.ntpctl = await host.run(NTPCTL, ['-s', 'status']);
      })(),
    );
  }
  if (running.has('chronyd')) queries.push(host.run(CHRONYC, ['-c', 'tracking']).then((r) => (facts.chronyc = r)));
  if (queries.length > 0) queries.push(readSysctl(host, 'kern.boottime').then((r) => (facts.boottime = r)));
  await Promise.all(queries);
  return facts;
}

export interface SyncState {
  daemon: 'ntpd' | 'openntpd' | 'chronyd';
  /** undefined: the daemon did not give a usable answer. */
  synced?: boolean;
  stratum?: number;
  offsetSeconds?: number;
  reason?: CommandFailureReason | 'daemon_not_answering';
}

/** A daemon's answer through its query tool, or why it gave none. */
function reading(
  daemon: SyncState['daemon'],
  result: CommandResult,
  notAnswering: boolean,
  read: (stdout: string) => ClockSync | undefined,
): SyncState {
  if (notAnswering) return { daemon, reason: 'daemon_not_answering' };
  if (result.error || result.exitCode !== 0) return { daemon, reason: commandFailureReason(result) };
  const clock = read(result.stdout);
  if (!clock) return { daemon, reason: 'parse_error' };
  const state: SyncState = { daemon, synced: clock.synchronized };
  if (clock.stratum !== undefined) state.stratum = clock.stratum;
  if (clock.offsetSeconds !== undefined) state.offsetSeconds = clock.offsetSeconds;
  return state;
}

/** `ntpq -c "rv 0 leap,stratum,offset"`: "leap=00, stratum=3, offset=-0.123" (offset in ms). */
export function parseNtpq(result: CommandResult): SyncState {
  return reading('ntpd', result, refused(result) || timedOut(result), ntpqClockSync);
}

/** OpenNTPD's `ntpctl -s status`: "4/4 peers valid, clock synced, stratum 3" or "… clock unsynced". */
export function parseNtpctl(result: CommandResult): SyncState {
  return reading('openntpd', result, !result.error && /^ntpctl: connect: /m.test(result.stderr), ntpctlClockSync);
}

/** `chronyc -c tracking`: the CSV form of chrony's tracking report. */
export function parseChronyc(result: CommandResult): SyncState {
  return reading('chronyd', result, !result.error && /^506 Cannot talk to daemon/m.test(result.stderr), chronyTrackingCsv);
}

/** `sysctl -n kern.boottime`: "{ sec = 1763700000, usec = 123456 } Fri Nov 21 04:40:00 2025". */
function parseBoottime(result: CommandResult | undefined): number | undefined {
  if (!result) return undefined;
  const read = interpretSysctl(result);
  const sec = read.state === 'value' ? /^\{ sec = (\d+), usec = \d+ \}/.exec(read.value)?.[1] : undefined;
  return sec === undefined ? undefined : Number(sec) * 1000;
}

function rcFor(rc: RcVars, daemon: SyncState['daemon']) {
  return rcEvidence(rc, daemon === 'openntpd' ? 'openntpd_enable' : daemon === 'chronyd' ? 'chronyd_enable' : 'ntpd_enable');
}

function evaluateTime(facts: TimeFacts, policy: Policy, now: Date) {
  const jail = jailVerdict(facts.jailed, policy, 'ps');
  if (jail) return jail;
  const rc = parseRcVars(facts.rc);
  const evidence: Evidence = {
    source: 'ps',
    rc_ntpd_enable: rcEvidence(rc, 'ntpd_enable'),
    // ntpdate sets the clock once at boot: not continuous synchronisation.
    rc_ntpdate_enable: rcEvidence(rc, 'ntpdate_enable'),
  };
  const table = parseProcessTable(facts.ps);
  if (!table.ok) return unknown(table.reason, evidence);
  const states: SyncState[] = [];
  // ntpctl answers for OpenNTPD; when it is not installed, ntpq's answer stands.
  if (facts.ntpctl && (facts.ntpctl.error !== 'not_found' || !facts.ntpq)) states.push(parseNtpctl(facts.ntpctl));
  else if (facts.ntpq) states.push(parseNtpq(facts.ntpq));
  if (facts.chronyc) states.push(parseChronyc(facts.chronyc));
  if (states.length === 0) {
    return runningCommands(table.processes).among(['ntpd', 'chronyd']).length > 0
      ? unknown('check_error', evidence)
      : fail({ ...evidence, running: false, rule: 'no_time_daemon' });
  }
  const describe = (s: SyncState): Evidence => ({
    source: s.daemon === 'chronyd' ? 'chronyc' : s.daemon === 'openntpd' ? 'ntpctl' : 'ntpq',
    daemon: s.daemon,
    rc_enabled: rcFor(rc, s.daemon),
    running: true,
    synced: s.synced ?? null,
    ...(s.stratum !== undefined ? { stratum: s.stratum } : {}),
    ...(s.offsetSeconds !== undefined ? { offset_seconds: Math.round(s.offsetSeconds * 1000) / 1000 } : {}),
  });
  const synced = states.find((s) => s.synced === true);
  if (synced) {
    const max = policy.timeSync.maxOffsetSeconds;
    const details = { ...evidence, ...describe(synced) };
    if (max !== null && synced.offsetSeconds !== undefined && Math.abs(synced.offsetSeconds) > max) {
      return fail({ ...details, max_offset_seconds: max, rule: 'offset' });
    }
    return pass({ ...details, rule: 'synced' });
  }
  const undecided = states.find((s) => s.synced === undefined);
  if (undecided) return unknown(undecided.reason ?? 'parse_error', { ...evidence, ...describe(undecided) });
  const details = { ...evidence, ...describe(states[0]!) };
  const bootMs = parseBoottime(facts.boottime);
  if (bootMs !== undefined && now.getTime() - bootMs < SYNC_GRACE_SECONDS * 1000) {
    return unknown('sync_pending', { ...details, uptime_seconds: Math.max(0, Math.floor((now.getTime() - bootMs) / 1000)) });
  }
  return fail({ ...details, rule: 'not_synced' });
}

export const timeSyncCheck = defineCheck({
  key: 'TIME_SYNC',
  platform: 'FREEBSD',
  collect: collectTime,
  evaluate: evaluateTime,
});

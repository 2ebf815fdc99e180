// TIME_SYNC on macOS (research §4.1): "Set date and time automatically" from `systemsetup
// -getusingnetworktime` (root only), a profile's forceAutomaticDateAndTime when systemsetup cannot
// answer. That is the intent: timed keeps no readable record of its last synchronisation, so the
// effect is measured (issue 32): the clock's offset from sntp against the configured server, held
// against policy.timeSync.maxOffsetSeconds or, unset, DEFAULT_MAX_OFFSET_SECONDS. Network time on
// never PASSes without that measurement. A Mac kept in time by chrony (Homebrew) shows "Network
// Time: Off" because timed is off: when systemsetup does not say On, `chronyc -n tracking` is
// asked, and a synchronised chrony (its own record of the effect) is the time source in force.
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { chronyTrackingText, type ClockSync } from '../timeDaemons';
import { plistBool } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';
import { parseSystemsetup, SYSTEMSETUP } from './systemsetup';

const SNTP = '/usr/bin/sntp';
/**
 * The offset allowed when the policy sets none: 270 s, the macOS Security Compliance Project's
 * os_time_offset_limit_configure ("must not drift more than four minutes and thirty seconds",
 * measured the same way: sntp against `systemsetup -getnetworktimeserver`).
 */
const DEFAULT_MAX_OFFSET_SECONDS = 270;
/** sntp's wait for each server address, seconds; the runner stops it after SNTP_KILL_MS in any case. */
const SNTP_WAIT_SECONDS = '2';
const SNTP_KILL_MS = 6_000;
/** Homebrew's chronyc: Apple silicon prefix first, then Intel's. */
const CHRONYC_PATHS = ['/opt/homebrew/bin/chronyc', '/usr/local/bin/chronyc'] as const;
const MANAGED_APPLICATION_ACCESS = `${MANAGED_PREFERENCES}/com.apple.applicationaccess.plist`;

export interface TimeSyncFacts {
  usingNetworkTime: CommandResult;
  managed: PlistFile;
  /** `chronyc -n tracking`, asked only when systemsetup does not say On (first chronyc found). */
  chrony?: CommandResult;
  /** The configured time server, and sntp's exchange with it when its name is safe to pass. */
  offset: { server: CommandResult; sntp?: CommandResult };
}

/** The offset line of `sntp`: "+0.012345 +/- 0.023456 time.apple.com 17.253.x.x". */
function parseSntpOffset(stdout: string): number | undefined {
  const m = /^([+-]\d+(?:\.\d+)?) \+\/- \d+(?:\.\d+)? \S+/m.exec(stdout);
  return m ? Number(m[1]) : undefined;
}

/** sntp's "Exchange failed: <result>" as an evidence token (its result names, as `sntp -d` prints them). */
const SNTP_ERRORS: Record<string, string> = {
  Timeout: 'timeout',
  'DNS lookup failure': 'dns_lookup_failure',
  'Kiss of death': 'kiss_of_death',
};
function sntpError(run: CommandResult): string {
  const result = /^sntp: Exchange failed: (.+?)\s*$/m.exec(`${run.stdout}\n${run.stderr}`)?.[1];
  return result === undefined ? 'no_offset_line' : (SNTP_ERRORS[result] ?? 'other');
}

function offsetVerdict(facts: TimeSyncFacts, policy: Policy, evidence: Evidence) {
  const max = policy.timeSync.maxOffsetSeconds ?? DEFAULT_MAX_OFFSET_SECONDS;
  const withMax = { ...evidence, max_offset_s: max, max_offset_from: policy.timeSync.maxOffsetSeconds === null ? 'default' : 'policy' };
  const { server, sntp } = facts.offset;
  if (!sntp) {
    const name = parseSystemsetup(server, 'Network Time Server');
    return unknown('time_server_unknown', { ...withMax, systemsetup_server: 'value' in name ? 'unusable_name' : name.reason });
  }
  // Stopped by the runner: the server did not answer in time, as sntp's own Timeout says.
  if (sntp.error === 'timeout') return unknown('time_server_unreachable', { ...withMax, sntp_error: 'timeout' });
  if (sntp.error) return unknown(commandFailureReason(sntp), { ...withMax, measured_by: 'sntp' });
  const measured = parseSntpOffset(sntp.stdout);
  if (measured === undefined) return unknown('time_server_unreachable', { ...withMax, sntp_error: sntpError(sntp) });
  const withOffset = { ...withMax, offset_s: measured };
  return Math.abs(measured) > max ? fail({ ...withOffset, rule: 'offset' }) : pass({ ...withOffset, rule: 'offset_within_limit' });
}

function chronyVerdict(reading: ClockSync, maxOffset: number | null, evidence: Evidence) {
  Object.assign(evidence, { source: 'chronyc', synchronized: reading.synchronized });
  if (reading.stratum !== undefined) evidence.stratum = reading.stratum;
  if (!reading.synchronized) return fail({ ...evidence, rule: 'chrony_unsynchronized' });
  if (maxOffset === null) return pass({ ...evidence, rule: 'chrony_synchronized' });
  const withMax = { ...evidence, max_offset_s: maxOffset };
  if (reading.offsetSeconds === undefined) return unknown('offset_unknown', withMax);
  const withOffset = { ...withMax, offset_s: reading.offsetSeconds };
  return Math.abs(reading.offsetSeconds) > maxOffset
    ? fail({ ...withOffset, rule: 'offset' })
    : pass({ ...withOffset, rule: 'chrony_synchronized' });
}

export function evaluateTimeSync(facts: TimeSyncFacts, policy: Policy) {
  const state = parseSystemsetup(facts.usingNetworkTime, 'Network Time');
  const chrony = facts.chrony && !facts.chrony.error && facts.chrony.exitCode === 0 ? chronyTrackingText(facts.chrony.stdout) : undefined;
  const forced = facts.managed.state === 'present' ? plistBool(facts.managed.dict.forceAutomaticDateAndTime) : undefined;
  const evidence: Evidence = { managed: forced === true };
  // chrony keeps its own record of synchronisation; only an offset limit the policy sets is held against it.
  const chronyMax = policy.timeSync.maxOffsetSeconds;
  if ('value' in state) {
    Object.assign(evidence, { source: 'systemsetup' });
    if (state.value === 'Off') {
      evidence.network_time = false;
      return chrony ? chronyVerdict(chrony, chronyMax, evidence) : fail({ ...evidence, rule: 'network_time_off' });
    }
    if (state.value !== 'On') return unknown('parse_error', evidence);
    evidence.network_time = true;
    return offsetVerdict(facts, policy, evidence);
  }
  if (forced === true) return offsetVerdict(facts, policy, { ...evidence, source: 'mdm', network_time: true, systemsetup: state.reason });
  // systemsetup cannot say whether timed runs: a synchronised chrony is enough, an unsynchronised one decides nothing.
  if (chrony?.synchronized) return chronyVerdict(chrony, chronyMax, { ...evidence, systemsetup: state.reason });
  return unknown(state.reason, { ...evidence, source: 'systemsetup' });
}

async function measureOffset(ctx: CheckContext): Promise<TimeSyncFacts['offset']> {
  const server = await ctx.host.run(SYSTEMSETUP, ['-getnetworktimeserver']);
  const name = parseSystemsetup(server, 'Network Time Server');
  // Only a host name or address goes on sntp's command line, never something it could read as an option.
  if (!('value' in name) || !/^[A-Za-z0-9][A-Za-z0-9.:-]*$/.test(name.value)) return { server };
  return { server, sntp: await ctx.host.run(SNTP, ['-t', SNTP_WAIT_SECONDS, name.value], { timeoutMs: SNTP_KILL_MS }) };
}

export const timeSync = defineCheck({
  key: 'TIME_SYNC',
  platform: 'DARWIN',
  async collect(ctx): Promise<TimeSyncFacts> {
    // The measurement runs beside systemsetup's slow answer (1–3 s); it is wasted only when network time is off.
    const [usingNetworkTime, managed, offset] = await Promise.all([
      ctx.host.run(SYSTEMSETUP, ['-getusingnetworktime']),
      readPlistFile(ctx, MANAGED_APPLICATION_ACCESS),
      measureOffset(ctx),
    ]);
    const facts: TimeSyncFacts = { usingNetworkTime, managed, offset };
    const answer = parseSystemsetup(usingNetworkTime, 'Network Time');
    if (!('value' in answer) || answer.value !== 'On') {
      for (const chronyc of CHRONYC_PATHS) {
        const run = await ctx.host.run(chronyc, ['-n', 'tracking']);
        if (run.error !== 'not_found') {
          facts.chrony = run;
          break;
        }
      }
    }
    return facts;
  },
  evaluate: (facts, policy) => evaluateTimeSync(facts, policy),
});

// TIME_SYNC on macOS (research §4.1): "Set date and time automatically" from `systemsetup
// -getusingnetworktime` (root only), a profile's forceAutomaticDateAndTime when systemsetup cannot
// answer, and, only when policy.timeSync.maxOffsetSeconds is set, the clock offset from sntp
// against the configured server (that costs a network exchange). A Mac kept in time by chrony
// (Homebrew) shows "Network Time: Off" because timed is off: when systemsetup does not say On,
// `chronyc -n tracking` is asked, and a synchronised chrony is the time source in force.
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import type { Policy } from '../policy';
import { fail, pass, unknown } from '../verdict';
import { chronyTrackingText, type ClockSync } from '../timeDaemons';
import { plistBool } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';
import { parseSystemsetup, SYSTEMSETUP } from './systemsetup';

const SNTP = '/usr/bin/sntp';
/** Homebrew's chronyc: Apple silicon prefix first, then Intel's. */
const CHRONYC_PATHS = ['/opt/homebrew/bin/chronyc', '/usr/local/bin/chronyc'] as const;
const MANAGED_APPLICATION_ACCESS = `${MANAGED_PREFERENCES}/com.apple.applicationaccess.plist`;

export interface TimeSyncFacts {
  usingNetworkTime: CommandResult;
  managed: PlistFile;
  /** `chronyc -n tracking`, asked only when systemsetup does not say On (first chronyc found). */
  chrony?: CommandResult;
  /** Present only when the policy asks for an offset measurement. */
  offset?: { server: CommandResult; sntp?: CommandResult };
}

/** The offset line of `sntp`: "+0.012345 +/- 0.023456 time.apple.com 17.253.x.x". */
function parseSntpOffset(stdout: string): number | undefined {
  const m = /^([+-]\d+(?:\.\d+)?) \+\/- \d+(?:\.\d+)? \S+/m.exec(stdout);
  return m ? Number(m[1]) : undefined;
}

function offsetVerdict(facts: TimeSyncFacts, maxOffset: number, evidence: Evidence) {
  const measured = facts.offset?.sntp && !facts.offset.sntp.error ? parseSntpOffset(facts.offset.sntp.stdout) : undefined;
  const withMax = { ...evidence, max_offset_s: maxOffset };
  if (measured === undefined) return unknown('offset_unknown', withMax);
  const withOffset = { ...withMax, offset_s: measured };
  return Math.abs(measured) > maxOffset ? fail({ ...withOffset, rule: 'offset' }) : pass({ ...withOffset, rule: 'network_time_on' });
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
  const maxOffset = policy.timeSync.maxOffsetSeconds;
  if ('value' in state) {
    Object.assign(evidence, { source: 'systemsetup' });
    if (state.value === 'Off') {
      evidence.network_time = false;
      return chrony ? chronyVerdict(chrony, maxOffset, evidence) : fail({ ...evidence, rule: 'network_time_off' });
    }
    if (state.value !== 'On') return unknown('parse_error', evidence);
    evidence.network_time = true;
    return maxOffset === null ? pass({ ...evidence, rule: 'network_time_on' }) : offsetVerdict(facts, maxOffset, evidence);
  }
  if (forced === true) {
    Object.assign(evidence, { source: 'mdm', network_time: true, systemsetup: state.reason });
    return maxOffset === null ? pass({ ...evidence, rule: 'profile_forces' }) : offsetVerdict(facts, maxOffset, evidence);
  }
  // systemsetup cannot say whether timed runs: a synchronised chrony is enough, an unsynchronised one decides nothing.
  if (chrony?.synchronized) return chronyVerdict(chrony, maxOffset, { ...evidence, systemsetup: state.reason });
  return unknown(state.reason, { ...evidence, source: 'systemsetup' });
}

async function measureOffset(ctx: CheckContext): Promise<TimeSyncFacts['offset']> {
  const server = await ctx.host.run(SYSTEMSETUP, ['-getnetworktimeserver']);
  const name = parseSystemsetup(server, 'Network Time Server');
  // Only a host name or address goes on sntp's command line, never something it could read as an option.
  if (!('value' in name) || !/^[A-Za-z0-9][A-Za-z0-9.:-]*$/.test(name.value)) return { server };
  return { server, sntp: await ctx.host.run(SNTP, ['-t', '5', name.value]) };
}

export const timeSync = defineCheck({
  key: 'TIME_SYNC',
  platform: 'DARWIN',
  async collect(ctx): Promise<TimeSyncFacts> {
    const [usingNetworkTime, managed, offset] = await Promise.all([
      ctx.host.run(SYSTEMSETUP, ['-getusingnetworktime']),
      readPlistFile(ctx, MANAGED_APPLICATION_ACCESS),
      ctx.policy.timeSync.maxOffsetSeconds === null ? undefined : measureOffset(ctx),
    ]);
    const facts: TimeSyncFacts = offset ? { usingNetworkTime, managed, offset } : { usingNetworkTime, managed };
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

// TIME_SYNC on macOS (research §4.1): "Set date and time automatically" from `systemsetup
// -getusingnetworktime` (root only), a profile's forceAutomaticDateAndTime when systemsetup cannot
// answer, and, only when policy.timeSync.maxOffsetSeconds is set, the clock offset from sntp
// against the configured server (that costs a network exchange).
import { defineCheck, type CheckContext, type CommandResult, type Evidence, type Verdict } from '../types';
import type { Policy } from '../policy';
import { fail, pass, unknown } from '../verdict';
import { plistBool } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';
import { parseSystemsetup, SYSTEMSETUP } from './systemsetup';

export const SNTP = '/usr/bin/sntp';
export const MANAGED_APPLICATION_ACCESS = `${MANAGED_PREFERENCES}/com.apple.applicationaccess.plist`;

export interface TimeSyncFacts {
  usingNetworkTime: CommandResult;
  managed: PlistFile;
  /** Present only when the policy asks for an offset measurement. */
  offset?: { server: CommandResult; sntp?: CommandResult };
}

/** The offset line of `sntp`: "+0.012345 +/- 0.023456 time.apple.com 17.253.x.x". */
export function parseSntpOffset(stdout: string): number | undefined {
  const m = /^([+-]\d+(?:\.\d+)?) \+\/- \d+(?:\.\d+)? \S+/m.exec(stdout);
  return m ? Number(m[1]) : undefined;
}

function offsetVerdict(facts: TimeSyncFacts, maxOffset: number, evidence: Evidence): Verdict {
  const measured = facts.offset?.sntp && !facts.offset.sntp.error ? parseSntpOffset(facts.offset.sntp.stdout) : undefined;
  const withMax = { ...evidence, max_offset_s: maxOffset };
  if (measured === undefined) return unknown('offset_unknown', withMax);
  const withOffset = { ...withMax, offset_s: measured };
  return Math.abs(measured) > maxOffset ? fail({ ...withOffset, rule: 'offset' }) : pass({ ...withOffset, rule: 'network_time_on' });
}

export function evaluateTimeSync(facts: TimeSyncFacts, policy: Policy): Verdict {
  const state = parseSystemsetup(facts.usingNetworkTime, 'Network Time');
  const forced = facts.managed.state === 'present' ? plistBool(facts.managed.dict.forceAutomaticDateAndTime) : undefined;
  const evidence: Evidence = { managed: forced === true };
  const maxOffset = policy.timeSync.maxOffsetSeconds;
  if ('value' in state) {
    Object.assign(evidence, { source: 'systemsetup' });
    if (state.value === 'Off') return fail({ ...evidence, network_time: false, rule: 'network_time_off' });
    if (state.value !== 'On') return unknown('parse_error', evidence);
    evidence.network_time = true;
    return maxOffset === null ? pass({ ...evidence, rule: 'network_time_on' }) : offsetVerdict(facts, maxOffset, evidence);
  }
  if (forced === true) {
    Object.assign(evidence, { source: 'mdm', network_time: true, systemsetup: state.reason });
    return maxOffset === null ? pass({ ...evidence, rule: 'profile_forces' }) : offsetVerdict(facts, maxOffset, evidence);
  }
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
    return offset ? { usingNetworkTime, managed, offset } : { usingNetworkTime, managed };
  },
  evaluate: (facts, policy) => evaluateTimeSync(facts, policy),
});

// OS_VERSION on macOS (research §5.1, §5.5): the release from sw_vers, judged by the shared
// lifecycle rule against policy.osVersion.minimum.DARWIN and the macOS support dates.
import { defineCheck, type CommandResult } from '../types';
import type { Policy } from '../policy';
import { judgeRelease } from '../release';
import { darwinLifecycle } from './lifecycle';
import { commandFailureReason, unknown } from '../verdict';
import { parseSwVers, runSwVers } from './swVers';

export function evaluateOsVersion(result: CommandResult, policy: Policy, now: Date) {
  if (result.error || result.exitCode !== 0) return unknown(commandFailureReason(result), { source: 'sw_vers' });
  const release = parseSwVers(result.stdout);
  if (!release) return unknown('unrecognized_version', { source: 'sw_vers' });
  return judgeRelease(
    {
      product: 'macos',
      cycle: release.cycle,
      version: release.productVersion,
      facts: {
        source: 'sw_vers',
        product_name: release.productName,
        ...(release.buildVersion ? { build: release.buildVersion } : {}),
        ...(release.productVersionExtra ? { rsr_extra: release.productVersionExtra } : {}),
      },
    },
    { minimum: policy.osVersion.minimum.DARWIN, newestAlwaysSupported: true },
    policy,
    now,
    darwinLifecycle,
  );
}

export const osVersion = defineCheck({
  key: 'OS_VERSION',
  platform: 'DARWIN',
  collect: (ctx) => runSwVers(ctx),
  evaluate: (result, policy, now) => evaluateOsVersion(result, policy, now),
});

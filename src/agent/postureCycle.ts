// One posture cycle, for `device-agent check` and the daemon alike: this platform's checks run with
// the administrator's policy, and each result explained from the platform's remediation catalogue
// (checks/<os>/remediation.ts). The checks and the catalogue are loaded once, when the collector is
// made; each cycle then runs them again. An unusable policy file is an input error (exit 2).
import type { Explanation } from '../../checks/remediation';
import { currentPlatform } from '../platform/current';
import type { PostureResult } from '../protocol/schemas';
import { InvalidInputError } from './errors';
import { lastCycleOf, type LastCycle } from './lastCycle';

export interface PostureCycle {
  results: PostureResult[];
  /** What each result means and how to fix it (same order). */
  explanations: Explanation[];
  /** What `status` shows of this cycle. */
  lastCycle: LastCycle;
}

export interface CollectorOptions {
  /** --policy: the administrator's policy file; the default policy without one. */
  policyFile?: string;
  /** Only these check keys (validated names); InvalidInputError when this platform has none of one. */
  only?: readonly string[];
}

/** Loads the checks, the policy and the catalogue; the returned function runs one cycle. */
export async function postureCollector(options: CollectorOptions = {}): Promise<() => Promise<PostureCycle>> {
  const [
    { loadChecks },
    { runChecks },
    { createSystemHost },
    { DEFAULT_POLICY, loadPolicyFile, PolicyError },
    { loadRemediation },
    { explain, osHintFrom, policyValues },
  ] = await Promise.all([
    import('../../checks/registry'),
    import('../../checks/engine'),
    import('../../checks/host'),
    import('../../checks/policy'),
    import('../../checks/platformRemediation'),
    import('../../checks/remediation'),
  ]);
  let policy = DEFAULT_POLICY;
  if (options.policyFile) {
    try {
      policy = loadPolicyFile(options.policyFile);
    } catch (err) {
      if (err instanceof PolicyError) throw new InvalidInputError(err.message);
      throw err;
    }
  }
  const platform = currentPlatform();
  const [available, remedies] = await Promise.all([loadChecks(platform), loadRemediation(platform)]);
  const { only } = options;
  const checks = only ? available.filter((c) => only.includes(c.key)) : available;
  const missing = only?.filter((k) => !checks.some((c) => c.key === k)) ?? [];
  if (missing.length > 0) throw new InvalidInputError(`no ${missing.join(', ')} check on ${platform}`);
  const host = createSystemHost();
  return async () => {
    const startedAt = new Date();
    const results = await runChecks(checks, { host, policy });
    const context = { policy: policyValues(policy), os: osHintFrom(results) };
    const explanations = results.map((r) => explain(remedies, r, context));
    return { results, explanations, lastCycle: lastCycleOf(results, explanations, startedAt) };
  };
}

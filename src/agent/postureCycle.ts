// One posture cycle, for `device-agent check` and the daemon alike: this platform's checks run with
// the administrator's policy, and each result explained from the platform's remediation catalogue
// (checks/<os>/remediation.ts). The checks and the catalogue are loaded once, when the collector is
// made; each cycle then runs them again. An unusable policy file is an input error (exit 2).
// The policy: the server's when the daemon holds one (its policy extension), with the sections its
// `localOverrides` allows taken from the local file; else the local file; else the defaults
// (checks/policy.ts, effectivePolicy; docs/agent.md, "Policy").
import type { Policy } from '../../checks/policy';
import type { Explanation } from '../../checks/remediation';
import { currentPlatform } from '../platform/current';
import type { PolicyResponse, PostureResult } from '../protocol/schemas';
import { InvalidInputError } from './errors';
import { lastCycleOf, type LastCycle } from './lastCycle';
import type { PolicySource } from './policySource';
import type { StoredServerPolicy } from './state';

export interface PostureCycle {
  results: PostureResult[];
  /** What each result means and how to fix it (same order). */
  explanations: Explanation[];
  /** What `status` shows of this cycle. */
  lastCycle: LastCycle;
  policy: PolicySource;
  /** The applied policy's `notifications.enabled`: whether the daemon tells the user of changes. */
  notifications: boolean;
}

/** The reason a served policy cannot be applied (one line, naming the setting), or null when it can. */
export async function servedPolicyProblem(response: PolicyResponse): Promise<string | null> {
  const [{ resolvePolicy, PolicyError }, { LifecycleDataSchema }] = await Promise.all([
    import('../../checks/policy'),
    import('../../checks/lifecycleTable'),
  ]);
  try {
    resolvePolicy(response.policy);
  } catch (err) {
    if (err instanceof PolicyError) return err.message;
    throw err;
  }
  const lifecycle = LifecycleDataSchema.safeParse(response.lifecycle);
  if (!lifecycle.success) return `invalid lifecycle data at ${lifecycle.error.issues[0]?.path.join('.') || '(root)'}`;
  return null;
}

export interface CollectorOptions {
  /** --policy: the administrator's policy file; the default policy without one. */
  policyFile?: string;
  /** Only these check keys (validated names); InvalidInputError when this platform has none of one. */
  only?: readonly string[];
}

/**
 * Loads the checks, the local policy and the catalogue; the returned function runs one cycle, with
 * the server's policy when given one (the daemon's, validated by servedPolicyProblem).
 */
export async function postureCollector(
  options: CollectorOptions = {},
): Promise<(served?: StoredServerPolicy | null) => Promise<PostureCycle>> {
  const [
    { loadChecks },
    { runChecks },
    { createSystemHost },
    { effectivePolicy, readPolicyFile, PolicyError },
    { LifecycleDataSchema },
    { loadRemediation },
    { explain, osHintFrom, policyValues },
  ] = await Promise.all([
    import('../../checks/registry'),
    import('../../checks/engine'),
    import('../../checks/host'),
    import('../../checks/policy'),
    import('../../checks/lifecycleTable'),
    import('../../checks/platformRemediation'),
    import('../../checks/remediation'),
  ]);
  let local: Record<string, unknown> | undefined;
  if (options.policyFile) {
    try {
      local = readPolicyFile(options.policyFile);
    } catch (err) {
      if (err instanceof PolicyError) throw new InvalidInputError(err.message);
      throw err;
    }
  }
  const localPolicy = effectivePolicy(undefined, local);
  const localSource: PolicySource = options.policyFile ? { source: 'local', file: options.policyFile } : { source: 'default' };
  // The served policy resolved once per version it arrives with.
  let resolved: { served: StoredServerPolicy; policy: Policy; source: PolicySource } | undefined;
  const policyFor = (served: StoredServerPolicy | null | undefined): { policy: Policy; source: PolicySource } => {
    if (!served) return { policy: localPolicy, source: localSource };
    if (resolved?.served !== served) {
      const { response } = served;
      // Version 0: the organization has no policy on the server; the local one applies, with the server's lifecycle data.
      const policy = effectivePolicy(response.version === 0 ? undefined : response.policy, local);
      policy.osVersion.lifecycleData = LifecycleDataSchema.parse(response.lifecycle);
      const source: PolicySource = {
        source: 'server',
        version: response.version,
        lifecycle_version: response.lifecycle.version,
        fetched_at: served.fetched_at,
        ...(options.policyFile ? { local_file: options.policyFile } : {}),
      };
      resolved = { served, policy, source };
    }
    return resolved;
  };
  const platform = currentPlatform();
  const [available, remedies] = await Promise.all([loadChecks(platform), loadRemediation(platform)]);
  const { only } = options;
  const checks = only ? available.filter((c) => only.includes(c.key)) : available;
  const missing = only?.filter((k) => !checks.some((c) => c.key === k)) ?? [];
  if (missing.length > 0) throw new InvalidInputError(`no ${missing.join(', ')} check on ${platform}`);
  const host = createSystemHost();
  return async (served) => {
    const startedAt = new Date();
    const { policy, source } = policyFor(served);
    const results = await runChecks(checks, { host, policy });
    const context = { policy: policyValues(policy), os: osHintFrom(results) };
    const explanations = results.map((r) => explain(remedies, r, context));
    return {
      results,
      explanations,
      lastCycle: lastCycleOf(results, explanations, startedAt),
      policy: source,
      notifications: policy.notifications.enabled,
    };
  };
}

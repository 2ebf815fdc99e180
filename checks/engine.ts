// Runs one posture cycle: every check concurrently, each under its own timeout, so that one
// slow or broken check never affects another. Results are posture results of the wire protocol.
import type { PostureResult } from '../src/protocol/schemas';
import type { Policy } from './policy';
import type { Check, CheckContext, Host, Verdict } from './types';
import { capEvidence, notApplicable, unknown } from './verdict';

const DEFAULT_CHECK_TIMEOUT_MS = 30_000;

export interface CycleOptions {
  host: Host;
  policy: Policy;
  now?: () => Date;
  checkTimeoutMs?: number;
}

export function createContext(host: Host, policy: Policy, now: Date): CheckContext {
  const probes = new Map<string, Promise<unknown>>();
  return {
    host,
    policy,
    now,
    shared<T>(key: string, probe: () => Promise<T>): Promise<T> {
      let pending = probes.get(key) as Promise<T> | undefined;
      if (!pending) {
        pending = probe();
        probes.set(key, pending);
      }
      return pending;
    },
  };
}

/** Collects and evaluates one check; never throws. */
async function runCheck(check: Check, ctx: CheckContext, timeoutMs: number): Promise<Verdict> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Verdict>((resolve) => {
    timer = setTimeout(() => resolve(unknown('timeout', { timeout_ms: timeoutMs })), timeoutMs);
  });
  const attempt = (async (): Promise<Verdict> => {
    try {
      const facts = await check.collect(ctx);
      return check.evaluate(facts, ctx.policy, ctx.now);
    } catch (err) {
      // The error's class only: messages can carry paths or command output.
      return unknown('check_error', { error: err instanceof Error ? err.name : typeof err });
    }
  })();
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runChecks(checks: readonly Check[], options: CycleOptions): Promise<PostureResult[]> {
  const now = options.now ?? (() => new Date());
  const ctx = createContext(options.host, options.policy, now());
  const timeoutMs = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  return Promise.all(
    checks.map(async (check) => {
      // A disabled check is not run at all: nothing collected, no command started.
      const disabled = (options.policy.checks.disabled as readonly string[]).includes(check.key);
      const verdict = disabled ? notApplicable('disabled_by_policy') : await runCheck(check, ctx, timeoutMs);
      return {
        check_key: check.key,
        status: verdict.status,
        evidence: capEvidence(verdict.evidence),
        observed_at: now().toISOString(),
      };
    }),
  );
}

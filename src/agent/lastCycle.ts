// The last posture cycle as `status` shows it: which checks fail or could not decide, each with the
// catalogue's one-sentence summary (checks/<os>/remediation.ts) rendered with the policy that judged.
// Kept in status.json (state/statusFile.ts keeps fields it does not know), recorded by the daemon,
// so it is as private as the rest of the state directory and goes with it when the credentials are
// wiped. Only these texts and the check keys are kept: no evidence.
import * as z from 'zod/mini';
import type { Explanation } from '../../checks/remediation';
import { Rfc3339 } from '../protocol/rfc3339';
import type { PostureResult } from '../protocol/schemas';

const SHOWN_STATUSES = ['FAIL', 'UNKNOWN'] as const;

export const LastCycle = z.object({
  at: Rfc3339,
  results: z.int().check(z.nonnegative()),
  /** FAIL and UNKNOWN results, in check order. */
  failing: z
    .array(
      z.object({
        check_key: z.string().check(z.maxLength(128)),
        status: z.enum(SHOWN_STATUSES),
        word: z.nullable(z.string().check(z.maxLength(128))),
        summary: z.string().check(z.maxLength(1000)),
      }),
    )
    .check(z.maxLength(64)),
});
export type LastCycle = z.infer<typeof LastCycle>;

/** The cycle's record from its results and their explanations (same order). */
export function lastCycleOf(results: readonly PostureResult[], explanations: readonly Explanation[], at: Date): LastCycle {
  return {
    at: at.toISOString(),
    results: results.length,
    failing: results.flatMap((r, i) =>
      r.status === 'FAIL' || r.status === 'UNKNOWN'
        ? [{ check_key: r.check_key, status: r.status, word: explanations[i]!.word, summary: explanations[i]!.summary }]
        : [],
    ),
  };
}

/** The last cycle in a runtime status, or undefined when none was recorded (or it is damaged). */
export function readLastCycle(runtime: Record<string, unknown>): LastCycle | undefined {
  const parsed = LastCycle.safeParse(runtime.last_cycle);
  return parsed.success ? parsed.data : undefined;
}

// The shape of one OS lifecycle table (support end dates per release cycle): the per-platform data in
// checks/<os>/lifecycle.ts and the policy that merges them (checks/policy.ts) both use it, so it
// lives apart from either.
import * as z from 'zod/mini';

const isoDate = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'));

export const LifecycleCycle = z.object({
  /** Release cycle as the platform names it: "12", "24.04", "15", "14.3", "23H2", … */
  cycle: z.string().check(z.minLength(1)),
  releaseDate: z.optional(isoDate),
  /** End of regular (security) support; false while no end is announced. */
  eol: z.union([isoDate, z.literal(false)]),
  /** End of extended support (Debian LTS, Ubuntu ESM, Windows ESU), counted only when the policy accepts it. */
  extendedEnd: z.optional(z.union([isoDate, z.literal(false)])),
  /** Newest release of this cycle and its date, for maxPatchLagDays. */
  latest: z.optional(z.string()),
  latestReleaseDate: z.optional(isoDate),
});
export type LifecycleCycle = z.infer<typeof LifecycleCycle>;
export type LifecycleTable = Record<string, LifecycleCycle[]>;

// The shape of one OS lifecycle table (support end dates per release cycle): the per-platform data in
// checks/<os>/lifecycle.ts (generated from endoflife.date by scripts/lifecycle-update.ts) and the
// policy's override (checks/policy.ts) both use it, so it lives apart from either. The server is to
// serve agents the same LifecycleData.
import * as z from 'zod/mini';

const isoDate = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'));
/** A date; true: it has passed but no date was published; false: none announced yet. */
const endDate = z.union([isoDate, z.boolean()]);

export const LifecycleCycle = z.object({
  /** Release cycle as the platform names it: "12", "24.04", "15", "14.3", "23H2", … */
  cycle: z.string().check(z.minLength(1)),
  /** The release's codename, lower case, first word ("bookworm", "jammy"): how os-release's *_CODENAME fields name it. */
  codename: z.optional(z.string()),
  releaseDate: z.optional(isoDate),
  /** End of regular (security) support. */
  eol: endDate,
  /** End of extended support (Debian LTS, Ubuntu ESM, RHEL ELS, SUSE LTSS, Windows ESU), counted only when the policy accepts it. */
  extendedEnd: z.optional(endDate),
  /** Newest release of this cycle and its date, for maxPatchLagDays. */
  latest: z.optional(z.string()),
  latestReleaseDate: z.optional(isoDate),
});
export type LifecycleCycle = z.infer<typeof LifecycleCycle>;
export type LifecycleTable = Record<string, LifecycleCycle[]>;

/** One platform's vendored lifecycle data: the table, where each product's rows come from, and the data set's commit. */
export const LifecycleDataSchema = z.object({
  dataset: z.object({ name: z.string(), repository: z.string(), commit: z.string(), committedAt: isoDate }),
  /** Per product: the data set's files (products/debian.md) and vendor pages its rows come from. */
  sources: z.record(z.string(), z.array(z.string())),
  products: z.record(z.string(), z.array(LifecycleCycle)),
});
export type LifecycleData = z.infer<typeof LifecycleDataSchema>;

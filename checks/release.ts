// OS_VERSION's shared rule, used by every platform: numeric version comparison and the
// lifecycle policy (minimum, end of support, patch lag), in the research's evaluation order.
import type { Evidence } from './types';
import { LIFECYCLE_CHECKED_AT, type Policy } from './policy';
import { fail, pass, unknown } from './verdict';

/** Compares dotted versions by numeric segments ("14.10" > "14.6.1"); non-numeric parts compare as text. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.\-_]/);
  const pb = b.split(/[.\-_]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    const d = Number.isNaN(nx) || Number.isNaN(ny) ? x.localeCompare(y) : nx - ny;
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export interface Release {
  /** Key of the lifecycle table: "debian", "ubuntu", "macos", "windows-11-pro", "freebsd", … */
  product: string;
  /** Cycle within the product: "12", "24.04", "15", "23H2", "14.3". */
  cycle: string;
  /** Full installed version, compared numerically against minimums and `latest`. */
  version: string;
  /** Facts to show beside the verdict (build, patch level, …). */
  facts?: Evidence;
}

export interface ReleaseRules {
  /** Numeric floor for `version` (already chosen from policy.osVersion.minimum by the platform). */
  minimum?: string | undefined;
  /** Count the cycle's extendedEnd instead of its eol (e.g. policy.osVersion.acceptExtendedSupport.debianLts). */
  acceptExtendedSupport?: boolean;
  /**
   * The product's cycles are numbered in release order and its newest cycle is always supported
   * (macOS): a cycle newer than every listed one is then the current release, PASS
   * `newer_than_table`, and one older than every listed one whose end has passed is FAIL
   * `older_than_table`, instead of both being UNKNOWN `unknown_release`.
   */
  orderedCycles?: boolean;
  /** The release's own end of support (YYYY-MM-DD, e.g. os-release SUPPORT_END): used when the lifecycle table lacks the cycle. */
  ownEnd?: string | undefined;
}

const DAY_MS = 86_400_000;

export function judgeRelease(release: Release, rules: ReleaseRules, policy: Policy, now: Date) {
  const evidence: Evidence = {
    product: release.product,
    cycle: release.cycle,
    version: release.version,
    ...release.facts,
    lifecycle_checked_at: LIFECYCLE_CHECKED_AT,
  };
  if (rules.minimum !== undefined) {
    evidence.minimum = rules.minimum;
    if (compareVersions(release.version, rules.minimum) < 0) return fail({ ...evidence, rule: 'minimum' });
  }
  const table = policy.osVersion.lifecycle[release.product] ?? [];
  const cycle = table.find((c) => c.cycle === release.cycle);
  const graceMs = policy.osVersion.graceDaysAfterEol * DAY_MS;
  if (!cycle && rules.ownEnd !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(rules.ownEnd)) {
    Object.assign(evidence, { eol: rules.ownEnd, eol_source: 'release' });
    return Date.parse(`${rules.ownEnd}T00:00:00Z`) + graceMs <= now.getTime()
      ? fail({ ...evidence, rule: 'eol' })
      : pass({ ...evidence, rule: 'supported' });
  }
  if (!cycle && rules.orderedCycles && table.length > 0) {
    const newest = table.reduce((a, b) => (compareVersions(b.cycle, a.cycle) > 0 ? b : a));
    const oldest = table.reduce((a, b) => (compareVersions(b.cycle, a.cycle) < 0 ? b : a));
    if (compareVersions(release.cycle, newest.cycle) > 0)
      return pass({ ...evidence, rule: 'newer_than_table', newest_listed: newest.cycle });
    if (
      compareVersions(release.cycle, oldest.cycle) < 0 &&
      oldest.eol !== false &&
      Date.parse(`${oldest.eol}T00:00:00Z`) <= now.getTime()
    ) {
      return fail({ ...evidence, rule: 'older_than_table', oldest_listed: oldest.cycle });
    }
  }
  if (!cycle) {
    return policy.osVersion.unknownRelease === 'FAIL'
      ? fail({ ...evidence, rule: 'unknown_release' })
      : unknown('unknown_release', { ...evidence, rule: 'unknown_release' });
  }
  const extended = rules.acceptExtendedSupport === true && cycle.extendedEnd !== undefined;
  const end = extended ? cycle.extendedEnd! : cycle.eol;
  Object.assign(evidence, { eol: cycle.eol, extended_end: cycle.extendedEnd ?? null, extended_support_accepted: extended });
  if (end !== false && Date.parse(`${end}T00:00:00Z`) + graceMs <= now.getTime()) {
    return fail({ ...evidence, rule: extended ? 'extended_eol' : 'eol' });
  }
  const lag = policy.osVersion.maxPatchLagDays;
  if (lag !== null && cycle.latest && cycle.latestReleaseDate && compareVersions(release.version, cycle.latest) < 0) {
    evidence.latest = cycle.latest;
    if (Date.parse(`${cycle.latestReleaseDate}T00:00:00Z`) + lag * DAY_MS <= now.getTime()) {
      return fail({ ...evidence, rule: 'patch_lag' });
    }
  }
  return pass({ ...evidence, rule: extended ? 'extended_support' : 'supported' });
}

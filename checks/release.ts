// OS_VERSION's shared rule, used by every platform: numeric version comparison and the
// lifecycle policy (minimum, end of support, patch lag), in the research's evaluation order.
import type { Evidence } from './types';
import type { LifecycleCycle, LifecycleData } from './lifecycleTable';
import type { Policy } from './policy';
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
  /** Key of the lifecycle table: "debian", "ubuntu", "macos", "windows-11-home-pro", "freebsd", … */
  product: string;
  /** Cycle within the product: "12", "24.04", "15", "23H2", "14.3". */
  cycle: string;
  /** Full installed version, compared numerically against minimums and `latest`. */
  version: string;
  /** Facts to show beside the verdict (build, patch level, …). */
  facts?: Evidence;
}

/** The extension of support a product has (its cycles' extendedEnd) and the policy setting that accepts it. */
export interface ExtendedSupport {
  /** As people call it: "Debian LTS", "Ubuntu ESM", "RHEL ELS", "SUSE LTSS", "Windows ESU". */
  name: string;
  /** The policy setting, as the administrator writes it: "osVersion.acceptExtendedSupport.debianLts". */
  setting: string;
  accepted: boolean;
}

export interface ReleaseRules {
  /** Numeric floor for `version` (already chosen from policy.osVersion.minimum by the platform). */
  minimum?: string | undefined;
  /** The product's extension of support, when it has one a policy setting can accept. */
  extendedSupport?: ExtendedSupport | undefined;
  /**
   * The product's newest cycle is always supported (macOS): a cycle newer than every listed one is
   * the current release, PASS `newer_than_table`, whenever the table lists none newer.
   */
  newestAlwaysSupported?: boolean;
  /** The release's own end of support (YYYY-MM-DD, e.g. os-release SUPPORT_END): used when the lifecycle table lacks the cycle. */
  ownEnd?: string | undefined;
}

const DAY_MS = 86_400_000;
const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`);

/** Whether an end (a date, true: passed without a date, false: none announced) has passed, grace included. */
function ended(end: string | boolean, graceMs: number, now: Date): boolean {
  return typeof end === 'string' ? dayMs(end) + graceMs <= now.getTime() : end;
}

/**
 * A cycle newer than every listed one: supported when the product's cadence in the table (the median
 * gap between its last releases) says a release is due since its newest listed one, and its major
 * number is at most one step per due release beyond that one's. Anything else may be a number that
 * was never released (a development build, a typo, a forged file): not decided.
 */
function newerIsDue(cycle: string, table: LifecycleCycle[], newest: LifecycleCycle, now: Date): { dueReleases: number } | undefined {
  const dates = table
    .map((c) => c.releaseDate)
    .filter((d): d is string => d !== undefined)
    .map(dayMs)
    .sort((a, b) => a - b)
    .slice(-7);
  if (dates.length < 2 || newest.releaseDate === undefined) return undefined;
  const gaps = dates
    .slice(1)
    .map((d, i) => d - dates[i]!)
    .sort((a, b) => a - b);
  const gap = gaps[Math.floor(gaps.length / 2)]!;
  const due = gap > 0 ? Math.floor((now.getTime() - dayMs(newest.releaseDate)) / gap) : 0;
  const major = (c: string) => Number(/^\d+/.exec(c)?.[0] ?? NaN);
  if (due < 1 || !(major(cycle) - major(newest.cycle) <= due)) return undefined;
  return { dueReleases: due };
}

export function judgeRelease(release: Release, rules: ReleaseRules, policy: Policy, now: Date, builtIn: LifecycleData) {
  const override = policy.osVersion.lifecycle;
  // The server's data set (policy.osVersion.lifecycleData) replaces the one built into this agent.
  const data = policy.osVersion.lifecycleData ?? builtIn;
  const evidence: Evidence = {
    product: release.product,
    cycle: release.cycle,
    version: release.version,
    ...release.facts,
    lifecycle_checked_at: override ? 'policy' : data.dataset.committedAt,
  };
  if (rules.minimum !== undefined) {
    evidence.minimum = rules.minimum;
    if (compareVersions(release.version, rules.minimum) < 0) return fail({ ...evidence, rule: 'minimum' });
  }
  const table = (override ?? data.products)[release.product] ?? [];
  const cycle = table.find((c) => c.cycle === release.cycle);
  const graceMs = policy.osVersion.graceDaysAfterEol * DAY_MS;
  if (!cycle && rules.ownEnd !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(rules.ownEnd)) {
    Object.assign(evidence, { eol: rules.ownEnd, eol_source: 'release' });
    return ended(rules.ownEnd, graceMs, now) ? fail({ ...evidence, rule: 'eol' }) : pass({ ...evidence, rule: 'supported' });
  }
  if (!cycle && table.length > 0) {
    const newest = table.reduce((a, b) => (compareVersions(b.cycle, a.cycle) > 0 ? b : a));
    const oldest = table.reduce((a, b) => (compareVersions(b.cycle, a.cycle) < 0 ? b : a));
    if (compareVersions(release.cycle, newest.cycle) > 0) {
      if (rules.newestAlwaysSupported) return pass({ ...evidence, rule: 'newer_than_table', newest_listed: newest.cycle });
      const due = newerIsDue(release.cycle, table, newest, now);
      if (due) return pass({ ...evidence, rule: 'newer_than_table', newest_listed: newest.cycle, due_releases: due.dueReleases });
      evidence.newest_listed = newest.cycle;
    } else if (compareVersions(release.cycle, oldest.cycle) < 0 && ended(oldest.extendedEnd ?? oldest.eol, graceMs, now)) {
      // Older than a release whose support, extended support included, has ended: nothing can still cover it.
      return fail({ ...evidence, rule: 'older_than_table', oldest_listed: oldest.cycle, oldest_eol: oldest.extendedEnd ?? oldest.eol });
    }
  }
  if (!cycle) {
    return policy.osVersion.unknownRelease === 'FAIL'
      ? fail({ ...evidence, rule: 'unknown_release' })
      : unknown('unknown_release', { ...evidence, rule: 'unknown_release' });
  }
  Object.assign(evidence, { eol: cycle.eol, extended_end: cycle.extendedEnd ?? null });
  const extension = rules.extendedSupport;
  if (ended(cycle.eol, graceMs, now)) {
    const extendedRuns = cycle.extendedEnd !== undefined && !ended(cycle.extendedEnd, graceMs, now);
    if (extension && cycle.extendedEnd !== undefined) {
      Object.assign(evidence, {
        extended_support: extension.name,
        extended_support_setting: extension.setting,
        extended_support_accepted: extension.accepted,
      });
    }
    if (!extendedRuns) return fail({ ...evidence, rule: cycle.extendedEnd === undefined ? 'eol' : 'extended_eol' });
    // An extension no policy setting can accept (a derivative's base, a product without one): ended.
    if (!extension) return fail({ ...evidence, rule: 'eol' });
    // Regular support is over but an extension still runs: the verdict says both ends and the setting.
    if (!extension.accepted) return fail({ ...evidence, rule: 'extended_support_not_accepted' });
  }
  const extended = ended(cycle.eol, graceMs, now);
  const lag = policy.osVersion.maxPatchLagDays;
  if (lag !== null && cycle.latest && cycle.latestReleaseDate && compareVersions(release.version, cycle.latest) < 0) {
    evidence.latest = cycle.latest;
    if (dayMs(cycle.latestReleaseDate) + lag * DAY_MS <= now.getTime()) return fail({ ...evidence, rule: 'patch_lag' });
  }
  return pass({ ...evidence, rule: extended ? 'extended_support' : 'supported' });
}

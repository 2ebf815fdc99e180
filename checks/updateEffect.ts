// The effect of a scheduled updater that keeps no record of its own runs (apk's and zypper's cron
// jobs on Linux, `pkg upgrade` on FreeBSD): when the package database last changed. Nothing
// installed for longer than autoUpdate.maxPendingDays while a job is configured means updates are
// not arriving: every supported release of these systems publishes security updates more often.
import type { Policy } from './policy';
import { ageInDays } from './text';
import { fail, pass, unknown } from './verdict';

export interface PackageChange {
  /** The database whose modification time this is. */
  path: string;
  /** ms since the epoch. */
  changedMs: number;
}

export function judgePackageChange<Rule extends string>(
  packages: PackageChange | undefined,
  rule: Rule,
  evidence: Record<string, unknown>,
  policy: Policy,
  now: Date,
) {
  if (!packages) return unknown('no_install_recorded', evidence);
  const age = ageInDays(packages.changedMs, now);
  Object.assign(evidence, {
    package_database: packages.path,
    packages_changed: new Date(packages.changedMs).toISOString(),
    packages_changed_age_days: age,
    max_install_age_days: policy.autoUpdate.maxPendingDays,
  });
  return age > policy.autoUpdate.maxPendingDays ? fail({ ...evidence, rule: 'no_recent_install' }) : pass({ ...evidence, rule });
}

// OS_VERSION on FreeBSD (research §5.3, §5.5): the release the machine actually runs is the
// older of the running kernel and the userland (not every advisory touches both, and an
// installed but not yet booted kernel protects nothing), judged against the lifecycle table
// and policy.osVersion.minimum.FREEBSD.
import { judgeRelease, type Release } from '../release';
import { freebsdLifecycle } from './lifecycle';
import { defineCheck } from '../types';
import type { Policy } from '../policy';
import { unknown } from '../verdict';
import { interpretVersions, parseFreebsdVersion, sharedVersions, type FreebsdVersion, type VersionProbe } from './version';

const order = (v: FreebsdVersion) => [v.major, v.minor, v.patch] as const;

/** The older of two builds; `a` on a tie. */
function older(a: FreebsdVersion, b: FreebsdVersion): FreebsdVersion {
  const [x, y] = [order(a), order(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? a : b;
  return a;
}

/** Where a build comes from: the security branch of a release, a stable branch, or development. */
function releaseOf(v: FreebsdVersion): Release & { branchName: string } {
  if (v.branch === 'RELEASE') {
    return {
      product: 'freebsd',
      cycle: `${v.major}.${v.minor}`,
      version: `${v.major}.${v.minor}.${v.patch}`,
      branchName: `releng/${v.major}.${v.minor}`,
    };
  }
  if (v.branch === 'STABLE' || v.branch === 'PRERELEASE') {
    return { product: 'freebsd-stable', cycle: `${v.major}`, version: `${v.major}.${v.minor}`, branchName: `stable/${v.major}` };
  }
  if (v.branch === 'CURRENT')
    return { product: 'freebsd-current', cycle: `${v.major}`, version: `${v.major}.${v.minor}`, branchName: 'main' };
  // ALPHA/BETA/RC builds precede a release; no advisories are issued for them.
  return {
    product: 'freebsd-prerelease',
    cycle: `${v.major}.${v.minor}`,
    version: `${v.major}.${v.minor}`,
    branchName: `releng/${v.major}.${v.minor}`,
  };
}

/** policy.osVersion.minimum.FREEBSD as a comparable "major.minor[.patch]": "14.1", "14.1-RELEASE-p5" or "14.1.5". */
export function normalizeMinimum(minimum: string): string | null {
  const parsed = parseFreebsdVersion(minimum);
  if (parsed) return `${parsed.major}.${parsed.minor}.${parsed.patch}`;
  return /^\d+(\.\d+){0,2}$/.test(minimum.trim()) ? minimum.trim() : null;
}

export function evaluateOsVersion(probe: VersionProbe, policy: Policy, now: Date) {
  const base = { source: 'freebsd-version' };
  const versions = interpretVersions(probe);
  if (!versions.ok) return unknown(versions.reason, base);
  const running = parseFreebsdVersion(versions.runningKernel);
  const userland = parseFreebsdVersion(versions.userland);
  const facts = {
    kernel_installed: versions.installedKernel,
    kernel_running: versions.runningKernel,
    userland: versions.userland,
    reboot_pending: versions.installedKernel !== null && versions.installedKernel !== versions.runningKernel,
  };
  if (!running || !userland) return unknown('unrecognized_version', { ...base, ...facts });
  const judged = older(userland, running);
  const minimum = normalizeMinimum(policy.osVersion.minimum.FREEBSD);
  if (minimum === null) return unknown('invalid_policy', { ...base, ...facts, policy_field: 'osVersion.minimum.FREEBSD' });
  const { branchName, ...release } = releaseOf(judged);
  const verdict = judgeRelease(
    { ...release, facts: { ...facts, branch: branchName, judged: judged === userland ? 'userland' : 'kernel_running' } },
    { minimum },
    policy,
    now,
    freebsdLifecycle,
  );
  // The same status and word, with the source first in the evidence.
  return { ...verdict, evidence: { ...base, ...verdict.evidence } } as typeof verdict;
}

export const osVersionCheck = defineCheck({
  key: 'OS_VERSION',
  platform: 'FREEBSD',
  collect: sharedVersions,
  evaluate: evaluateOsVersion,
});

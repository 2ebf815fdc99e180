// OS_VERSION on Linux (research §5.2, §5.5): os-release (+ the Debian point release) mapped to a
// lifecycle product and cycle, judged by the shared rule (checks/release.ts) against
// policy.osVersion.minimum.LINUX[<os-release ID>] and the lifecycle table. Rolling distributions
// have no cycle that ends: they must have been upgraded recently instead.
import type { Policy } from '../policy';
import { judgeRelease, type Release } from '../release';
import { defineCheck, type CheckContext } from '../types';
import { fail, pass, unknown } from '../verdict';
import { containerEvidence, containerFacts, type ContainerFacts } from './container';
import { osRelease, preciseVersion, type OsRelease, type OsReleaseFacts } from './osRelease';
import { ageInDays } from '../text';

interface OsVersionFacts {
  os: OsReleaseFacts;
  container: ContainerFacts;
  /** Rolling releases: when packages last changed (pacman's local database), ms since epoch. */
  lastUpgradeMs?: number;
  rebootRequired: boolean;
}

/** How a distribution's os-release maps to a lifecycle product and cycle. */
interface Mapping {
  product: string;
  cycle: (r: OsRelease) => string | undefined;
  extendedSupport?: (policy: Policy) => boolean;
}

const major = (r: OsRelease) => /^(\d+)/.exec(r.versionId ?? '')?.[1];
const majorMinor = (r: OsRelease) => /^(\d+\.\d+)/.exec(r.versionId ?? '')?.[1];
const versionId = (r: OsRelease) => (r.versionId && /^\d+(\.\d+)*$/.test(r.versionId) ? r.versionId : undefined);
const rolling = () => 'rolling';

const MAPPINGS: Record<string, Mapping> = {
  debian: { product: 'debian', cycle: versionId, extendedSupport: (p) => p.osVersion.acceptExtendedSupport.debianLts },
  ubuntu: { product: 'ubuntu', cycle: majorMinor, extendedSupport: (p) => p.osVersion.acceptExtendedSupport.ubuntuEsm },
  rhel: { product: 'rhel', cycle: major },
  rocky: { product: 'rocky', cycle: major },
  almalinux: { product: 'almalinux', cycle: major },
  centos: { product: 'centos', cycle: major },
  fedora: { product: 'fedora', cycle: versionId },
  alpine: { product: 'alpine', cycle: majorMinor },
  'opensuse-leap': { product: 'opensuse-leap', cycle: majorMinor },
  arch: { product: 'arch', cycle: rolling },
  'opensuse-tumbleweed': { product: 'opensuse-tumbleweed', cycle: rolling },
};

/** CentOS Stream shares ID=centos with CentOS Linux but has its own, shorter lifecycle. */
function mappingFor(r: OsRelease): Mapping | undefined {
  if (r.id === 'centos' && /stream/i.test(r.name ?? '')) return { product: 'centos-stream', cycle: major };
  return MAPPINGS[r.id];
}

/** Where a rolling distribution records package changes. */
const PACKAGE_DATABASES: Record<string, string> = { arch: '/var/lib/pacman/local' };

async function collect(ctx: CheckContext): Promise<OsVersionFacts> {
  const [os, container, reboot] = await Promise.all([osRelease(ctx), containerFacts(ctx), ctx.host.stat('/var/run/reboot-required')]);
  const facts: OsVersionFacts = { os, container, rebootRequired: reboot.ok };
  const database = os.ok ? PACKAGE_DATABASES[os.release.id] : undefined;
  if (database) {
    const s = await ctx.host.stat(database);
    if (s.ok && s.mtimeMs !== undefined) facts.lastUpgradeMs = s.mtimeMs;
  }
  return facts;
}

/** Tumbleweed's VERSION_ID is its snapshot date (YYYYMMDD). */
function snapshotDate(r: OsRelease): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(r.versionId ?? '');
  return m ? Date.parse(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) : undefined;
}

function evaluate(facts: OsVersionFacts, policy: Policy, now: Date) {
  if (!facts.os.ok)
    return unknown(facts.os.error === 'permission_denied' ? 'permission_denied' : 'unrecognized_version', { source: 'os-release' });
  const r = facts.os.release;
  const base: Record<string, unknown> = { source: 'os-release', id: r.id, ...containerEvidence(facts.container) };
  if (r.versionId) base.version_id = r.versionId;
  if (r.pointRelease) base.point_release = r.pointRelease;
  if (r.versionCodename) base.codename = r.versionCodename;
  if (r.idLike.length) base.id_like = r.idLike;
  if (facts.os.kernel) base.kernel = facts.os.kernel;
  if (facts.rebootRequired) base.reboot_required = true;
  const mapping = mappingFor(r);
  const cycle = mapping ? mapping.cycle(r) : versionId(r);
  if (!cycle) return unknown('unrecognized_version', base);
  const isRolling = cycle === 'rolling';
  const release: Release = {
    product: mapping?.product ?? r.id,
    cycle,
    version: isRolling ? 'rolling' : (preciseVersion(r) ?? cycle),
    facts: base,
  };
  const minimum = policy.osVersion.minimum.LINUX[r.id];
  // A release the table does not list still states its own end of support (os-release SUPPORT_END).
  const rules = {
    minimum: isRolling ? undefined : minimum,
    acceptExtendedSupport: mapping?.extendedSupport?.(policy) ?? false,
    ownEnd: r.supportEnd,
  };
  const verdict = judgeRelease(release, rules, policy, now);
  if (!isRolling || verdict.status !== 'PASS') return verdict;
  // A rolling release is supported only while it keeps rolling.
  const upgraded = snapshotDate(r) ?? facts.lastUpgradeMs;
  const maxAge = policy.osVersion.rollingMaxAgeDays;
  if (upgraded === undefined) return unknown('update_age_unknown', verdict.evidence);
  const age = ageInDays(upgraded, now);
  const evidence = { ...verdict.evidence, last_upgrade_age_days: age, rolling_max_age_days: maxAge };
  return age > maxAge ? fail({ ...evidence, rule: 'rolling_stale' }) : pass(evidence);
}

export const osVersion = defineCheck({ key: 'OS_VERSION', platform: 'LINUX', collect, evaluate });

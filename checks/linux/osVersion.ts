// OS_VERSION on Linux (research §5.2, §5.5): os-release (+ /etc/debian_version) mapped to a
// lifecycle product and cycle of the built-in table (checks/linux/lifecycle.ts, from endoflife.date),
// judged by the shared rule (checks/release.ts) against policy.osVersion.minimum.LINUX[<os-release ID>].
// Derivation, not enumeration: a distribution is judged by its own row when the table has one
// (Mint, Pop!_OS, Oracle Linux, RHCOS by its OpenShift release, ...), else by the base it declares
// (UBUNTU_CODENAME, DEBIAN_CODENAME, /etc/debian_version, PLATFORM_ID, RHEL_VERSION, CPE_NAME, ID_LIKE),
// the evidence naming both. Rolling
// distributions have no cycle that ends: they must have changed packages recently instead.
import type { LifecycleCycle, LifecycleTable } from '../lifecycleTable';
import type { Policy } from '../policy';
import { compareVersions, judgeRelease, type ExtendedSupport } from '../release';
import { ageInDays } from '../text';
import { defineCheck, type CheckContext, type Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import { containerEvidence, containerFacts, type ContainerFacts } from './container';
import { linuxLifecycle } from './lifecycle';
import { osRelease, preciseVersion, type OsRelease, type OsReleaseFacts } from './osRelease';
import { packageChange } from './packageDatabases';

interface OsVersionFacts {
  os: OsReleaseFacts;
  container: ContainerFacts;
  /** Rolling releases: the package database that changed last and when (ms since epoch). */
  packages?: { manager: string; changedMs: number };
  rebootRequired: boolean;
}

/** Distributions that publish no releases, only a continuously updated package set. */
const ROLLING = new Set([
  'arch',
  'gentoo',
  'void',
  'opensuse-tumbleweed',
  'opensuse-slowroll',
  'kali',
  'wolfi',
  'cachyos',
  'clear-linux-os',
]);

/** Whether an os-release field is present and matches the pattern. */
const matches = (value: string | undefined, pattern: RegExp): value is string => value !== undefined && pattern.test(value);

/** Why a release is rolling, or undefined for a release with cycles. */
function rollingMark(r: OsRelease, products: LifecycleTable): string | undefined {
  // The rolling branches of released distributions first: their ID has rows, none of them theirs.
  if (r.versionCodename?.includes('rolling')) return 'VERSION_CODENAME';
  if (r.version?.toLowerCase().includes('rawhide')) return 'VERSION';
  // Alpine edge: VERSION_ID "3.20.0_alpha20231219", PRETTY_NAME "Alpine Linux edge" (an absent field reads "undefined").
  if (r.id === 'alpine' && /_(alpha|beta|git)|edge/.test(`${r.versionId} ${r.prettyName}`)) return 'VERSION_ID';
  // Debian testing and unstable: no VERSION_ID, /etc/debian_version "trixie/sid".
  if (!r.versionId && r.debianVersion?.endsWith('/sid')) return '/etc/debian_version';
  // A distribution with its own rows is released, whatever it derives from (SteamOS 3 is ID_LIKE=arch).
  if (products[ownProduct(r)]) return undefined;
  const marked = [r.id, ...r.idLike].find((id) => ROLLING.has(id));
  return marked === undefined ? undefined : marked === r.id ? 'ID' : 'ID_LIKE';
}

async function collect(ctx: CheckContext): Promise<OsVersionFacts> {
  const [os, container, reboot] = await Promise.all([osRelease(ctx), containerFacts(ctx), ctx.host.stat('/var/run/reboot-required')]);
  const facts: OsVersionFacts = { os, container, rebootRequired: reboot.ok };
  if (os.ok && rollingMark(os.release, linuxLifecycle.products)) {
    const packages = await packageChange(ctx);
    if (packages) facts.packages = packages;
  }
  return facts;
}

/** os-release IDs the table files under another product. */
const ALIASES: Record<string, string> = { sled: 'sles', sles_sap: 'sles', opensuse: 'opensuse-leap', 'suse-microos': 'sl-micro' };

/** The table product a release's own ID names (its own row, before any base it declares). */
function ownProduct(r: OsRelease): string {
  // CentOS Stream shares ID=centos with CentOS Linux; LMDE shares ID=linuxmint with Mint; XCP-ng 8 says ID=xenenterprise.
  if (r.id === 'centos' && matches(r.name, /stream/i)) return 'centos-stream';
  if (r.id === 'linuxmint' && matches(r.name, /^LMDE/i)) return 'lmde';
  if (r.id === 'xenenterprise' && matches(r.name, /^XCP-ng/i)) return 'xcp-ng';
  return ALIASES[r.id] ?? r.id;
}

/** Version shapes: a plain release number ("12"), a dotted one ("8.10", "3.22.2"). */
const INTEGER = /^\d+$/;
const NUMERIC = /^\d+(\.\d+)*$/;
const majorOf = (v: string | undefined) => v?.match(/^(\d+)/)?.[1];
const majorMinorOf = (v: string | undefined) => v?.match(/^(\d+\.\d+)/)?.[1];

/** The listed cycle a version belongs to: the whole version, then major.minor, then major ("8.10" -> "8"). */
function listedCycle(cycles: LifecycleCycle[], version: string | undefined): string | undefined {
  const candidates = [version, majorMinorOf(version), majorOf(version), matches(version, INTEGER) ? `${version}.0` : undefined];
  return candidates.find((c) => cycles.some((row) => row.cycle === c));
}

/** The cycle an unlisted version would have, shaped like the product's listed cycles ("3.8" for Alpine 3.8.5, "7" for Debian 7). */
function shapedCycle(cycles: LifecycleCycle[], version: string | undefined): string | undefined {
  if (!matches(version, NUMERIC)) return undefined;
  const dotted = cycles.some((c) => c.cycle.includes('.'));
  return (dotted ? majorMinorOf(version) : majorOf(version)) ?? version;
}

interface Base {
  product: string;
  cycle: string;
  /** The os-release field (or file) that declared it. */
  via: string;
}

/** Bases a CPE_NAME can name (Debian and Ubuntu publish none: their derivatives name them by codename). */
const CPE_PRODUCTS: Record<string, string> = {
  'redhat:enterprise_linux': 'rhel',
  'fedoraproject:fedora': 'fedora',
  'suse:sles': 'sles',
  'opensuse:leap': 'opensuse-leap',
  'oracle:linux': 'ol',
};
/** ID_LIKE values whose derivatives reuse the base's major number (the RHEL rebuild convention). */
const SAME_MAJOR_LIKE: Record<string, string> = { rhel: 'rhel', centos: 'rhel' };

/** The base release a distribution declares, most specific declaration first. */
function declaredBase(r: OsRelease, products: LifecycleTable): Base | undefined {
  const byCodename = (product: string, codename: string | undefined, via: string): Base | undefined => {
    const row = codename ? products[product]?.find((c) => c.codename === codename) : undefined;
    return row ? { product, cycle: row.cycle, via } : undefined;
  };
  const listed = (product: string, version: string | undefined, via: string): Base | undefined => {
    const cycle = products[product] ? listedCycle(products[product], version) : undefined;
    return cycle ? { product, cycle, via } : undefined;
  };
  const platform = r.platformId?.match(/^platform:(el|f)(\d+)$/);
  const cpe = r.cpeName?.match(/^cpe:(?:\/o|2\.3:o):([^:]+):([^:]+):([^:*]+)/);
  const cpeProduct = cpe ? CPE_PRODUCTS[`${cpe[1]}:${cpe[2]}`] : undefined;
  const debianPoint = matches(r.debianVersion, NUMERIC) ? r.debianVersion : undefined;
  const debianLike = r.idLike.includes('debian') || r.idLike.includes('ubuntu');
  const fromLike = r.idLike
    .map((like) => {
      const sameMajor = SAME_MAJOR_LIKE[like];
      if (sameMajor) return listed(sameMajor, majorOf(r.versionId), 'ID_LIKE');
      // Other bases only when the derivative uses the base's plain release number (Raspbian "10").
      return matches(r.versionId, INTEGER) ? listed(ALIASES[like] ?? like, r.versionId, 'ID_LIKE') : undefined;
    })
    .find(Boolean);
  return (
    byCodename('ubuntu', r.ubuntuCodename, 'UBUNTU_CODENAME') ??
    byCodename('debian', r.debianCodename, 'DEBIAN_CODENAME') ??
    (debianPoint ? listed('debian', debianPoint, '/etc/debian_version') : undefined) ??
    (platform ? listed(platform[1] === 'el' ? 'rhel' : 'fedora', platform[2], 'PLATFORM_ID') : undefined) ??
    (cpeProduct && cpeProduct !== ownProduct(r) ? listed(cpeProduct, cpe![3], 'CPE_NAME') : undefined) ??
    // RHCOS 4.1-4.5 name their RHEL only here; their VERSION_ID is OpenShift's ("4.3"), not RHEL's major.
    listed('rhel', r.rhelVersion, 'RHEL_VERSION') ??
    (debianLike
      ? (byCodename('debian', r.versionCodename, 'VERSION_CODENAME') ?? byCodename('ubuntu', r.versionCodename, 'VERSION_CODENAME'))
      : undefined) ??
    fromLike
  );
}

/** Extensions a policy setting can accept, by product; only for the distribution itself, never a derivative's base. */
const EXTENSIONS: Record<string, { name: string; key: keyof Policy['osVersion']['acceptExtendedSupport'] }> = {
  debian: { name: 'Debian LTS', key: 'debianLts' },
  ubuntu: { name: 'Ubuntu ESM', key: 'ubuntuEsm' },
  rhel: { name: 'RHEL ELS', key: 'rhelEls' },
  sles: { name: 'SUSE LTSS', key: 'suseLtss' },
};

function extensionFor(product: string, policy: Policy): ExtendedSupport | undefined {
  const e = EXTENSIONS[product];
  return (
    e && { name: e.name, setting: `osVersion.acceptExtendedSupport.${e.key}`, accepted: policy.osVersion.acceptExtendedSupport[e.key] }
  );
}

/** Tumbleweed's VERSION_ID is its snapshot date (YYYYMMDD). */
function snapshotDate(r: OsRelease): number | undefined {
  const m = r.versionId?.match(/^(\d{4})(\d{2})(\d{2})$/);
  return m && r.id.startsWith('opensuse-') ? Date.parse(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) : undefined;
}

function judgeRolling(facts: OsVersionFacts, r: OsRelease, mark: string, base: Evidence, policy: Policy, now: Date) {
  const evidence: Evidence = { ...base, product: r.id, cycle: 'rolling', version: 'rolling', rolling_by: mark };
  const snapshot = snapshotDate(r);
  const upgraded = snapshot ?? facts.packages?.changedMs;
  if (upgraded === undefined) return unknown('update_age_unknown', evidence);
  if (snapshot === undefined) evidence.package_manager = facts.packages!.manager;
  const age = ageInDays(upgraded, now);
  const maxAge = policy.osVersion.rollingMaxAgeDays;
  Object.assign(evidence, { last_upgrade_age_days: age, rolling_max_age_days: maxAge });
  return age > maxAge ? fail({ ...evidence, rule: 'rolling_stale' }) : pass({ ...evidence, rule: 'supported' });
}

function evaluate(facts: OsVersionFacts, policy: Policy, now: Date) {
  if (!facts.os.ok)
    return unknown(facts.os.error === 'permission_denied' ? 'permission_denied' : 'unrecognized_version', { source: 'os-release' });
  const r = facts.os.release;
  const base: Evidence = { source: 'os-release', id: r.id, ...containerEvidence(facts.container) };
  if (r.versionId) base.version_id = r.versionId;
  if (r.pointRelease) base.point_release = r.pointRelease;
  if (r.versionCodename) base.codename = r.versionCodename;
  if (r.idLike.length) base.id_like = r.idLike;
  if (facts.os.kernel) base.kernel = facts.os.kernel;
  if (facts.rebootRequired) base.reboot_required = true;
  const products = policy.osVersion.lifecycle ?? linuxLifecycle.products;
  const mark = rollingMark(r, products);
  if (mark) return judgeRolling(facts, r, mark, base, policy, now);

  const own = ownProduct(r);
  const ownCycles = products[own];
  const ownListed = ownCycles ? listedCycle(ownCycles, r.versionId) : undefined;
  const declared = declaredBase(r, products);
  // Its own row first; then the base it declares; then its own product's order (older or newer than every row).
  let judged: { product: string; cycle: string; derived?: Base };
  if (ownListed) {
    judged = { product: own, cycle: ownListed };
    if (declared && declared.product !== own) Object.assign(base, { base_product: declared.product, base_cycle: declared.cycle });
  } else if (declared && declared.product !== own) {
    judged = { product: declared.product, cycle: declared.cycle, derived: declared };
  } else {
    const cycle = ownCycles ? shapedCycle(ownCycles, r.versionId) : matches(r.versionId, NUMERIC) ? r.versionId : undefined;
    if (!cycle) return unknown('unrecognized_version', base);
    judged = { product: own, cycle };
  }
  if (judged.derived) Object.assign(base, { distribution: r.id, derived_from: judged.derived.via });
  const precise = preciseVersion(r);
  const version =
    judged.derived || !precise || !matches(precise, NUMERIC) || compareVersions(precise, judged.cycle) < 0 ? judged.cycle : precise;
  return judgeRelease(
    { product: judged.product, cycle: judged.cycle, version, facts: base },
    {
      minimum: policy.osVersion.minimum.LINUX[r.id],
      extendedSupport: judged.derived ? undefined : extensionFor(judged.product, policy),
      // A release the table lacks still states its own end of support (os-release SUPPORT_END).
      ownEnd: r.supportEnd,
    },
    policy,
    now,
    linuxLifecycle,
  );
}

export const osVersion = defineCheck({ key: 'OS_VERSION', platform: 'LINUX', collect, evaluate });

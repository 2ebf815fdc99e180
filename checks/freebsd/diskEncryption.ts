// DISK_ENCRYPTION on FreeBSD (research §1.3): the filesystems in scope (the root filesystem, or
// every local UFS/ZFS filesystem with diskEncryption.scope "all_local") must sit on GELI
// providers (every device of the ZFS pool, or the UFS device, is a ".eli" provider) or on a ZFS
// dataset with native encryption and its key loaded. GELI providers elsewhere, such as the
// installer's one-time encrypted swap, do not encrypt the filesystems: they are evidence only.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { jailProbe, jailVerdict } from './sysctl';
import {
  GELI_NOT_LOADED,
  isGeliProvider,
  parseGeliStatus,
  parseMountTable,
  parseZfsEncryption,
  parseZpoolStatus,
  rootEntry,
  type MountEntry,
  type MountTable,
} from './storage';

const MOUNT = '/sbin/mount';
const ZPOOL = '/sbin/zpool';
const ZFS = '/sbin/zfs';
const GELI = '/sbin/geli';

/** Boot-only filesystems that cannot be encrypted (the old GELI installer's /bootpool). */
const BOOT_MOUNTPOINTS = new Set(['/bootpool']);

export interface DiskFacts {
  jailed: CommandResult;
  mounts: CommandResult;
  /** `zpool status -P <pools>` when a filesystem in scope is ZFS. */
  zpool?: CommandResult;
  /** `zfs get … <datasets>` when a filesystem in scope is ZFS. */
  zfs?: CommandResult;
  geli: CommandResult;
}

/** The filesystems the policy's scope covers, or null when the mount table cannot tell. */
function filesystemsInScope(table: MountTable, policy: Policy): MountEntry[] | null {
  if (policy.diskEncryption.scope === 'root') {
    const root = rootEntry(table);
    return root ? [root] : null;
  }
  if (table.unparsed > 0) return null;
  return table.entries.filter(
    (e) => ((e.fstype === 'ufs' && e.source.startsWith('/dev/')) || e.fstype === 'zfs') && !BOOT_MOUNTPOINTS.has(e.mountpoint),
  );
}

const poolOf = (dataset: string) => dataset.split('/')[0]!;

async function collectDisk(ctx: CheckContext): Promise<DiskFacts> {
  const { host } = ctx;
  const [jailed, mounts, geli] = await Promise.all([jailProbe(ctx), host.run(MOUNT, ['-p']), host.run(GELI, ['status'])]);
  const facts: DiskFacts = { jailed, mounts, geli };
  if (mounts.error || mounts.exitCode !== 0) return facts;
  const zfsFilesystems = (filesystemsInScope(parseMountTable(mounts.stdout), ctx.policy) ?? []).filter((e) => e.fstype === 'zfs');
  if (zfsFilesystems.length > 0) {
    const datasets = [...new Set(zfsFilesystems.map((e) => e.source))];
    const pools = [...new Set(datasets.map(poolOf))];
    [facts.zpool, facts.zfs] = await Promise.all([
      host.run(ZPOOL, ['status', '-P', ...pools]),
      host.run(ZFS, ['get', '-H', '-o', 'name,property,value', 'encryption,keystatus', ...datasets]),
    ]);
  }
  return facts;
}

type Undecided = 'unsupported_filesystem' | 'zfs_key_unavailable' | 'zfs_unreadable' | 'zpool_unreadable' | 'parse_error';
type Judgement = { encrypted: true; by: 'geli' | 'zfs_native' } | { encrypted: false } | { unknown: Undecided };

interface ZfsView {
  pools: ReturnType<typeof parseZpoolStatus> | null;
  datasets: ReturnType<typeof parseZfsEncryption> | null;
  /** ZFS without native encryption (legacy ZFS on FreeBSD 12 and older). */
  nativeUnsupported: boolean;
}

function zfsView(facts: DiskFacts): ZfsView {
  const ok = (r: CommandResult | undefined) => !!r && !r.error && r.exitCode === 0;
  return {
    pools: ok(facts.zpool) ? parseZpoolStatus(facts.zpool!.stdout) : null,
    datasets: ok(facts.zfs) ? parseZfsEncryption(facts.zfs!.stdout) : null,
    nativeUnsupported: !!facts.zfs && /invalid property 'encryption'/.test(facts.zfs.stderr),
  };
}

/** Judges one filesystem; `details` receives what was seen (recorded for the root filesystem). */
function judgeFilesystem(entry: MountEntry, zfs: ZfsView, details: Evidence): Judgement {
  if (entry.fstype === 'ufs') {
    details.root_device_eli = isGeliProvider(entry.source);
    return details.root_device_eli ? { encrypted: true, by: 'geli' } : { encrypted: false };
  }
  if (entry.fstype !== 'zfs') return { unknown: 'unsupported_filesystem' };
  const layout = zfs.pools?.get(poolOf(entry.source));
  const readableLayout = !!layout && layout.unrecognized === 0 && layout.leaves.length > 0;
  if (readableLayout) {
    const eli = layout.leaves.filter(isGeliProvider).length;
    details.root_vdevs_eli = `${eli}/${layout.leaves.length}`;
    if (eli === layout.leaves.length) return { encrypted: true, by: 'geli' };
  }
  const native = zfs.datasets?.get(entry.source);
  if (native?.encryption !== undefined) {
    details.zfs_encryption = native.encryption;
    if (native.encryption !== 'off') {
      details.zfs_keystatus = native.keystatus ?? null;
      return native.keystatus === 'available' ? { encrypted: true, by: 'zfs_native' } : { unknown: 'zfs_key_unavailable' };
    }
  } else if (zfs.nativeUnsupported) {
    details.zfs_encryption = 'unsupported';
  } else {
    return { unknown: zfs.datasets === null ? 'zfs_unreadable' : 'parse_error' };
  }
  // Native encryption is off (or impossible): only a readable pool layout can say "not GELI either".
  if (!readableLayout) return { unknown: zfs.pools === null ? 'zpool_unreadable' : 'parse_error' };
  return { encrypted: false };
}

/** GEOM names ("ada0p3.eli") of the providers the filesystems in scope use. */
function providersInScope(entries: MountEntry[], zfs: ZfsView): Set<string> {
  const names = new Set<string>();
  const geomName = (path: string) => path.replace(/^\/dev\//, '');
  for (const e of entries) {
    if (e.fstype === 'ufs') names.add(geomName(e.source));
    for (const leaf of e.fstype === 'zfs' ? (zfs.pools?.get(poolOf(e.source))?.leaves ?? []) : []) names.add(geomName(leaf));
  }
  return names;
}

function evaluateDisk(facts: DiskFacts, policy: Policy) {
  const jail = jailVerdict(facts.jailed, policy, 'mount');
  if (jail) return jail;
  const evidence: Evidence = { source: facts.zpool ? 'mount+zpool+zfs+geli' : 'mount+geli', scope: policy.diskEncryption.scope };
  if (facts.mounts.error || facts.mounts.exitCode !== 0) return unknown(commandFailureReason(facts.mounts), evidence);
  const table = parseMountTable(facts.mounts.stdout);
  const inScope = filesystemsInScope(table, policy);
  if (!inScope || inScope.length === 0) return unknown('parse_error', evidence);
  const root = rootEntry(table);
  if (root) evidence.root_fs = root.fstype;

  const zfs = zfsView(facts);
  const judgements = inScope.map((entry) => judgeFilesystem(entry, zfs, entry === root ? evidence : {}));
  const methods = [...new Set(judgements.flatMap((j) => ('by' in j ? [j.by] : [])))];
  Object.assign(evidence, {
    filesystems_evaluated: inScope.length,
    filesystems_encrypted: judgements.filter((j) => 'by' in j).length,
    methods,
  });

  // GELI's own view is evidence: the installer's one-time swap provider shows up here, outside scope.
  const geliNotLoaded = GELI_NOT_LOADED.test(facts.geli.stderr);
  const providers = !facts.geli.error && facts.geli.exitCode === 0 ? parseGeliStatus(facts.geli.stdout) : null;
  evidence.geli = geliNotLoaded ? 'not_loaded' : providers ? 'loaded' : 'unreadable';
  if (providers) {
    const used = providersInScope(inScope, zfs);
    evidence.geli_providers = providers.length;
    evidence.geli_providers_outside_scope = providers.filter((p) => !used.has(p.name)).length;
  }

  if (judgements.some((j) => 'encrypted' in j && !j.encrypted)) return fail({ ...evidence, rule: 'unencrypted_filesystem' });
  const undecided = judgements.find((j): j is { unknown: Undecided } => 'unknown' in j);
  if (undecided) return unknown(undecided.unknown, evidence);
  // A ".eli" device exists only while the ELI class is loaded: geli saying otherwise is not to be trusted.
  if (methods.includes('geli') && geliNotLoaded) return unknown('inconsistent_geli', evidence);
  return pass({ ...evidence, rule: 'encrypted' });
}

export const diskEncryptionCheck = defineCheck({
  key: 'DISK_ENCRYPTION',
  platform: 'FREEBSD',
  collect: (ctx) => collectDisk(ctx),
  evaluate: (facts, policy) => evaluateDisk(facts, policy),
});

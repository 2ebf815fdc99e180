// DISK_ENCRYPTION on Linux (research §1.2): the root filesystem (and with scope all_local every
// persistent local filesystem) must sit on dm-crypt, found by walking its block-device ancestry in
// sysfs, or be an encrypted ZFS dataset, or a ZFS dataset whose pool's every vdev sits on dm-crypt
// (ZFS on LUKS, mirrors included). An overlay root (ostree with composefs: Fedora Silverblue,
// CoreOS) is judged by the filesystem holding its data, mounted at /sysroot. /etc/crypttab and
// "any crypt device" prove nothing.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext } from '../types';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason, type FsFailureReason } from '../verdict';
import {
  chainOf,
  cryptTypesOf,
  deviceByNumber,
  deviceByPath,
  leafCount,
  protection,
  walkBlockDevice,
  type BlockNode,
  type Protection,
} from './blockDevices';
import { containerEvidence, containerFacts, containerVerdict, type ContainerFacts } from './container';
import { BLOCK_FILESYSTEMS, mountOf, mountTable, NETWORK_FILESYSTEMS, rootMount, type MountEntry } from './mounts';
import { runTool } from './tools';

type VolumeFacts =
  | { kind: 'block'; fstype: string; tree: BlockNode }
  | { kind: 'zfs'; encryption?: string; keystatus?: string; error?: CommandFailureReason; vdevs?: ZfsVdevs }
  | { kind: 'network'; fstype: string }
  | { kind: 'virtual'; fstype: string }
  | { kind: 'unresolved'; fstype: string };

interface DiskEncryptionFacts {
  container: ContainerFacts;
  root: VolumeFacts | { kind: 'error'; reason: FsFailureReason | 'parse_error' };
  /** The root is an overlay judged by the filesystem under it (ostree/composefs: /sysroot). */
  rootDataMount?: string;
  /** Other persistent local filesystems (scope all_local only). */
  others: VolumeFacts[];
  swap: SwapState;
}

type SwapState = 'none' | 'encrypted' | 'unencrypted' | 'unknown';

const ZFS = '/usr/sbin/zfs';
const ZPOOL = '/usr/sbin/zpool';

/** The block devices of a dataset's pool, walked down to the disks, or why they could not be read. */
type ZfsVdevs = { ok: true; trees: BlockNode[] } | { ok: false; reason: CommandFailureReason | 'unresolved_device' };

/** The device paths of `zpool status -P <pool>`'s config section: data, log, cache and spare vdevs alike. */
function zpoolDevicePaths(stdout: string): string[] {
  const config = stdout.split(/^config:\s*$/m)[1]?.split(/^errors:/m)[0] ?? '';
  return config
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((name) => name.startsWith('/dev/'));
}

async function zfsVdevs(ctx: CheckContext, dataset: string): Promise<ZfsVdevs> {
  const pool = dataset.split('/')[0]!;
  const result = await runTool(ctx.host, ZPOOL, ['status', '-P', pool]);
  if (result.error || result.exitCode !== 0) return { ok: false, reason: result.error ? commandFailureReason(result) : 'parse_error' };
  const paths = zpoolDevicePaths(result.stdout);
  const names = await Promise.all(paths.map((p) => deviceByPath(ctx.host, p)));
  if (paths.length === 0 || names.some((n) => n === undefined)) return { ok: false, reason: 'unresolved_device' };
  return { ok: true, trees: await Promise.all(names.map((n) => walkBlockDevice(ctx.host, n!))) };
}
/** Mounted from a disk but not part of the protected system: boot partitions are unencrypted by design. */
const isBootMount = (target: string) => target === '/boot' || target.startsWith('/boot/');

async function btrfsMembers(ctx: CheckContext, name: string): Promise<string[]> {
  const filesystems = await ctx.host.readDir('/sys/fs/btrfs');
  if (!filesystems.ok) return [name];
  for (const fsid of filesystems.entries) {
    const devices = await ctx.host.readDir(`/sys/fs/btrfs/${fsid}/devices`);
    if (devices.ok && devices.entries.includes(name)) return devices.entries;
  }
  return [name];
}

async function volumeOf(ctx: CheckContext, mount: MountEntry): Promise<VolumeFacts> {
  const { host } = ctx;
  if (mount.fstype === 'zfs') {
    const result = await runTool(host, ZFS, ['get', '-H', '-o', 'property,value', 'encryption,keystatus', mount.source]);
    if (result.error || result.exitCode !== 0) return { kind: 'zfs', error: result.error ? commandFailureReason(result) : 'parse_error' };
    const values = Object.fromEntries(
      result.stdout
        .split('\n')
        .map((l) => l.split('\t'))
        .filter((p) => p.length === 2),
    ) as Record<string, string>;
    const facts: Extract<VolumeFacts, { kind: 'zfs' }> = { kind: 'zfs' };
    if (values.encryption) facts.encryption = values.encryption;
    if (values.keystatus) facts.keystatus = values.keystatus;
    // Without native encryption the data can still be encrypted below the pool (ZFS on LUKS).
    if (facts.encryption === 'off') facts.vdevs = await zfsVdevs(ctx, mount.source);
    return facts;
  }
  if (NETWORK_FILESYSTEMS.has(mount.fstype)) return { kind: 'network', fstype: mount.fstype };
  if (!BLOCK_FILESYSTEMS.has(mount.fstype)) return { kind: 'virtual', fstype: mount.fstype };
  // btrfs reports an anonymous device number: resolve it from the source path instead.
  const name =
    mount.major !== 0
      ? await deviceByNumber(host, mount.major, mount.minor)
      : mount.source.startsWith('/dev/')
        ? await deviceByPath(host, mount.source)
        : undefined;
  if (!name) return { kind: 'unresolved', fstype: mount.fstype };
  const members = mount.fstype === 'btrfs' ? await btrfsMembers(ctx, name) : [name];
  const trees = await Promise.all(members.map((m) => walkBlockDevice(host, m)));
  const tree: BlockNode = trees.length === 1 ? trees[0]! : { name: 'btrfs', type: 'virtual', below: trees };
  return { kind: 'block', fstype: mount.fstype, tree };
}

async function swapProtection(ctx: CheckContext, mounts: MountEntry[]): Promise<SwapState> {
  const swaps = await ctx.host.readFile('/proc/swaps');
  if (!swaps.ok) return 'unknown';
  const states: Protection[] = [];
  for (const line of swaps.text.split('\n').slice(1)) {
    const [file, type] = line.trim().split(/\s+/);
    if (!file || !type) continue;
    // zram swap is compressed RAM, never written to disk.
    if (/^\/dev\/zram\d+$/.test(file)) continue;
    if (type === 'partition') {
      const name = await deviceByPath(ctx.host, file);
      states.push(name ? protection(await walkBlockDevice(ctx.host, name)) : 'unknown');
    } else {
      const holder = mountOf(mounts, file);
      const volume = holder ? await volumeOf(ctx, holder) : undefined;
      states.push(volume?.kind === 'block' ? protection(volume.tree) : 'unknown');
    }
  }
  if (states.length === 0) return 'none';
  if (states.includes('plain')) return 'unencrypted';
  return states.includes('unknown') ? 'unknown' : 'encrypted';
}

async function collect(ctx: CheckContext): Promise<DiskEncryptionFacts> {
  const [container, table] = await Promise.all([containerFacts(ctx), mountTable(ctx)]);
  if (!table.ok) return { container, root: { kind: 'error', reason: table.reason }, others: [], swap: 'unknown' };
  const visible = rootMount(table.mounts);
  // ostree's composefs root is an overlay of metadata whose file contents live in /sysroot's repository.
  const sysroot = visible?.fstype === 'overlay' ? table.mounts.filter((m) => m.target === '/sysroot').at(-1) : undefined;
  const root = sysroot ?? visible;
  if (!root) return { container, root: { kind: 'error', reason: 'parse_error' }, others: [], swap: 'unknown' };
  const seen = new Set([`${root.major}:${root.minor}:${root.source}`]);
  const otherMounts =
    ctx.policy.diskEncryption.scope === 'all_local'
      ? table.mounts.filter((m) => {
          const key = `${m.major}:${m.minor}:${m.source}`;
          if (m.target === '/' || isBootMount(m.target) || seen.has(key)) return false;
          seen.add(key);
          return (BLOCK_FILESYSTEMS.has(m.fstype) && m.source.startsWith('/dev/')) || m.fstype === 'zfs';
        })
      : [];
  const [rootVolume, others, swap] = await Promise.all([
    volumeOf(ctx, root),
    Promise.all(otherMounts.map((m) => volumeOf(ctx, m))),
    swapProtection(ctx, table.mounts),
  ]);
  // Removable media (USB sticks) are not the machine's storage.
  const fixed = await Promise.all(
    others.map(async (v) => {
      if (v.kind !== 'block') return true;
      let disk = v.tree;
      while (disk.below[0]) disk = disk.below[0];
      const removable = await ctx.host.readFile(`/sys/class/block/${disk.name}/removable`);
      return !(removable.ok && removable.text.trim() === '1');
    }),
  );
  const facts: DiskEncryptionFacts = { container, root: rootVolume, others: others.filter((_v, i) => fixed[i]), swap };
  if (sysroot) facts.rootDataMount = sysroot.target;
  return facts;
}

type UndecidedVolume =
  CommandFailureReason | 'no_zpool_tooling' | 'zfs_pool_unreadable' | 'network_root' | 'virtual_root' | 'unresolved_device';

function volumeProtection(v: VolumeFacts): Protection | { unknownReason: UndecidedVolume } {
  switch (v.kind) {
    case 'block':
      return protection(v.tree);
    case 'zfs':
      if (v.error) return { unknownReason: v.error };
      if (!v.encryption) return { unknownReason: 'parse_error' };
      if (v.encryption !== 'off') return v.keystatus === 'available' ? 'encrypted' : 'plain';
      if (!v.vdevs?.ok) return { unknownReason: v.vdevs?.reason === 'command_not_found' ? 'no_zpool_tooling' : 'zfs_pool_unreadable' };
      return protection({ name: 'zpool', type: 'virtual', below: v.vdevs.trees });
    case 'network':
      return { unknownReason: 'network_root' };
    case 'virtual':
      return { unknownReason: 'virtual_root' };
    case 'unresolved':
      return { unknownReason: 'unresolved_device' };
  }
}

function evaluate(facts: DiskEncryptionFacts, policy: Policy) {
  const inContainer = containerVerdict(facts.container, policy);
  if (inContainer) return inContainer;
  const evidence: Record<string, unknown> = {
    source: 'sysfs',
    scope: policy.diskEncryption.scope,
    swap: facts.swap,
    ...containerEvidence(facts.container),
  };
  if (facts.rootDataMount) Object.assign(evidence, { root_layer: 'overlay', root_data_mount: facts.rootDataMount });
  if (facts.root.kind === 'error') return unknown(facts.root.reason, evidence);
  const root = facts.root;
  if (root.kind === 'block') {
    Object.assign(evidence, {
      root_fstype: root.fstype,
      root_chain: chainOf(root.tree),
      crypt_types: cryptTypesOf(root.tree),
      root_devices: leafCount(root.tree),
    });
  } else if (root.kind === 'zfs') {
    Object.assign(evidence, {
      source: 'zfs',
      root_fstype: 'zfs',
      zfs_encryption: root.encryption ?? null,
      zfs_keystatus: root.keystatus ?? null,
    });
    if (root.vdevs?.ok) {
      const pool: BlockNode = { name: 'zpool', type: 'virtual', below: root.vdevs.trees };
      Object.assign(evidence, { zfs_vdevs: root.vdevs.trees.length, crypt_types: cryptTypesOf(pool), root_devices: leafCount(pool) });
    }
  } else {
    evidence.root_fstype = root.fstype;
  }
  const rootState = volumeProtection(root);
  if (typeof rootState === 'object') return unknown(rootState.unknownReason, evidence);
  if (rootState === 'unknown') return unknown('unrecognized_dm_layer', evidence);
  if (rootState === 'plain') return fail({ ...evidence, rule: 'root_not_encrypted' });
  if (policy.diskEncryption.scope === 'all_local') {
    const states = facts.others.map(volumeProtection);
    const plain = states.filter((s) => s === 'plain').length;
    Object.assign(evidence, { local_volumes: facts.others.length, unencrypted_local_mounts: plain });
    if (plain > 0) return fail({ ...evidence, rule: 'unencrypted_local_volume' });
    if (states.some((s) => s !== 'encrypted')) return unknown('unreadable_local_volume', evidence);
  }
  if (policy.diskEncryption.failUnencryptedSwap && facts.swap === 'unencrypted') return fail({ ...evidence, rule: 'unencrypted_swap' });
  return pass({ ...evidence, rule: 'root_encrypted' });
}

export const diskEncryption = defineCheck({ key: 'DISK_ENCRYPTION', platform: 'LINUX', collect, evaluate });

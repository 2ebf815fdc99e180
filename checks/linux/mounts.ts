// /proc/self/mountinfo: what is mounted where, from which device. Shared by DISK_ENCRYPTION and
// container detection.
import type { CheckContext } from '../types';
import { fsFailureReason, type FsFailureReason } from '../verdict';

export interface MountEntry {
  major: number;
  minor: number;
  /** Path inside the source filesystem that is mounted (bind mounts, btrfs subvolumes). */
  root: string;
  target: string;
  fstype: string;
  source: string;
}

export type MountTable = { ok: true; mounts: MountEntry[] } | { ok: false; reason: FsFailureReason | 'parse_error' };

/** mountinfo escapes space, tab, newline and backslash as octal (\040). */
function decode(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export function parseMountInfo(text: string): MountEntry[] {
  const mounts: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 3) continue;
    const dev = /^(\d+):(\d+)$/.exec(fields[2]!);
    if (!dev) continue;
    mounts.push({
      major: Number(dev[1]),
      minor: Number(dev[2]),
      root: decode(fields[3]!),
      target: decode(fields[4]!),
      fstype: fields[dash + 1]!,
      source: decode(fields[dash + 2]!),
    });
  }
  return mounts;
}

/** The filesystem visible at `/`: the last mount stacked on it. */
export function rootMount(mounts: readonly MountEntry[]): MountEntry | undefined {
  return mounts.filter((m) => m.target === '/').at(-1);
}

/** The mount holding `file` (longest matching mount point). */
export function mountOf(mounts: readonly MountEntry[], file: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    const prefix = m.target === '/' ? '/' : `${m.target}/`;
    if ((file === m.target || file.startsWith(prefix)) && (!best || m.target.length >= best.target.length)) best = m;
  }
  return best;
}

export function mountTable(ctx: CheckContext): Promise<MountTable> {
  return ctx.shared('linux.mounts', async () => {
    const result = await ctx.host.readFile('/proc/self/mountinfo');
    if (!result.ok) return { ok: false, reason: fsFailureReason(result.error) };
    const mounts = parseMountInfo(result.text);
    return mounts.length > 0 ? { ok: true, mounts } : { ok: false, reason: 'parse_error' };
  });
}

/** Filesystems that live on a local block device. */
export const BLOCK_FILESYSTEMS = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'bcachefs',
  'erofs',
  'squashfs',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
]);
/** Filesystems served over the network: their encryption and firewalling belong to another machine. */
export const NETWORK_FILESYSTEMS = new Set(['nfs', 'nfs4', 'cifs', 'smb3', '9p', 'virtiofs', 'ceph', 'glusterfs', 'fuse.sshfs']);

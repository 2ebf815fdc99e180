// Block-device ancestry walked through /sys/class/block (no root, no udev, no lsblk): from the
// device a filesystem sits on down to the disks, recording each layer's type. A dm node's type
// comes from its dm uuid prefix (cryptsetup: CRYPT-<TYPE>-…, LVM: LVM-…, multipath: mpath-…).
import type { Host } from '../types';

export type LayerType = 'disk' | 'part' | 'crypt' | 'lvm' | 'raid' | 'mpath' | 'verity' | 'integrity' | 'loop' | 'dm' | 'virtual';

export interface BlockNode {
  /** Kernel name (dm-0, nvme0n1p3): used to walk and deduplicate, never sent as evidence. */
  name: string;
  type: LayerType;
  /** dm-crypt flavour (LUKS2, LUKS1, PLAIN, BITLK, …) for crypt layers. */
  cryptType?: string;
  /** The devices this one is built on. */
  below: BlockNode[];
}

/** cryptsetup types that encrypt; VERITY/INTEGRITY/SUBDEV are dm layers cryptsetup creates that do not. */
const ENCRYPTING_TYPES = new Set(['LUKS', 'LUKS1', 'LUKS2', 'PLAIN', 'LOOPAES', 'TCRYPT', 'BITLK', 'FVAULT2']);

export function layerFromDmUuid(uuid: string): { type: LayerType; cryptType?: string } {
  const crypt = /^CRYPT-([A-Z0-9]+)-/.exec(uuid);
  if (crypt) {
    const kind = crypt[1]!;
    if (ENCRYPTING_TYPES.has(kind)) return { type: 'crypt', cryptType: kind };
    if (kind === 'VERITY') return { type: 'verity' };
    if (kind === 'INTEGRITY' || kind === 'SUBDEV') return { type: 'integrity' };
    return { type: 'dm' };
  }
  if (uuid.startsWith('LVM-')) return { type: 'lvm' };
  if (uuid.startsWith('mpath-')) return { type: 'mpath' };
  if (/^part\d+-/.test(uuid)) return { type: 'part' };
  return { type: 'dm' };
}

const MAX_DEPTH = 16;
const sys = (name: string, leaf = '') => `/sys/class/block/${name}${leaf}`;

async function slaves(host: Host, name: string): Promise<string[]> {
  const dir = await host.readDir(sys(name, '/slaves'));
  return dir.ok ? dir.entries : [];
}

/** Walks from `name` down to its disks. */
export async function walkBlockDevice(host: Host, name: string, depth = 0): Promise<BlockNode> {
  const below = async (names: string[]) => (depth >= MAX_DEPTH ? [] : Promise.all(names.map((n) => walkBlockDevice(host, n, depth + 1))));
  const dmUuid = await host.readFile(sys(name, '/dm/uuid'));
  if (dmUuid.ok) {
    const layer = layerFromDmUuid(dmUuid.text.trim());
    return { name, ...layer, below: await below(await slaves(host, name)) };
  }
  const partition = await host.readFile(sys(name, '/partition'));
  if (partition.ok) {
    // /sys/class/block/sda1 -> ../../devices/…/block/sda/sda1: the parent is the directory above.
    const link = await host.readLink(sys(name));
    const parts = link.ok ? link.target.split('/').filter(Boolean) : [];
    const parent = parts.length >= 2 && parts.at(-1) === name ? parts.at(-2)! : undefined;
    return { name, type: 'part', below: parent && parent !== 'block' ? await below([parent]) : [] };
  }
  if (name.startsWith('loop')) return { name, type: 'loop', below: [] };
  const under = await slaves(host, name);
  if (under.length === 0) return { name, type: 'disk', below: [] };
  const md = await host.stat(sys(name, '/md'));
  return { name, type: md.ok && md.isDirectory ? 'raid' : 'virtual', below: await below(under) };
}

export type Protection = 'encrypted' | 'plain' | 'unknown';

/**
 * A device is encrypted when it is an encrypting layer or when everything it is built on is
 * (LVM-on-LUKS, RAID of LUKS members, multi-device btrfs: every leg must be encrypted).
 */
export function protection(node: BlockNode): Protection {
  if (node.type === 'crypt') return 'encrypted';
  if (node.type === 'loop') return 'unknown';
  if (node.below.length === 0) return node.type === 'dm' ? 'unknown' : 'plain';
  const states = node.below.map(protection);
  if (states.every((s) => s === 'encrypted')) return 'encrypted';
  // An unidentified dm layer over plain devices may itself be dm-crypt without a cryptsetup uuid.
  if (node.type === 'dm' || states.includes('unknown')) return 'unknown';
  return 'plain';
}

/** Layer types from the top device down its first leg ("lvm","crypt","part","disk"). */
export function chainOf(node: BlockNode): LayerType[] {
  const chain: LayerType[] = [];
  for (let n: BlockNode | undefined = node; n; n = n.below[0]) chain.push(n.type);
  return chain;
}

export function cryptTypesOf(node: BlockNode): string[] {
  const found = new Set<string>();
  const visit = (n: BlockNode) => {
    if (n.cryptType) found.add(n.cryptType);
    n.below.forEach(visit);
  };
  visit(node);
  return [...found].sort();
}

export function leafCount(node: BlockNode): number {
  return node.below.length === 0 ? 1 : node.below.reduce((sum, n) => sum + leafCount(n), 0);
}

/** Kernel name of a block device from its major:minor (/sys/dev/block/M:m -> …/dm-0). */
export async function deviceByNumber(host: Host, major: number, minor: number): Promise<string | undefined> {
  const link = await host.readLink(`/sys/dev/block/${major}:${minor}`);
  return link.ok ? link.target.split('/').filter(Boolean).at(-1) : undefined;
}

/** Kernel name of a /dev path, following symlinks (/dev/mapper/root -> ../dm-0). */
export async function deviceByPath(host: Host, devPath: string): Promise<string | undefined> {
  let current = devPath;
  for (let hops = 0; hops < 8; hops++) {
    const link = await host.readLink(current);
    if (!link.ok) break;
    current = link.target.startsWith('/') ? link.target : `${current.slice(0, current.lastIndexOf('/'))}/${link.target}`;
  }
  const name = current
    .split('/')
    .filter((p) => p && p !== '..' && p !== '.')
    .at(-1);
  if (!name) return undefined;
  const s = await host.stat(sys(name));
  return s.ok ? name : undefined;
}

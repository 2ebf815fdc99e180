// Parsers for the FreeBSD storage tools DISK_ENCRYPTION reads: mount(8) -p, zpool(8) status -P,
// zfs(8) get -H and geli(8) status.

export interface MountEntry {
  source: string;
  mountpoint: string;
  fstype: string;
}

export interface MountTable {
  entries: MountEntry[];
  /** Lines that are not the six fstab(5) fields mount -p prints (paths with blanks). */
  unparsed: number;
}

/** `mount -p`: fstab(5) lines "source mountpoint fstype options freq passno", tab-separated. */
export function parseMountTable(text: string): MountTable {
  const entries: MountEntry[] = [];
  let unparsed = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 6 || !/^\d+$/.test(fields[4]!) || !/^\d+$/.test(fields[5]!)) {
      unparsed++;
      continue;
    }
    entries.push({ source: fields[0]!, mountpoint: fields[1]!, fstype: fields[2]! });
  }
  return { entries, unparsed };
}

/** The filesystem mounted on `/`: the last such line, as a later mount covers an earlier one. */
export function rootEntry(table: MountTable): MountEntry | undefined {
  return table.entries.filter((e) => e.mountpoint === '/').at(-1);
}

/**
 * A GEOM provider name on a GELI layer: "ada0p3.eli", "gpt/zfs0.eli", and partitions or slices
 * made on top of one ("ada0.elip2", "ada0.elis1a").
 */
export function isGeliProvider(path: string): boolean {
  const name = path.split('/').at(-1) ?? '';
  return /\.eli(?:p\d+|s\d+[a-h]?)?$/.test(name);
}

export interface PoolLayout {
  /** Leaf devices (full paths with -P), including log, cache, special and spare devices. */
  leaves: string[];
  /** Device lines that are neither a path, a known vdev group nor a missing device with "was <path>". */
  unrecognized: number;
}

const VDEV_GROUP = /^(?:mirror|raidz[123]?|draid[123]?(?::[0-9a-z:]+)?|spare|replacing|indirect)-\d+$/;
const SECTION = /^(?:logs|cache|spares|special|dedup)$/;

/** `zpool status -P [pool ...]`: the device tree of each pool's config section. */
export function parseZpoolStatus(text: string): Map<string, PoolLayout> {
  const pools = new Map<string, PoolLayout>();
  const lines = text.split('\n');
  let current: PoolLayout | undefined;
  let inConfig = false;
  let expectPoolLine = false;
  for (const raw of lines) {
    const poolHeader = /^\s*pool: (\S+)\s*$/.exec(raw);
    if (poolHeader) {
      current = { leaves: [], unrecognized: 0 };
      pools.set(poolHeader[1]!, current);
      inConfig = false;
      continue;
    }
    if (!current) continue;
    if (/^\s*NAME\s+STATE\s+READ\s+WRITE\s+CKSUM\s*$/.test(raw)) {
      inConfig = true;
      expectPoolLine = true;
      continue;
    }
    if (!inConfig) continue;
    if (raw.trim() === '') {
      if (!expectPoolLine) inConfig = false;
      continue;
    }
    const token = raw.trim().split(/\s+/)[0]!;
    if (expectPoolLine) {
      // The first row is the pool itself.
      expectPoolLine = false;
      continue;
    }
    if (VDEV_GROUP.test(token) || SECTION.test(token)) continue;
    if (token.startsWith('/')) {
      current.leaves.push(token);
      continue;
    }
    const was = /\bwas (\/\S+)/.exec(raw);
    if (/^\d+$/.test(token) && was) current.leaves.push(was[1]!);
    else current.unrecognized++;
  }
  return pools;
}

export interface DatasetEncryption {
  encryption: string;
  keystatus: string;
}

/** `zfs get -H -o name,property,value encryption,keystatus <dataset ...>`. */
export function parseZfsEncryption(text: string): Map<string, Partial<DatasetEncryption>> {
  const out = new Map<string, Partial<DatasetEncryption>>();
  for (const line of text.split('\n')) {
    const fields = line.split('\t');
    if (fields.length !== 3) continue;
    const [name, property, value] = fields as [string, string, string];
    if (property !== 'encryption' && property !== 'keystatus') continue;
    out.set(name, { ...out.get(name), [property]: value });
  }
  return out;
}

export interface GeliProvider {
  name: string;
  status: string;
  component: string;
}

/** `geli status` rows ("Name Status Components"); null when the output is not that table. */
export function parseGeliStatus(text: string): GeliProvider[] | null {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  if (!/^\s*Name\s+Status\s+Components\s*$/.test(lines[0]!)) return null;
  const providers: GeliProvider[] = [];
  for (const line of lines.slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 3) return null;
    providers.push({ name: fields[0]!, status: fields[1]!, component: fields[2]! });
  }
  return providers;
}

/** geom(8) says this when the ELI class is not loaded: then no GELI provider exists. */
export const GELI_NOT_LOADED = /^geli: Command 'status' not available; try 'load' first\.$/m;

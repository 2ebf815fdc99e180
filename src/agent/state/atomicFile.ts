// Crash-safe file writes for the state directory: a reader sees the old content or the new, never a
// torn file. Temp file in the same directory (so rename is atomic), fsync, rename, fsync of the directory.
// Also the ownership rule: an entry another user could change is refused, never repaired.
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UntrustedStateError } from '../errors';

/** Suffix of temp files; a crash can leave one behind, which wiping removes. */
export const TEMP_SUFFIX = '.tmp';

export interface WriteOptions {
  /** File mode; default owner-only 0600. */
  mode?: number;
}

export async function writeFileAtomic(file: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = dirname(file);
  // Loaded here, not at the top: commands that only read the state directory (`status`) start
  // without node:crypto (docs/performance.md, "The agent's start-up").
  const { randomBytes } = await import('node:crypto');
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dir);
}

/** Makes a rename or unlink in `dir` durable. Platforms that cannot open a directory skip it. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (err) {
    if (isCode(err, 'EISDIR', 'EPERM', 'EACCES')) return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    if (!isCode(err, 'EINVAL', 'EPERM', 'EBADF')) throw err;
  } finally {
    await handle.close();
  }
}

/**
 * Creates `dir` (and parents) owner-only. An existing directory of ours that others may read is
 * narrowed to 0700 through a descriptor opened without following links; one another user could
 * change (see assertTrustedEntry) is refused with UntrustedStateError and left as it is.
 */
export async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await lstat(dir);
  assertTrustedEntry(dir, stats);
  if (!stats.isDirectory()) throw new UntrustedStateError(`cannot use ${dir} as a directory: it is not one`);
  if ((stats.mode & 0o777) === 0o700 || ownerUid() === undefined) return;
  const handle = await open(dir, constants.O_RDONLY | NO_FOLLOW_DIRECTORY);
  try {
    const opened = await handle.stat();
    // Replaced between lstat and open: refuse rather than change a mode we did not check.
    if (opened.ino !== stats.ino || opened.dev !== stats.dev) throw untrusted(dir, 'was replaced while being checked');
    await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}

/** Open flags that fail on a symbolic link or a non-directory, where the platform has them. */
const NO_FOLLOW_DIRECTORY = (constants.O_NOFOLLOW ?? 0) | (constants.O_DIRECTORY ?? 0);

/** The user whose state this process may trust, or undefined where files have no owner uid (Windows). */
export function ownerUid(): number | undefined {
  return typeof process.geteuid === 'function' ? process.geteuid() : undefined;
}

/**
 * Refuses (UntrustedStateError) an entry of the state directory that another user could change: a
 * symbolic link, an entry owned by another uid, or one writable by group or others. `stats` must come
 * from lstat. Where files have no owner uid (Windows) the directory's ACL is the protection.
 */
export function assertTrustedEntry(path: string, stats: Stats, uid: number | undefined = ownerUid(), allow: { link?: boolean } = {}): void {
  if (uid === undefined) return;
  if (stats.isSymbolicLink() && !allow.link) throw untrusted(path, 'is a symbolic link');
  if (stats.uid !== uid) throw untrusted(path, `is owned by uid ${stats.uid}, not by this user (uid ${uid})`);
  // A link's own mode bits mean nothing (always 0777 on Linux); its owner is what counts.
  const writable = allow.link ? 0 : stats.mode & 0o022;
  if (writable !== 0) {
    const who = writable === 0o022 ? 'group and others' : writable === 0o020 ? 'group' : 'others';
    throw untrusted(path, `is writable by ${who} (mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')})`);
  }
}

function untrusted(path: string, why: string): UntrustedStateError {
  return new UntrustedStateError(
    `refusing the state directory: ${path} ${why}, so another user could change what device-agent trusts. ` +
      'Nothing was changed. Remove it, or have its owner fix it (owned by the user running device-agent, not writable by group or others), or use another --state-dir',
  );
}

/** The file's text, or null when it does not exist. */
export async function readFileIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return null;
    throw err;
  }
}

export function isCode(err: unknown, ...codes: string[]): boolean {
  return typeof err === 'object' && err !== null && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}

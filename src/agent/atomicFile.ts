// Crash-safe file writes for the state directory: a reader sees the old content or the new, never a
// torn file. Temp file in the same directory (so rename is atomic), fsync, rename, fsync of the directory.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, chmod } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Suffix of temp files; a crash can leave one behind, which wiping removes. */
export const TEMP_SUFFIX = '.tmp';

export interface WriteOptions {
  /** File mode; default owner-only 0600. */
  mode?: number;
}

export async function writeFileAtomic(file: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = dirname(file);
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

/** Creates `dir` (and parents) and makes it owner-only, also when it already existed with a wider mode. */
export async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
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

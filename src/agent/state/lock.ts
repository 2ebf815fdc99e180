// Exclusive inter-process lock that records the holder's pid. Node has no flock(), so the lock is
// the existence of a file created exclusively. The pid is the target of a symbolic link: creating
// one is atomic, carries the pid in the same step, and needs no data block, so a full disk can
// neither refuse the lock nor leave an empty lock file behind. Where symbolic links are not
// permitted (Windows without the privilege, FAT) the lock is a regular file created with O_EXCL
// that holds the pid; readers accept both forms. A lock whose holder is dead is taken over; the
// takeover itself is serialised by a second lock so that two processes cannot both replace it.
import { readFileSync, readlinkSync, rmSync } from 'node:fs';
import { open, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockHeldError } from '../errors';
import { isCode } from './atomicFile';

export interface LockOptions {
  /** Wait for a live holder to release it; without, LockHeldError at once. */
  wait?: boolean;
  /** Upper bound of the wait, in ms (default 120 s); LockHeldError afterwards. */
  timeoutMs?: number;
  /** Called once when the lock is found held and the caller waits. */
  onWait?: (holderPid: number) => void;
}

export interface Lock {
  readonly file: string;
  release(): Promise<void>;
}

const POLL_MS = 50;

export async function acquireLock(file: string, options: LockOptions = {}): Promise<Lock> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let announced = false;
  for (;;) {
    if (await tryCreate(file)) return heldLock(file);
    const holder = await readHolder(file);
    if (holder === undefined) continue; // released between our attempt and the read
    if (holder !== null && isAlive(holder)) {
      if (!options.wait || Date.now() >= deadline) throw new LockHeldError(file, holder);
      if (!announced) options.onWait?.(holder);
      announced = true;
      await sleep(POLL_MS);
      continue;
    }
    await takeOverStale(file, holder);
  }
}

/** Creates the lock naming this process; false when it exists. */
async function tryCreate(file: string): Promise<boolean> {
  try {
    await symlink(String(process.pid), file);
    return true;
  } catch (err) {
    if (isCode(err, 'EEXIST')) return false;
    if (!isCode(err, 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS')) throw err;
  }
  return tryCreateFile(file);
}

async function tryCreateFile(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (err) {
    if (isCode(err, 'EEXIST')) return false;
    throw err;
  }
  try {
    await handle.writeFile(`${process.pid}\n`);
  } catch (err) {
    // Never leave an empty lock behind: it would read as a holder still writing its pid.
    await handle.close();
    await rm(file, { force: true });
    throw err;
  }
  await handle.close();
  return true;
}

/** The holder pid; null when unreadable (a crash while writing it); undefined when the file is gone. */
async function readHolder(file: string): Promise<number | null | undefined> {
  let text: string;
  try {
    text = await readlink(file);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    if (!isCode(err, 'EINVAL', 'UNKNOWN')) throw err;
    try {
      text = await readFile(file, 'utf8'); // the regular-file form
    } catch (readErr) {
      if (isCode(readErr, 'ENOENT')) return undefined;
      throw readErr;
    }
  }
  return pidIn(text);
}

function pidIn(text: string): number | null {
  const pid = Number.parseInt(text.trim(), 10);
  // An empty file may be a holder that has created but not yet written it: give it a moment.
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return isCode(err, 'EPERM');
  }
}

async function takeOverStale(file: string, stalePid: number | null): Promise<void> {
  const guard = `${file}.takeover`;
  if (!(await tryCreate(guard))) {
    // Someone else is taking over; a guard whose writer died is itself stale.
    const guardHolder = await readHolder(guard);
    if (guardHolder !== undefined && (guardHolder === null || !isAlive(guardHolder))) {
      await sleep(POLL_MS);
      if ((await readHolder(guard)) === guardHolder) await rm(guard, { force: true });
    } else {
      await sleep(POLL_MS);
    }
    return;
  }
  try {
    if (stalePid === null) await sleep(POLL_MS); // let a holder that is writing its pid finish
    const current = await readHolder(file);
    if (current === stalePid || current === null) await rm(file, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

function readHolderSync(file: string): number | null {
  try {
    return pidIn(readlinkSync(file));
  } catch {
    try {
      return pidIn(readFileSync(file, 'utf8'));
    } catch {
      return null;
    }
  }
}

function heldLock(file: string): Lock {
  let released = false;
  const releaseSync = () => {
    // Last resort on exit: only remove the lock if it is still ours.
    if (readHolderSync(file) === process.pid) rmSync(file, { force: true });
  };
  process.once('exit', releaseSync);
  return {
    file,
    async release() {
      if (released) return;
      released = true;
      process.removeListener('exit', releaseSync);
      if ((await readHolder(file)) === process.pid) await rm(file, { force: true });
    },
  };
}

/** The pid of the live process holding `file`, or null when nobody does. */
export async function lockHolder(file: string): Promise<number | null> {
  const holder = await readHolder(file).catch(() => null);
  return typeof holder === 'number' && isAlive(holder) ? holder : null;
}

// `device-agent-server backup`: a consistent copy of a SQLite deployment while `serve` runs, with
// SQLite's online backup API (better-sqlite3's db.backup(): pages copied in steps, restarted when a
// writer changes the source meanwhile). The copy is written aside, owner-only, checked, flushed to
// disk and renamed into place: an interrupted backup never leaves a file that looks complete.
import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DatabaseOpenError, openDatabase } from './db/open';
import { UsageError } from './usage';

export interface BackupResult {
  /** Pages copied (the database's size in pages). */
  pages: number;
}

/** Copies the SQLite database at `from` into the new file `to`; refuses to overwrite a file. */
export async function backupSqlite(from: string, to: string): Promise<BackupResult> {
  if (existsSync(to)) throw new UsageError(`${to} already exists; choose a new file`);
  const partial = join(dirname(to), `.${basename(to)}.partial-${process.pid}`);
  // Created first, empty and owner-only, so the copy is never readable by others, even for a moment.
  let fd: number;
  try {
    fd = openSync(partial, 'wx', 0o600);
  } catch (error) {
    throw new UsageError(`cannot write into ${dirname(to)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  closeSync(fd);
  try {
    const db = openDatabase(from, { mustExist: true });
    let pages: number;
    try {
      ({ totalPages: pages } = await db.backup(partial));
    } finally {
      db.close();
    }
    const copy = openDatabase(partial, { mustExist: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new DatabaseOpenError(`the copy of ${from} failed its check: ${String(check)}`);
      // The copy is a complete database on its own: no -wal beside it to carry along.
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    flush(partial);
    linkInto(partial, to);
    flush(dirname(to));
    return { pages };
  } finally {
    rmSync(partial, { force: true });
  }
}

function flush(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Puts the finished copy at `to` (the partial name goes in the caller's cleanup). */
function linkInto(partial: string, to: string): void {
  try {
    // link(2) fails with EEXIST where rename(2) would replace: an existing file is never overwritten.
    linkSync(partial, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${to} already exists; choose a new file`);
    throw error;
  }
}

// Opens the store that `--db` names. A PostgreSQL database is opened by postgresOpen.ts (loaded
// only then); the embedded SQLite database here: owner-only files, WAL so that the admin CLI can
// work while `serve` runs, a busy timeout instead of immediate SQLITE_BUSY, and the schema migrated.
import { closeSync, constants, existsSync, fchmodSync, fstatSync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { DatabaseLocation } from './location';
import { SchemaTooNewError, migrate } from './migrations';
import { Sqlite, sqliteModuleFile } from './sqliteDriver';
import { settle, SqliteStore } from './sqliteStore';
import type { Store } from './store';
import { startWalCheckpointer } from './walCheckpointer';

const BUSY_TIMEOUT_MS = 5_000;
/** How long a start waits for another process that is setting up the same new database. */
const SETUP_DEADLINE_MS = 15_000;
const OWNER_ONLY = 0o600;

export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
}

export interface OpenOptions {
  /** Refuse to create a new database (admin commands that only read or change existing devices). */
  mustExist?: boolean;
}

export interface QueryTimeouts {
  /**
   * Longest statement: PostgreSQL cancels it (statement_timeout); a server that does not answer at
   * all (frozen, partitioned) is given up on a moment later.
   */
  statementMs: number;
  /** Longest wait for a pooled connection, a new connection's set-up included. */
  acquireMs: number;
}

export interface StoreOptions extends OpenOptions {
  /** PostgreSQL: file holding the password. */
  passwordFile?: string;
  /** PostgreSQL: most connections this process opens. */
  poolSize?: number;
  /** PostgreSQL: bounds on every query (`serve`). */
  timeouts?: QueryTimeouts;
  /**
   * SQLite: checkpoint the WAL from a worker thread instead of inside commits on the event loop
   * (`serve`: walCheckpointer.ts); called with the reason if that thread fails.
   */
  backgroundCheckpoints?: { onFailure: (reason: string) => void };
}

/** Opens the store at `location`. Throws DatabaseOpenError for what the user can fix. */
export async function openStore(location: DatabaseLocation, options: StoreOptions = {}): Promise<Store> {
  if (location.engine === 'sqlite') {
    return settle(() => {
      const db = openDatabase(location.path, options);
      const checkpoints = options.backgroundCheckpoints;
      return new SqliteStore(db, checkpoints && startWalCheckpointer(db, location.path, sqliteModuleFile(), checkpoints.onFailure));
    });
  }
  const { openPostgresStore } = await import('./postgresOpen');
  return openPostgresStore({ ...options, url: location.url, display: location.display });
}

/** The SQLite database itself, set up and migrated (migrate-data reads it table by table). */
export function openDatabase(path: string, options: OpenOptions): Database.Database {
  if (options.mustExist && !existsSync(path)) {
    throw new DatabaseOpenError(`no database at ${path} (start \`serve --db ${path}\` or run \`device create\` first)`);
  }
  createOwnerOnly(path);
  for (const file of [path, `${path}-wal`, `${path}-shm`]) makeOwnerOnly(file);
  let db: Database.Database | undefined;
  try {
    db = new Sqlite(path, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    setUp(db);
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof SchemaTooNewError) throw new DatabaseOpenError(`${path}: ${error.message}`);
    if (isSqliteError(error)) throw new DatabaseOpenError(`cannot use ${path} as a device-agent-server database: ${error.message}`);
    throw error;
  }
}

/**
 * WAL, then the migrations. Processes that start together on a new database contend for the
 * switch to WAL and for the first migration; SQLite may answer the loser SQLITE_BUSY, or leave the
 * journal mode unchanged without an error, so both are retried until the deadline.
 */
function setUp(db: Database.Database): void {
  const deadline = Date.now() + SETUP_DEADLINE_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw Object.assign(new Error(`the journal mode stayed ${String(mode)}`), { code: 'SQLITE_BUSY' });
      // In WAL mode NORMAL never corrupts the database; a power loss may lose the last commits.
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      migrate(db);
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      sleep(Math.min(1_000, 20 * attempt) + Math.random() * 20);
    }
  }
}

/** New databases are created 0600; SQLite gives the -wal and -shm files the main file's mode. */
function createOwnerOnly(path: string): void {
  try {
    closeSync(openSync(path, 'wx', OWNER_ONLY));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    throw new DatabaseOpenError(
      `cannot create the database ${path}: ${code === 'ENOENT' ? 'its directory does not exist' : (error as Error).message}`,
    );
  }
}

/**
 * An existing file (an older install, a copied backup, a crash-left -wal) may be readable by others
 * or belong to someone else: it is made owner-only, or refused. Changed through the open file, so
 * the file checked is the file changed.
 */
function makeOwnerOnly(file: string): void {
  const uid = process.geteuid?.();
  if (uid === undefined) return; // no POSIX owners and modes (Windows): the directory's ACL applies
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new DatabaseOpenError(`cannot open ${file}: ${code ?? (error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new DatabaseOpenError(`${file} is not a regular file`);
    if (stat.uid !== uid) {
      throw new DatabaseOpenError(
        `${file} belongs to uid ${stat.uid}, not to this user (uid ${uid}); run the server as the database's owner or give it its own database`,
      );
    }
    if ((stat.mode & 0o077) !== 0) {
      try {
        fchmodSync(fd, stat.mode & 0o700);
      } catch (error) {
        throw new DatabaseOpenError(
          `${file} is readable by others and cannot be made owner-only: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
    }
  } finally {
    closeSync(fd);
  }
}

function isSqliteError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('SQLITE_');
}

function isBusy(error: unknown): boolean {
  return isSqliteError(error) && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));
}

/** Start-up only: nothing else runs in this process yet. */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

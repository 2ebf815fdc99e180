// Opens the embedded SQLite database: owner-only file, WAL so that the admin CLI can work while
// `serve` runs, a busy timeout instead of immediate SQLITE_BUSY, and the schema migrated.
import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SchemaTooNewError, migrate } from './migrations';

const BUSY_TIMEOUT_MS = 5_000;

export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
}

export interface OpenOptions {
  /** Refuse to create a new database (admin commands that only read or change existing devices). */
  mustExist?: boolean;
}

export function openDatabase(path: string, options: OpenOptions = {}): Database.Database {
  if (options.mustExist && !existsSync(path)) {
    throw new DatabaseOpenError(`no database at ${path} (start \`serve --db ${path}\` or run \`device create\` first)`);
  }
  createOwnerOnly(path);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL never corrupts the database; a power loss may lose the last commits.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof SchemaTooNewError) throw new DatabaseOpenError(`${path}: ${error.message}`);
    if (error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('SQLITE_')) {
      throw new DatabaseOpenError(`cannot use ${path} as a device-agent-server database: ${error.message}`);
    }
    throw error;
  }
}

/** SQLite gives the -wal and -shm files the main file's mode, so creating it 0600 covers all three. */
function createOwnerOnly(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    throw new DatabaseOpenError(`cannot create the database ${path}: ${code === 'ENOENT' ? 'its directory does not exist' : (error as Error).message}`);
  }
}

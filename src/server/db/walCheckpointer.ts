// Checkpoints of the SQLite WAL from a worker thread. better-sqlite3 runs on the event loop, and
// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages: it copies
// them into the database file and fsyncs it while every request waits. Measured on this project's
// machine (100-result posture uploads, one connection): 376-431 uploads/s with p99 19-23 ms and a
// maximum of 50-124 ms with the automatic checkpoint, 664-856 uploads/s with p99 2-6 ms without it.
// `serve` therefore turns the automatic checkpoint off on its connection and a worker thread, with
// its own connection, runs a PASSIVE checkpoint (it never blocks a writer or a reader) every
// CHECKPOINT_INTERVAL_MS. A checkpoint is not a commit: it does not move the other connections'
// PRAGMA data_version (the device cache's invalidation). If the worker fails, the connection goes
// back to SQLite's automatic checkpoint, so the WAL never grows without bound.
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

const CHECKPOINT_INTERVAL_MS = 500;
/** SQLite's default wal_autocheckpoint, restored when the worker is gone. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

interface CheckpointerData {
  sqliteModule: string;
  path: string;
  intervalMs: number;
}

export interface WalCheckpointer {
  /** Stops the worker (it finishes a checkpoint in progress) and closes its connection. */
  stop(): Promise<void>;
}

/**
 * The worker's whole program, run from its source text (`eval`): it uses nothing from this module's
 * scope. A failure other than a busy database ends the worker, which the main thread hears.
 */
function checkpointerThread(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- a worker run from source text has only require */
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  const { sqliteModule, path, intervalMs } = threads.workerData as CheckpointerData;
  const Sqlite = require(sqliteModule) as typeof import('better-sqlite3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = new Sqlite(path, { fileMustExist: true, timeout: intervalMs });
  const timer = setInterval(() => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      // Another process's checkpoint is running: this one waits for the next interval.
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    }
  }, intervalMs);
  threads.parentPort!.once('message', () => {
    clearInterval(timer);
    db.close();
  });
}

/**
 * Starts checkpointing `db` (the database file at `path`, opened with `sqliteModule`) from a worker
 * thread. `onFailure` hears why the worker stopped early (the connection is then back on SQLite's
 * automatic checkpoint).
 */
export function startWalCheckpointer(
  db: Database,
  path: string,
  sqliteModule: string,
  onFailure: (reason: string) => void,
): WalCheckpointer {
  const worker = new Worker(`(${checkpointerThread.toString()})()`, {
    eval: true,
    workerData: { sqliteModule, path, intervalMs: CHECKPOINT_INTERVAL_MS } satisfies CheckpointerData,
  });
  // Never the reason the process stays up: serve stops it before closing the database.
  worker.unref();
  db.pragma('wal_autocheckpoint = 0');
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    let failure: string | undefined;
    // A SQLite error may cross the thread boundary as its code alone.
    worker.once('error', (error: Error & { code?: unknown }) => (failure = [error.code, error.message].filter(Boolean).join(': ')));
    worker.once('exit', (code) => {
      if (!stopping) {
        if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
        onFailure(failure || `the checkpoint thread exited with code ${code}`);
      }
      resolve();
    });
  });
  return {
    async stop() {
      stopping = true;
      // Waited for: it must keep the process up until it has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

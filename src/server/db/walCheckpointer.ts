// Checkpoints of the SQLite WAL from a worker thread. better-sqlite3 runs on the event loop, and
// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages: it copies
// them into the database file and fsyncs it while every request waits. Measured on this project's
// machine (100-result posture uploads, one connection): 376-431 uploads/s with p99 19-23 ms and a
// maximum of 50-124 ms with the automatic checkpoint, 664-856 uploads/s with p99 2-6 ms without it.
// `serve` therefore turns the automatic checkpoint off on its connection and a worker thread, with
// its own connection, runs a PASSIVE checkpoint (it never blocks a writer or a reader) every
// CHECKPOINT_INTERVAL_MS. A checkpoint is not a commit: it does not move the other connections'
// PRAGMA data_version (the device cache's invalidation).
// SQLite rewinds the WAL only when a write begins with every frame already copied. Its automatic
// checkpoint runs in the writer's own thread, so nothing commits meanwhile; a worker's checkpoint
// runs beside the writer, and under a steady stream of commits it never catches up with the last
// one: the WAL grew by everything written (1.7 GB in 15 s of posture uploads). So once the WAL
// holds more than RESTART_FRAMES, the worker runs a RESTART checkpoint: it waits for the writer's
// transaction to end, holds off the next one while it copies the few frames the PASSIVE one left
// (and syncs), and the next write rewinds the WAL, which journal_size_limit then truncates. If the
// worker fails, the connection goes back to SQLite's automatic checkpoint.
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

const CHECKPOINT_INTERVAL_MS = 500;
/** 64 MiB of 4 KiB pages: SQLite's automatic checkpoint keeps about 4 MiB, at one fsync per 1,000 pages on the event loop. */
const RESTART_FRAMES = 16_384;
/** SQLite's default wal_autocheckpoint, restored when the worker is gone. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

export interface CheckpointSchedule {
  intervalMs: number;
  /** WAL frames beyond which the worker makes the next write rewind the WAL. */
  restartFrames: number;
}

interface CheckpointerData extends CheckpointSchedule {
  sqliteModule: string;
  path: string;
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
  const { sqliteModule, path, intervalMs, restartFrames } = threads.workerData as CheckpointerData;
  const Sqlite = require(sqliteModule) as typeof import('better-sqlite3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = new Sqlite(path, { fileMustExist: true, timeout: intervalMs });
  const timer = setInterval(() => {
    try {
      const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
      if (log > restartFrames) db.pragma('wal_checkpoint(RESTART)');
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
  schedule: CheckpointSchedule = { intervalMs: CHECKPOINT_INTERVAL_MS, restartFrames: RESTART_FRAMES },
): WalCheckpointer {
  const worker = new Worker(`(${checkpointerThread.toString()})()`, {
    eval: true,
    workerData: { sqliteModule, path, ...schedule } satisfies CheckpointerData,
  });
  // Never the reason the process stays up: serve stops it before closing the database.
  worker.unref();
  db.pragma('wal_autocheckpoint = 0');
  // A rewound WAL is cut back to this size (SQLite leaves the file at its largest otherwise).
  db.pragma(`journal_size_limit = ${schedule.restartFrames * Number(db.pragma('page_size', { simple: true }))}`);
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

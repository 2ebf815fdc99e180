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
// runs beside the writer, and under a steady stream of commits never catches up with the last one:
// the WAL grew by everything written (1.7 GB in 15 s of posture uploads). So once the WAL holds
// more than RESTART_FRAMES, the worker copies in passes until little is left, then asks the store
// to hold its writes (writesPaused: they wait as promises, the event loop and reads go on) while it
// runs a RESTART checkpoint of that remainder; the next write rewinds the WAL, which
// journal_size_limit cuts back. A RESTART beside the writer instead made the writer's busy handler sleep on the event
// loop for the copy and its fsyncs: the fleet's keep-alive p99 went from 4.6 to 30 ms at one
// request in flight. If the worker fails, the connection goes back to SQLite's automatic checkpoint.
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
import type { WalUse } from './store';

const CHECKPOINT_INTERVAL_MS = 500;
/**
 * 256 MiB of 4 KiB pages (PostgreSQL's max_wal_size is 1 GB by default). A rewind holds writes
 * for a RESTART's two fsyncs, 37-54 ms under bench:fleet's load: at 16,384 pages that came every
 * second or two and the keep-alive p99 at one request in flight was 20-25 ms; at 65,536, 7-9 ms
 * (6.5 ms never rewinding, with a WAL of 4.2 GB after 60 s).
 */
const RESTART_FRAMES = 65_536;
/** The WAL file is cut back to this many times RESTART_FRAMES' pages. */
const WAL_SIZE_LIMIT_FACTOR = 2;
/** What is left to copy when the store's calls are held: a few commits. */
const HELD_FRAMES = 64;
/** How long the RESTART waits for another process's reader or writer before giving up until the next interval. */
const RESTART_BUSY_MS = 100;
/** SQLite's default wal_autocheckpoint, restored when the worker is gone. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

export interface CheckpointSchedule {
  intervalMs: number;
  /** WAL frames beyond which the worker makes the next write rewind the WAL. */
  restartFrames: number;
  /** The backlog small enough to copy with writes held. */
  heldFrames: number;
  /** How long the RESTART waits for another process's reader or writer. */
  restartBusyMs: number;
}

interface CheckpointerData extends CheckpointSchedule {
  sqliteModule: string;
  path: string;
}

export interface WalCheckpointer {
  /** The WAL's pages at the worker's last checkpoint, and how often it was rewound. */
  use(): WalUse;
  /** While the worker rewinds the WAL: settles when the store may call SQLite again. */
  writesPaused(): Promise<void> | undefined;
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
  const { sqliteModule, path, intervalMs, restartFrames, heldFrames, restartBusyMs } = threads.workerData as CheckpointerData;
  const Sqlite = require(sqliteModule) as typeof import('better-sqlite3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = new Sqlite(path, { fileMustExist: true, timeout: restartBusyMs });
  const port = threads.parentPort!;
  // Another process's checkpoint or transaction: this one waits for the next interval.
  const unlessBusy = (error: unknown) => {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
  };
  const passive = () => (db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number; checkpointed: number }])[0];
  let rewinding = false;
  // Told only when it changes: a message wakes the main thread, and an idle server need not wake.
  let told: number | undefined;
  const timer = setInterval(() => {
    if (rewinding) return;
    try {
      let { log, checkpointed } = passive();
      if (log !== told) port.postMessage((told = log));
      if (log <= restartFrames) return;
      // Each pass copies what was committed during the one before: a shorter and shorter backlog.
      for (let pass = 0; pass < 8 && log - checkpointed > heldFrames; pass += 1) ({ log, checkpointed } = passive());
      rewinding = true;
      port.postMessage('hold');
    } catch (error) {
      unlessBusy(error);
    }
  }, intervalMs);
  port.on('message', (message) => {
    if (message === 'held') {
      try {
        db.pragma('wal_checkpoint(RESTART)');
      } catch (error) {
        unlessBusy(error);
      } finally {
        rewinding = false;
        port.postMessage('release');
      }
      return;
    }
    clearInterval(timer);
    db.close();
    port.close();
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
  schedule: CheckpointSchedule = {
    intervalMs: CHECKPOINT_INTERVAL_MS,
    restartFrames: RESTART_FRAMES,
    heldFrames: HELD_FRAMES,
    restartBusyMs: RESTART_BUSY_MS,
  },
): WalCheckpointer {
  const worker = new Worker(`(${checkpointerThread.toString()})()`, {
    eval: true,
    workerData: { sqliteModule, path, ...schedule } satisfies CheckpointerData,
  });
  // Never the reason the process stays up: serve stops it before closing the database.
  worker.unref();
  db.pragma('wal_autocheckpoint = 0');
  // A rewound WAL larger than this is cut back to it (SQLite leaves the file at its largest
  // otherwise): above what it reaches between rewinds, since cutting and regrowing the file at
  // each one cost the fleet's keep-alive p99 about 2 ms.
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_FACTOR * schedule.restartFrames * pageSize}`);
  let held: { settled: Promise<void>; release: () => void } | undefined;
  const release = () => {
    held?.release();
    held = undefined;
  };
  const use: WalUse = { frames: 0, rewinds: 0 };
  worker.on('message', (message) => {
    if (typeof message === 'number') use.frames = message;
    else if (message === 'hold') {
      use.rewinds += 1;
      let resolve!: () => void;
      held = { settled: new Promise<void>((r) => (resolve = r)), release: () => resolve() };
      // No write of the store's starts until the worker releases it (each is synchronous, so
      // none is under way now); reads go on, and a RESTART lets them.
      worker.postMessage('held');
    } else if (message === 'release') release();
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    let failure: string | undefined;
    // A SQLite error may cross the thread boundary as its code alone.
    worker.once('error', (error: Error & { code?: unknown }) => (failure = [error.code, error.message].filter(Boolean).join(': ')));
    worker.once('exit', (code) => {
      release();
      if (!stopping) {
        if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
        onFailure(failure || `the checkpoint thread exited with code ${code}`);
      }
      resolve();
    });
  });
  return {
    writesPaused: () => held?.settled,
    use: () => ({ ...use }),
    async stop() {
      stopping = true;
      // Waited for: it must keep the process up until it has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

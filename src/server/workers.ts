// `serve --workers N`: N server processes on one machine sharing the listening port (node:cluster;
// the primary accepts connections and hands them to the workers in turn). The primary only
// supervises: it forwards SIGTERM/SIGINT, waits for every worker to finish its in-flight requests,
// and replaces a worker that dies while serving. A worker that fails before it listens (a wrong
// --db, a busy port) fails the whole start, with that worker's exit code, instead of looping.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** Replacing a worker that keeps dying waits at least this long, so that a crash loop cannot spin. */
const RESTART_DELAY_MS = 1_000;

export async function superviseWorkers(count: number, logger: Logger): Promise<number> {
  let stopping = false;
  let failedStart: number | undefined;
  const listening = new Set<Worker>();
  const exited = new Map<Worker, Promise<number>>();

  function fork(): void {
    const worker = cluster.fork();
    exited.set(
      worker,
      new Promise((resolve) =>
        worker.once('exit', (code, signal) => {
          exited.delete(worker);
          const status = code ?? (signal ? 1 : 0);
          if (stopping) return resolve(status);
          if (!listening.has(worker)) {
            // Never served: the same start would fail again. Stop the others and report it.
            failedStart ??= status === 0 ? 1 : status;
            stop('start failed');
          } else {
            logger.error({ worker_pid: worker.process.pid, code, signal }, 'a worker died; starting another');
            setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
          }
          listening.delete(worker);
          // A replaced worker does not decide the exit code; the workers' stop does.
          resolve(failedStart === undefined && !stopping ? 0 : status);
        }),
      ),
    );
    worker.once('listening', () => listening.add(worker));
  }

  function stop(reason: string): void {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the workers');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  }

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  logger.info({ workers: count }, `starting ${count} workers`);
  for (let i = 0; i < count; i += 1) fork();

  // Wait until no worker is left: replacements join the map while it runs.
  let worst = 0;
  while (exited.size > 0) {
    for (const status of await Promise.all(exited.values())) worst = Math.max(worst, status);
    await new Promise((resolve) => setImmediate(resolve));
  }
  logger.info('stopped');
  return failedStart ?? worst;
}

// `serve --workers N`: N server processes on one machine sharing the listening port (node:cluster;
// the primary accepts connections and hands them to the workers in turn). The primary only
// supervises: on SIGTERM/SIGINT it tells every worker to stop and waits for their in-flight
// requests (a second signal kills them at once), and it replaces a worker that dies while serving.
// A worker that fails before it listens (a wrong --db, a busy port) fails the whole start, with
// that worker's exit code, instead of looping.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** What the primary sends a worker to stop it, with the signal the primary got. */
interface StopMessage {
  stop: NodeJS.Signals;
}

export function isStopMessage(message: unknown): message is StopMessage {
  return typeof message === 'object' && message !== null && typeof (message as { stop?: unknown }).stop === 'string';
}

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

  const workers = () => Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);

  function stop(reason: string, signal: NodeJS.Signals = 'SIGTERM'): void {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the workers');
    // A worker still starting may not listen for the message yet; it serves nothing, so it just ends.
    for (const worker of workers()) {
      if (listening.has(worker)) worker.send({ stop: signal } satisfies StopMessage);
      else worker.process.kill('SIGKILL');
    }
  }

  function onSignal(signal: NodeJS.Signals): void {
    if (!stopping) return stop(signal, signal);
    logger.warn({ signal }, 'second stop signal: ending the workers at once');
    for (const worker of workers()) worker.process.kill('SIGKILL');
  }

  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
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

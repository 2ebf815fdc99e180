// `serve --workers N`: N server processes on one machine sharing the listening port (node:cluster;
// the primary accepts connections and hands them to the workers in turn). The primary only
// supervises: on SIGTERM/SIGINT it tells every worker to stop and waits for their in-flight
// requests (a second signal kills them at once), passes SIGHUP on to every serving worker (each
// reloads its certificate), and it replaces a worker that dies. A first start
// in which no worker ever listens (a wrong --db, a busy port) fails once, with that worker's exit
// code, instead of looping. Once the deployment has served, it is kept serving: a replacement that
// fails before listening (the database restarting) is retried with a growing delay, for as long as
// the primary runs.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** What the primary sends a worker to stop it, with the signal the primary got. */
interface StopMessage {
  stop: NodeJS.Signals;
}

export function isStopMessage(message: unknown): message is StopMessage {
  return typeof message === 'object' && message !== null && typeof (message as { stop?: unknown }).stop === 'string';
}

/** The first replacement waits this long, so that a crash loop cannot spin; each failed one doubles it. */
const RESTART_DELAY_MS = 1_000;
/** The longest wait between two replacements: a database back after an outage is served within it. */
const MAX_RESTART_DELAY_MS = 15_000;

export async function superviseWorkers(count: number, logger: Logger): Promise<number> {
  let stopping = false;
  let failedStart: number | undefined;
  /** Whether any worker has listened: from then on a failure is weather, not a wrong start. */
  let served = false;
  /** Replacements in a row that failed before listening. */
  let failures = 0;
  let worst = 0;
  const listening = new Set<Worker>();
  /** Workers running, and replacements waiting for their delay: the primary ends when none is left. */
  let remaining = 0;
  const restarts = new Set<NodeJS.Timeout>();
  let finished!: () => void;
  const allGone = new Promise<void>((resolve) => (finished = resolve));
  const release = () => {
    remaining -= 1;
    if (remaining === 0) finished();
  };

  function fork(): void {
    remaining += 1;
    const worker = cluster.fork();
    worker.once('listening', () => {
      listening.add(worker);
      served = true;
      failures = 0;
    });
    worker.once('exit', (code, signal) => {
      const status = code ?? (signal ? 1 : 0);
      const listened = listening.delete(worker);
      if (stopping) {
        worst = Math.max(worst, status);
      } else if (!served) {
        // Never served: the same start would fail again. Stop the others and report it.
        failedStart = status === 0 ? 1 : status;
        stop('start failed');
      } else {
        if (!listened) failures += 1;
        const delay = Math.min(MAX_RESTART_DELAY_MS, RESTART_DELAY_MS * 2 ** failures);
        const fields = { worker_pid: worker.process.pid, code, signal, restart_in_ms: delay };
        if (listened) logger.error(fields, 'a worker died; starting another');
        else logger.warn(fields, 'a replacement worker failed to start; trying again');
        scheduleRestart(delay);
      }
      release();
    });
  }

  function scheduleRestart(delay: number): void {
    remaining += 1;
    const timer = setTimeout(() => {
      restarts.delete(timer);
      fork();
      release();
    }, delay);
    restarts.add(timer);
  }

  const workers = () => Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);

  function stop(reason: string, signal: NodeJS.Signals = 'SIGTERM'): void {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the workers');
    for (const timer of restarts) {
      clearTimeout(timer);
      release();
    }
    restarts.clear();
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

  /** SIGHUP (systemctl reload) is each worker's: it reloads the certificate (or is ignored) there. */
  function onHangup(): void {
    const serving = workers().filter((worker) => listening.has(worker));
    logger.info({ event: 'sighup_forwarded', workers: serving.length }, 'SIGHUP: passed to every worker');
    // A worker still starting reads the files anyway, and may not handle the signal yet.
    for (const worker of serving) worker.process.kill('SIGHUP');
  }

  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onHangup);
  logger.info({ workers: count }, `starting ${count} workers`);
  for (let i = 0; i < count; i += 1) fork();

  await allGone;
  logger.info('stopped');
  return failedStart ?? worst;
}

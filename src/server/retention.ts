// Retention of posture results, applied in the background by `serve`: results older than the
// maximum age, and each device's oldest results beyond its cap, are deleted in small batches (the
// event loop and the admin CLI get their turn between two); then the latest results of check keys
// a device has not reported within the age (so that a key it no longer sends leaves the fleet
// summary and frees its place under --max-check-keys), and posture reports past the age that
// hold no result any more. A report younger than the age is kept even when empty, so that an agent
// still sending batches of that cycle with its correlation_id is not refused. Audit log entries
// and finished webhook deliveries older than the age go too.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Store } from './db/store';

export interface RetentionPolicy {
  /** Results received longer ago than this are deleted. */
  maxAgeMs: number;
  /** Each device keeps at most this many results, the newest. */
  maxResultsPerDevice: number;
  /** Time between two sweeps; the first runs at start. */
  sweepIntervalMs: number;
}

const BATCH_SIZE = 500;
/**
 * How late a device's last-seen time may reach the store after the request it records (batched
 * every 250 ms; longer while the database refuses writes). A device seen still earlier whose time
 * arrived later still is trimmed at its next upload.
 */
const LAST_SEEN_LAG_MS = 10 * 60_000;

export interface RetentionSweeper {
  /** Stops the schedule and waits for a sweep under way. */
  stop(): Promise<void>;
}

export function startRetention(
  store: Store,
  policy: RetentionPolicy,
  logger: Logger,
  now: () => Date = () => new Date(),
): RetentionSweeper {
  let previousStart: string | null = null;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function sweep(): Promise<void> {
    const started = now();
    const cutoff = new Date(started.getTime() - policy.maxAgeMs).toISOString();
    let results = await drain(() => store.deleteResultsReceivedBefore(cutoff, BATCH_SIZE));
    // Only devices seen since the previous sweep can have grown past their cap. A last-seen time is
    // written after the request it records (heartbeatBatch.ts), so one from before the previous
    // sweep's start may land after that sweep looked: look back LAST_SEEN_LAG_MS further.
    const seenSince = previousStart === null ? null : new Date(Date.parse(previousStart) - LAST_SEEN_LAG_MS).toISOString();
    for (const device of await store.devicesWithMoreResultsThan(policy.maxResultsPerDevice, seenSince)) {
      results += await drain(() => store.deleteResultsBeyond(device, policy.maxResultsPerDevice, BATCH_SIZE));
    }
    const checkKeys = await drain(() => store.deleteLatestReceivedBefore(cutoff, BATCH_SIZE));
    const reports = await drain(() => store.deleteEmptyReportsCreatedBefore(cutoff, BATCH_SIZE));
    // The audit log is kept as long as the results it may explain.
    const auditEntries = await drain(() => store.deleteAuditBefore(cutoff, BATCH_SIZE));
    const deliveries = await drain(() => store.deleteDeliveriesBefore(cutoff, BATCH_SIZE));
    previousStart = started.toISOString();
    if (results > 0 || checkKeys > 0 || reports > 0 || auditEntries > 0 || deliveries > 0) {
      logger.info(
        {
          deleted_results: results,
          deleted_check_keys: checkKeys,
          deleted_reports: reports,
          deleted_audit_entries: auditEntries,
          deleted_webhook_deliveries: deliveries,
          ms: Date.now() - started.getTime(),
        },
        'retention: deleted old posture results',
      );
    }
  }

  async function drain(deleteBatch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      if (stopped) return total;
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < BATCH_SIZE) return total;
      await nextTurn();
    }
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      running = sweep()
        .catch((error: unknown) => logger.error({ err: error }, 'retention sweep failed; retrying at the next one'))
        .finally(() => {
          if (!stopped) schedule(policy.sweepIntervalMs);
        });
    }, delayMs);
  }

  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

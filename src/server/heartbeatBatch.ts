// Heartbeat and last-seen writes. A heartbeat that changes something besides the last-seen time
// (activation, new attributes, so a possible hardware_uuid conflict) is written before it is
// answered, by the device lifecycle (deviceLifecycle.ts: `heartbeat`). One that repeats what this process last wrote for the device (nearly all of them, at
// the real cadence) is answered at once and its last-seen time written with the others of the
// same moment every FLUSH_INTERVAL_MS, as is a stored posture upload's: so last_seen_at is never
// more than about that far behind an accepted request. A batch is written in transactions of at
// most ROWS_PER_WRITE rows with the event loop free between them: a SQLite transaction runs on the
// event loop, and one of 5,000 rows (two last-seen indexes each) held every request for tens of
// ms. The interval's timer runs only while something is pending: an idle server does not wake for
// it (at the real cadence a fleet sends tens of requests a second, and every wake-up costs CPU that
// counts against them). Stopping writes what is pending.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { databaseFailure } from './db/failures';
import type { AuthenticatedDevice, DeviceAttributes, DeviceSeen, Store } from './db/store';
import type { DeviceCache } from './deviceCache';
import { SEEN_IN, heartbeat, type HeartbeatOutcome } from './deviceLifecycle';
import type { DeviceId } from './ids';

/** Well under the one second last_seen_at may lag, leaving room for a busy event loop. */
const FLUSH_INTERVAL_MS = 250;
/** A larger batch is written at once, without waiting for the interval. */
export const MAX_PENDING = 5_000;
/** Rows per transaction: about 3-5 ms of the event loop on SQLite (bench:heartbeat's p99). */
export const ROWS_PER_WRITE = 500;

export class HeartbeatWriter {
  private pending = new Map<DeviceId, DeviceSeen>();
  private flushing: Promise<void> = Promise.resolve();
  /** Armed while something is pending: the next flush. */
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly cache: DeviceCache,
    private readonly logger: Logger,
  ) {}

  async record(device: AuthenticatedDevice, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome> {
    if (this.cache.unchangedSinceRecorded(device.id, attributes)) {
      this.noteSeen(device, now);
      return { kind: 'recorded' };
    }
    // Written now, with a later time than anything pending for the device.
    this.pending.delete(device.id);
    const outcome = await heartbeat(this.store, device, attributes, now);
    this.cache.noteRecorded(device.id, outcome.kind === 'recorded' ? attributes : undefined);
    return outcome;
  }

  /** The device was seen at `now` (an accepted request): written with the next batch. */
  noteSeen(device: AuthenticatedDevice, now: string): void {
    this.pending.set(device.id, { device: { id: device.id, orgId: device.orgId }, at: now });
    if (this.pending.size >= MAX_PENDING) void this.flush();
    else this.flushSoon();
  }

  /** A flush FLUSH_INTERVAL_MS from now, unless one is already planned (or the writer stopped). */
  private flushSoon(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_INTERVAL_MS).unref();
  }

  /**
   * Writes what is pending, one batch at a time, in slices with a turn of the event loop between
   * them. A slice that fails stays pending with the rest of its batch and is retried.
   */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = [...this.pending.values()];
      this.pending = new Map();
      for (let start = 0; start < batch.length; start += ROWS_PER_WRITE) {
        if (start > 0) await nextTurn();
        try {
          await this.store.recordDevicesSeen(batch.slice(start, start + ROWS_PER_WRITE), SEEN_IN);
        } catch (error) {
          const unwritten = batch.slice(start);
          const devices = unwritten.length;
          const message = 'writing last-seen times failed; retrying with the next batch';
          // An outage is weather: its reason suffices. Anything else is a defect, logged with its stack.
          if (databaseFailure(error) === 'unavailable') this.logger.warn({ reason: (error as Error).message, devices }, message);
          else this.logger.error({ err: error, devices }, message);
          // Newer heartbeats that arrived meanwhile win.
          for (const seen of unwritten) if (!this.pending.has(seen.device.id)) this.pending.set(seen.device.id, seen);
          this.flushSoon();
          return;
        }
      }
    });
    return this.flushing;
  }

  /** Stops the schedule and writes what is pending (at shutdown, after the last request). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

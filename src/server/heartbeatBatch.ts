// Heartbeat writes. A heartbeat that changes something besides the last-seen time (activation,
// new attributes, so a possible hardware_uuid conflict) is written before it is answered. One
// that repeats what this process last wrote for the device (nearly all of them, at the real
// cadence) is answered at once and its last-seen time written with the others of the same
// moment, in one transaction, every FLUSH_INTERVAL_MS: so last_seen_at is never more than about
// that far behind an accepted heartbeat. Stopping writes what is pending.
import type { Logger } from 'pino';
import type { AuthenticatedDevice, DeviceAttributes, DeviceSeen, HeartbeatOutcome, Store } from './db/store';
import type { DeviceCache } from './deviceCache';
import type { DeviceId } from './ids';

/** Well under the one second last_seen_at may lag, leaving room for a busy event loop. */
const FLUSH_INTERVAL_MS = 250;
/** A larger batch is written at once, so that no single transaction holds the event loop long. */
const MAX_PENDING = 5_000;

export class HeartbeatWriter {
  private pending = new Map<DeviceId, DeviceSeen>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly cache: DeviceCache,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  async record(device: AuthenticatedDevice, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome> {
    if (this.cache.unchangedSinceRecorded(device.id, attributes)) {
      this.pending.set(device.id, { device: { id: device.id, orgId: device.orgId }, at: now });
      if (this.pending.size >= MAX_PENDING) void this.flush();
      return { kind: 'recorded' };
    }
    // Written now, with a later time than anything pending for the device.
    this.pending.delete(device.id);
    const outcome = await this.store.recordHeartbeat(device, attributes, now);
    this.cache.noteRecorded(device.id, outcome.kind === 'recorded' ? attributes : undefined);
    return outcome;
  }

  /** Writes what is pending; one write at a time. A failed batch stays pending and is retried. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.store.recordDevicesSeen([...batch.values()]);
      } catch (error) {
        this.logger.error({ err: error, devices: batch.size }, 'writing last-seen times failed; retrying with the next batch');
        // Newer heartbeats that arrived meanwhile win.
        for (const [id, seen] of batch) if (!this.pending.has(id)) this.pending.set(id, seen);
      }
    });
    return this.flushing;
  }

  /** Stops the schedule and writes what is pending (at shutdown, after the last request). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

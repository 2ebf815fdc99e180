// "Check again" (issue 31): the user of a device asks from its page (./devicePage.ts) for a new
// check. The page cannot reach the device, so the server records the request (one per device per
// CHECK_REQUEST_INTERVAL_MS) and each heartbeat answer of the device carries it as
// `check_requested_at`, an extension field beside the spec's, until it lapses. An agent that knows
// the field runs a posture cycle and uploads it at once when the value is new to it; an older agent
// ignores it and reports at its next scheduled cycle. The page shows the request as pending until
// results received after it arrive. Requests live in the store, so that whichever server process
// (`serve --workers`) answers the heartbeat knows them; each process reads the recent ones at most
// once per REFRESH_MS, however many heartbeats it answers.
import type { Store } from './db/store';
import type { DeviceId } from './ids';

/** A device's user may ask once a minute. */
const CHECK_REQUEST_INTERVAL_MS = 60_000;
/** How long heartbeat answers carry a request: a device off or offline longer reports at its next cycle anyway. */
const CHECK_REQUEST_LIFETIME_MS = 15 * 60_000;
/** A request recorded by another server process reaches this one's heartbeat answers within this. */
const REFRESH_MS = 1_000;

export type CheckRequestOutcome =
  { kind: 'recorded'; requestedAt: string } | { kind: 'too_soon'; requestedAt: string; retryAfterMs: number };

const isoBefore = (now: Date, ms: number) => new Date(now.getTime() - ms).toISOString();

export class CheckRequests {
  private recent = new Map<DeviceId, string>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;
  /** This process's requests recorded while a read was in flight: the read may predate them. */
  private recordedDuringRead = new Map<DeviceId, string>();

  constructor(
    private readonly store: Store,
    /** Monotonic enough for the refresh; requests themselves carry wall time. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Records a request of the device at `now`, unless its last one is under a minute old. */
  async request(deviceId: DeviceId, now: Date): Promise<CheckRequestOutcome> {
    const at = now.toISOString();
    const onRecord = await this.store.requestDeviceCheck(
      deviceId,
      at,
      isoBefore(now, CHECK_REQUEST_INTERVAL_MS),
      isoBefore(now, CHECK_REQUEST_LIFETIME_MS),
    );
    this.recent.set(deviceId, onRecord);
    if (this.reading !== undefined) this.recordedDuringRead.set(deviceId, onRecord);
    if (onRecord === at) return { kind: 'recorded', requestedAt: at };
    return { kind: 'too_soon', requestedAt: onRecord, retryAfterMs: Date.parse(onRecord) + CHECK_REQUEST_INTERVAL_MS - now.getTime() };
  }

  /** The device's request not lapsed at `now`, read from the store (the page: always current). */
  async current(deviceId: DeviceId, now: Date): Promise<string | undefined> {
    return (await this.store.deviceCheckRequests(isoBefore(now, CHECK_REQUEST_LIFETIME_MS))).get(deviceId);
  }

  /**
   * The device's request not lapsed at `now`, for its heartbeat answer (at most REFRESH_MS behind the
   * store). Known without waiting while the last read is that recent: most heartbeats then cost no
   * promise; the first after REFRESH_MS waits for the read, which the others meanwhile share.
   */
  pending(deviceId: DeviceId, now: Date): string | undefined | Promise<string | undefined> {
    if (this.clock() - this.readAt < REFRESH_MS) return this.unlapsed(deviceId, now);
    return this.refresh(now).then(() => this.unlapsed(deviceId, now));
  }

  private refresh(now: Date): Promise<void> {
    this.reading ??= this.store
      .deviceCheckRequests(isoBefore(now, CHECK_REQUEST_LIFETIME_MS))
      .then((found) => {
        for (const [deviceId, at] of this.recordedDuringRead) if ((found.get(deviceId) ?? '') < at) found.set(deviceId, at);
        this.recent = found;
        this.readAt = this.clock();
      })
      .finally(() => {
        this.reading = undefined;
        this.recordedDuringRead.clear();
      });
    return this.reading;
  }

  private unlapsed(deviceId: DeviceId, now: Date): string | undefined {
    const at = this.recent.get(deviceId);
    return at !== undefined && at > isoBefore(now, CHECK_REQUEST_LIFETIME_MS) ? at : undefined;
  }
}

// What `serve` remembers about devices between requests, so that a heartbeat costs no database
// read: the device behind each API key hash, and the attributes this process last wrote for each
// device. Both are dropped at once whenever the store says someone else committed (a revocation
// from the admin CLI, another server process): the next request after such a commit reads the
// database again, so a revoked key is refused on the very next request. Changes this process
// makes itself are dropped by whoever makes them (forgetAll). Only ACTIVE devices are kept: a
// PENDING device's state changes at its first heartbeat. Other caches that must follow commits made
// elsewhere (PolicyCache) are told through onExternalChange, so they need no read of their own.
import type { AuthenticatedDevice, DeviceAttributes, Store } from './db/store';
import type { DeviceId } from './ids';

export class DeviceCache {
  private readonly byKeyHash = new Map<string, AuthenticatedDevice>();
  private readonly recorded = new Map<DeviceId, DeviceAttributes>();
  private seenVersion: number | undefined;
  /** The read of externalChanges that requests authenticated in this turn wait for. */
  private turnsVersion: Promise<number> | undefined;
  /** Moves at every forgetAll, so that a read that raced with one is not cached. */
  private generation = 0;
  private readonly externalChangeListeners: (() => void)[] = [];

  /** `capacity` devices at most (0: nothing cached); beyond it the oldest entry goes. */
  constructor(
    private readonly store: Store,
    private readonly capacity: number,
  ) {}

  /**
   * `listener` is called before a request is authenticated whenever someone else may have committed
   * since the previous one was (at every request when nothing is cached: capacity 0).
   */
  onExternalChange(listener: () => void): void {
    this.externalChangeListeners.push(listener);
  }

  async authenticate(apiKeyHash: string): Promise<AuthenticatedDevice | undefined> {
    if (this.capacity === 0) {
      for (const listener of this.externalChangeListeners) listener();
      return this.store.authenticate(apiKeyHash);
    }
    const version = await this.externalChangesAfterThisTurnsReads();
    if (version !== this.seenVersion) {
      this.forgetAll();
      this.seenVersion = version;
      for (const listener of this.externalChangeListeners) listener();
    }
    const cached = this.byKeyHash.get(apiKeyHash);
    if (cached) return cached;
    const generation = this.generation;
    const device = await this.store.authenticate(apiKeyHash);
    if (device?.state === 'ACTIVE' && generation === this.generation) remember(this.byKeyHash, apiKeyHash, device, this.capacity);
    return device;
  }

  /**
   * The store's externalChanges, read once per event-loop turn for every request authenticated in
   * it, and read after all of them: in the turn's check phase (setImmediate), which comes after the
   * poll phase where sockets are read. Every request that waits on it was therefore received before
   * the read, so a commit that completed before a request arrived is seen, exactly as with one read
   * per request; it costs one read (for SQLite a PRAGMA and two fcntl locks) per turn instead.
   */
  private externalChangesAfterThisTurnsReads(): Promise<number> {
    this.turnsVersion ??= new Promise<number>((resolve, reject) => {
      setImmediate(() => {
        // A request authenticated from here on waits for the next read.
        this.turnsVersion = undefined;
        this.store.externalChanges().then(resolve, reject);
      });
    });
    return this.turnsVersion;
  }

  /** True when this process's last write for the device recorded exactly these attributes, and nothing else changed it since. */
  unchangedSinceRecorded(id: DeviceId, attributes: DeviceAttributes): boolean {
    const recorded = this.recorded.get(id);
    return recorded !== undefined && sameAttributes(recorded, attributes);
  }

  noteRecorded(id: DeviceId, attributes: DeviceAttributes | undefined): void {
    if (this.capacity === 0) return;
    if (attributes === undefined) this.recorded.delete(id);
    else remember(this.recorded, id, attributes, this.capacity);
  }

  forgetAll(): void {
    this.generation += 1;
    this.byKeyHash.clear();
    this.recorded.clear();
  }
}

function remember<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): void {
  map.delete(key);
  if (map.size >= capacity) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

function sameAttributes(a: DeviceAttributes, b: DeviceAttributes): boolean {
  return (
    a.hardwareUuid === b.hardwareUuid &&
    a.serialNumber === b.serialNumber &&
    a.hostname === b.hostname &&
    a.platform === b.platform &&
    a.osVersion === b.osVersion &&
    a.agentVersion === b.agentVersion
  );
}

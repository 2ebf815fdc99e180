// Work that must not overlap per key, run one at a time per key in this process, in arrival order.
// Used for the registrations of one enrollment secret: on PostgreSQL each holds the secret's row
// lock until it commits, so running them side by side only parks pooled connections on that lock
// (a burst then meets the pool's acquire timeout, 503); queued here they wait in memory and take
// one connection per secret per server process.
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** `work`'s result, after every earlier call's work for `key` has settled. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    // The last one out forgets the key, so memory holds only keys with work pending.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

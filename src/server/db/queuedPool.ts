// The PostgreSQL pool with a line in front of its connections that waits while the database makes
// progress. pg's own pool fails a checkout that waited connectionTimeoutMillis (--db-acquire-timeout)
// for a connection however healthy the database: a burst of requests beyond the pool's size on a
// loaded machine (200 agents registering at once) then met 503s with nothing wrong. Here a request
// waits for its turn, first come first served, as long as connections keep coming back; only when
// none has come back healthy for the acquire timeout (a database frozen, partitioned, every connection
// stuck) are the waiting requests failed, with pg's own timeout error, which is a 503
// (failures.ts). pg's pool never queues behind this line: a turn is given only while fewer
// connections than its maximum are checked out, so its connectionTimeoutMillis bounds only the
// opening of a new connection; one that times out while other connections come back healthy (a
// loaded machine, not a database away) is tried again.
import pg from 'pg';
import { databaseFailure } from './failures';

/** Attempts at setting up a new connection for one request while the database is seen to serve. */
const NEW_CONNECTION_ATTEMPTS = 3;

type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

interface Waiter {
  go: () => void;
  fail: (error: Error) => void;
}

export class QueuedPool extends pg.Pool {
  private checkedOut = 0;
  private readonly line: Waiter[] = [];
  /** Since when the line has waited without a connection coming back healthy. */
  private stalledSince = 0;
  /** When a connection last came back healthy. */
  private lastHealthyReturn = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    config: pg.PoolConfig & { max: number },
    /** How long the line waits without progress before failing (undefined: it waits). */
    private readonly stallMs: number | undefined,
  ) {
    super(config);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    const checkout = this.turn().then(() => this.checkout());
    if (callback === undefined) return checkout;
    // pg's pool.query() asks for its connection this way.
    checkout.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }

  /** Resolves when this request may check a connection out. */
  private turn(): Promise<void> {
    if (this.line.length === 0 && this.checkedOut < (this.options.max ?? 10)) {
      this.checkedOut += 1;
      return Promise.resolve();
    }
    return new Promise((go, fail) => {
      if (this.line.length === 0) this.stalledSince = Date.now();
      this.line.push({ go, fail });
      this.watch();
    });
  }

  private async checkout(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    for (let attempt = 1; ; attempt += 1) {
      const started = Date.now();
      try {
        client = await super.connect();
        break;
      } catch (error) {
        // A new connection not set up in time while other connections came back healthy meanwhile (or
        // within the acquire timeout before):
        // the machine is slow (a loaded host's fork and authentication), the database is there. The
        // request keeps its turn and tries again, a few times; a database away fails it as before.
        const servedLately = this.lastHealthyReturn >= started - (this.stallMs ?? 0);
        if (attempt < NEW_CONNECTION_ATTEMPTS && databaseFailure(error) === 'unavailable' && servedLately) continue;
        this.returned(false);
        throw error;
      }
    }
    // pg sets release per checkout, a closure over the client: no `this` to keep.
    const release = client.release.bind(client);
    let returned = false;
    client.release = (destroy?: Error | boolean | null) => {
      if (!returned) {
        returned = true;
        // A connection given back broken (lost, discarded) is no sign that the database serves.
        this.returned(!destroy);
      }
      release(destroy ?? undefined);
    };
    return client;
  }

  /** A checked-out connection came back (or could not be had): its turn passes to the first in line. */
  private returned(healthy: boolean): void {
    if (healthy) this.stalledSince = this.lastHealthyReturn = Date.now();
    const next = this.line.shift();
    if (next === undefined) this.checkedOut -= 1;
    else next.go();
    if (this.line.length === 0) this.stopWatching();
  }

  private watch(): void {
    if (this.stallMs === undefined || this.watchdog !== undefined) return;
    const stallMs = this.stallMs;
    const check = () => {
      const waited = Date.now() - this.stalledSince;
      if (waited < stallMs) {
        this.watchdog = setTimeout(check, stallMs - waited).unref();
        return;
      }
      this.watchdog = undefined;
      // The same words as pg's own acquire timeout: the database is unavailable (failures.ts).
      for (const waiter of this.line.splice(0)) waiter.fail(new Error('timeout exceeded when trying to connect'));
    };
    this.watchdog = setTimeout(check, stallMs).unref();
  }

  private stopWatching(): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }
}

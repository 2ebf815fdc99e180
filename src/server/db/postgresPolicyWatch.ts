// How a `serve` process on PostgreSQL learns that someone else changed the policy (PolicyCache,
// src/server/policy.ts) without reading policy_generation at every event-loop turn: every
// transaction that moves it also notifies POLICY_CHANNEL (delivered at its commit), and one
// connection of the process's own LISTENs to it. A notification arrives within milliseconds of the
// commit. One can be lost (the listening connection dropped, or cut by a partition TCP has not
// noticed yet): so the listeners are also told at each (re)connection and every fallback period,
// and a change is served at most that long after its commit, for at most one read of the
// generation per period.
import pg from 'pg';

export const POLICY_CHANNEL = 'device_agent_policy';
/** The fallback period: the longest a change made elsewhere can go unseen. */
export const POLICY_FALLBACK_MS = 1_000;
/** Wait before connecting again after the listening connection failed. */
const RECONNECT_MS = 1_000;

export class PolicyGenerationWatch {
  private client: pg.Client | undefined;
  private stopped = false;
  private readonly fallback: NodeJS.Timeout;
  private reconnect: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly changed: () => void,
    fallbackMs: number,
  ) {
    this.fallback = setInterval(changed, fallbackMs).unref();
    void this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    this.client = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', () => this.changed());
    try {
      await client.connect();
      if (this.client === client) await client.query(`LISTEN ${POLICY_CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.client !== client) {
      await client.end().catch(() => {});
      return;
    }
    // Whatever was committed while no connection listened was notified to no one.
    this.changed();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.changed();
    if (!this.stopped) this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.fallback);
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}

// Per-request lines cost a sizeable share of a heartbeat's time, so each request is logged at
// debug only; at info a summary line every SUMMARY_INTERVAL_MS says how many requests each route
// answered with which status, and how long they took. Logged fields are allow-listed (app.ts).
import type { Logger } from 'pino';

const SUMMARY_INTERVAL_MS = 60_000;

export interface RequestLine {
  method: string;
  path: string;
  status: number;
  ms: number;
  device_id: string | undefined;
  /** The authenticated admin (`token:<id>`, `account:<email>`), on admin API and console requests. */
  admin?: string;
  /** Whether a TLS connection resumed a session; absent over plain HTTP. */
  tls_resumed?: boolean;
}

export class RequestLog {
  /** Requests by method, path and status: found without building a key for each request. */
  private counts = new Map<string, Map<string, Map<number, number>>>();
  private total = 0;
  private totalMs = 0;
  private maxMs = 0;
  private since = Date.now();
  private readonly timer: NodeJS.Timeout;
  /** Whether each request gets its own line (debug). */
  readonly perRequest: boolean;

  constructor(
    private readonly logger: Logger,
    intervalMs = SUMMARY_INTERVAL_MS,
  ) {
    this.perRequest = logger.isLevelEnabled('debug');
    this.timer = setInterval(() => this.summarize(), intervalMs).unref();
  }

  /** One answered request, in the summary. */
  count(method: string, path: string, status: number, ms: number): void {
    let byPath = this.counts.get(method);
    if (byPath === undefined) this.counts.set(method, (byPath = new Map<string, Map<number, number>>()));
    let byStatus = byPath.get(path);
    if (byStatus === undefined) byPath.set(path, (byStatus = new Map<number, number>()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.total += 1;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** One request's own line; only when `perRequest`, so that its fields are gathered only then. */
  line(line: RequestLine): void {
    this.logger.debug(line, 'request');
  }

  /** Stops the schedule and logs what the last summary has not covered. */
  stop(): void {
    clearInterval(this.timer);
    this.summarize();
  }

  /** `"POST /api/agent/v1/heartbeat 200": 12`, … */
  private byRoute(): Record<string, number> {
    const byRoute: Record<string, number> = {};
    for (const [method, byPath] of this.counts) {
      for (const [path, byStatus] of byPath) for (const [status, count] of byStatus) byRoute[`${method} ${path} ${status}`] = count;
    }
    return byRoute;
  }

  private summarize(): void {
    const now = Date.now();
    if (this.total > 0) {
      this.logger.info(
        {
          seconds: Math.round((now - this.since) / 1000),
          requests: this.total,
          by_route: this.byRoute(),
          ms_mean: Math.round((this.totalMs / this.total) * 10) / 10,
          ms_max: Math.round(this.maxMs * 10) / 10,
        },
        'requests',
      );
    }
    this.counts = new Map();
    this.total = 0;
    this.totalMs = 0;
    this.maxMs = 0;
    this.since = now;
  }
}

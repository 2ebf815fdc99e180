// What `GET /metrics` reports, in Prometheus' text format (prom-client): requests by route, method
// and status, their latency, rate-limit and check-key-cap refusals, devices by state and the database pool, read from
// the store at each scrape, SQLite's write-ahead log, and the process' own metrics. Every label has
// a bounded set of values: routes are the known paths or "(unknown)", never a client's path.
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { Store } from './db/store';

export interface ServerMetrics {
  registry: Registry;
  /** One answered request: `route` one of a bounded set of values (a known path or "(unknown)"). */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** One posture upload refused because it would take its device past the check key cap. */
  observeCheckKeyCap(): void;
}

/**
 * How often the event loop's delay is sampled (nodejs_eventloop_lag_*). prom-client's default, 10 ms,
 * wakes the process 100 times a second whatever its load: 3-4 ms of CPU a second on this project's
 * machine, as much as 100 new TLS connections cost beyond bare node:https. A fleet at the real
 * cadence sends tens of requests a second, so that was the largest cost per request left.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

const LATENCY = {
  name: 'device_agent_server_request_duration_seconds',
  help: 'Time from a request to its answer, by route and method',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
};

/** One route and method's answered requests since the start: by status, and their latency. */
interface RouteRequests {
  route: string;
  method: string;
  byStatus: Map<number, number>;
  /** Requests per latency bucket, not cumulative: [i] counts those above buckets[i - 1] and at most buckets[i]. */
  inBucket: number[];
  seconds: number;
  count: number;
}

export function createMetrics(store: Store): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  // Requests are tallied in plain numbers, found without building a key, and handed to prom-client
  // when it is scraped: prom-client's own inc() and observe() check and hash their labels at every
  // call, a few percent of a heartbeat's CPU over a new TLS connection.
  const byRoute = new Map<string, Map<string, RouteRequests>>();
  const tallied = function* () {
    for (const byMethod of byRoute.values()) yield* byMethod.values();
  };
  new Counter({
    name: 'device_agent_server_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { route, method, byStatus } of tallied()) {
        for (const [status, count] of byStatus) this.inc({ route, method, status: String(status) }, count);
      }
    },
  });
  registry.registerMetric(latencyHistogram(tallied));
  new Counter({
    name: 'device_agent_server_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the per-device rate limits of this process, by route',
    labelNames: ['route'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { route, byStatus } of tallied()) {
        const refused = byStatus.get(429);
        if (refused !== undefined) this.inc({ route }, refused);
      }
    },
  });
  const checkKeyCap = new Counter({
    name: 'device_agent_server_check_key_cap_refusals_total',
    help: 'Posture uploads refused with 400 by this process because they would take a device past --max-check-keys',
    registers: [registry],
  });
  new Gauge({
    name: 'device_agent_server_devices',
    help: 'Devices in the database, by state',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      for (const [state, count] of Object.entries(await store.countDevicesByState())) this.set({ state }, count);
    },
  });
  new Gauge({
    name: 'device_agent_server_db_pool_connections',
    help: "This process' database connections (PostgreSQL): open, idle, and queries waiting for one",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const use = store.poolUse();
      if (!use) return;
      this.set({ state: 'open' }, use.total);
      this.set({ state: 'idle' }, use.idle);
      this.set({ state: 'waiting' }, use.waiting);
    },
  });
  // Only where there is such a log (SQLite under serve): a gauge without labels would report 0.
  if (store.walUse()) {
    new Gauge({
      name: 'device_agent_server_sqlite_wal_pages',
      help: "Pages in SQLite's write-ahead log at the last background checkpoint",
      registers: [registry],
      collect() {
        this.set(store.walUse()?.frames ?? 0);
      },
    });
    new Gauge({
      name: 'device_agent_server_sqlite_wal_rewinds',
      help: "Times this process rewound SQLite's write-ahead log after it grew past its bound under sustained writes",
      registers: [registry],
      collect() {
        this.set(store.walUse()?.rewinds ?? 0);
      },
    });
  }
  return {
    registry,
    observeRequest(route, method, status, seconds) {
      let byMethod = byRoute.get(route);
      if (byMethod === undefined) byRoute.set(route, (byMethod = new Map<string, RouteRequests>()));
      let requests = byMethod.get(method);
      if (requests === undefined) {
        requests = { route, method, byStatus: new Map(), inBucket: LATENCY.buckets.map(() => 0), seconds: 0, count: 0 };
        byMethod.set(method, requests);
      }
      requests.byStatus.set(status, (requests.byStatus.get(status) ?? 0) + 1);
      let bucket = 0;
      while (bucket < LATENCY.buckets.length && seconds > LATENCY.buckets[bucket]!) bucket += 1;
      if (bucket < LATENCY.buckets.length) requests.inBucket[bucket]! += 1;
      requests.seconds += seconds;
      requests.count += 1;
    },
    observeCheckKeyCap() {
      checkKeyCap.inc();
    },
  };
}

/**
 * The latency histogram as prom-client would report it (its text format and cluster aggregation),
 * from the tallies: the registry asks a metric only for its name, help, type, aggregator and get().
 */
function latencyHistogram(tallied: () => Iterable<RouteRequests>): Metric {
  const histogram = {
    name: LATENCY.name,
    help: LATENCY.help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      for (const { route, method, inBucket, seconds, count } of tallied()) {
        let cumulative = 0;
        LATENCY.buckets.forEach((le, bucket) => {
          cumulative += inBucket[bucket]!;
          values.push({ labels: { le, route, method }, value: cumulative, metricName: `${LATENCY.name}_bucket` });
        });
        values.push(
          { labels: { le: '+Inf', route, method }, value: count, metricName: `${LATENCY.name}_bucket` },
          { labels: { route, method }, value: seconds, metricName: `${LATENCY.name}_sum` },
          { labels: { route, method }, value: count, metricName: `${LATENCY.name}_count` },
        );
      }
      return Promise.resolve({ name: LATENCY.name, help: LATENCY.help, type: 'histogram', aggregator: 'sum', values });
    },
  };
  return histogram as unknown as Metric;
}

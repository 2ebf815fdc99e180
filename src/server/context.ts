// What the routes receive from the composition root (app.ts): the store, the configuration, the
// logger and the per-device rate limiters. Its own module so that no route imports app.ts.
import type { Logger } from 'pino';
import type { Store } from './db/store';
import type { ServerMetrics } from './metrics';
import type { RateLimiter } from './rateLimit';

export interface AppConfig {
  heartbeatIntervalSeconds: number;
  postureIntervalSeconds: number;
  tls?: { cert: Buffer; key: Buffer };
}

export interface RateLimiters {
  /** Heartbeats per device. */
  heartbeats: RateLimiter;
  /** Posture requests per device. */
  postures: RateLimiter;
  /** Posture request bytes per device. */
  postureBytes: RateLimiter;
  /** Console sign-in attempts per client address. */
  signIns: RateLimiter;
}

export interface AppContext {
  store: Store;
  config: AppConfig;
  logger: Logger;
  limits: RateLimiters;
  metrics: ServerMetrics;
}

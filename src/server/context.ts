// What the routes receive from the composition root (app.ts): the store, the configuration, the
// logger, the per-device rate limiters, the metrics, the device cache and the heartbeat writer. Its
// own module so that no route imports app.ts.
import type { TlsOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { CheckRequests } from './checkRequests';
import type { Store } from './db/store';
import type { DeviceCache } from './deviceCache';
import type { ForwardedLimits } from './forwarded';
import type { HeartbeatWriter } from './heartbeatBatch';
import type { PolicyCache } from './policy';
import type { ServerMetrics } from './metrics';
import type { RateLimiter } from './rateLimit';

export interface AppConfig {
  heartbeatIntervalSeconds: number;
  postureIntervalSeconds: number;
  /** Distinct check keys a device may hold (deviceLifecycle.ts: firstKeyBeyondCap). */
  maxCheckKeys: number;
  /** The policy extension (./policy.ts): `policy_version` in heartbeats and the policy route; off with `serve --no-policy`. */
  policy: boolean;
  /** `--retention`: results received longer ago are deleted, so the compliance series stops there (admin.ts). */
  retentionMs: number;
  /** The HTTPS server's options (./tls); plain HTTP without. */
  tls?: TlsOptions;
  /** Behind a TLS-terminating proxy: who it is, and the per-agent-address cap (./forwarded). */
  forwarded?: ForwardedLimits;
  /** Console sign-in attempts per client address a minute, counted in the database (console/signInThrottle.ts); 0: no limit. */
  signInsPerAddressPerMinute: number;
}

export interface RateLimiters {
  /** Heartbeats per device. */
  heartbeats: RateLimiter;
  /** Posture requests per device. */
  postures: RateLimiter;
  /** Posture request bytes per device. */
  postureBytes: RateLimiter;
  /** Registrations (/register) per client address. */
  registrations: RateLimiter;
  /** Registrations per enrollment secret (keyed by its hash). */
  registrationsPerSecret: RateLimiter;
  /** Device page links (POST /device-page) per device. */
  devicePages: RateLimiter;
}

export interface AppContext {
  store: Store;
  config: AppConfig;
  logger: Logger;
  limits: RateLimiters;
  metrics: ServerMetrics;
  /** Authentication goes through it (src/server/deviceCache.ts). */
  devices: DeviceCache;
  heartbeats: HeartbeatWriter;
  /** The policy agents fetch, kept in memory (./policy.ts). */
  policies: PolicyCache;
  /** "Check again" requests from device pages (./checkRequests.ts). */
  checks: CheckRequests;
}

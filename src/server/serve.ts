// `device-agent-server serve`: open the database, listen, announce the public URL, and stop
// cleanly on SIGTERM/SIGINT (no new connections, in-flight requests finish, database closed).
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import { buildApp } from './app';
import { PolicyCache } from './policy';
import { guardConnections, type ConnectionLimits } from './connectionGuard';
import { connectionCap } from './limitDefaults';
import { CheckRequests } from './checkRequests';
import type { AppConfig, RateLimiters } from './context';
import { displayLocation, type DatabaseLocation } from './db/location';
import { openStore, type StoreOptions } from './db/open';
import { DeviceCache } from './deviceCache';
import { HeartbeatWriter } from './heartbeatBatch';
import { createLogger, flushLogger } from './logger';
import { createMetrics } from './metrics';
import type { LogLevel } from './logLevels';
import { PUBLIC_URL_SETTING, originFor } from './publicUrl';
import { RateLimiter } from './rateLimit';
import { startRetention, type RetentionPolicy } from './retention';
import { startAlerts } from './alerts';
import { TrustedProxies } from './forwarded';
import { defaultTicketKeyFile } from './ticketKeys';
import { prepareTls, ticketLifetimeSeconds, type ServerTls } from './tls';
import { UsageError } from './usage';
import { isStopMessage } from './workers';

export interface ServeOptions {
  db: { location: DatabaseLocation; options: StoreOptions };
  host: string;
  port: number;
  publicUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** Session-ticket keys shared by the deployment's processes; default beside the database. */
  tlsTicketKeys?: string;
  tlsTicketKeyRotationMs: number;
  /** `--trust-proxy`: addresses and CIDR ranges of TLS-terminating proxies in front. */
  trustProxy?: string;
  heartbeatIntervalSeconds: number;
  postureIntervalSeconds: number;
  logLevel: LogLevel;
  /** `total` undefined: as many as the open-file limit allows. */
  connections: { total?: number; perAddress: number };
  /** Per device and minute: heartbeats, posture requests, posture bytes (0: unlimited). */
  rateLimits: {
    heartbeats: number;
    postures: number;
    postureBytes: number;
    signIns: number;
    registrations: number;
    registrationsPerSecret: number;
    devicePages: number;
  };
  retention: RetentionPolicy;
  /** Distinct check keys a device may hold. */
  maxCheckKeys: number;
  /** Devices whose authentication and last heartbeat this process remembers (0: none). */
  deviceCacheSize: number;
  /** How this program was started, to print a `device create` command that works as is. */
  invocation: string;
  /** The policy extension (policy.ts); false with `--no-policy`: a server exactly as the spec's. */
  policy: boolean;
  /** Time between two webhook sweeps (alerts.ts), and the first retry's delay. */
  webhookIntervalMs: number;
}

/** Longest wait for in-flight requests at shutdown before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

/** Runs until a stop signal; resolves with the exit code. */
export async function serve(options: ServeOptions): Promise<number> {
  const stopSignal = stopRequested();
  // SIGHUP's default action ends the process: handled from the start, by what there is to reload.
  let hangup = () => {};
  process.on('SIGHUP', () => hangup());
  const tls = readTls(options);
  const proxies = options.trustProxy === undefined ? undefined : new TrustedProxies(options.trustProxy);
  const config: AppConfig = {
    heartbeatIntervalSeconds: options.heartbeatIntervalSeconds,
    postureIntervalSeconds: options.postureIntervalSeconds,
    maxCheckKeys: options.maxCheckKeys,
    policy: options.policy,
    retentionMs: options.retention.maxAgeMs,
    tls: tls?.options,
    forwarded: proxies && { proxies, perAddress: options.connections.perAddress },
    signInsPerAddressPerMinute: options.rateLimits.signIns,
  };
  const logger = createLogger({ level: options.logLevel, pretty: process.stdout.isTTY === true });
  // With TLS, ignored until the pair read at start is attached, then a reload (below).
  if (!tls) hangup = () => logger.info({ event: 'sighup_ignored' }, 'SIGHUP: nothing to reload (serving without --tls-cert); ignored');
  const store = await openStore(options.db.location, {
    ...options.db.options,
    backgroundCheckpoints: {
      onFailure: (reason) => logger.error({ reason }, 'the WAL checkpoint thread stopped; SQLite checkpoints inside commits again'),
    },
  });
  const db = displayLocation(options.db.location);
  const limits: RateLimiters = {
    heartbeats: new RateLimiter({ perMinute: options.rateLimits.heartbeats }),
    postures: new RateLimiter({ perMinute: options.rateLimits.postures }),
    postureBytes: new RateLimiter({ perMinute: options.rateLimits.postureBytes }),
    registrations: new RateLimiter({ perMinute: options.rateLimits.registrations }),
    registrationsPerSecret: new RateLimiter({ perMinute: options.rateLimits.registrationsPerSecret }),
    devicePages: new RateLimiter({ perMinute: options.rateLimits.devicePages }),
  };
  const devices = new DeviceCache(store, options.deviceCacheSize);
  const heartbeats = new HeartbeatWriter(store, devices, logger);
  const policies = new PolicyCache(store);
  const checks = new CheckRequests(store);
  const app = buildApp({ store, config, logger, limits, metrics: createMetrics(store), devices, heartbeats, policies, checks });

  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await heartbeats.stop();
    await store.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new UsageError(`cannot listen on ${options.host}:${options.port}: ${code}`);
    }
    throw error;
  }
  const cap = connectionCap(options.connections.total);
  const connections: ConnectionLimits = { total: cap.total, perAddress: options.connections.perAddress };
  if (cap.lowered) {
    logger.warn(
      { requested: cap.lowered.requested, open_file_limit: cap.lowered.openFileLimit, max_connections: cap.total },
      `--max-connections ${cap.lowered.requested} does not fit the open-file limit (${cap.lowered.openFileLimit}): using ${cap.total}; raise the limit (ulimit -n, LimitNOFILE=) for more`,
    );
  }
  guardConnections(app.server, connections, logger, proxies);
  const tlsRuntime = tls?.attach(app.server as unknown as TlsServer, logger);
  if (tlsRuntime) hangup = () => tlsRuntime.reload('SIGHUP');

  const scheme = config.tls ? 'https' : 'http';
  const { port } = app.server.address() as AddressInfo;
  const url = originFor(scheme, options.host, port);
  const publicUrl = options.publicUrl ?? url;
  await store.putSetting(PUBLIC_URL_SETTING, publicUrl);

  if (!config.tls) {
    logger.warn('serving plain HTTP: production belongs behind TLS (--tls-cert/--tls-key, or a TLS-terminating proxy)');
  }
  const createCommand = `${options.invocation} device create --db ${shellQuote(db)} --org <organization>`;
  logger.info({ command: createCommand }, `create a device with: ${createCommand}`);
  logger.info(
    { connections, rate_limits_per_minute: options.rateLimits, retention: options.retention, max_check_keys: options.maxCheckKeys },
    'limits',
  );
  const retention = startRetention(store, options.retention, logger);
  const alerts = startAlerts(
    store,
    { intervalMs: options.webhookIntervalMs, heartbeatIntervalSeconds: options.heartbeatIntervalSeconds },
    logger,
  );
  // Last start-up line: whoever waits for it has seen the others.
  logger.info(
    { console_url: `${url}/console` },
    `admin console: ${url}/console (accounts: ${options.invocation} admin add --db ${shellQuote(db)} --email <email> --org <organization>)`,
  );
  logger.info({ url, public_url: publicUrl, db }, `listening on ${url}`);

  const signal = await stopSignal;
  logger.info({ signal }, 'stopping: finishing in-flight requests');
  const drainDeadline = setTimeout(() => {
    logger.warn('in-flight requests did not finish in time; closing their connections');
    app.server.closeAllConnections();
  }, DRAIN_TIMEOUT_MS);
  await app.close();
  clearTimeout(drainDeadline);
  tlsRuntime?.stop();
  // After the last request: every accepted heartbeat's last-seen time is written before the database closes.
  await heartbeats.stop();
  await retention.stop();
  await alerts.stop();
  await store.close();
  logger.info('stopped');
  await flushLogger(logger);
  return 0;
}

/**
 * The signal that stops this process. A `--workers` worker stops when its primary tells it (with
 * the signal the primary got) or disappears; signals sent to the whole process group (Ctrl-C,
 * systemd) are the primary's to handle, so a worker ignores them. Otherwise the first SIGTERM or
 * SIGINT starts the stop and a second one ends the process at once.
 */
function stopRequested(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    if (cluster.isWorker) {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => {});
      process.on('message', (message) => {
        if (isStopMessage(message)) resolve(message.stop);
      });
      process.once('disconnect', () => resolve('SIGTERM'));
      return;
    }
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

function readTls(options: ServeOptions): ServerTls | undefined {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined || options.tlsKey === undefined) {
    throw new UsageError('--tls-cert and --tls-key go together');
  }
  const ticketKeyFile = options.tlsTicketKeys ?? defaultTicketKeyFile(options.db.location);
  if (ticketKeyFile === undefined) throw new UsageError('--tls-ticket-keys <file> is needed when --db is not a file');
  const lifetime = ticketLifetimeSeconds(options.heartbeatIntervalSeconds, options.postureIntervalSeconds);
  return prepareTls(
    { certFile: options.tlsCert, keyFile: options.tlsKey, ticketKeyFile, ticketKeyRotationMs: options.tlsTicketKeyRotationMs },
    lifetime,
  );
}

/** Quotes a path for a POSIX shell when it needs it. */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

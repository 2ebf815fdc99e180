// The operator's endpoints, on either engine: /healthz (live), /readyz (database answers, schema
// current) and /metrics (Prometheus text: requests, latency, rate-limit refusals, devices by state,
// the PostgreSQL pool); an idle server's event loop wakes about ten times a second, not a hundred.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { SCHEMA_VERSION } from '../../src/server/db/migrations';
import { POSTGRES_SCHEMA_VERSION } from '../../src/server/db/postgresMigrations';
import { ON_POSTGRES, queryDatabase } from '../support/postgres';
import { startServer, type RunningServer } from '../support/server';
import { call, enroll, enrolledDevice, heartbeat, heartbeatBody } from './client';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ args: ['--rate-limit-heartbeats', '2'] });
});

afterAll(async () => {
  await server.stop();
});

const get = (path: string) => call(server, path, { method: 'GET' });

/** The value of one sample line of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',').filter(Boolean);
    if (wanted.every((label) => present.includes(label))) return Number(match[3]);
  }
  return undefined;
}

/** Marks the database as migrated by a newer program, as the engine records it. */
async function setSchemaVersion(version: number): Promise<void> {
  if (ON_POSTGRES) {
    await queryDatabase(server.dbPath, "INSERT INTO schema_migrations (version, description) VALUES ($1, 'newer')", [version]);
    return;
  }
  const db = new Database(server.dbPath, { fileMustExist: true });
  try {
    db.pragma(`user_version = ${version}`);
  } finally {
    db.close();
  }
}

describe('health', () => {
  test('/healthz and /readyz answer 200 while the database answers and its schema is current', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await call(server, '/readyz', { method: 'POST' })).status).toBe(405);
  });
});

describe('metrics', () => {
  test('counts requests by route and status, their latency, rate-limit refusals and devices by state', async () => {
    const device = await enrolledDevice(server); // one enroll 200, one heartbeat 200
    await server.createDevice(); // one PENDING device
    expect((await enroll(server, 'f'.repeat(96))).status).toBe(401);
    const body = heartbeatBody({ hardware_uuid: device.hardwareUuid });
    expect((await heartbeat(server, device.apiKey, body)).status).toBe(200);
    expect((await heartbeat(server, device.apiKey, body)).status).toBe(429);
    expect((await get('/no/such/path')).status).toBe(404);

    const answer = await get('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = answer.text;
    const requests = (route: string, status: number, method = 'POST') =>
      sample(text, 'device_agent_server_requests_total', { route, method, status: String(status) });
    expect(requests(ROUTES.enroll, 200)).toBe(1);
    expect(requests(ROUTES.enroll, 401)).toBe(1);
    expect(requests(ROUTES.heartbeat, 200)).toBe(2);
    expect(requests(ROUTES.heartbeat, 429)).toBe(1);
    expect(requests('(unknown)', 404, 'GET')).toBe(1);
    expect(text).not.toContain('/no/such/path');
    expect(sample(text, 'device_agent_server_request_duration_seconds_count', { route: ROUTES.heartbeat, method: 'POST' })).toBe(3);
    expect(sample(text, 'device_agent_server_rate_limit_refusals_total', { route: ROUTES.heartbeat })).toBe(1);
    expect(sample(text, 'device_agent_server_devices', { state: 'ACTIVE' })).toBe(1);
    expect(sample(text, 'device_agent_server_devices', { state: 'PENDING' })).toBe(1);
    expect(sample(text, 'device_agent_server_devices', { state: 'REVOKED' })).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // Only PostgreSQL has a pool: at least the connection this scrape used.
    const open = sample(text, 'device_agent_server_db_pool_connections', { state: 'open' });
    if (ON_POSTGRES) expect(open).toBeGreaterThanOrEqual(1);
    else expect(open).toBeUndefined();
    // Only a SQLite server checkpoints its write-ahead log from a thread; nothing has filled it yet.
    const rewinds = sample(text, 'device_agent_server_sqlite_wal_rewinds');
    if (ON_POSTGRES) expect(rewinds).toBeUndefined();
    else expect(rewinds).toBe(0);
    // No credential reaches the metrics.
    expect(text).not.toContain(device.apiKey);
  });
});

describe('idle', () => {
  /** Times the server's main thread has blocked (in epoll, between turns of its event loop) so far. */
  const wakeups = () => Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]);

  test.runIf(process.platform === 'linux')(
    "an idle server's event loop wakes about ten times a second (the event-loop delay sampled every 100 ms), not a hundred",
    async () => {
      const before = wakeups();
      const startedAt = performance.now();
      await sleep(2_000);
      const perSecond = (wakeups() - before) / ((performance.now() - startedAt) / 1000);
      // prom-client's default sampling (10 ms) alone made 100 a second; what remains is the sampling
      // (10), the request deadlines' check (1), and now and then a task of the garbage collector.
      expect(perSecond).toBeLessThan(40);
    },
  );
});

describe('readiness', () => {
  test.runIf(ON_POSTGRES)('/readyz answers 503 while the database refuses connections; /healthz stays 200', async () => {
    const database = new URL(server.dbPath).pathname.slice(1);
    const maintenance = server.dbPath.replace(/\/[^/]+$/, '/postgres');
    // Closed to new connections (superusers too), and the server's open ones ended.
    await queryDatabase(maintenance, `ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    await queryDatabase(maintenance, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
    try {
      expect(await get('/readyz')).toMatchObject({ status: 503, body: { status: 'unavailable', reason: 'the database does not answer' } });
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      await queryDatabase(maintenance, `ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    }
    expect((await get('/readyz')).status).toBe(200);
  });

  // Last: it leaves the database migrated "further" than this program.
  test('/readyz answers 503 once a newer program has migrated the database further', async () => {
    await setSchemaVersion(99);
    const known = ON_POSTGRES ? POSTGRES_SCHEMA_VERSION : SCHEMA_VERSION;
    expect(await get('/readyz')).toMatchObject({
      status: 503,
      body: { status: 'unavailable', reason: `the database schema is version 99; this program runs version ${known}` },
    });
    expect((await get('/healthz')).status).toBe(200);
  });
});

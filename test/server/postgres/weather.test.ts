// Database events are weather, not death. Under a heartbeat and posture flood, a PostgreSQL cluster
// of this file's own has the server's connections terminated three times, is restarted (down 5 s)
// and frozen (SIGSTOP, 20 s). No server process exits; every request is answered 2xx or 503 (with
// Retry-After) within the pool's bounds (--db-acquire-timeout + --db-statement-timeout, defaults);
// the server serves again within 5 s of the database's return; /readyz says 503 while the database
// is away and 200 after; and every acknowledged (204) posture upload is in the database. The same
// with --workers 2. And a transaction whose connection stops answering mid-way answers 503 once its
// statement bound has passed, without waiting as long again to roll back.
import pg from 'pg';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { POSTURE_REPORT_HEADER, ROUTES } from '../../../src/protocol/schemas';
import { READY_PATH } from '../../../src/server/routes/health';
import { startCluster, type RunningCluster } from '../../support/postgresCluster';
import { NO_RATE_LIMITS, logEntries, startServer, type RunningServer } from '../../support/server';
import { call, enrolledDevice, heartbeatBody, result, type Answer, type EnrolledDevice } from '../client';

/** The defaults of --db-acquire-timeout and --db-statement-timeout, and the client's grace after the latter. */
const ACQUIRE_MS = 5_000;
const STATEMENT_MS = 10_000;
const GRACE_MS = 1_000;
/** Slack for a busy shared machine on top of the server's own bound. */
const SLACK_MS = 3_000;
const ANSWER_BOUND_MS = ACQUIRE_MS + STATEMENT_MS + GRACE_MS + SLACK_MS;
/** The promise: serving again within this of the database's return. */
const RECOVERY_BOUND_MS = 5_000;
const RESTART_DOWN_MS = 5_000;
/** /readyz's own deadline (2 s) and slack. */
const READY_BOUND_MS = 4_000;
const FREEZE_MS = 20_000;
const POSTURE_LANES = 6;
const HEARTBEAT_LANES = 2;

let cluster: RunningCluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(() => cluster?.stop());

const env = () => ({ PGPASSWORD: cluster.password });

async function newDatabase(name: string): Promise<string> {
  const client = new pg.Client({
    host: cluster.host,
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return `postgres://${cluster.user}@${cluster.host}:${cluster.port}/${name}`;
}

async function onDatabase<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const database = new URL(url).pathname.slice(1);
  const client = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  route: string;
  /** The status, or the client's error when no answer came. */
  status: number | string;
  retryAfter?: string;
  started: number;
  ended: number;
  reportId?: string;
}

/** Requests in lanes, each lane sending its next request when the previous is answered. */
class Flood {
  readonly outcomes: Outcome[] = [];
  private running = true;
  private readonly lanes: Promise<void>[] = [];
  private readonly dispatcher = new Agent({ headersTimeout: 120_000, bodyTimeout: 120_000, connections: 64 });

  constructor(
    private readonly server: RunningServer,
    private readonly devices: EnrolledDevice[],
    /** The server's database. */
    readonly url: string,
  ) {
    for (let lane = 0; lane < POSTURE_LANES; lane += 1) this.lanes.push(this.loop(() => this.posture(devices[lane]!)));
    for (let lane = 0; lane < HEARTBEAT_LANES; lane += 1) this.lanes.push(this.loop(() => this.heartbeat(devices[lane]!)));
    this.lanes.push(this.loop(() => this.send(READY_PATH, undefined, { method: 'GET' }).then(() => pause(250))));
  }

  /** A posture upload outside the lanes: what the recovery probe sends. */
  posture(device: EnrolledDevice): Promise<Outcome> {
    const batch = { results: ['DISK_ENCRYPTION', 'FIREWALL_ENABLED', 'SCREEN_LOCK'].map((check_key) => result({ check_key })) };
    return this.send(ROUTES.postures, device.apiKey, { json: batch });
  }

  private heartbeat(device: EnrolledDevice): Promise<Outcome> {
    return this.send(ROUTES.heartbeat, device.apiKey, { json: heartbeatBody({ hardware_uuid: device.hardwareUuid }) });
  }

  private async send(route: string, apiKey: string | undefined, options: { json?: unknown; method?: string }): Promise<Outcome> {
    const started = Date.now();
    let outcome: Outcome;
    try {
      const answer: Answer = await call(this.server, route, { ...options, apiKey, dispatcher: this.dispatcher });
      const reportId = answer.headers[POSTURE_REPORT_HEADER];
      const retryAfter = answer.headers['retry-after'];
      outcome = {
        route,
        status: answer.status,
        started,
        ended: Date.now(),
        ...(typeof retryAfter === 'string' && { retryAfter }),
        ...(answer.status === 204 && typeof reportId === 'string' && { reportId }),
      };
    } catch (error) {
      outcome = { route, status: String(error), started, ended: Date.now() };
    }
    this.outcomes.push(outcome);
    return outcome;
  }

  private async loop(next: () => Promise<unknown>): Promise<void> {
    while (this.running) await next();
  }

  served(route: string, since: number): boolean {
    return this.outcomes.some((o) => o.route === route && o.started >= since && typeof o.status === 'number' && o.status < 300);
  }

  /** What was answered since `from`, by route and status, and the server's last log lines: why it did not serve. */
  since(from: number): string {
    const counts = new Map<string, number>();
    for (const o of this.outcomes.filter((o) => o.started >= from)) {
      const key = `${o.route} ${o.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return `answers ${JSON.stringify(Object.fromEntries(counts))}; log tail:\n${this.server.logs().split('\n').slice(-40).join('\n')}`;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
    await this.dispatcher.close();
  }
}

/**
 * From the database's return: a new posture upload every 200 ms (not waiting for the previous,
 * which may still hang on a connection of the outage) until one is acknowledged; the time to that
 * acknowledgement.
 */
async function timeToServe(flood: Flood, device: EnrolledDevice, back: number): Promise<number> {
  const probes: Promise<Outcome>[] = [];
  for (const deadline = back + 60_000; Date.now() < deadline;) {
    probes.push(flood.posture(device));
    await pause(200);
    const acknowledged = flood.outcomes.filter((o) => o.started >= back && o.status === 204).map((o) => o.ended);
    if (acknowledged.length > 0) {
      await Promise.all(probes);
      return Math.min(...acknowledged) - back;
    }
  }
  await Promise.all(probes);
  throw new Error(`the server did not serve again within 60 s of the database returning: ${await diagnosis(flood, back)}`);
}

/** Why the server does not serve: its answers since `from`, its log's tail, and its sessions as PostgreSQL sees them. */
async function diagnosis(flood: Flood, from: number): Promise<string> {
  const sessions = await onDatabase(
    flood.url,
    `SELECT state, wait_event_type, wait_event, left(query, 100) AS query, (now() - state_change)::text AS for
     FROM pg_stat_activity WHERE application_name = 'device-agent-server'`,
  ).catch((error: unknown) => String(error));
  return `${flood.since(from)}\nsessions: ${JSON.stringify(sessions)}`;
}

async function terminateConnections(url: string): Promise<number> {
  const [row] = await onDatabase<{ ended: number }>(
    url,
    `SELECT count(pg_terminate_backend(pid))::int AS ended FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = 'device-agent-server'`,
  );
  return row?.ended ?? 0;
}

const listeningPids = (server: RunningServer) =>
  new Set(
    logEntries(server.logs())
      .filter((l) => l.msg?.startsWith('listening'))
      .map((l) => Number(l.pid)),
  );

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.each([
  { label: 'one process', workers: 1 },
  { label: '--workers 2', workers: 2 },
])('PostgreSQL terminated, restarted and frozen under a flood: $label', ({ workers }) => {
  test('no process exits, every request answered 2xx or 503 in time, serving again within 5 s, no acknowledged result lost', async () => {
    const url = await newDatabase(`weather_${workers}`);
    const args = [...NO_RATE_LIMITS, ...(workers > 1 ? ['--workers', String(workers), '--log-level', 'debug'] : [])];
    const server = await startServer({ dbPath: url, env: env(), args });
    const expectedPids = workers > 1 ? workers : 1;
    await until(() => listeningPids(server).size === expectedPids, 'every worker to listen');
    const pids = listeningPids(server);
    const devices = await Promise.all(Array.from({ length: POSTURE_LANES + 1 }, () => enrolledDevice(server)));
    const probeDevice = devices[POSTURE_LANES]!;
    const flood = new Flood(server, devices, url);
    const recoveries: Record<string, number> = {};
    const readyDuring: Record<string, (number | string)[]> = {};
    try {
      const start = Date.now();
      await until(() => flood.served(ROUTES.postures, start), 'the flood to be served');

      for (let round = 1; round <= 3; round += 1) {
        const at = Date.now();
        // At a given instant the pools may hold no connection (all just ended): then again, until one is.
        await until(async () => (await terminateConnections(url)) > 0, `a connection to terminate (${round})`);
        await until(() => flood.served(ROUTES.postures, at + 1), `serving after termination ${round}`).catch(async (error: unknown) => {
          throw new Error(`${String(error)}: ${await diagnosis(flood, at)}`);
        });
      }

      const halted = Date.now();
      cluster.halt();
      await pause(RESTART_DOWN_MS); // the outage itself: the database is away this long
      cluster.start();
      const restarted = Date.now();
      readyDuring.restart = readyStatuses(flood, halted, restarted);
      recoveries.restart = await timeToServe(flood, probeDevice, restarted);

      const frozen = Date.now();
      cluster.freeze();
      try {
        await pause(FREEZE_MS); // the outage itself
      } finally {
        cluster.thaw();
      }
      const thawed = Date.now();
      readyDuring.freeze = readyStatuses(flood, frozen + 2_000, thawed);
      recoveries.freeze = await timeToServe(flood, probeDevice, thawed);
      const ready = Date.now();
      await until(() => flood.outcomes.some((o) => o.route === READY_PATH && o.started >= ready && o.status === 200), '/readyz to say 200');
    } finally {
      await flood.stop();
    }

    const { outcomes } = flood;
    const statuses = outcomes.map((o) => o.status);
    const unexpected = outcomes.filter((o) => !(o.status === 200 || o.status === 204 || o.status === 503));
    expect(unexpected, 'answers other than 2xx and 503').toEqual([]);
    const slowest = Math.max(...outcomes.map((o) => o.ended - o.started));
    expect(slowest).toBeLessThanOrEqual(ANSWER_BOUND_MS);
    const unavailable = outcomes.filter((o) => o.status === 503 && o.route !== READY_PATH);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.every((o) => o.retryAfter === '5')).toBe(true);
    for (const [event, answers] of Object.entries(readyDuring)) expect(answers, `/readyz during the ${event}`).toContain(503);
    // The health check is answered promptly throughout, the database frozen or not.
    const readiness = outcomes.filter((o) => o.route === READY_PATH);
    expect(Math.max(...readiness.map((o) => o.ended - o.started))).toBeLessThanOrEqual(READY_BOUND_MS);
    for (const [event, ms] of Object.entries(recoveries))
      expect(ms, `serving again after the ${event}`).toBeLessThanOrEqual(RECOVERY_BOUND_MS);

    // Every acknowledged upload is stored, whole.
    const acknowledged = outcomes.flatMap((o) => (o.reportId === undefined ? [] : [o.reportId]));
    const stored = await onDatabase<{ report_id: string; results: number }>(
      url,
      'SELECT report_id, count(*)::int AS results FROM posture_results WHERE report_id = ANY($1) GROUP BY report_id',
      [acknowledged],
    );
    expect(stored.filter((row) => row.results === 3)).toHaveLength(acknowledged.length);

    // No process exited: the same processes listened throughout, and still run.
    expect(listeningPids(server)).toEqual(pids);
    expect([...pids].every(isAlive)).toBe(true);
    expect(server.logs()).not.toContain('a worker died');
    expect(logEntries(server.logs()).filter((l) => l.msg === 'request failed')).toEqual([]);
    await server.stop(); // rejects unless the server exits 0

    const count = (status: number) => statuses.filter((s) => s === status).length;
    console.info(
      `weather (${workers} worker${workers > 1 ? 's' : ''}): ${outcomes.length} requests answered ` +
        `(${count(200)} × 200, ${count(204)} × 204, ${count(503)} × 503), slowest ${slowest} ms; ` +
        `serving again ${recoveries.restart} ms after the restart, ${recoveries.freeze} ms after the freeze; ` +
        `${acknowledged.length} acknowledged uploads, ${acknowledged.length - stored.length} lost`,
    );
  }, 240_000);
});

/** /readyz's answers to checks sent between `from` and `to`. */
function readyStatuses(flood: Flood, from: number, to: number): (number | string)[] {
  return flood.outcomes.filter((o) => o.route === READY_PATH && o.started >= from && o.started < to).map((o) => o.status);
}

describe('--workers 2 while PostgreSQL is down', () => {
  test('a worker killed during the outage is replaced, with retries, once the database returns', async () => {
    const url = await newDatabase('replaced');
    const server = await startServer({ dbPath: url, env: env(), args: ['--workers', '2'] });
    await until(() => listeningPids(server).size === 2, 'both workers to listen');
    const [victim] = [...listeningPids(server)] as [number];
    cluster.halt();
    try {
      process.kill(victim, 'SIGKILL');
      // Replacements fail to start while the database is away: the supervisor tries again, and again.
      const retries = () => logEntries(server.logs()).filter((l) => l.msg === 'a replacement worker failed to start; trying again');
      await until(() => retries().length >= 2, 'two failed replacements');
      // Each failed replacement doubles the wait for the next.
      expect(
        retries()
          .slice(0, 2)
          .map((l) => l.restart_in_ms),
      ).toEqual([2_000, 4_000]);
    } finally {
      cluster.start();
    }
    await until(() => listeningPids(server).size === 3, 'a replacement to listen', 60_000);
    const device = await enrolledDevice(server);
    expect((await call(server, ROUTES.postures, { apiKey: device.apiKey, json: { results: [result()] } })).status).toBe(204);
    await server.stop(); // rejects unless the supervisor exits 0
  }, 120_000);
});

describe('a connection that stops answering inside a transaction', () => {
  test('answers 503 once the statement timeout has passed, without waiting again to roll back', async () => {
    const url = await newDatabase('stalled');
    const statementMs = 3_000;
    const server = await startServer({ dbPath: url, env: env(), args: ['--db-statement-timeout', '3s'] });
    const device = await enrolledDevice(server);
    // A row lock held elsewhere parks the upload's transaction on its first statement; then its
    // backend is stopped, as a frozen or cut-off server would be: only the client's timeout can end it.
    const holder = new pg.Client({
      host: cluster.host,
      port: cluster.port,
      user: cluster.user,
      password: cluster.password,
      database: 'stalled',
    });
    await holder.connect();
    let stalled: number | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM devices WHERE id = $1 FOR UPDATE', [device.deviceId]);
      const started = Date.now();
      const upload = call(server, ROUTES.postures, { apiKey: device.apiKey, json: { results: [result()] } });
      await until(async () => {
        const [waiting] = await onDatabase<{ pid: number }>(
          url,
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'device-agent-server' AND wait_event_type = 'Lock'",
        );
        stalled = waiting?.pid;
        return stalled !== undefined;
      }, 'the upload to wait for the row lock');
      process.kill(stalled!, 'SIGSTOP');
      const answer = await upload;
      const elapsed = Date.now() - started;
      expect(answer.status, answer.text).toBe(503);
      // The statement's bound and the client's grace, once: a rollback queued behind the stalled
      // statement would wait as long again.
      expect(elapsed).toBeGreaterThanOrEqual(statementMs);
      expect(elapsed).toBeLessThan(2 * statementMs + GRACE_MS);
    } finally {
      if (stalled !== undefined) process.kill(stalled, 'SIGCONT');
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const after = await call(server, ROUTES.postures, { apiKey: device.apiKey, json: { results: [result()] } });
    expect(after.status, after.text).toBe(204);
    await server.stop();
  }, 60_000);
});

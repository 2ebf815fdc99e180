// What a PostgreSQL error means for a request (src/server/db/failures.ts), on errors the real
// server and pg raise: a cancelled statement, an ended connection, a refused or unanswered
// connection, a client-side timeout and a full pool are weather (503); a value the database
// refuses (NUL, malformed number, over-long index entry) is the client's (400); a syntax error or
// a unique violation is a defect or an outcome (neither). Each error is checked against its
// recording in test/fixtures/server/databaseErrors.json, which databaseFailures.test.ts replays
// without a cluster (DEVICE_AGENT_RECORD=1 records them anew).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { databaseFailure, type DatabaseFailure } from '../../../src/server/db/failures';
import { RECORDING, recordedErrors, recordingOf, saveRecordings, type RecordedError } from '../../support/databaseErrorRecordings';
import { createDatabase } from '../../support/postgres';

let config: pg.ClientConfig;
beforeAll(async () => {
  const url = await createDatabase();
  const { host, port, user, password } = inject('postgres');
  config = { host, port, user, password, database: new URL(url).pathname.slice(1) };
});

async function failureOf(work: () => Promise<unknown>): Promise<{ error: unknown; code: unknown; message: string }> {
  try {
    await work();
  } catch (error) {
    return { error, code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  throw new Error('no error was raised');
}

/** A client for one test; an 'error' event (a terminated connection) is expected, and heard. */
async function connected(extra: pg.ClientConfig = {}): Promise<pg.Client> {
  const client = new pg.Client({ ...config, ...extra });
  client.on('error', () => {});
  await client.connect();
  return client;
}

describe('unavailable', () => {
  test('a statement cancelled by statement_timeout (57014)', async () => {
    const client = await connected({ statement_timeout: 100 });
    try {
      const failed = await failureOf(() => client.query('SELECT pg_sleep(5)'));
      expect(failed.code).toBe('57014');
      judged('statement timeout', failed.error, 'unavailable');
    } finally {
      await client.end();
    }
  });

  test('a connection the server ends (pg_terminate_backend: 57P01), and the client it leaves broken', async () => {
    const victim = await connected();
    const admin = await connected();
    try {
      const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // The next query's error depends on whether pg has seen the connection end: wait for it.
      const ended = new Promise((resolve) => victim.once('end', resolve));
      const running = failureOf(() => victim.query('SELECT pg_sleep(5)'));
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const failed = await running;
      await ended;
      expect(failed.code).toBe('57P01');
      judged('connection terminated by the server', failed.error, 'unavailable');
      const next = await failureOf(() => victim.query('SELECT 1'));
      expect(next.message).toMatch(/^Client has encountered a connection error|^Connection terminated/);
      judged('a query on the broken client', next.error, 'unavailable');
    } finally {
      await admin.end();
      await victim.end().catch(() => {});
    }
  });

  test('a statement the server does not answer in time (query_timeout)', async () => {
    const client = await connected({ query_timeout: 100 });
    try {
      const failed = await failureOf(() => client.query('SELECT pg_sleep(2)'));
      expect(failed.message).toBe('Query read timeout');
      judged('query timeout', failed.error, 'unavailable');
    } finally {
      await client.end().catch(() => {});
    }
  });

  test('a role at its connection limit (53300)', async () => {
    const admin = await connected();
    try {
      await admin.query("CREATE ROLE limited LOGIN PASSWORD 'limited' CONNECTION LIMIT 0");
      const failed = await failureOf(() => new pg.Client({ ...config, user: 'limited', password: 'limited' }).connect());
      expect(failed.code).toBe('53300');
      judged('role connection limit', failed.error, 'unavailable');
    } finally {
      await admin.query('DROP ROLE limited');
      await admin.end();
    }
  });

  test('a row lock not granted within lock_timeout (55P03), and a deadlock (40P01)', async () => {
    const [first, second] = [await connected(), await connected()];
    try {
      await first.query('CREATE TABLE locked (id int PRIMARY KEY)');
      await first.query('INSERT INTO locked VALUES (1), (2)');
      await first.query('BEGIN');
      await first.query('SELECT 1 FROM locked WHERE id = 1 FOR UPDATE');
      await second.query("SET lock_timeout = '50ms'");
      const timedOut = await failureOf(() => second.query('SELECT 1 FROM locked WHERE id = 1 FOR UPDATE'));
      expect(timedOut.code).toBe('55P03');
      judged('lock timeout', timedOut.error, 'unavailable');

      await second.query('SET lock_timeout = 0');
      await second.query('BEGIN');
      await second.query('SELECT 1 FROM locked WHERE id = 2 FOR UPDATE');
      // Each now waits for the other's row: PostgreSQL ends one of them.
      const outcomes = await Promise.allSettled([
        first.query('SELECT 1 FROM locked WHERE id = 2 FOR UPDATE'),
        second.query('SELECT 1 FROM locked WHERE id = 1 FOR UPDATE'),
      ]);
      const deadlock = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      expect(deadlock.map((error) => (error as { code?: unknown }).code)).toEqual(['40P01']);
      judged('deadlock', deadlock[0], 'unavailable');
    } finally {
      await first.query('ROLLBACK');
      await second.query('ROLLBACK');
      await first.end();
      await second.end();
    }
  });

  test('a refused connection (ECONNREFUSED)', async () => {
    const closed = await listening(createServer());
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const failed = await failureOf(() => new pg.Client({ ...config, port }).connect());
    expect(failed.code).toBe('ECONNREFUSED');
    judged('refused connection', failed.error, 'unavailable');
  });

  test('a server that accepts and never answers (connection timeout), and a pool with no free connection', async () => {
    const silent = await listening(createServer(() => {}));
    try {
      const { port } = silent.address() as { port: number };
      // The client's own timer and the pool's each end the attempt, with their own words.
      const alone = await failureOf(() => new pg.Client({ ...config, port, connectionTimeoutMillis: 100 }).connect());
      expect(alone.message).toBe('timeout expired');
      judged('connect timeout of a client', alone.error, 'unavailable');
      const pooled = new pg.Pool({ ...config, port, connectionTimeoutMillis: 100 });
      pooled.on('error', () => {}); // as the server's pools (postgresOpen.ts)
      const failed = await failureOf(() => pooled.query('SELECT 1'));
      await pooled.end();
      expect(failed.message).toMatch(/^Connection terminated due to connection timeout|^timeout expired$/);
      judged('connect timeout of a pool', failed.error, 'unavailable');
    } finally {
      silent.close();
    }

    // Long enough for the first connection on a busy machine; the second waits it out for a free one.
    const pool = new pg.Pool({ ...config, max: 1, connectionTimeoutMillis: 2_000 });
    const held = await pool.connect();
    try {
      const failed = await failureOf(() => pool.query('SELECT 1'));
      expect(failed.message).toMatch(/^timeout exceeded when trying to connect/);
      judged('a full pool', failed.error, 'unavailable');
    } finally {
      held.release();
      await pool.end();
    }
  });
});

describe('refused values and the rest', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = await connected();
    await client.query('CREATE TABLE keyed (k text PRIMARY KEY)');
  });
  afterAll(() => client?.end());

  test.each([
    ['a NUL character', 'SELECT $1::text', ['a\u0000b'], '22021'],
    ['a malformed number', 'SELECT $1::bigint', ['abc'], '22P02'],
    ['a number out of range', 'SELECT $1::int', ['99999999999'], '22003'],
    ['a malformed time', 'SELECT $1::timestamptz', ['2024-13-45T99:99:99Z'], '22008'],
    [
      'an index entry too long',
      'INSERT INTO keyed VALUES ($1)',
      [Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + i)).join('')],
      '54000',
    ],
  ])('%s is a refused value', async (label, sql, values, code) => {
    const failed = await failureOf(() => client.query(sql, values));
    expect(failed.code).toBe(code);
    judged(label, failed.error, 'refused_value');
  });

  test('a syntax error and a unique violation are neither', async () => {
    const syntax = await failureOf(() => client.query('SELEC 1'));
    expect(syntax.code).toBe('42601');
    judged('syntax error', syntax.error, undefined);
    await client.query("INSERT INTO keyed VALUES ('once')");
    const unique = await failureOf(() => client.query("INSERT INTO keyed VALUES ('once')"));
    expect(unique.code).toBe('23505');
    judged('unique violation', unique.error, undefined);
    // A SQLSTATE with 22 past its class (indeterminate_collation, 42P22, met when a row is compared): not a data exception.
    await client.query(`CREATE TABLE collated (a text COLLATE "C", b text COLLATE "POSIX")`);
    await client.query(`INSERT INTO collated VALUES ('a', 'b')`);
    const collation = await failureOf(() => client.query('SELECT a < b FROM collated'));
    expect(collation.code).toBe('42P22');
    judged('indeterminate collation', collation.error, undefined);
  });
});

describe('the network on the way', () => {
  test('a connection reset (ECONNRESET), a socket closed before the start-up message (EPIPE), no route (EHOSTUNREACH)', async () => {
    const reset = await listening(createServer((socket) => socket.resetAndDestroy()));
    const { port } = reset.address() as { port: number };
    const resetFailure = await failureOf(() => new pg.Client({ ...config, port }).connect());
    reset.close();
    expect(resetFailure.code).toBe('ECONNRESET');
    judged('connection reset', resetFailure.error, 'unavailable');

    // pg's Unix socket: <dir>/.s.PGSQL.<port>, closed as soon as accepted.
    const dir = mkdtempSync(join(tmpdir(), 'device-agent-pgsock-'));
    const closing = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closing.listen(join(dir, '.s.PGSQL.5432'), resolve));
    try {
      const pipe = await failureOf(() => new pg.Client({ ...config, host: dir, port: 5432 }).connect());
      expect(pipe.code).toBe('EPIPE');
      judged('broken pipe', pipe.error, 'unavailable');
    } finally {
      closing.close();
      rmSync(dir, { recursive: true, force: true });
    }

    // The documentation prefix: no route where the machine has no IPv6 default route (as where
    // this was recorded), though neighbour discovery sometimes outlasts the connect timeout first;
    // elsewhere every attempt times out, which is weather too.
    let unroutable: Awaited<ReturnType<typeof failureOf>> | undefined;
    for (let attempt = 0; attempt < 5 && unroutable?.code !== 'EHOSTUNREACH'; attempt += 1)
      unroutable = await failureOf(() => new pg.Client({ ...config, host: '2001:db8::1', connectionTimeoutMillis: 3_000 }).connect());
    if (unroutable!.code === 'EHOSTUNREACH') judged('no route to the host', unroutable!.error, 'unavailable');
    else expect(databaseFailure(unroutable!.error)).toBe('unavailable');
  });
});

const seen: RecordedError[] = [];
afterAll(() => {
  if (RECORDING) saveRecordings(seen);
});

/** The live error is as recorded (replayed without a cluster: databaseFailures.test.ts), and means `failure`. */
function judged(label: string, error: unknown, failure: DatabaseFailure | undefined): void {
  const recording = recordingOf(label, error);
  seen.push(recording);
  if (!RECORDING) expect(recordedErrors()).toContainEqual(recording);
  expect(databaseFailure(error)).toBe(failure);
}

function listening(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

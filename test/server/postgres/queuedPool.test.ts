// The line in front of the server's PostgreSQL connections (src/server/db/queuedPool.ts), on a real
// database: requests beyond the pool's size wait as long as connections keep coming back, however
// long the whole wait (pg's own pool failed them after the acquire timeout: 503s from a healthy,
// busy database); when none comes back for the acquire timeout, the waiting ones fail with the
// error the server answers 503 to, and the line serves again afterwards.
import { connect as netConnect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import pg from 'pg';
import { databaseFailure } from '../../../src/server/db/failures';
import { connectPostgres } from '../../../src/server/db/postgresOpen';
import { createDatabase, postgresEnv } from '../../support/postgres';

const ACQUIRE_MS = 1_000;
/** Each query holds its connection this long: well under the acquire timeout. */
const HOLD_S = 0.25;
const POOL_SIZE = 2;

let pool: pg.Pool;
let url: string;
const savedPassword = process.env.PGPASSWORD;
beforeAll(async () => {
  url = await createDatabase();
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD; // as `serve` finds it
  pool = await connectPostgres({ url, display: url, poolSize: POOL_SIZE, timeouts: { acquireMs: ACQUIRE_MS, statementMs: 30_000 } });
});
afterAll(async () => {
  await pool?.end();
  if (savedPassword === undefined) delete process.env.PGPASSWORD;
  else process.env.PGPASSWORD = savedPassword;
});

const hold = (seconds: number) => pool.query(`SELECT pg_sleep(${seconds})`);

test('a burst far beyond the pool waits in line while connections come back: all served, none failed', async () => {
  const burst = 16; // 16 × 0.25 s on 2 connections: 2 s in line, twice the acquire timeout
  const started = Date.now();
  const outcomes = await Promise.allSettled(
    Array.from({ length: burst }, async (_, i) => {
      // Half through transactions (inTransaction's connect/release), half through pool.query.
      if (i % 2 === 0) return hold(HOLD_S);
      const client = await pool.connect();
      try {
        return await client.query(`SELECT pg_sleep(${HOLD_S})`);
      } finally {
        client.release();
      }
    }),
  );
  const elapsed = Date.now() - started;
  expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  // It did wait longer than the acquire timeout (else this would prove nothing about the line).
  expect(elapsed).toBeGreaterThan(ACQUIRE_MS);
  expect(pool.totalCount).toBeLessThanOrEqual(POOL_SIZE);
});

test('while every connection is stuck, the line fails after the acquire timeout with an unavailable error; then serves again', async () => {
  const stuck = Array.from({ length: POOL_SIZE }, () => hold(3));
  const started = Date.now();
  const waiting = await Promise.allSettled([pool.query('SELECT 1'), pool.connect()]);
  const waited = Date.now() - started;
  for (const outcome of waiting) {
    expect(outcome.status).toBe('rejected');
    const reason = (outcome as PromiseRejectedResult).reason as Error;
    expect(reason.message).toBe('timeout exceeded when trying to connect');
    expect(databaseFailure(reason)).toBe('unavailable');
  }
  expect(waited).toBeGreaterThanOrEqual(ACQUIRE_MS - 50);
  expect(waited).toBeLessThan(3_000); // before the stuck ones came back
  await Promise.all(stuck);
  expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
});

test('a connection given back broken hands its turn on, and the next in line connects anew', async () => {
  const first = await pool.connect();
  const second = await pool.connect();
  const waiter = pool.connect();
  first.release(true); // discarded, as inTransaction does with a lost connection
  const handed = await waiter;
  expect(handed).not.toBe(first);
  expect((await handed.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  handed.release();
  second.release();
});

/** A TCP relay to the database that leaves a connection unanswered when told to (as a machine too loaded to set one up in time). */
async function relay(target: URL, hung: number): Promise<{ url: string; hangNext: () => void; close: () => void }> {
  const sockets: Socket[] = [];
  let toHang = hung;
  const server: Server = createServer((client) => {
    sockets.push(client);
    if (toHang > 0) {
      toHang -= 1;
      return;
    }
    const upstream = target.hostname.startsWith('/')
      ? netConnect(`${decodeURIComponent(target.hostname)}/.s.PGSQL.${target.port}`)
      : netConnect(Number(target.port), target.hostname);
    sockets.push(upstream);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(target);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    hangNext: () => void (toHang += 1),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

test('a new connection that times out while another comes back healthy is tried again; with none served lately it fails', async () => {
  const timeouts = { acquireMs: ACQUIRE_MS, statementMs: 30_000 };
  // The relay leaves the pool's second connection unanswered. Its first serves a chain of short
  // queries, so the hung set-up of the second is tried again (a slow machine, not a database away).
  const served = await relay(new URL(url), 0);
  const hungSecond = await relay(new URL(url), 0);
  let busy: pg.Pool | undefined;
  let fresh: pg.Pool | undefined;
  try {
    busy = await connectPostgres({ url: hungSecond.url, display: url, poolSize: 2, timeouts });
    await busy.query('SELECT 1'); // the first connection, relayed
    hungSecond.hangNext();
    const chain = (async () => {
      for (let i = 0; i < 12; i++) await busy.query(`SELECT pg_sleep(${HOLD_S})`);
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await busy.query<{ two: number }>('SELECT 2 AS two'); // a new connection: hung, then again
    expect(second.rows).toEqual([{ two: 2 }]);
    await chain;

    // A pool none of whose connections has come back healthy: the hung set-up fails the request.
    fresh = await connectPostgres({ url: served.url, display: url, poolSize: 1, timeouts });
    served.hangNext(); // after the schema check's own connection
    await expect(fresh.query('SELECT 1')).rejects.toThrow('Connection terminated due to connection timeout');
    expect((await fresh.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await busy?.end();
    await fresh?.end();
    served.close();
    hungSecond.close();
  }
});

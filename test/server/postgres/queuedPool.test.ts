// The line in front of the server's PostgreSQL connections (src/server/db/queuedPool.ts), on a real
// database: requests beyond the pool's size wait as long as connections keep coming back, however
// long the whole wait (pg's own pool failed them after the acquire timeout: 503s from a healthy,
// busy database); when none comes back for the acquire timeout, the waiting ones fail with the
// error the server answers 503 to, and the line serves again afterwards.
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

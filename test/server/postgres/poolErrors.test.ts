// A connection's loss is an 'error' event on its pg client, which ends the process where no
// listener hears it. The pool the server uses keeps a listener on every client for its whole life,
// including the moment found under a flood with pg_terminate_backend (the weather test's crash):
// a released client handed to a waiting connect() has lost the pool's idle listener, and its
// waiter attaches nothing before its next turn, while a FATAL read in the same chunk is emitted.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type pg from 'pg';
import { connectPostgres } from '../../../src/server/db/postgresOpen';
import { createDatabase, postgresEnv, queryDatabase } from '../../support/postgres';

let pool: pg.Pool;
let url: string;
const savedPassword = process.env.PGPASSWORD;
beforeAll(async () => {
  url = await createDatabase();
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD; // as `serve` finds it
  pool = await connectPostgres({ url, display: url, poolSize: 1, timeouts: { acquireMs: 5_000, statementMs: 10_000 } });
});
afterAll(async () => {
  await pool?.end();
  if (savedPassword === undefined) delete process.env.PGPASSWORD;
  else process.env.PGPASSWORD = savedPassword;
});

test('a client handed from a release to a waiting connect() hears its loss in the same turn (no unheard error event ends the process)', async () => {
  const first = await pool.connect();
  const waiter = pool.connect(); // the pool is full: this waits for `first`
  first.release();
  // Same turn: the pool has handed `first` to the waiter and removed its idle listener.
  expect(() => first.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();
  const handed = await waiter;
  // The waiter waited in the server's line (queuedPool.ts), so the released client went to the
  // pool's idle list first, where its loss discards it: the waiter gets a working connection.
  try {
    expect((await handed.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    handed.release(true);
  }
});

test('an idle client whose backend is terminated is discarded, and the next query connects anew', async () => {
  const [before] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await queryDatabase(url, 'SELECT pg_terminate_backend($1)', [before!.pid]);
  // The pool discards the client when its loss arrives; a query before that fails as unavailable.
  for (;;) {
    try {
      const [after] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
      expect(after!.pid).not.toBe(before!.pid);
      break;
    } catch (error) {
      expect(String(error)).toMatch(/terminat|not queryable/);
    }
  }
});

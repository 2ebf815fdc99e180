// PostgreSQL migration 7 on a database an older server filled: each check's status_since is
// backfilled from the history (test/server/statusSinceBackfill.ts), and the column is NOT NULL.
import { afterAll, expect, test } from 'vitest';
import { migratePostgres } from '../../../src/server/db/postgresMigrations';
import { createDatabase, databasePool, queryDatabase } from '../../support/postgres';
import { startServer, type RunningServer } from '../../support/server';
import { expectBackfilled, fillOlderSchema } from '../statusSinceBackfill';

let server: RunningServer | undefined;
afterAll(async () => {
  await server?.stop();
});

test('status_since of results stored under schema 6 comes from their history', async () => {
  const url = await createDatabase();
  const pool = databasePool(url);
  try {
    expect(await migratePostgres(pool, 6)).toHaveLength(6);
    await fillOlderSchema(async (sql, params) => {
      let n = 0;
      const { rows } = await pool.query<{ id: string }>(
        sql.replace(/\?/g, () => `$${(n += 1)}`),
        params,
      );
      return rows[0] === undefined ? undefined : Number(rows[0].id);
    });
  } finally {
    await pool.end();
  }
  server = await startServer({ dbPath: url });
  await expectBackfilled(server);
  expect(
    await queryDatabase(
      url,
      "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'latest_results' AND column_name = 'status_since'",
    ),
  ).toEqual([{ is_nullable: 'NO' }]);
});

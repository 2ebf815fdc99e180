// SQLite migration 8 on a database an older server filled: each check's status_since is backfilled
// from the history (test/server/statusSinceBackfill.ts), and a second start changes nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, expect, test } from 'vitest';
import { migrate } from '../../src/server/db/migrations';
import { startServer, type RunningServer } from '../support/server';
import { expectBackfilled, fillOlderSchema } from './statusSinceBackfill';

let server: RunningServer | undefined;
afterAll(async () => {
  await server?.stop();
});

test('status_since of results stored under schema 7 comes from their history', async () => {
  const dbPath = join(mkdtempSync(join(tmpdir(), 'device-agent-migration-')), 'server.db');
  const db = new Database(dbPath);
  migrate(db, 7);
  await fillOlderSchema((sql, params) => {
    const statement = db.prepare(sql);
    return Promise.resolve(statement.reader ? (statement.get(params) as { id: number }).id : (statement.run(params), undefined));
  });
  db.close();
  server = await startServer({ dbPath });
  await expectBackfilled(server);
  const rows = () => {
    const reader = new Database(dbPath, { readonly: true });
    try {
      return reader.prepare('SELECT * FROM latest_results ORDER BY check_key').all();
    } finally {
      reader.close();
    }
  };
  const backfilled = rows();
  await server.stop();
  server = await startServer({ dbPath });
  expect(rows()).toEqual(backfilled);
});

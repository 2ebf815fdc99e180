// A store of the engine the test run is on: a SQLite file in `dir`, or, in the `postgres` vitest
// project, a new database on the run's PostgreSQL cluster. For tests of engine-neutral code over a
// real store, each engine's SQL included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, beforeAll } from 'vitest';
import { parseDatabaseLocation } from '../../src/server/db/location';
import { openStore } from '../../src/server/db/open';
import type { Store } from '../../src/server/db/store';
import { ON_POSTGRES, createDatabase, postgresEnv, queryDatabase } from './postgres';

/** A store for the test file that calls this: opened before its tests in a new temporary directory, closed and removed after them. */
export function storeForFile(name: string): () => Store {
  let dir: string | undefined;
  let store: Store | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `device-agent-${name}-`));
    store = await openTestStore(dir);
  });
  afterAll(async () => {
    await store?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (store === undefined) throw new Error('the store opens in beforeAll');
    return store;
  };
}

export async function openTestStore(dir: string): Promise<Store> {
  return (await openInspectedTestStore(dir)).store;
}

/** The same, with a count of a table's rows read beside the store (what its interface does not tell). */
export async function openInspectedTestStore(dir: string): Promise<{ store: Store; countRows: (table: string) => Promise<number> }> {
  if (!ON_POSTGRES) {
    const path = join(dir, 'server.db');
    const countRows = (table: string) => {
      const db = new Database(path, { readonly: true });
      try {
        return Promise.resolve((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
      } finally {
        db.close();
      }
    };
    return { store: await openStore({ engine: 'sqlite', path }), countRows };
  }
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD;
  const url = await createDatabase();
  const countRows = async (table: string) => Number((await queryDatabase<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
  return { store: await openStore(parseDatabaseLocation(url)), countRows };
}

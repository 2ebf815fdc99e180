// A store of the engine the test run is on: a SQLite file in `dir`, or, in the `postgres` vitest
// project, a new database on the run's PostgreSQL cluster. For tests of engine-neutral code over a
// real store, each engine's SQL included.
import { join } from 'node:path';
import { parseDatabaseLocation } from '../../src/server/db/location';
import { openStore } from '../../src/server/db/open';
import type { Store } from '../../src/server/db/store';
import { ON_POSTGRES, createDatabase, postgresEnv } from './postgres';

export async function openTestStore(dir: string): Promise<Store> {
  if (!ON_POSTGRES) return openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
  process.env.PGPASSWORD = postgresEnv().PGPASSWORD;
  return openStore(parseDatabaseLocation(await createDatabase()));
}

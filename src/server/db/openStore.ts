// Opens the store that `--db` names: a SQLite file (open.ts) or a PostgreSQL database
// (postgresOpen.ts, loaded only then).
import type { DatabaseLocation } from './location';
import { openSqliteStore, type OpenOptions } from './open';
import type { Store } from './store';

export interface StoreOptions extends OpenOptions {
  /** PostgreSQL: file holding the password. */
  passwordFile?: string;
  /** PostgreSQL: most connections this process opens. */
  poolSize?: number;
}

export async function openStore(location: DatabaseLocation, options: StoreOptions = {}): Promise<Store> {
  if (location.engine === 'sqlite') return openSqliteStore(location.path, options);
  const { openPostgresStore } = await import('./postgresOpen');
  return openPostgresStore({ ...options, url: location.url, display: location.display });
}

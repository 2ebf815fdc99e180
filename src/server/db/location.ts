// Where the store lives, from `--db` (or DEVICE_AGENT_SERVER_DB): a postgres:// or postgresql://
// URL selects PostgreSQL; anything else is a SQLite file (`sqlite:` may prefix it). A password never
// travels on the command line, where any local user sees it (`ps`): it comes from a password file,
// PGPASSWORD or ~/.pgpass, or inside a URL given through the environment only.
import { UsageError } from '../usage';

export type DatabaseLocation =
  | { engine: 'sqlite'; path: string }
  | {
      engine: 'postgres';
      /** The URL as given; it may hold a password (environment only). */
      url: string;
      /** The URL without its password: the form logs, messages and printed commands use. */
      display: string;
    };

const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'];

export function parseDatabaseLocation(text: string, options: { fromEnvironment?: boolean } = {}): DatabaseLocation {
  if (text.startsWith('sqlite:')) {
    const path = text.slice('sqlite:'.length);
    if (path === '') throw new UsageError('--db sqlite: needs a file path, e.g. sqlite:/var/lib/device-agent-server/server.db');
    return { engine: 'sqlite', path };
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text)?.[0].toLowerCase();
  if (scheme === undefined || !POSTGRES_SCHEMES.includes(scheme)) {
    if (text === '') throw new UsageError('--db needs a SQLite file path or a postgres:// URL');
    return { engine: 'sqlite', path: text };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError('--db is not a valid postgres:// URL (expected postgres://user@host:5432/database)');
  }
  if (url.password !== '' && !options.fromEnvironment) {
    throw new UsageError(
      'a password in --db would show in the process list: give it with --db-password-file, PGPASSWORD or ~/.pgpass instead (or put the whole URL in DEVICE_AGENT_SERVER_DB)',
    );
  }
  const display = new URL(text);
  display.password = '';
  return { engine: 'postgres', url: text, display: display.toString() };
}

/** How the location is named in logs, messages and printed commands: never with a password. */
export function displayLocation(location: DatabaseLocation): string {
  return location.engine === 'sqlite' ? location.path : location.display;
}

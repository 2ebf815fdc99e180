// Opens a PostgreSQL database as the server's store: a connection pool, the password from a file
// when one is given (else libpq's rules through `pg`: PGPASSWORD, then ~/.pgpass), and the schema
// migrated under the migration lock. Messages name the database without its password.
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { DatabaseOpenError, type OpenOptions, type QueryTimeouts } from './open';
import { SchemaTooNewError } from './migrations';
import { migratePostgres, schemaVersion } from './postgresMigrations';
import { PostgresStore } from './postgresStore';
import { QueuedPool } from './queuedPool';
import type { Store } from './store';

export interface PostgresOptions extends OpenOptions {
  /** postgres:// URL; it may hold a password only when it came from the environment. */
  url: string;
  /** The URL without its password, for messages. */
  display: string;
  /** File holding the password (one line), instead of PGPASSWORD or ~/.pgpass. */
  passwordFile?: string;
  /** Most connections this process opens. */
  poolSize?: number;
  /** Bounds on every query of the pool (`serve`); none for the admin commands and migrate-data. */
  timeouts?: QueryTimeouts;
}

const DEFAULT_POOL_SIZE = 10;
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long after statement_timeout the client gives up on a server that does not answer (frozen,
 * partitioned): PostgreSQL's own cancellation arrives first whenever the server runs.
 */
const UNANSWERED_GRACE_MS = 1_000;

export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  return new PostgresStore(await connectPostgres(options));
}

/** A pool on the database, its schema migrated (or checked, with mustExist). */
export async function connectPostgres(options: PostgresOptions): Promise<pg.Pool> {
  // pg lets a connectionString override an explicit password (with the URL's empty one): the URL
  // is parsed here instead, and the file's password set over it.
  const connection =
    options.passwordFile === undefined
      ? { connectionString: options.url }
      : { ...parseIntoClientConfig(options.url), password: readPasswordFile(options.passwordFile) };
  const common = { ...connection, application_name: 'device-agent-server', connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
  // The schema is checked and migrated on a connection of its own, without the request timeouts:
  // a migration may take long, and so may the wait for another instance's migration lock.
  const setup = quiet(new pg.Pool({ ...common, max: 1 }));
  try {
    if (options.mustExist && (await schemaVersion(setup)) === 0) {
      throw new DatabaseOpenError(`no device-agent-server schema in ${options.display} (start \`serve --db ${options.display}\` first)`);
    }
    await migratePostgres(setup);
  } catch (error) {
    if (error instanceof DatabaseOpenError) throw error;
    if (error instanceof SchemaTooNewError) throw new DatabaseOpenError(`${options.display}: ${error.message}`);
    throw new DatabaseOpenError(`cannot use ${options.display} as a device-agent-server database: ${describe(error)}`);
  } finally {
    await setup.end().catch(() => {});
  }
  const { timeouts } = options;
  // Requests beyond the pool's size wait in line while connections keep coming back (queuedPool.ts);
  // the acquire timeout fails them once none has come back for that long, and bounds a new connection's set-up.
  return quiet(
    new QueuedPool(
      {
        ...common,
        max: options.poolSize ?? DEFAULT_POOL_SIZE,
        // A peer that vanished without closing (a partition, a failover) is noticed by TCP keepalive.
        keepAlive: true,
        ...(timeouts && {
          connectionTimeoutMillis: timeouts.acquireMs,
          statement_timeout: timeouts.statementMs,
          query_timeout: timeouts.statementMs + UNANSWERED_GRACE_MS,
        }),
      },
      timeouts?.acquireMs,
    ),
  );
}

/**
 * A connection that the server drops (restart, failover, pg_terminate_backend,
 * idle_session_timeout) must not end the process. pg reports the loss as an 'error' event on its
 * client, which throws where no listener is attached, and there are moments with none: between
 * the pool's handing a released client to a waiting connect() (it removes its idle listener) and
 * the waiter's next turn, a FATAL read in the same chunk as the last answer is emitted unheard.
 * So every client carries a listener from its creation to its end. The loss is not hidden: an idle
 * client is discarded by the pool (its 'error'), a checked-out one fails its next query, and
 * postgresStore.ts's transactions then discard it.
 */
function quiet(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** pg's and Node's errors say what failed (refused, timeout, authentication); none repeats the password. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/** One line; owner-only like ~/.pgpass, so that no other local user could have read it. */
function readPasswordFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new DatabaseOpenError(
      `cannot read --db-password-file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new DatabaseOpenError(`--db-password-file ${path} is not a regular file`);
    if (process.geteuid !== undefined && (stat.mode & 0o077) !== 0) {
      throw new DatabaseOpenError(`--db-password-file ${path} is readable by others: make it owner-only (chmod 600)`);
    }
    const password = readFileSync(fd, 'utf8').replace(/\r?\n$/, '');
    if (password === '' || password.includes('\n'))
      throw new DatabaseOpenError(`--db-password-file ${path} must hold the password on one line`);
    return password;
  } finally {
    closeSync(fd);
  }
}

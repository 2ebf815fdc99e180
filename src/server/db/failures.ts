// What a database error means for the request that met it, on either engine. `unavailable`: the
// database cannot serve now but may in a moment (a connection lost or refused, a timeout, a
// restart, SQLite busy, a full or failing disk): 503 and try again. `refused_value`: the database
// refuses a value the request carried (PostgreSQL's data exceptions: a NUL byte, a malformed
// number or time, an index entry too long): 400. Anything else is a defect: 500.
export type DatabaseFailure = 'unavailable' | 'refused_value';

/**
 * Codes of errors that pass. SQLite's busy, locked, full and I/O errors (the extended codes start
 * with their primary code: SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, …). PostgreSQL SQLSTATE
 * classes and codes: connection exceptions (08), insufficient resources (53: disk full, out of
 * memory, too many connections), operator intervention (57: query_canceled by statement_timeout,
 * admin_shutdown, crash_shutdown, cannot_connect_now), serialization failures and deadlocks
 * (40001, 40P01), lock_not_available (55P03).
 */
const UNAVAILABLE_CODE = /^(SQLITE_(BUSY|LOCKED|FULL|IOERR)|08|53|57|40001|40P01|55P03)/;
/** Data exceptions (22) and program_limit_exceeded (54000: an index row larger than a page allows). */
const REFUSED_VALUE_SQLSTATE = /^(22|54000)/;
/** The network's answers on the way to the database server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * pg's own errors carry no code: a connection ended or never made, a client-side timeout
 * (query_timeout; connectionTimeoutMillis, which the pool and its client each enforce, with their
 * own words), a client already broken by one of these.
 */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout expired$|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed)/;

export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  // A SQLSTATE (pg's DatabaseError) is five digits and capitals; Node's and SQLite's codes start with
  // a word (E…, ERR_…, SQLITE_…), so no pattern here matches another kind's code, nor "undefined".
  const code = String((error as { code?: unknown }).code);
  if (UNAVAILABLE_CODE.test(code) || NETWORK_CODES.has(code)) return 'unavailable';
  if (REFUSED_VALUE_SQLSTATE.test(code)) return 'refused_value';
  // Anything else is judged by its message: pg's own errors carry no code. (Node's AggregateError of
  // a connection tried on several addresses carries its first attempt's code.)
  return PG_CONNECTION_MESSAGES.test(error.message) ? 'unavailable' : undefined;
}

// The answer to a request that a database error ended (db/failures.ts says which kind), shared by
// the API's and the console's error handlers. An outage is weather: 503 with Retry-After, logged
// as one warning per interval with the count, not a stack trace per request. A value the database
// refuses is the client's: 400, logged at debug with its SQLSTATE only (the value may be anything).
import type { Logger } from 'pino';
import { databaseFailure } from './db/failures';
import { HttpError, badRequest } from './errors';

/** What a client is asked to wait before trying again; agents add their own jitter. */
const RETRY_AFTER_SECONDS = 5;
/** At most one "database unavailable" line per this interval. */
const WARNING_INTERVAL_MS = 10_000;

export type DatabaseErrorAnswer = (error: unknown) => HttpError | undefined;

export function databaseErrorAnswers(logger: Logger, now: () => number = Date.now): DatabaseErrorAnswer {
  let lastWarning = -Infinity;
  let unwarned = 0;
  return (error) => {
    const failure = databaseFailure(error);
    if (failure === undefined) return undefined;
    const code = (error as { code?: unknown }).code;
    if (failure === 'refused_value') {
      // A client's error like any other 400: not worth a line at info, which anyone could fill.
      logger.debug({ sqlstate: code }, 'the database refused a value of a request (400)');
      return badRequest('a value in the request is not one the database can store (a NUL character, an over-long or malformed value)');
    }
    unwarned += 1;
    if (now() - lastWarning >= WARNING_INTERVAL_MS) {
      logger.warn({ reason: (error as Error).message, code, requests: unwarned }, 'the database is unavailable: answering 503');
      lastWarning = now();
      unwarned = 0;
    }
    return new HttpError('database_unavailable', 'the database is unavailable for a moment; try again later', {
      'retry-after': String(RETRY_AFTER_SECONDS),
    });
  };
}

// Errors as the contract's body: {"error": "<code>", "message": "<human text>"}. Handlers throw
// HttpError; the app's error handler turns it (and everything else) into that body.
import type { ErrorCode } from '../protocol/schemas';

/** The agent API's codes, and `forbidden`, which only the admin API and console answer (a missing or wrong CSRF token). */
export type HttpErrorCode = ErrorCode | 'forbidden';

const STATUS_OF_CODE: Record<HttpErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  internal_error: 500,
  database_unavailable: 503,
};

export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly code: HttpErrorCode,
    /** Shown to the client: never credentials, evidence, SQL or stack traces. */
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get statusCode(): number {
    return STATUS_OF_CODE[this.code];
  }
}

export const badRequest = (message: string) => new HttpError('bad_request', message);
/** 401 on a route authenticated by `Authorization: Bearer`. */
export const unauthorized = (message: string) => new HttpError('unauthorized', message, { 'www-authenticate': 'Bearer' });
/** 401 for an API key that names no device: unknown, or removed by a revocation or /unenroll. */
export const keyRefused = () => unauthorized('the API key is not valid: unknown, revoked or unenrolled');
/** 401 for a refused enrollment token (sent in the body, so no challenge). */
export const tokenRefused = () => new HttpError('unauthorized', 'the enrollment token is unknown, already used or expired');
export const conflict = (message: string) => new HttpError('conflict', message);
/** 401 for a refused enrollment secret, one body whatever the reason (no oracle: unknown, revoked, expired, used up, malformed). */
export const secretRefused = () => new HttpError('unauthorized', 'the enrollment secret is not valid');

// The contract's exit codes, and the one mapping from a failure to its code and message.
import { CommanderError } from 'commander';
import { ApiError, CredentialsRejectedError, RetryableError } from '../agent/api';
import { InvalidInputError, KeyStoreUnavailableError, NotEnrolledError, StateCorruptError, LockHeldError } from '../agent/errors';

export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  credentialsRejected: 3,
  unreachable: 4,
  notEnrolled: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure whose message and exit code a command chose itself. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

export interface Failure {
  exitCode: ExitCode;
  /** One line for the user; null when commander already printed it. */
  message: string | null;
  /** Not a user error: worth a stack trace in the debug log. */
  unexpected: boolean;
}

export function describeFailure(err: unknown): Failure {
  if (err instanceof CommanderError) {
    return { exitCode: err.exitCode === 0 ? EXIT.ok : EXIT.usage, message: null, unexpected: false };
  }
  const known = (exitCode: ExitCode): Failure => ({ exitCode, message: (err as Error).message, unexpected: false });
  if (err instanceof CommandFailure) return known(err.exitCode);
  if (err instanceof InvalidInputError) return known(EXIT.usage);
  if (err instanceof NotEnrolledError) return known(EXIT.notEnrolled);
  if (err instanceof KeyStoreUnavailableError || err instanceof StateCorruptError || err instanceof LockHeldError) {
    return known(EXIT.internal);
  }
  if (err instanceof CredentialsRejectedError) return known(EXIT.credentialsRejected);
  if (err instanceof RetryableError) return known(EXIT.unreachable);
  if (err instanceof ApiError) return known(EXIT.internal);
  const message = err instanceof Error ? err.message : String(err);
  return { exitCode: EXIT.internal, message: `unexpected error: ${message}`, unexpected: true };
}

export { redactCredentials } from './redaction';

// Errors of the agent's local operations, typed by what the user must do. The CLI maps them to the
// contract's exit codes (src/cli/exitCodes.ts). Messages never contain a credential or a link.

/** Bad input or usage (flag, link, server URL, token): nothing was sent. Exit 2. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** Already enrolled and `--force` was not given. Exit 2 (a usage matter: nothing was sent). */
export class AlreadyEnrolledError extends InvalidInputError {
  override name = 'AlreadyEnrolledError';
}

/**
 * A non-root user acts on the system service's state without --state-dir: the platform has no prompt
 * we can raise, so the user must re-run elevated. Exit 2.
 */
export class ElevationRequiredError extends InvalidInputError {
  override name = 'ElevationRequiredError';
}

/**
 * The state directory, or something in it, could be changed by another user (owned by them, writable
 * by group or others, or a symbolic link): nothing in it can be trusted, and nothing is changed. Exit 2.
 */
export class UntrustedStateError extends InvalidInputError {
  override name = 'UntrustedStateError';
}

/** The command needs an enrollment and there is none. Exit 5. */
export class NotEnrolledError extends Error {
  override name = 'NotEnrolledError';
  constructor(message = 'this device is not enrolled') {
    super(message);
  }
}

/**
 * The key store that holds (or must hold) the API key cannot be used right now: secret store locked,
 * unreachable or refusing, key file unreadable. Never means "no key" nor "revoked". Exit 1.
 */
export class KeyStoreUnavailableError extends Error {
  override name = 'KeyStoreUnavailableError';
  constructor(
    readonly backend: 'keyring' | 'file',
    /** Why, in the store's own words (first line only). */
    readonly reason: string,
  ) {
    super(backend === 'keyring' ? `the OS secret store is unavailable: ${reason}` : `the key file cannot be used: ${reason}`);
  }
}

/**
 * The key store answers, but without this enrollment's key (removed outside device-agent, or
 * malformed). Unlike a locked store, waiting will not bring it back: unenroll and enroll again.
 */
export class KeyMissingError extends KeyStoreUnavailableError {
  override name = 'KeyMissingError';
}

/** The state directory holds a record this version cannot read (corrupt or from a newer version). Exit 1. */
export class StateCorruptError extends Error {
  override name = 'StateCorruptError';
}

/** An exclusive lock is held by another live process (only when the caller asked not to wait). */
export class LockHeldError extends Error {
  override name = 'LockHeldError';
  constructor(
    readonly file: string,
    readonly holderPid: number,
  ) {
    super(`another device-agent process (pid ${holderPid}) holds ${file}`);
  }
}

/** First line of an error's message: native libraries append backtraces and causes. */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n', 1)[0]!.trim();
}

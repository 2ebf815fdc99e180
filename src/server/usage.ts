/** Invalid input to a command (bad flag value, unknown device): exit 2 with this message, no stack. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A device, organization or credential that does not exist, or not within the caller's reach (API: 404). */
export class NotFoundError extends UsageError {
  override name = 'NotFoundError';
}

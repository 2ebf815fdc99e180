/** Invalid input to a command (bad flag value, unknown device): exit 2 with this message, no stack. */
export class UsageError extends Error {
  override name = 'UsageError';
}

// Enrollment secret format, as far as the agent checks it before any request: the server alone
// decides whether a secret is usable (any unusable one is a 401), so the agent only refuses what
// cannot be one: empty, too long, or with characters no secret has (blanks, control characters,
// non-ASCII: usually a wrong file or a pasted line with its quotes). Messages never repeat it.
import { InvalidInputError } from './errors';

const MAX_SECRET_LENGTH = 512;
const SECRET_SHAPE = /^[\x21-\x7e]+$/;

/** Returns the secret or throws InvalidInputError; the message never contains the secret. */
export function parseEnrollSecret(input: string, source: string): string {
  if (input.length > 0 && input.length <= MAX_SECRET_LENGTH && SECRET_SHAPE.test(input)) return input;
  const detail =
    input.length === 0
      ? 'it is empty'
      : input.length > MAX_SECRET_LENGTH
        ? `it has ${input.length} characters, more than ${MAX_SECRET_LENGTH}`
        : 'it contains blanks, control or non-ASCII characters';
  throw new InvalidInputError(`invalid enrollment secret from ${source}: ${detail}`);
}

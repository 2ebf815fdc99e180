// Enrollment token format: 96 hexadecimal characters (contract). Checked before any request.
import { Credential } from '../protocol/schemas';
import { InvalidInputError } from './errors';

/** Returns the token or throws InvalidInputError; the message never contains the token. */
export function parseEnrollmentToken(input: string, source: string): string {
  if (Credential.safeParse(input).success) return input;
  const detail =
    input.length === 0 ? 'it is empty' : `it has ${input.length} characters${/^[0-9a-fA-F]*$/.test(input) ? '' : ', not all hexadecimal'}`;
  throw new InvalidInputError(`invalid enrollment token from ${source}: it must be exactly 96 hexadecimal characters (${detail})`);
}

// Enrollment tokens and device API keys: 96 hex characters from a CSPRNG. Only their SHA-256
// hashes are stored; the plaintext exists in the /enroll response and the `device create` output.
// Enrollment secrets likewise: hashed with hashCredential, shown once by `secret create`.
import { hash, randomBytes } from 'node:crypto';
import { CREDENTIAL_PATTERN, ENROLL_SECRET_PATTERN } from '../protocol/constants';

const CREDENTIAL_BYTES = 48;

export function newCredential(): string {
  return randomBytes(CREDENTIAL_BYTES).toString('hex');
}

export function isCredential(value: string): boolean {
  return CREDENTIAL_PATTERN.test(value);
}

/** Hex is case-insensitive: hash the lower-case form so that `ABC…` and `abc…` are one credential. */
export function hashCredential(credential: string): string {
  // crypto.hash: one call, no Hash object (a third of createHash's cost on every authenticated request).
  return hash('sha256', credential.toLowerCase(), 'hex');
}

const ENROLL_SECRET_BYTES = 32;
const ENROLL_SECRET_PREFIX = 'das_';

/** A new enrollment secret: "das_" and 64 hex characters (contract; src/protocol/constants.ts). */
export function newEnrollSecret(): string {
  return `${ENROLL_SECRET_PREFIX}${randomBytes(ENROLL_SECRET_BYTES).toString('hex')}`;
}

export function isEnrollSecret(value: string): boolean {
  return ENROLL_SECRET_PATTERN.test(value);
}

// Typed, prefixed, unguessable identifiers. The prefix names the entity type, so a device id can
// never pass as a posture-report id (spec §4, correlation_id of "another entity type").
import { randomBytes } from 'node:crypto';

const ID_PREFIXES = {
  organization: 'org',
  device: 'dev',
  postureReport: 'rpt',
  adminToken: 'adt',
  adminAccount: 'adm',
  policyException: 'exc',
  enrollSecret: 'ens',
  webhook: 'whk',
  webhookEvent: 'evt',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type Id<K extends IdKind> = string & { readonly __idKind: K };
export type OrganizationId = Id<'organization'>;
export type DeviceId = Id<'device'>;
export type PostureReportId = Id<'postureReport'>;
export type AdminTokenId = Id<'adminToken'>;
export type AdminAccountId = Id<'adminAccount'>;
export type EnrollSecretId = Id<'enrollSecret'>;
export type WebhookId = Id<'webhook'>;

/** 128 random bits, hex. */
const RANDOM_BYTES = 16;
const BODY_PATTERN = `[0-9a-f]{${RANDOM_BYTES * 2}}`;
const PATTERNS = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_${BODY_PATTERN}$`)]),
) as Record<IdKind, RegExp>;

export function newId<K extends IdKind>(kind: K): Id<K> {
  return `${ID_PREFIXES[kind]}_${randomBytes(RANDOM_BYTES).toString('hex')}` as Id<K>;
}

/** The value as an id of `kind`, or undefined when it is not one (wrong prefix or shape). */
export function parseId<K extends IdKind>(kind: K, value: string): Id<K> | undefined {
  return PATTERNS[kind].test(value) ? (value as Id<K>) : undefined;
}

/** The form of an id of `kind`, as a regular expression's source (for OpenAPI's `pattern`). */
export function idPattern(kind: IdKind): string {
  return PATTERNS[kind].source;
}

/** The form of an id of `kind`, in words, for a message that must not echo the value refused. */
export function idForm(kind: IdKind): string {
  return `"${ID_PREFIXES[kind]}_" and ${RANDOM_BYTES * 2} lowercase hexadecimal digits`;
}

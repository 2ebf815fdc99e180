// The admin operations on enrollment secrets (issue 28), one service layer behind the admin CLI
// (`secret create|list|revoke`), the admin API and the console. A secret is shown once, by
// create; afterwards only its id, labels, note, limits and use count are.
import { hashCredential, newEnrollSecret } from './credentials';
import type { EnrollSecretRecord, Labels, OrgScope, Store } from './db/store';
import { idForm, parseId } from './ids';
import { NotFoundError, UsageError } from './usage';

/** Labels a secret gives its devices: at most this many, keys and values of these forms. */
export const MAX_LABELS = 16;
const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/;
const MAX_LABEL_VALUE = 128;
const MAX_NOTE = 256;
/** A secret lives at most this long (10 years); none: until revoked. */
const MAX_LIFETIME_MS = 3_650 * 86_400_000;
export const MAX_USES = 1_000_000_000;

export interface NewSecretRequest {
  org: string;
  /** From now; undefined: no expiry. */
  expiresInMs?: number;
  maxUses?: number;
  labels?: Labels;
  note?: string;
}

/** What `secret create --json` prints (contract): the secret itself appears here and nowhere else. */
export interface CreatedSecret {
  secret_id: string;
  enroll_secret: string;
  expires_at: string | null;
  max_uses: number | null;
}

type SecretStatus = 'active' | 'revoked' | 'expired' | 'used_up';

export interface SecretView {
  secret_id: string;
  org: string;
  labels: Labels;
  note: string | null;
  expires_at: string | null;
  max_uses: number | null;
  /** Devices registered with it. */
  uses: number;
  status: SecretStatus;
  revoked_at: string | null;
  created_at: string;
}

// eslint-disable-next-line no-control-regex -- refusing control characters is what this is for
const CONTROL = /[\u0000-\u001f\u007f]/;

function printable(what: string, value: string, max: number): string {
  const text = value.trim();
  if (text === '' || text.length > max || CONTROL.test(text)) throw new UsageError(`${what} must be 1 to ${max} printable characters`);
  return text;
}

/** `k=v` (CLI, console form) as a label. */
export function parseLabel(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError('a label is key=value, e.g. team=finance');
  return [text.slice(0, at).trim(), text.slice(at + 1).trim()];
}

/** Labels as the console's forms take them: one `key=value` a line (blank lines ignored), each key once. */
export function labelsFromLines(text: string): Labels {
  const labels = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map(parseLabel);
  if (new Set(labels.map(([key]) => key)).size !== labels.length) throw new UsageError('each label key may be given once');
  return Object.fromEntries(labels);
}

/**
 * The one rule of a label, for those a device carries and those that target them: a key of the form
 * above, a value of 1 to 128 printable characters (returned trimmed); else a UsageError.
 */
function validLabel(key: string, value: unknown): [string, string] {
  if (!LABEL_KEY.test(key))
    throw new UsageError('a label key is 1 to 63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit');
  if (typeof value !== 'string') throw new UsageError('a label value is a string');
  return [key, printable(`the value of label ${key}`, value, MAX_LABEL_VALUE)];
}

/** The labels, checked (at most MAX_LABELS, each by validLabel), values trimmed; else a UsageError. */
export function validLabels(labels: Labels): Labels {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) throw new UsageError(`at most ${MAX_LABELS} labels`);
  return Object.fromEntries(entries.map(([key, value]) => validLabel(key, value)));
}

/**
 * A label as a target names it (`--label k=v`, `?label=`, a label exception): "key=value" under the
 * rule of the labels devices carry, so any label that can be set can be targeted; else a UsageError.
 */
export function labelTarget(text: string): [key: string, value: string] {
  return validLabel(...parseLabel(text));
}

export async function createSecret(store: Store, request: NewSecretRequest, now = new Date(), scope: OrgScope): Promise<CreatedSecret> {
  const org = printable('the organization', request.org, 128);
  if (scope.orgId !== null && (await store.findOrganization(org))?.id !== scope.orgId)
    throw new NotFoundError(`no organization ${JSON.stringify(org)} in this database within your reach`);
  const { expiresInMs, maxUses } = request;
  if (expiresInMs !== undefined && (!Number.isInteger(expiresInMs) || expiresInMs < 1_000 || expiresInMs > MAX_LIFETIME_MS))
    throw new UsageError('the expiry must be from 1 second to 3650 days');
  if (maxUses !== undefined && (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > MAX_USES))
    throw new UsageError(`the cap on uses must be a whole number from 1 to ${MAX_USES}`);
  const labels = validLabels(request.labels ?? {});
  const note = request.note === undefined ? null : printable('the note', request.note, MAX_NOTE);
  const secret = newEnrollSecret();
  const expiresAt = expiresInMs === undefined ? null : new Date(now.getTime() + expiresInMs).toISOString();
  const id = await store.createEnrollSecret({
    orgName: org,
    secretHash: hashCredential(secret),
    labels,
    note,
    expiresAt,
    maxUses: maxUses ?? null,
    now: now.toISOString(),
  });
  return { secret_id: id, enroll_secret: secret, expires_at: expiresAt, max_uses: maxUses ?? null };
}

export async function listSecrets(store: Store, scope: OrgScope, org: string | undefined, now = new Date()): Promise<SecretView[]> {
  return (await store.listEnrollSecrets(scope, org)).map((secret) => secretView(secret, now));
}

export type SecretRevocation = 'revoked' | 'already_revoked';

export async function revokeSecret(store: Store, secretId: string, now = new Date(), scope: OrgScope): Promise<SecretRevocation> {
  // A value that is no secret id names none, answered before any query (as admin.ts's device ids).
  if (parseId('enrollSecret', secretId) === undefined)
    throw new NotFoundError(`no such enrollment secret: a secret id is ${idForm('enrollSecret')}`);
  const secret = await store.findEnrollSecret(secretId);
  if (!secret || (scope.orgId !== null && secret.orgId !== scope.orgId))
    throw new NotFoundError(`no enrollment secret ${JSON.stringify(secretId)} in this database`);
  return (await store.revokeEnrollSecret(secret.id, now.toISOString())) ? 'revoked' : 'already_revoked';
}

function secretView(secret: EnrollSecretRecord, now: Date): SecretView {
  return {
    secret_id: secret.id,
    org: secret.orgName,
    labels: secret.labels,
    note: secret.note,
    expires_at: secret.expiresAt,
    max_uses: secret.maxUses,
    uses: secret.uses,
    status: statusOf(secret, now),
    revoked_at: secret.revokedAt,
    created_at: secret.createdAt,
  };
}

function statusOf(secret: EnrollSecretRecord, now: Date): SecretStatus {
  if (secret.revokedAt !== null) return 'revoked';
  if (secret.expiresAt !== null && Date.parse(secret.expiresAt) <= now.getTime()) return 'expired';
  if (secret.maxUses !== null && secret.uses >= secret.maxUses) return 'used_up';
  return 'active';
}

// Who may use the admin API and the console: admin API tokens (Bearer; only their SHA-256 hash is
// stored, like device keys), console accounts (scrypt password hashes) and their server-side
// sessions. Each credential reaches one organization or all of them (its OrgScope).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { hashCredential, newCredential } from './credentials';
import { idForm, parseId } from './ids';
import type { AdminAccountRecord, AdminTokenRecord, OrgScope, Store } from './db/store';
import { NotFoundError, UsageError } from './usage';

const ADMIN_TOKEN_PREFIX = 'dat_';
const ADMIN_TOKEN_PATTERN = /^dat_[0-9a-f]{96}$/;
const SESSION_PATTERN = /^[0-9a-f]{96}$/;
/** A console session lasts this long from sign-in. */
export const SESSION_LIFETIME_MS = 8 * 3_600_000;
const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_EMAIL_LENGTH = 254;

/** scrypt cost: N = 2^15, r = 8 (32 MiB, tens of ms per attempt); stored beside each hash. */
const SCRYPT = { N: 32_768, r: 8, p: 1, keyLength: 32, saltLength: 16, maxmem: 64 * 1024 * 1024 };

/** An authenticated admin: what it may reach and how the logs name it (never a secret). */
export interface AdminPrincipal {
  scope: OrgScope;
  /** The organization's name when scoped to one. */
  orgName: string | null;
  /** `token:<id>` or `account:<email>`. */
  actor: string;
  /** A console account's email; null for an admin API token. */
  account: string | null;
}

/** `--org <name>` or `--all-orgs`: the scope a new credential gets. */
async function scopeFor(store: Store, target: { org?: string; allOrgs?: boolean }, now: Date): Promise<OrgScope> {
  if ((target.org === undefined) === (target.allOrgs !== true)) throw new UsageError('give exactly one of --org <name> and --all-orgs');
  if (target.org === undefined) return { orgId: null };
  const name = target.org.trim();
  if (name === '' || name.length > 128) throw new UsageError('--org must be 1 to 128 characters');
  return { orgId: (await store.ensureOrganization(name, now.toISOString())).id };
}

export interface CreatedAdminToken {
  token_id: string;
  /** Shown once; only its hash is stored. */
  admin_token: string;
  org: string | null;
  label: string;
}

export async function createAdminToken(
  store: Store,
  input: { org?: string; allOrgs?: boolean; label: string },
  now = new Date(),
): Promise<CreatedAdminToken> {
  const label = input.label.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  if (label === '' || label.length > 128 || /[\u0000-\u001f\u007f]/.test(label))
    throw new UsageError('--label must be 1 to 128 printable characters');
  const scope = await scopeFor(store, input, now);
  const token = `${ADMIN_TOKEN_PREFIX}${newCredential()}`;
  const id = await store.createAdminToken({ tokenHash: hashCredential(token), orgId: scope.orgId, label, now: now.toISOString() });
  return { token_id: id, admin_token: token, org: input.org?.trim() ?? null, label };
}

export interface AdminTokenView {
  token_id: string;
  org: string | null;
  label: string;
  created_at: string;
  revoked_at: string | null;
}

export async function listAdminTokens(store: Store): Promise<AdminTokenView[]> {
  return (await store.listAdminTokens()).map((t) => ({
    token_id: t.id,
    org: t.orgName,
    label: t.label,
    created_at: t.createdAt,
    revoked_at: t.revokedAt,
  }));
}

export async function revokeAdminToken(store: Store, id: string, now = new Date()): Promise<void> {
  // A value that is no token id names no token, on every engine, and is not echoed (control characters).
  if (parseId('adminToken', id) === undefined) throw new NotFoundError(`no such admin token: a token id is ${idForm('adminToken')}`);
  if (!(await store.revokeAdminToken(id, now.toISOString()))) throw new NotFoundError(`no unrevoked admin token ${JSON.stringify(id)}`);
}

/** The principal of an admin token, or undefined when it is malformed, unknown or revoked. */
export async function authenticateAdminToken(store: Store, token: string): Promise<AdminPrincipal | undefined> {
  if (!ADMIN_TOKEN_PATTERN.test(token.toLowerCase())) return undefined;
  const record: AdminTokenRecord | undefined = await store.authenticateAdminToken(hashCredential(token));
  return record && { scope: { orgId: record.orgId }, orgName: record.orgName, actor: `token:${record.id}`, account: null };
}

/**
 * Whether a normalised email can be an account's: at most 254 characters, one "@" between two
 * non-empty parts, no white space and no control character (C0, DEL, C1; NUL among them, which
 * PostgreSQL refuses and SQLite stores). The same rule admits accounts and lets sign-ins reach the
 * database, so an email no account can have is refused alike on every engine, before any query.
 */
function isAccountEmail(email: string): boolean {
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  return email.length <= MAX_EMAIL_LENGTH && /^[^\s@\u0000-\u001f\u007f-\u009f]+@[^\s@\u0000-\u001f\u007f-\u009f]+$/.test(email);
}

function validEmail(value: string): string {
  const email = signInEmail(value);
  if (!isAccountEmail(email)) throw new UsageError('--email must be an email address');
  return email;
}

function validPassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new UsageError(`the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
  return password;
}

function scryptKey(password: string, salt: Buffer, cost: { N: number; r: number; p: number }, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { ...cost, maxmem: SCRYPT.maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$<salt b64>$<key b64>`. */
async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const key = await scryptKey(password, salt, SCRYPT, SCRYPT.keyLength);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$');
  if (kind !== 'scrypt' || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptKey(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length);
  return timingSafeEqual(actual, expected);
}

/** Compared against when the email is unknown, so that a wrong email costs as long as a wrong password. */
let decoyHash: Promise<string> | undefined;

export async function addAdminAccount(
  store: Store,
  input: { email: string; password: string; org?: string; allOrgs?: boolean },
  now = new Date(),
): Promise<{ email: string; org: string | null }> {
  const email = validEmail(input.email);
  const passwordHash = await hashPassword(validPassword(input.password));
  const scope = await scopeFor(store, input, now);
  const id = await store.createAdminAccount({ email, passwordHash, orgId: scope.orgId, now: now.toISOString() });
  if (id === undefined) throw new UsageError(`an admin account ${email} exists already (change its password with \`admin passwd\`)`);
  return { email, org: input.org?.trim() ?? null };
}

export async function setAdminPassword(store: Store, emailText: string, password: string): Promise<void> {
  const email = validEmail(emailText);
  if (!(await store.setAdminPassword(email, await hashPassword(validPassword(password)))))
    throw new NotFoundError(`no admin account ${email}`);
}

export async function removeAdminAccount(store: Store, emailText: string): Promise<void> {
  const email = validEmail(emailText);
  if (!(await store.deleteAdminAccount(email))) throw new NotFoundError(`no admin account ${email}`);
}

export async function listAdminAccounts(store: Store): Promise<{ email: string; org: string | null; created_at: string }[]> {
  return (await store.listAdminAccounts()).map((a) => ({ email: a.email, org: a.orgName, created_at: a.createdAt }));
}

export interface SignedIn {
  ok: true;
  /** The cookie's value; the store keeps only its hash. */
  sessionSecret: string;
  expiresAt: Date;
  principal: AdminPrincipal;
}

export interface SignInRefused {
  ok: false;
  /** The account's email when it exists (for the log; the user is never told which part was wrong). */
  account: string | undefined;
}

/** How a sign-in email is compared: the key of the account and of its sign-in attempts. */
export function signInEmail(emailText: string): string {
  return emailText.trim().toLowerCase();
}

/** A new session for the right email and password; refused otherwise. */
export async function signIn(store: Store, emailText: string, password: string, now = new Date()): Promise<SignedIn | SignInRefused> {
  const email = signInEmail(emailText);
  // An email no account can have is looked up nowhere, and refused like an unknown one (same answer, same time).
  const account = isAccountEmail(email) ? await store.findAdminAccount(email) : undefined;
  if (password.length > MAX_PASSWORD_LENGTH) return { ok: false, account: account?.email };
  const matches = await passwordMatches(password, account?.passwordHash ?? (await (decoyHash ??= hashPassword(newCredential()))));
  if (!account || !matches) return { ok: false, account: account?.email };
  await store.deleteExpiredSessions(now.toISOString());
  const sessionSecret = newCredential();
  const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
  await store.createSession({
    sessionHash: hashCredential(sessionSecret),
    accountId: account.id,
    expiresAt: expiresAt.toISOString(),
    now: now.toISOString(),
  });
  return { ok: true, sessionSecret, expiresAt, principal: accountPrincipal(account) };
}

export async function sessionPrincipal(store: Store, sessionSecret: string, now = new Date()): Promise<AdminPrincipal | undefined> {
  if (!SESSION_PATTERN.test(sessionSecret)) return undefined;
  const account = await store.sessionAccount(hashCredential(sessionSecret), now.toISOString());
  return account && accountPrincipal(account);
}

export async function signOut(store: Store, sessionSecret: string): Promise<void> {
  if (SESSION_PATTERN.test(sessionSecret)) await store.deleteSession(hashCredential(sessionSecret));
}

function accountPrincipal(account: AdminAccountRecord): AdminPrincipal {
  return { scope: { orgId: account.orgId }, orgName: account.orgName, actor: `account:${account.email}`, account: account.email };
}

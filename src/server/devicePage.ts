// "My device": a read-only page of one device for the person who uses it, reached without an admin
// account. The agent asks for it with its API key (POST /api/agent/v1/device-page) and gets a URL
// carrying a one-time code; the browser's first visit exchanges the code for a page session bound
// to that device (a cookie) and is sent on to the URL without the code. A code is used once and
// lasts minutes, so a URL copied from a history or a proxy log later is worthless. Only the
// SHA-256 hashes of codes and sessions are stored; a revoked device's page is gone with its key.
import { randomBytes } from 'node:crypto';
import { getDevice, organizationInScope, type DeviceView } from './admin';
import type { CheckRequestOutcome, CheckRequests } from './checkRequests';
import { hashCredential } from './credentials';
import type { DeviceRef, OrgScope, Store } from './db/store';
import { exceptionsByCheck } from './exceptions';
import { UsageError } from './usage';

export const DEVICE_PAGE_PATH = '/my-device';
/** The page's "Check again" form posts here (./checkRequests.ts). */
export const CHECK_AGAIN_PATH = `${DEVICE_PAGE_PATH}/check`;
/** The page session's cookie (path DEVICE_PAGE_PATH only). */
export const DEVICE_PAGE_COOKIE = 'device_agent_page';
const CODE_LIFETIME_MS = 5 * 60_000;
export const PAGE_SESSION_LIFETIME_MS = 30 * 60_000;
/** The organization contact's limits: one line an admin types (an address, a URL, a phone number). */
const MAX_CONTACT_LENGTH = 256;

/** 32 random bytes, base64url: what codes and sessions look like. */
const SECRET_FORM = /^[A-Za-z0-9_-]{43}$/;
const newSecret = () => randomBytes(32).toString('base64url');

export interface DevicePageLink {
  url: string;
  expires_at: string;
}

/** A URL with a new one-time code for the device's page, under `origin` (the one the agent reached). */
export async function issueDevicePageLink(store: Store, device: DeviceRef, origin: string, now: Date): Promise<DevicePageLink> {
  const code = newSecret();
  const expiresAt = new Date(now.getTime() + CODE_LIFETIME_MS).toISOString();
  await store.createDevicePageGrant({ grantHash: hashCredential(code), kind: 'code', device, expiresAt, now: now.toISOString() });
  return { url: `${origin}${DEVICE_PAGE_PATH}?code=${code}`, expires_at: expiresAt };
}

/**
 * Exchanges a code for a new page session's secret: undefined for a malformed, unknown, used or
 * expired code, or one whose device has been revoked since. The code is spent either way.
 */
export async function redeemDevicePageCode(store: Store, code: string, now: Date): Promise<string | undefined> {
  if (!SECRET_FORM.test(code)) return undefined;
  const grant = await store.takeDevicePageCode(hashCredential(code));
  if (!grant || grant.expiresAt <= now.toISOString()) return undefined;
  if ((await store.findDevice(grant.id))?.state === 'REVOKED') return undefined;
  const session = newSecret();
  await store.createDevicePageGrant({
    grantHash: hashCredential(session),
    kind: 'session',
    device: { id: grant.id, orgId: grant.orgId },
    expiresAt: new Date(now.getTime() + PAGE_SESSION_LIFETIME_MS).toISOString(),
    now: now.toISOString(),
  });
  return session;
}

export interface DevicePageView {
  device: DeviceView;
  /** How to reach the organization's admin; null when none is set. */
  contact: string | null;
  /** Per check key, the admin's exception that covers it: why, and until when. */
  exceptions: Map<string, { reason: string; expires_at: string }>;
  /** The user's "check again" request not lapsed yet (./checkRequests.ts), or null. */
  check_requested_at: string | null;
}

/** The device of a valid page session; undefined when the session is not valid or its device was revoked. */
async function sessionDevice(store: Store, session: string | undefined, now: Date): Promise<DeviceRef | undefined> {
  if (session === undefined || !SECRET_FORM.test(session)) return undefined;
  const ref = await store.devicePageSession(hashCredential(session), now.toISOString());
  if (!ref || (await store.findDevice(ref.id))?.state === 'REVOKED') return undefined;
  return ref;
}

/** The page a session shows: its device (never another) and its organization's contact; undefined when the session is not valid. */
export async function devicePageView(
  store: Store,
  checks: CheckRequests,
  session: string | undefined,
  now: Date,
): Promise<DevicePageView | undefined> {
  const ref = await sessionDevice(store, session, now);
  if (!ref) return undefined;
  const device = await getDevice(store, { orgId: ref.orgId }, ref.id);
  const exceptions = new Map(
    [...(await exceptionsByCheck(store, ref, now))].map(([key, e]) => [key, { reason: e.reason, expires_at: e.expiresAt }]),
  );
  return {
    device,
    contact: (await store.organizationContact(ref.orgId)) ?? null,
    exceptions,
    check_requested_at: (await checks.current(ref.id, now)) ?? null,
  };
}

/** "Check again" from the page: records a request for the session's device; undefined when the session is not valid. */
export async function requestCheckFromPage(
  store: Store,
  checks: CheckRequests,
  session: string | undefined,
  now: Date,
): Promise<CheckRequestOutcome | undefined> {
  const ref = await sessionDevice(store, session, now);
  return ref && checks.request(ref.id, now);
}

/**
 * Sets the contact shown on the device pages of the organization's devices (null removes it), for
 * an admin whose scope reaches the organization. Returns the contact as stored.
 */
export async function setOrganizationContact(
  store: Store,
  scope: OrgScope,
  org: string,
  contact: string | null,
  now: Date,
): Promise<{ org: string; contact: string | null }> {
  const organization = await organizationInScope(store, scope, org);
  const text = contact === null ? null : contact.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  if (text !== null && (text === '' || text.length > MAX_CONTACT_LENGTH || /[\u0000-\u001f\u007f]/.test(text)))
    throw new UsageError(`the contact must be 1 to ${MAX_CONTACT_LENGTH} printable characters on one line`);
  await store.setOrganizationContact(organization.id, text, now.toISOString());
  return { org: organization.name, contact: text };
}

/** The organization's contact, for an admin whose scope reaches it. */
export async function organizationContact(store: Store, scope: OrgScope, org: string): Promise<{ org: string; contact: string | null }> {
  const organization = await organizationInScope(store, scope, org);
  return { org: organization.name, contact: (await store.organizationContact(organization.id)) ?? null };
}

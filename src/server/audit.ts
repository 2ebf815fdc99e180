// The audit log: every admin action (console sign-ins and sign-outs, devices, enrollment secrets,
// policy, exceptions, lifecycle imports, admin tokens and accounts, webhooks), with who did it,
// when, what (the action and the ids it acted on) and from where (the client address, the
// forwarded one behind a trusted proxy; none from the local CLI). An entry is written after the
// action committed; it holds ids and outcomes, never a secret (no token, secret, link or password
// is ever passed here). Listed newest first by the admin API, the console and `audit`; entries
// older than --retention are deleted by the retention sweep (retention.ts).
import { organizationInScope } from './admin';
import type { AdminPrincipal } from './adminAccess';
import { csvDocument, type CsvValue } from './csv';
import type { AuditEntryRecord, OrgScope, Store } from './db/store';
import type { OrganizationId } from './ids';
import { UsageError } from './usage';

export const AUDIT_ACTIONS = [
  'sign_in',
  'sign_in_refused',
  'sign_out',
  'device.create',
  'device.revoke',
  'device.labels',
  'enroll_secret.create',
  'enroll_secret.revoke',
  'policy.set',
  'exception.grant',
  'exception.revoke',
  'lifecycle.import',
  'admin_token.create',
  'admin_token.revoke',
  'admin_account.add',
  'admin_account.passwd',
  'admin_account.remove',
  'org.contact',
  'webhook.create',
  'webhook.delete',
] as const;

type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acts, and from where: an admin's `actor` (adminAccess.ts) and the request's address, or the CLI's (no address). */
export interface AuditWho {
  actor: string;
  address: string | null;
}

/** What was done. The organization is named, given by id, or found from a device or secret target. */
export interface AuditEvent {
  action: AuditAction;
  org?: string | null;
  orgId?: OrganizationId | null;
  target?: { type: 'device' | 'enroll_secret' | 'exception' | 'webhook' | 'admin_token' | 'admin_account' | 'policy'; id: string };
  /** Ids, counts and outcomes only. */
  detail?: Record<string, string | number | boolean | null>;
}

export async function recordAudit(store: Store, who: AuditWho, event: AuditEvent, now = new Date()): Promise<void> {
  await store.appendAudit({
    at: now.toISOString(),
    actor: who.actor,
    address: who.address,
    action: event.action,
    orgId: await orgOf(store, event),
    targetType: event.target?.type ?? null,
    targetId: event.target?.id ?? null,
    detail: event.detail === undefined ? null : JSON.stringify(event.detail),
  });
}

async function orgOf(store: Store, event: AuditEvent): Promise<OrganizationId | null> {
  if (event.orgId !== undefined) return event.orgId;
  if (typeof event.org === 'string') return (await store.findOrganization(event.org.trim()))?.id ?? null;
  if (event.target?.type === 'device') return (await store.findDevice(event.target.id))?.orgId ?? null;
  if (event.target?.type === 'enroll_secret') return (await store.findEnrollSecret(event.target.id))?.orgId ?? null;
  return null;
}

export interface AuditView {
  id: number;
  at: string;
  actor: string;
  /** The client address; null from the CLI. */
  address: string | null;
  action: string;
  org: string | null;
  target_type: string | null;
  target_id: string | null;
  detail: Record<string, unknown> | null;
}

export interface AuditPage {
  entries: AuditView[];
  /** Pass as `before` for older entries; null when there are none. */
  next_before: number | null;
}

export const MAX_AUDIT_PAGE = 500;
const DEFAULT_AUDIT_PAGE = 100;

export interface AuditRequest {
  org?: string;
  action?: string;
  before?: number;
  limit?: number;
}

function view(entry: AuditEntryRecord): AuditView {
  return {
    id: entry.id,
    at: entry.at,
    actor: entry.actor,
    address: entry.address,
    action: entry.action,
    org: entry.orgName,
    target_type: entry.targetType,
    target_id: entry.targetId,
    detail: entry.detail === null ? null : (JSON.parse(entry.detail) as Record<string, unknown>),
  };
}

/** One page of the entries within the scope (an organization's admin sees its organization's), newest first. */
export async function listAudit(store: Store, scope: OrgScope, request: AuditRequest): Promise<AuditPage> {
  const limit = request.limit ?? DEFAULT_AUDIT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE)
    throw new UsageError(`limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`);
  if (request.before !== undefined && (!Number.isSafeInteger(request.before) || request.before < 1))
    throw new UsageError('before must be a positive whole number');
  if (request.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(request.action))
    throw new UsageError(`action must be one of ${AUDIT_ACTIONS.join(', ')}`);
  const orgId = request.org === undefined ? scope.orgId : (await organizationInScope(store, scope, request.org)).id;
  const rows = await store.auditPage({ orgId, action: request.action, beforeId: request.before, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return { entries: page.map(view), next_before: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}

/** Every entry within the scope matching the filters, newest first. */
async function listAllAudit(store: Store, scope: OrgScope, request: Omit<AuditRequest, 'before' | 'limit'>): Promise<AuditView[]> {
  const entries: AuditView[] = [];
  let before: number | undefined;
  do {
    const page = await listAudit(store, scope, { ...request, before, limit: MAX_AUDIT_PAGE });
    entries.push(...page.entries);
    before = page.next_before ?? undefined;
  } while (before !== undefined);
  return entries;
}

const AUDIT_COLUMNS = ['id', 'at', 'actor', 'address', 'action', 'org', 'target_type', 'target_id', 'detail'] as const;

/** `GET /audit?format=csv`: every matching entry, for an auditor. */
export async function auditCsv(
  store: Store,
  admin: AdminPrincipal,
  request: Omit<AuditRequest, 'before' | 'limit'>,
  now: Date,
): Promise<{ subject: string; text: string }> {
  const entries = await listAllAudit(store, admin.scope, request);
  return {
    subject: 'audit',
    text: csvDocument({
      about: [
        ['organization', request.org ?? admin.orgName ?? 'all organizations'],
        ['filters', request.action === undefined ? 'none' : `action=${request.action}`],
        ['exported at', now.toISOString()],
        ['entries', String(entries.length)],
      ],
      columns: AUDIT_COLUMNS,
      rows: entries.map((entry) =>
        AUDIT_COLUMNS.map((column): CsvValue => (column === 'detail' ? entry.detail && JSON.stringify(entry.detail) : entry[column])),
      ),
    }),
  };
}

// Outgoing webhooks per organization (docs/server.md, "Webhooks"): the admin operations (CLI
// `webhook`, admin API /webhooks, console) and what is sent. An event is queued by the alert
// sweep (alerts.ts) into the outbox, one delivery per webhook, with its body built then; each
// attempt signs the body with the webhook's secret: X-Device-Agent-Signature is
// `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>`, the timestamp (Unix seconds) sent in
// X-Device-Agent-Timestamp, so a receiver refuses a replayed old request. The secret is shown once,
// at creation; the server keeps the key itself, because signing needs it (unlike the hashed
// credentials): anyone who reads the database can sign.
import { createHmac, randomBytes } from 'node:crypto';
import { organizationInScope } from './admin';
import type { DeliveryRecord, DeviceRecord, OrgScope, Store, WebhookFormat, WebhookRecord } from './db/store';
import { idForm, newId, parseId } from './ids';
import { NotFoundError, UsageError } from './usage';

export const WEBHOOK_EVENTS = ['check.failing', 'check.recovered', 'device.stale', 'device.reenrolled'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ['json', 'slack'];

export const SIGNATURE_HEADER = 'x-device-agent-signature';
export const TIMESTAMP_HEADER = 'x-device-agent-timestamp';
export const EVENT_HEADER = 'x-device-agent-event';
export const DELIVERY_HEADER = 'x-device-agent-delivery';

const MAX_URL_LENGTH = 2048;
const MAX_WEBHOOKS_PER_ORG = 20;

export interface NewWebhookRequest {
  org: string;
  url: string;
  format?: string;
  events?: readonly string[];
  includeEvidence?: boolean;
}

/** What creation answers: the secret appears here only. */
export interface CreatedWebhook extends WebhookView {
  secret: string;
}

export interface WebhookView {
  webhook_id: string;
  org: string;
  /** The URL's origin, its path elided (a Slack URL's path is itself a secret). */
  url: string;
  format: WebhookFormat;
  events: string[];
  include_evidence: boolean;
  created_by: string;
  created_at: string;
}

export interface DeliveryView {
  delivery_id: number;
  webhook_id: string;
  event_id: string;
  event_type: string;
  device_id: string | null;
  state: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** The URL as shown: origin, and "/…" when it has a path or query. */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname === '/' && parsed.search === '' ? parsed.origin : `${parsed.origin}/…`;
}

function webhookView(record: WebhookRecord): WebhookView {
  return {
    webhook_id: record.id,
    org: record.orgName,
    url: shownUrl(record.url),
    format: record.format,
    events: record.events,
    include_evidence: record.includeEvidence,
    created_by: record.createdBy,
    created_at: record.createdAt,
  };
}

function validUrl(text: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new UsageError('url must be an absolute http(s) URL');
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || text.length > MAX_URL_LENGTH)
    throw new UsageError(`url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`);
  if (parsed.username !== '' || parsed.password !== '') throw new UsageError('url must not carry credentials');
  return parsed.href;
}

export async function createWebhook(
  store: Store,
  scope: OrgScope,
  request: NewWebhookRequest & { actor: string },
  now = new Date(),
): Promise<CreatedWebhook> {
  const org = await organizationInScope(store, scope, request.org);
  const url = validUrl(request.url);
  const format = request.format ?? 'json';
  if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw new UsageError(`format must be ${WEBHOOK_FORMATS.join(' or ')}`);
  const events = request.events === undefined || request.events.length === 0 ? [...WEBHOOK_EVENTS] : [...new Set(request.events)];
  const unknown = events.find((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown !== undefined) throw new UsageError(`events must be among ${WEBHOOK_EVENTS.join(', ')}`);
  if ((await store.listWebhooks(org.id)).length >= MAX_WEBHOOKS_PER_ORG)
    throw new UsageError(`an organization has at most ${MAX_WEBHOOKS_PER_ORG} webhooks`);
  const record: WebhookRecord = {
    id: newId('webhook'),
    orgId: org.id,
    orgName: org.name,
    url,
    format: format as WebhookFormat,
    events,
    includeEvidence: request.includeEvidence === true,
    secret: `whsec_${randomBytes(32).toString('hex')}`,
    createdBy: request.actor,
    createdAt: now.toISOString(),
  };
  await store.createWebhook(record);
  return { ...webhookView(record), secret: record.secret };
}

export async function listWebhooks(store: Store, scope: OrgScope, org: string | undefined): Promise<WebhookView[]> {
  const orgId = org === undefined ? scope.orgId : (await organizationInScope(store, scope, org)).id;
  return (await store.listWebhooks(orgId)).map(webhookView);
}

export async function deleteWebhook(store: Store, scope: OrgScope, id: string): Promise<{ org: string }> {
  if (parseId('webhook', id) === undefined) throw new NotFoundError(`no such webhook: a webhook id is ${idForm('webhook')}`);
  const found = (await store.listWebhooks(scope.orgId)).find((w) => w.id === id);
  if (!found || !(await store.deleteWebhook(scope.orgId, id))) throw new NotFoundError(`no webhook ${id} within your reach`);
  return { org: found.orgName };
}

const DELIVERY_LOG_SIZE = 100;

export async function deliveryLog(store: Store, scope: OrgScope, webhookId: string | undefined): Promise<DeliveryView[]> {
  if (webhookId !== undefined && parseId('webhook', webhookId) === undefined)
    throw new NotFoundError(`no such webhook: a webhook id is ${idForm('webhook')}`);
  return (await store.deliveryLog(scope.orgId, webhookId, DELIVERY_LOG_SIZE)).map(deliveryView);
}

function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    delivery_id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    device_id: d.deviceId,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt,
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: d.createdAt,
    finished_at: d.finishedAt,
  };
}

// ---- what is sent -------------------------------------------------------------------------------

/** One event as the alert sweep raised it. */
export interface AlertEvent {
  type: WebhookEvent;
  /** When it happened: a FAIL's grace ended, a device went stale, a record was created. */
  occurredAt: string;
  org: string;
  device: DeviceRecord;
  check?: { checkKey: string; status: string; since: string; graceSeconds: number; evidence?: Record<string, unknown> | null };
  supersedes?: string;
}

/** The body for a webhook of `format` (JSON text); evidence only for a webhook that asked for it. */
export function eventBody(eventId: string, event: AlertEvent, format: WebhookFormat, includeEvidence: boolean): string {
  if (format === 'slack') return JSON.stringify({ text: slackText(event) });
  const { device, check } = event;
  return JSON.stringify({
    id: eventId,
    type: event.type,
    occurred_at: event.occurredAt,
    org: event.org,
    device: {
      device_id: device.id,
      hostname: device.hostname,
      name: device.name,
      platform: device.platform,
      os_version: device.osVersion,
      agent_version: device.agentVersion,
      last_seen_at: device.lastSeenAt,
    },
    ...(check && {
      check: {
        check_key: check.checkKey,
        status: check.status,
        status_since: check.since,
        grace_seconds: check.graceSeconds,
        ...(includeEvidence && check.evidence !== undefined && { evidence: check.evidence }),
      },
    }),
    ...(event.supersedes !== undefined && { supersedes: event.supersedes }),
  });
}

function slackText(event: AlertEvent): string {
  const who = `${event.device.hostname ?? event.device.name ?? event.device.id} (${event.device.id}, ${event.org})`;
  switch (event.type) {
    case 'check.failing':
      return `${who} fails ${event.check?.checkKey} since ${event.check?.since}`;
    case 'check.recovered':
      return `${who} no longer fails ${event.check?.checkKey}: ${event.check?.status}`;
    case 'device.stale':
      return `${who} has not been heard from since ${event.device.lastSeenAt}`;
    case 'device.reenrolled':
      return `${who} enrolled again, replacing ${event.supersedes}`;
  }
}

export function newEventId(): string {
  return newId('webhookEvent');
}

/** `sha256=` and the hex HMAC-SHA256, keyed with the secret, of `<timestamp>.<body>`. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

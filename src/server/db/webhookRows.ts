// The webhook tables' columns and row mapping both engines share (migration 9 in SQLite, 8 in
// PostgreSQL), read back with the engine's own types (SQLite: ISO text and 0/1; PostgreSQL: Date,
// boolean, bigint as text).
import type { DeviceId, OrganizationId, WebhookId } from '../ids';
import type { DeliveryRecord, DeliveryState, DueDelivery, WebhookFormat, WebhookRecord } from './store';
import { isoTime } from './policyRows';

export const WEBHOOK_COLUMNS = `w.id, w.org_id, o.name AS org_name, w.url, w.format, w.events, w.include_evidence, w.secret, w.created_by, w.created_at
  FROM webhooks w JOIN organizations o ON o.id = w.org_id`;

export interface WebhookRow {
  id: string;
  org_id: string;
  org_name: string;
  url: string;
  format: WebhookFormat;
  events: string;
  include_evidence: number | boolean;
  secret: string;
  created_by: string;
  created_at: string | Date;
}

export function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id as WebhookId,
    orgId: row.org_id as OrganizationId,
    orgName: row.org_name,
    url: row.url,
    format: row.format,
    events: row.events.split(','),
    includeEvidence: row.include_evidence === true || row.include_evidence === 1,
    secret: row.secret,
    createdBy: row.created_by,
    createdAt: isoTime(row.created_at),
  };
}

export const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.org_id, d.event_id, d.event_type, d.device_id, d.body, d.state, d.attempts,
  d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.finished_at`;

export interface DeliveryRow {
  id: number | string;
  webhook_id: string;
  org_id: string;
  event_id: string;
  event_type: string;
  device_id: string | null;
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: string | Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string | Date;
  finished_at: string | Date | null;
  url?: string;
  secret?: string;
}

export function toDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: Number(row.id),
    webhookId: row.webhook_id as WebhookId,
    orgId: row.org_id as OrganizationId,
    eventId: row.event_id,
    eventType: row.event_type,
    deviceId: row.device_id as DeviceId | null,
    body: row.body,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at === null ? null : isoTime(row.next_attempt_at),
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: isoTime(row.created_at),
    finishedAt: row.finished_at === null ? null : isoTime(row.finished_at),
  };
}

export function toDueDelivery(row: DeliveryRow): DueDelivery {
  return { ...toDelivery(row), url: row.url ?? '', secret: row.secret ?? '' };
}

// The policy tables' queries and row mapping both engines share (migration 5 in SQLite, 4 in
// PostgreSQL), read back with the engine's own type of timestamp (SQLite: ISO text; PostgreSQL: Date).
import type { DeviceId, OrganizationId } from '../ids';
import type { PolicyChangeRecord, PolicyExceptionRecord } from './store';

/** The settings row that moves with every policy, exception or lifecycle change (Store.policyGeneration). */
export const POLICY_GENERATION = 'policy_generation';

export const POLICY_CHANGE_COLUMNS = 'version, label, document, previous, changed_by, changed_at FROM policy_changes';

export interface PolicyChangeRow {
  version: number;
  label: string;
  document: string | null;
  previous: string | null;
  changed_by: string;
  changed_at: string | Date;
}

export function toPolicyChange(row: PolicyChangeRow): PolicyChangeRecord {
  return {
    version: Number(row.version),
    label: row.label === '' ? null : row.label,
    document: row.document,
    previous: row.previous,
    changedBy: row.changed_by,
    changedAt: isoTime(row.changed_at),
  };
}

export const POLICY_EXCEPTION_COLUMNS =
  'id, org_id, device_id, label, check_key, reason, expires_at, created_by, created_at FROM policy_exceptions';

export interface PolicyExceptionRow {
  id: string;
  org_id: string;
  device_id: string | null;
  label: string | null;
  check_key: string;
  reason: string;
  expires_at: string | Date;
  created_by: string;
  created_at: string | Date;
}

export function toPolicyException(row: PolicyExceptionRow): PolicyExceptionRecord {
  return {
    id: row.id,
    orgId: row.org_id as OrganizationId,
    deviceId: row.device_id as DeviceId | null,
    label: row.label,
    checkKey: row.check_key,
    reason: row.reason,
    expiresAt: isoTime(row.expires_at),
    createdBy: row.created_by,
    createdAt: isoTime(row.created_at),
  };
}

export function isoTime(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

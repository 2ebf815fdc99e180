// The audit log's query and row mapping both engines share (migration 9 in SQLite, 8 in
// PostgreSQL), read back with the engine's own types (SQLite: ISO text; PostgreSQL: Date, bigint as text).
import type { OrganizationId } from '../ids';
import type { AuditEntryRecord, AuditQuery } from './store';
import { isoTime } from './policyRows';

export const AUDIT_COLUMNS = `a.id, a.at, a.actor, a.address, a.action, a.org_id, o.name AS org_name, a.target_type, a.target_id, a.detail
  FROM audit_log a LEFT JOIN organizations o ON o.id = a.org_id`;

/** The page's conditions, with `placeholder(i)` the engine's i-th parameter (from 0), and their values. */
export function auditConditions(query: AuditQuery, placeholder: (index: number) => string): { where: string; values: unknown[] } {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    conditions.push(sql(placeholder(values.length)));
    values.push(value);
  };
  if (query.orgId !== null) add((p) => `a.org_id = ${p}`, query.orgId);
  if (query.action !== undefined) add((p) => `a.action = ${p}`, query.action);
  if (query.beforeId !== undefined) add((p) => `a.id < ${p}`, query.beforeId);
  return { where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, values };
}

export interface AuditRow {
  id: number | string;
  at: string | Date;
  actor: string;
  address: string | null;
  action: string;
  org_id: string | null;
  org_name: string | null;
  target_type: string | null;
  target_id: string | null;
  detail: string | null;
}

export function toAuditEntry(row: AuditRow): AuditEntryRecord {
  return {
    id: Number(row.id),
    at: isoTime(row.at),
    actor: row.actor,
    address: row.address,
    action: row.action,
    orgId: row.org_id as OrganizationId | null,
    orgName: row.org_name,
    targetType: row.target_type,
    targetId: row.target_id,
    detail: row.detail,
  };
}

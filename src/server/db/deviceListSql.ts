// The device list's working-screen SQL that both engines share (the list's columns per device, its
// filters on latest results, labels and exceptions, and the overview's counts that link to them):
// one query per page, the engine giving only its placeholders and its JSON functions.
import type { PostureStatus } from '../../protocol/schemas';
import type { DeviceFilter, Labels } from './store';

export interface Dialect {
  /** A placeholder bound to `value`. */
  param: (value: unknown) => string;
  /** An object of `key` → `value` over the rows of a subquery (SQLite json_group_object, PostgreSQL json_object_agg). */
  objectOf(key: string, value: string): string;
  /** The `rule` of a latest result `l`'s evidence, as text. */
  evidenceRule: string;
}

/** How many checks of device `d` fail by their latest result. */
export const FAILING_CHECKS = "(SELECT COUNT(*) FROM latest_results f WHERE f.device_id = d.id AND f.status = 'FAIL')";

/** The list's per-device columns, after DEVICE_COLUMNS' own: each device's failing count, statuses and labels. */
export function summaryColumns(dialect: Dialect): string {
  return `${FAILING_CHECKS} AS failing_checks,
    (SELECT ${dialect.objectOf('s.check_key', 's.status')} FROM latest_results s WHERE s.device_id = d.id) AS checks,
    (SELECT ${dialect.objectOf('b.key', 'b.value')} FROM device_labels b WHERE b.device_id = d.id) AS labels`;
}

/** A FAIL of latest result `l` that an exception of the device, or of one of its labels, covers at `now`. */
export function exceptedCondition(dialect: Dialect, now: string): string {
  return `EXISTS (SELECT 1 FROM policy_exceptions e
    WHERE e.org_id = d.org_id AND e.check_key = l.check_key AND e.expires_at > ${dialect.param(now)}
      AND (e.device_id = d.id OR e.label IN (SELECT b.key || '=' || b.value FROM device_labels b WHERE b.device_id = d.id)))`;
}

/** The conditions of the list's working-screen filters (the engines add the older ones themselves). */
export function listConditions(filter: DeviceFilter, dialect: Dialect): string[] {
  const conditions: string[] = [];
  const { param } = dialect;
  if (filter.agentVersion !== undefined) conditions.push(`d.agent_version = ${param(filter.agentVersion)}`);
  if (filter.osVersion !== undefined) conditions.push(`d.os_version = ${param(filter.osVersion)}`);
  if (filter.label !== undefined)
    conditions.push(
      `EXISTS (SELECT 1 FROM device_labels b WHERE b.device_id = d.id AND b.key = ${param(filter.label.key)} AND b.value = ${param(filter.label.value)})`,
    );
  if (filter.minFailing !== undefined) conditions.push(`${FAILING_CHECKS} >= ${param(filter.minFailing)}`);
  const check = filter.check;
  if (check !== undefined) {
    if (check.status === 'MISSING') {
      conditions.push(`NOT EXISTS (SELECT 1 FROM latest_results l WHERE l.device_id = d.id AND l.check_key = ${param(check.key)})`);
    } else {
      const on = [`l.device_id = d.id`, `l.check_key = ${param(check.key)}`];
      if (check.status !== undefined) on.push(`l.status = ${param(check.status)}`);
      if (check.receivedBefore !== undefined) on.push(`l.received_at < ${param(check.receivedBefore)}`);
      if (check.rule !== undefined) on.push(`${dialect.evidenceRule} = ${param(check.rule)}`);
      if (check.excepted !== undefined) on.push(`${check.excepted.is ? '' : 'NOT '}${exceptedCondition(dialect, check.excepted.now)}`);
      conditions.push(`EXISTS (SELECT 1 FROM latest_results l WHERE ${on.join(' AND ')})`);
    }
  }
  return conditions;
}

/** The summary columns as read back: numbers and JSON as each engine's driver gives them. */
export interface SummaryRow {
  failing_checks: number | string;
  checks: string | Record<string, PostureStatus> | null;
  labels: string | Labels | null;
}

export function toSummary(row: SummaryRow): { failingChecks: number; checks: Record<string, PostureStatus>; labels: Labels } {
  const object = <T>(value: string | T | null, empty: T): T =>
    value === null ? empty : typeof value === 'string' ? (JSON.parse(value) as T) : value;
  return { failingChecks: Number(row.failing_checks), checks: object(row.checks, {}), labels: object(row.labels, {}) };
}

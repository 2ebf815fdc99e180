// The device list's working-screen SQL that both engines share (the list's columns per device, its
// filters on latest results, labels and exceptions, and the overview's counts that link to them):
// one query per page, the engine giving only its placeholders and its JSON functions.
import type { PostureStatus } from '../../protocol/schemas';
import type { Platform } from '../../protocol/schemas';
import type { GraceCutoffs } from '../deviceLifecycle';
import type { DeviceId } from '../ids';
import type { DeviceFilter, DeviceListRow, FailingResult, GraceRule, Labels } from './store';

export interface Dialect {
  /** A placeholder bound to `value`. */
  param: (value: unknown) => string;
  /** An object of `key` → `value` over the rows of a subquery (SQLite json_group_object, PostgreSQL json_object_agg). */
  objectOf(key: string, value: string): string;
  /** The `rule` of a latest result `l`'s evidence when it is a string, else NULL. */
  evidenceRule: string;
  /** An RFC 3339 text column as an instant comparable with instantParam's (NULL when it cannot be read). */
  instant(column: string): string;
  /** A placeholder bound to `value` (toISOString's form) as such an instant. */
  instantParam(value: string): string;
}

/**
 * The latest FAIL results of ACTIVE devices `d` (joined with organizations `o`) past their grace
 * period, with the device's platform and hostname.
 */
export function failingResultsQuery(dialect: Dialect, conditions: readonly string[], grace: GraceRule): string {
  return `SELECT d.id AS device_id, d.platform, d.hostname, l.check_key, ${dialect.evidenceRule} AS rule
    FROM latest_results l JOIN devices d ON d.id = l.device_id JOIN organizations o ON o.id = d.org_id
    WHERE ${[...conditions, "d.state = 'ACTIVE'", "l.status = 'FAIL'", `NOT ${inGraceCondition(dialect, grace)}`].join(' AND ')}`;
}

/**
 * Whether a FAIL latest result `l` of device `d` is within its grace period: no exception covers
 * it (an excepted FAIL is counted as excepted, whatever its age) and its status began after its
 * organization's cutoff for the check (deviceLifecycle.ts: graceCutoffs, the rule of failStanding).
 * True or false, never NULL (an unreadable beginning is not in grace), so that NOT gives the FAILs
 * past their grace or excepted. The caller asks l.status = 'FAIL' itself.
 */
export function inGraceCondition(dialect: Dialect, grace: GraceRule, device: DeviceColumns = DEVICE_D): string {
  const cutoffs = graceCutoffsCondition(dialect, grace.cutoffs, device);
  return cutoffs === undefined ? '(1 = 0)' : `(${cutoffs} AND NOT ${exceptedCondition(dialect, grace.now, device)})`;
}

function graceCutoffsCondition(dialect: Dialect, graces: readonly GraceCutoffs[], device: DeviceColumns): string | undefined {
  const cutoff = (value: string | null) => (value === null ? 'NULL' : dialect.instantParam(value));
  const orgs = graces
    .filter((g) => g.otherwise !== null || g.byCheck.some(([, c]) => c !== null))
    .map((g) => {
      const checks = g.byCheck.map(([key, c]) => `WHEN ${dialect.param(key)} THEN ${cutoff(c)}`).join(' ');
      return `WHEN ${dialect.param(g.orgId)} THEN ${checks === '' ? cutoff(g.otherwise) : `CASE l.check_key ${checks} ELSE ${cutoff(g.otherwise)} END`}`;
    });
  if (orgs.length === 0) return undefined;
  return `(CASE WHEN ${dialect.instant('l.status_since')} > CASE ${device.orgId} ${orgs.join(' ')} END THEN 1 ELSE 0 END = 1)`;
}

/** An agent version is at most 64 characters (HeartbeatRequest): no run of digits in it is longer. */
const VERSION_DIGITS = 64;

/**
 * Marks after a version's core (the part before its first `-`): a prerelease's mark sorts below its
 * release's, and both below every byte a longer core goes on with, so 1.10.0-rc.1 < 1.10.0 < 1.10.0.1.
 */
const PRERELEASE_MARK = ' ';
const RELEASE_MARK = '!';

/**
 * An agent version's sort key, in byte order: each run of digits zero-padded to VERSION_DIGITS, so
 * that 1.10.0 comes after 1.9.0 (and 0.10 after 0.9a), and a prerelease before its release
 * (semver's precedence). SQLite calls it as the function version_sort_key; PostgreSQL's
 * versionSortKeySql is the same rule in SQL.
 */
export function versionSortKey(version: string): string {
  const padded = (text: string) => text.replace(/[0-9]+/g, (digits) => digits.padStart(VERSION_DIGITS, '0'));
  const dash = version.indexOf('-');
  return dash < 0 ? padded(version) + RELEASE_MARK : padded(version.slice(0, dash)) + PRERELEASE_MARK + padded(version.slice(dash + 1));
}

/** versionSortKey of a text expression, in PostgreSQL (lpad never cuts: no run is longer than VERSION_DIGITS). */
export function versionSortKeySql(text: string): string {
  const padded = (
    part: string,
  ) => `(SELECT COALESCE(string_agg(CASE WHEN m[1] ~ '^[0-9]' THEN lpad(m[1], ${VERSION_DIGITS}, '0') ELSE m[1] END, '' ORDER BY n), '')
    FROM regexp_matches(${part}, '[0-9]+|[^0-9]+', 'g') WITH ORDINALITY AS v(m, n))`;
  const dash = `strpos(${text}, '-')`;
  return `(CASE WHEN ${dash} = 0 THEN ${padded(text)} || '${RELEASE_MARK}'
    ELSE ${padded(`substr(${text}, 1, ${dash} - 1)`)} || '${PRERELEASE_MARK}' || ${padded(`substr(${text}, ${dash} + 1)`)} END) COLLATE "C"`;
}

/**
 * Whether latest result `l` of device `d` counts as failing, as the overview counts FAIL: a FAIL
 * past its grace period that no exception covers (an excepted FAIL is EXCEPTED, whatever its age).
 */
function failingCondition(dialect: Dialect, grace: GraceRule): string {
  const cutoffs = graceCutoffsCondition(dialect, grace.cutoffs, DEVICE_D);
  return ["l.status = 'FAIL'", ...(cutoffs === undefined ? [] : [`NOT ${cutoffs}`]), `NOT ${exceptedCondition(dialect, grace.now)}`].join(
    ' AND ',
  );
}

/** How many checks of device `d` fail (failingCondition): the list's failing_checks, its sort and min_failing. */
export function failingChecks(dialect: Dialect, grace: GraceRule): string {
  return `(SELECT COUNT(*) FROM latest_results l WHERE l.device_id = d.id AND ${failingCondition(dialect, grace)})`;
}

/**
 * The list's per-device columns, after DEVICE_COLUMNS' own: each device's failing count, statuses,
 * its FAILs that do not count as failing (check key → IN_GRACE or EXCEPTED), and labels.
 */
export function summaryColumns(dialect: Dialect, grace: GraceRule): string {
  const standing = `CASE WHEN ${exceptedCondition(dialect, grace.now)} THEN 'EXCEPTED' ELSE 'IN_GRACE' END`;
  return `${failingChecks(dialect, grace)} AS failing_checks,
    (SELECT ${dialect.objectOf('s.check_key', 's.status')} FROM latest_results s WHERE s.device_id = d.id) AS checks,
    (SELECT ${dialect.objectOf('l.check_key', standing)} FROM latest_results l
      WHERE l.device_id = d.id AND l.status = 'FAIL' AND NOT (${failingCondition(dialect, grace)})) AS not_failing,
    (SELECT ${dialect.objectOf('b.key', 'b.value')} FROM device_labels b WHERE b.device_id = d.id) AS labels`;
}

/** A FAIL of latest result `l` that an exception of the device, or of one of its labels, covers at `now`. */
export function exceptedCondition(dialect: Dialect, now: string, device: DeviceColumns = DEVICE_D): string {
  return `EXISTS (SELECT 1 FROM policy_exceptions e
    WHERE e.org_id = ${device.orgId} AND e.check_key = l.check_key AND e.expires_at > ${dialect.param(now)}
      AND (e.device_id = ${device.id} OR e.label IN (SELECT b.key || '=' || b.value FROM device_labels b WHERE b.device_id = ${device.id})))`;
}

/** Where a condition reads the device of latest result `l`: the devices row `d`, or `l`'s own copy of its ids (no join). */
export interface DeviceColumns {
  id: string;
  orgId: string;
}
const DEVICE_D: DeviceColumns = { id: 'd.id', orgId: 'd.org_id' };
export const DEVICE_OF_L: DeviceColumns = { id: 'l.device_id', orgId: 'l.org_id' };

/** The conditions of the list's working-screen filters (the engines add the older ones themselves). */
export function listConditions(filter: DeviceFilter, dialect: Dialect, grace: GraceRule): string[] {
  const conditions: string[] = [];
  const { param } = dialect;
  if (filter.platform === 'UNKNOWN') conditions.push('d.platform IS NULL');
  else if (filter.platform !== undefined) conditions.push(`d.platform = ${param(filter.platform)}`);
  if (filter.agentVersion !== undefined) conditions.push(`d.agent_version = ${param(filter.agentVersion)}`);
  if (filter.osVersion !== undefined) conditions.push(`d.os_version = ${param(filter.osVersion)}`);
  if (filter.label !== undefined)
    conditions.push(
      `EXISTS (SELECT 1 FROM device_labels b WHERE b.device_id = d.id AND b.key = ${param(filter.label.key)} AND b.value = ${param(filter.label.value)})`,
    );
  if (filter.failingCheck !== undefined) {
    const which = filter.failingCheck === '*' ? '' : ` AND l.check_key = ${param(filter.failingCheck)}`;
    conditions.push(`EXISTS (SELECT 1 FROM latest_results l WHERE l.device_id = d.id${which} AND ${failingCondition(dialect, grace)})`);
  }
  if (filter.minFailing !== undefined) conditions.push(`${failingChecks(dialect, grace)} >= ${param(filter.minFailing)}`);
  const check = filter.check;
  if (check !== undefined) {
    if (check.status === 'MISSING') {
      conditions.push(`NOT EXISTS (SELECT 1 FROM latest_results l WHERE l.device_id = d.id AND l.check_key = ${param(check.key)})`);
    } else {
      const on = [`l.device_id = d.id`, `l.check_key = ${param(check.key)}`];
      if (check.status === 'FAIL' || check.status === 'IN_GRACE') {
        const inGrace = inGraceCondition(dialect, grace);
        on.push("l.status = 'FAIL'", check.status === 'FAIL' ? `NOT ${inGrace}` : inGrace);
      } else if (check.status !== undefined) on.push(`l.status = ${param(check.status)}`);
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
  not_failing: string | Record<string, 'IN_GRACE' | 'EXCEPTED'> | null;
  labels: string | Labels | null;
}

export function toSummary(row: SummaryRow): Pick<DeviceListRow, 'failingChecks' | 'checks' | 'inGrace' | 'excepted' | 'labels'> {
  const object = <T>(value: string | T | null, empty: T): T =>
    value === null ? empty : typeof value === 'string' ? (JSON.parse(value) as T) : value;
  const notFailing = Object.entries(object(row.not_failing, {}));
  const keysOf = (standing: string) =>
    notFailing
      .filter(([, s]) => s === standing)
      .map(([key]) => key)
      .sort();
  return {
    failingChecks: Number(row.failing_checks),
    checks: object(row.checks, {}),
    inGrace: keysOf('IN_GRACE'),
    excepted: keysOf('EXCEPTED'),
    labels: object(row.labels, {}),
  };
}

export interface FailingResultRow {
  device_id: string;
  platform: Platform | null;
  hostname: string | null;
  check_key: string;
  rule: string | null;
}

export function toFailingResult(row: FailingResultRow): FailingResult {
  return { deviceId: row.device_id as DeviceId, platform: row.platform, hostname: row.hostname, checkKey: row.check_key, rule: row.rule };
}

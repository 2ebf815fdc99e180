// The PostgreSQL engine of the store (store.ts says what each operation means), for several server
// processes and machines on one database. Every guarantee that must hold across processes is the
// database's: an enrollment token is consumed by one DELETE … RETURNING (a second exchange waits
// for the first to commit, then finds nothing); a hardware_uuid is decided by the partial unique
// index; a state change is a conditional UPDATE (READ COMMITTED re-checks its condition on the row
// a concurrent transaction committed); a posture upload locks its device row first, so a revocation
// committed elsewhere is seen and one made meanwhile waits. The rules are the device lifecycle's
// (src/server/deviceLifecycle.ts), passed in as transitions and decisions.
import { DatabaseError, type Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { Platform, PostureStatus } from '../../protocol/schemas';
import { POSTGRES_SCHEMA_VERSION, schemaVersion } from './postgresMigrations';
import {
  newId,
  type AdminAccountId,
  type AdminTokenId,
  type DeviceId,
  type EnrollSecretId,
  type OrganizationId,
  type PostureReportId,
} from '../ids';
import {
  devicesByState,
  type AdminAccountRecord,
  type AdminTokenRecord,
  type ComplianceCounts,
  type DailyCompliance,
  type DevicePageGrantKind,
  type DevicePageQuery,
  type DeviceSortKey,
  type Organization,
  type OrgScope,
  type AuthenticatedDevice,
  type DeviceAttributes,
  type DeviceRecord,
  type DeviceListRow,
  type FailingResult,
  type DeviceRef,
  type DeviceSeen,
  type DeviceState,
  type EnrollmentFacts,
  type EnrollSecretRecord,
  type Labels,
  type LabelChange,
  sameLabels,
  type NewDevice,
  type NewEnrollSecret,
  type NewRegistration,
  type RegistrationDecision,
  type RegistrationFacts,
  type RegistrationWrite,
  type HeartbeatWrite,
  type PoolUse,
  type PostureDecision,
  type PostureFacts,
  type PostureReads,
  type SchemaVersions,
  type SignInAddressDecision,
  type SignInAttemptRoom,
  type SignInAttempts,
  type SignInDecision,
  type Store,
  type LatestPostureResult,
  type PostureStatusChange,
  type StoredPostureResult,
  type Transition,
  type LifecycleSetRecord,
  type PolicyChange,
  type PolicyChangeRecord,
  type PolicyDocumentRecord,
  type PolicyExceptionRecord,
  type AuditEntryRecord,
  type AuditQuery,
  type NewAuditEntry,
  type AlertCandidates,
  type AlertMark,
  type DeliveryOutcome,
  type DeliveryRecord,
  type DueDelivery,
  type NewDelivery,
  type WebhookRecord,
  type GraceRule,
  type ComplianceCutoffs,
} from './store';
import { DELIVERY_COLUMNS, WEBHOOK_COLUMNS, toDelivery, toDueDelivery, toWebhook, type DeliveryRow, type WebhookRow } from './webhookRows';
import { AUDIT_COLUMNS, auditConditions, toAuditEntry, type AuditRow } from './auditRows';
import {
  POLICY_CHANGE_COLUMNS,
  POLICY_EXCEPTION_COLUMNS,
  POLICY_GENERATION,
  isoTime,
  toPolicyChange,
  toPolicyException,
  type PolicyChangeRow,
  type PolicyExceptionRow,
} from './policyRows';
import {
  failingChecks,
  exceptedCondition,
  failingResultsQuery,
  inGraceCondition,
  listConditions,
  summaryColumns,
  versionSortKeySql,
  toFailingResult,
  toSummary,
  type Dialect,
  type FailingResultRow,
  type SummaryRow,
} from './deviceListSql';
import { DEVICE_COLUMNS, containsPattern, deviceColumnsAnd, toDeviceRecord, type DeviceRow } from './deviceRows';
import { databaseFailure } from './failures';
import { ENROLL_SECRET_COLUMNS, HOLDER_COLUMNS, toEnrollSecret, toHolder, type EnrollSecretRow, type HolderRow } from './secretRows';
import { POLICY_CHANNEL, POLICY_FALLBACK_MS, PolicyGenerationWatch } from './postgresPolicyWatch';

/** What a query runs on: the pool (one statement, its own transaction) or a transaction's client. */
type Queryable = Pick<Pool | PoolClient, 'query'>;

interface PostureRow {
  id: string;
  report_id: string;
  check_key: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observed_at: string;
  received_at: Date;
}

const POSTURE_COLUMNS = 'id, report_id, check_key, status, evidence, observed_at, received_at';

/** The sort expressions of the device list, each with its index (migration 2); text in byte order as SQLite sorts. */
// failing_checks: no index, computed per device by the grace periods of the time (deviceListSql.ts,
// failingChecks); bench:list measures it.
const SORT_EXPRESSIONS: Record<Exclude<DeviceSortKey, 'failing_checks'>, string> = {
  created_at: 'd.created_at',
  hostname: `COALESCE(d.hostname, '') COLLATE "C"`,
  last_seen_at: "COALESCE(d.last_seen_at, '-infinity')",
  // In version order (1.10.0 after 1.9.0): deviceListSql.ts, versionSortKey.
  agent_version: versionSortKeySql(`COALESCE(d.agent_version, '')`),
};

/** The type of each sort's cursor value as a parameter. */
const SORT_TYPES: Record<DeviceSortKey, string> = {
  created_at: 'timestamptz',
  hostname: 'text',
  last_seen_at: 'timestamptz',
  failing_checks: 'bigint',
  agent_version: 'text',
};

/** deviceListSql.ts's SQL in PostgreSQL's terms. */
function postgresDialect(conditions: Conditions): Dialect {
  return {
    param: (value) => conditions.param(value),
    objectOf: (key, value) => `json_object_agg(${key}, ${value})`,
    evidenceRule: "CASE WHEN json_typeof(l.evidence->'rule') = 'string' THEN l.evidence->>'rule' END",
    // Every stored time passed the wire's RFC 3339 check; of those only year 0000 is no timestamptz.
    instant: (column) => `(CASE WHEN ${column} >= '0001' COLLATE "C" THEN ${column}::timestamptz END)`,
    instantParam: (value) => `${conditions.param(value)}::timestamptz`,
  };
}

interface SignInAttemptsRow {
  account_key: string;
  attempts: number;
  /** bigint: pg reads it as text. */
  first_at: string;
  last_at: string;
  last_address: string;
  blocked_until: string;
}

const SIGN_IN_ATTEMPTS_COLUMNS = 'account_key, attempts, first_at, last_at, last_address, blocked_until';

interface AdminTokenRow {
  id: string;
  org_id: string | null;
  org_name: string | null;
  label: string;
  created_at: Date;
  revoked_at: Date | null;
}

interface AdminAccountRow {
  id: string;
  email: string;
  password_hash: string;
  org_id: string | null;
  org_name: string | null;
  created_at: Date;
}

const ADMIN_TOKEN_COLUMNS = `t.id, t.org_id, o.name AS org_name, t.label, t.created_at, t.revoked_at
  FROM admin_tokens t LEFT JOIN organizations o ON o.id = t.org_id`;
const ADMIN_ACCOUNT_COLUMNS = `a.id, a.email, a.password_hash, a.org_id, o.name AS org_name, a.created_at
  FROM admin_accounts a LEFT JOIN organizations o ON o.id = a.org_id`;

/** Conditions on devices `d` joined with organizations `o`, numbering their parameters in `values`. */
class Conditions {
  readonly list: string[] = [];
  constructor(readonly values: unknown[] = []) {}
  /** `$n` for `value`. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  add(condition: (param: (value: unknown) => string) => string): void {
    this.list.push(condition((value) => this.param(value)));
  }
  where(extra: readonly string[] = []): string {
    const all = [...this.list, ...extra];
    return all.length === 0 ? '' : `WHERE ${all.join(' AND ')}`;
  }
}

function scopeConditions(scope: OrgScope, orgName: string | undefined, orgColumn = 'd.org_id'): Conditions {
  const conditions = new Conditions();
  if (scope.orgId !== null) conditions.add((p) => `${orgColumn} = ${p(scope.orgId)}`);
  if (orgName !== undefined) conditions.add((p) => `o.name = ${p(orgName)}`);
  return conditions;
}

/** A cursor's sort value as the sort expression's type: a timestamp sort's '' (never seen) is -infinity. */
/** The cursor's sort value as a parameter (admin.ts validated it): '' is a device never seen, sorted first. */
function cursorValue(sort: DeviceSortKey, value: string): string {
  return SORT_TYPES[sort] === 'timestamptz' && value === '' ? '-infinity' : value;
}

const HARDWARE_UUID_INDEX = 'devices_hardware_uuid_per_org';

function isUniqueViolationOf(error: unknown, constraint: string): boolean {
  const fields = error as { code?: unknown; constraint?: unknown };
  return error instanceof Error && fields.code === '23505' && fields.constraint === constraint;
}

/** The organization ($1)'s policy version: its newest document change's, or its latest label change's (Store.orgPolicy). */
const POLICY_VERSION = `greatest(
  coalesce((SELECT max(version) FROM policy_changes WHERE org_id = $1), 0),
  coalesce((SELECT labels_version FROM organizations WHERE id = $1), 0))`;

const DELETE_SESSIONS_OF_EMAIL = 'DELETE FROM admin_sessions WHERE account_id = (SELECT id FROM admin_accounts WHERE email = $1)';

async function rows<R extends QueryResultRow>(db: Queryable, sql: string, values: unknown[] = []): Promise<R[]> {
  return (await db.query<R>(sql, values)).rows;
}

async function changes(db: Queryable, sql: string, values: unknown[] = []): Promise<number> {
  return (await db.query(sql, values)).rowCount ?? 0;
}

/**
 * Runs `work` in one READ COMMITTED transaction on one pooled connection. It commits unless `work`
 * throws or `commits` says no to its result (an outcome that must leave no trace).
 */
async function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  commits: (result: T) => boolean = () => true,
): Promise<T> {
  // A connection lost while checked out (a restart, pg_terminate_backend) fails the query in
  // flight or the next one; its 'error' event is heard by the listener every client carries (postgresOpen.ts).
  const client = await pool.connect();
  // Stays set when BEGIN, COMMIT or ROLLBACK fails: the connection is in an unknown state, so it is discarded.
  let broken = true;
  try {
    await client.query('BEGIN');
    let result: T;
    try {
      result = await work(client);
    } catch (error) {
      // A lost or unanswering connection has nothing to roll back on; discarding it ends the transaction.
      if (!lostConnection(error)) {
        await client.query('ROLLBACK');
        broken = false;
      }
      throw error;
    }
    await client.query(commits(result) ? 'COMMIT' : 'ROLLBACK');
    broken = false;
    return result;
  } finally {
    client.release(broken);
  }
}

/** The connection's own failure, not the statement's: no SQLSTATE (pg's DatabaseError carries one), and unavailable. */
function lostConnection(error: unknown): boolean {
  return !(error instanceof DatabaseError) && databaseFailure(error) === 'unavailable';
}

/** The organization named so, created when missing (a concurrent creator makes the INSERT wait for its commit, then do nothing). */
async function ensureOrganizationIn(db: Queryable, name: string, now: string): Promise<Organization> {
  await db.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [
    newId('organization'),
    name,
    now,
  ]);
  const [org] = await rows<Organization>(db, 'SELECT id, name FROM organizations WHERE name = $1', [name]);
  if (!org) throw new Error('organization vanished while creating it');
  return org;
}

const isoOf = (time: Date) => time.toISOString();

export class PostgresStore implements Store {
  /** See externalChanges. */
  private calls = 0;
  private policyWatch: PolicyGenerationWatch | undefined;

  constructor(private readonly pool: Pool) {}

  async close(): Promise<void> {
    await this.policyWatch?.stop();
    await this.pool.end();
  }

  async schemaVersions(): Promise<SchemaVersions> {
    return { found: await schemaVersion(this.pool), known: POSTGRES_SCHEMA_VERSION };
  }

  async countDevicesByState(): Promise<Record<DeviceState, number>> {
    return devicesByState(
      await rows<{ state: DeviceState; devices: string }>(this.pool, 'SELECT state, count(*) AS devices FROM devices GROUP BY state'),
    );
  }

  walUse(): undefined {
    return undefined;
  }

  poolUse(): PoolUse {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async getSetting(key: string): Promise<string | undefined> {
    return (await rows<{ value: string }>(this.pool, 'SELECT value FROM settings WHERE key = $1', [key]))[0]?.value;
  }

  async putSetting(key: string, value: string): Promise<void> {
    await this.pool.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
      key,
      value,
    ]);
  }

  async createDevice(input: NewDevice): Promise<DeviceId> {
    return inTransaction(this.pool, async (db) => {
      // A concurrent creator of the same new organization makes this wait for its commit, then do nothing.
      await db.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [
        newId('organization'),
        input.orgName,
        input.now,
      ]);
      const [org] = await rows<{ id: OrganizationId }>(db, 'SELECT id FROM organizations WHERE name = $1', [input.orgName]);
      if (!org) throw new Error('organization vanished while creating a device');
      const deviceId = newId('device');
      await db.query('INSERT INTO devices (id, org_id, name, state, created_at) VALUES ($1, $2, $3, $4, $5)', [
        deviceId,
        org.id,
        input.name,
        input.state,
        input.now,
      ]);
      await db.query('INSERT INTO enrollment_tokens (token_hash, device_id, expires_at) VALUES ($1, $2, $3)', [
        input.tokenHash,
        deviceId,
        input.tokenExpiresAt,
      ]);
      return deviceId;
    });
  }

  async findDevice(id: string): Promise<DeviceRecord | undefined> {
    const [row] = await rows<DeviceRow<Date>>(this.pool, `SELECT ${DEVICE_COLUMNS} WHERE d.id = $1`, [id]);
    return row && toDeviceRecord(row, (time) => time.toISOString());
  }

  async listDevices(orgName?: string): Promise<DeviceRecord[]> {
    // COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
    const found =
      orgName === undefined
        ? await rows<DeviceRow<Date>>(this.pool, `SELECT ${DEVICE_COLUMNS} ORDER BY o.name COLLATE "C", d.created_at, d.id COLLATE "C"`)
        : await rows<DeviceRow<Date>>(this.pool, `SELECT ${DEVICE_COLUMNS} WHERE o.name = $1 ORDER BY d.created_at, d.id COLLATE "C"`, [
            orgName,
          ]);
    return found.map((row) => toDeviceRecord(row, (time) => time.toISOString()));
  }

  async listPostures(device: DeviceRef): Promise<StoredPostureResult[]> {
    const found = await rows<PostureRow>(
      this.pool,
      `SELECT ${POSTURE_COLUMNS} FROM posture_results WHERE org_id = $1 AND device_id = $2 ORDER BY id`,
      [device.orgId, device.id],
    );
    return found.map(toStoredResult);
  }

  async listDevicePage(query: DevicePageQuery): Promise<DeviceListRow[]> {
    const { filter } = query;
    const conditions = scopeConditions(query.scope, filter.orgName);
    if (filter.state !== undefined) conditions.add((p) => `d.state = ${p(filter.state)}`);
    const { hostnameContains, lastSeenBefore, lastSeenAfter } = filter;
    if (hostnameContains !== undefined)
      conditions.add((p) => `LOWER(d.hostname) LIKE LOWER(${p(containsPattern(hostnameContains))}) ESCAPE '\\'`);
    if (lastSeenBefore !== undefined) conditions.add((p) => `d.last_seen_at < ${p(lastSeenBefore)}`);
    if (lastSeenAfter !== undefined) conditions.add((p) => `d.last_seen_at >= ${p(lastSeenAfter)}`);
    const dialect = postgresDialect(conditions);
    for (const condition of listConditions(filter, dialect, query.grace)) conditions.add(() => condition);
    const sort = query.sort === 'failing_checks' ? failingChecks(dialect, query.grace) : SORT_EXPRESSIONS[query.sort];
    const direction = query.descending ? 'DESC' : 'ASC';
    const { after } = query;
    if (after !== null) {
      const type = SORT_TYPES[query.sort];
      const value = (p: (value: unknown) => string) => {
        const param = `${p(cursorValue(query.sort, after.value))}::${type}`;
        return query.sort === 'agent_version' ? versionSortKeySql(param) : param;
      };
      conditions.add((p) => `(${sort}, d.id COLLATE "C") ${query.descending ? '<' : '>'} (${value(p)}, ${p(after.id)})`);
    }
    const limit = conditions.param(query.limit);
    const found = await rows<DeviceRow<Date> & SummaryRow>(
      this.pool,
      `SELECT ${deviceColumnsAnd(summaryColumns(dialect, query.grace))} ${conditions.where()}
       ORDER BY ${sort} ${direction}, d.id COLLATE "C" ${direction} LIMIT ${limit}`,
      conditions.values,
    );
    return found.map((row) => ({ ...toDeviceRecord(row, (time) => time.toISOString()), ...toSummary(row) }));
  }

  async latestResults(device: DeviceRef): Promise<LatestPostureResult[]> {
    const found = await rows<PostureRow & { status_since: string }>(
      this.pool,
      `SELECT result_id AS id, report_id, check_key, status, evidence, observed_at, received_at, status_since
       FROM latest_results WHERE org_id = $1 AND device_id = $2 ORDER BY check_key COLLATE "C"`,
      [device.orgId, device.id],
    );
    return found.map((row) => ({ ...toStoredResult(row), statusSince: row.status_since }));
  }

  async postureHistory(
    device: DeviceRef,
    options: { checkKey?: string; beforeId?: number; limit: number },
  ): Promise<StoredPostureResult[]> {
    const found = await rows<PostureRow>(
      this.pool,
      `SELECT ${POSTURE_COLUMNS} FROM posture_results
       WHERE org_id = $1 AND device_id = $2 AND id < COALESCE($3::bigint, 9223372036854775807)
         AND ($4::text IS NULL OR check_key = $4::text)
       ORDER BY id DESC LIMIT $5`,
      [device.orgId, device.id, options.beforeId ?? null, options.checkKey ?? null, options.limit],
    );
    return found.map(toStoredResult);
  }

  async postureStatusChanges(
    device: DeviceRef,
    options: { checkKey?: string; beforeId?: number; limit: number },
  ): Promise<PostureStatusChange[]> {
    // The status before each result comes from the window over all of the device's results (of the
    // check asked for); only then are the older pages' ids cut off.
    const found = await rows<PostureRow & { previous_status: PostureStatus | null }>(
      this.pool,
      `SELECT * FROM (
         SELECT ${POSTURE_COLUMNS}, LAG(status) OVER (PARTITION BY check_key ORDER BY id) AS previous_status FROM posture_results
         WHERE org_id = $1 AND device_id = $2 AND ($4::text IS NULL OR check_key = $4::text)) AS changes
       WHERE (previous_status IS NULL OR previous_status <> status) AND id < COALESCE($3::bigint, 9223372036854775807)
       ORDER BY id DESC LIMIT $5`,
      [device.orgId, device.id, options.beforeId ?? null, options.checkKey ?? null, options.limit],
    );
    return found.map((row) => ({ ...toStoredResult(row), previousStatus: row.previous_status }));
  }

  async complianceCounts(scope: OrgScope, orgName: string | undefined, cutoffs: ComplianceCutoffs): Promise<ComplianceCounts> {
    const scoped = scopeConditions(scope, orgName);
    const devices = await rows<{ state: DeviceState; platform: Platform | null; count: string }>(
      this.pool,
      `SELECT d.state, d.platform, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
       ${scoped.where()} GROUP BY d.state, d.platform ORDER BY d.state COLLATE "C", d.platform COLLATE "C" NULLS FIRST`,
      scoped.values,
    );
    const presenceConditions = scopeConditions(scope, orgName);
    const staleBefore = presenceConditions.param(cutoffs.staleBefore);
    const offlineBefore = presenceConditions.param(cutoffs.offlineBefore);
    const [presence] = await rows<{ active: string; stale: string | null; offline: string | null }>(
      this.pool,
      `SELECT COUNT(*) AS active,
              SUM(CASE WHEN d.last_seen_at < ${staleBefore} THEN 1 ELSE 0 END) AS stale,
              SUM(CASE WHEN d.last_seen_at < ${offlineBefore} THEN 1 ELSE 0 END) AS offline
       FROM devices d JOIN organizations o ON o.id = d.org_id ${presenceConditions.where(["d.state = 'ACTIVE'"])}`,
      presenceConditions.values,
    );
    const checkConditions = scopeConditions(scope, orgName);
    const freshSince = checkConditions.param(cutoffs.resultsFreshSince);
    const dialect = postgresDialect(checkConditions);
    const excepted = exceptedCondition(dialect, cutoffs.exceptionsAt);
    const inGrace = inGraceCondition(dialect, { cutoffs: cutoffs.graces, now: cutoffs.exceptionsAt });
    const checks = await rows<{
      check_key: string;
      status: PostureStatus;
      fresh: boolean;
      excepted: boolean;
      in_grace: boolean;
      count: string;
    }>(
      this.pool,
      `SELECT l.check_key, l.status, l.received_at >= ${freshSince} AS fresh,
              (l.status = 'FAIL' AND ${excepted}) AS excepted, (l.status = 'FAIL' AND ${inGrace}) AS in_grace, COUNT(*) AS count
       FROM latest_results l JOIN devices d ON d.id = l.device_id JOIN organizations o ON o.id = d.org_id
       ${checkConditions.where(["d.state = 'ACTIVE'"])} GROUP BY l.check_key, l.status, fresh, excepted, in_grace
       ORDER BY l.check_key COLLATE "C", l.status COLLATE "C", fresh`,
      checkConditions.values,
    );
    const activeConditions = scopeConditions(scope, orgName);
    const agentVersions = await rows<{ agent_version: string | null; count: string }>(
      this.pool,
      `SELECT d.agent_version, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
       ${activeConditions.where(["d.state = 'ACTIVE'"])} GROUP BY d.agent_version ORDER BY count DESC, d.agent_version COLLATE "C"`,
      activeConditions.values,
    );
    const osReleases = await rows<{ platform: Platform | null; os_version: string | null; count: string }>(
      this.pool,
      `SELECT d.platform, d.os_version, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
       ${activeConditions.where(["d.state = 'ACTIVE'"])} GROUP BY d.platform, d.os_version
       ORDER BY count DESC, d.platform COLLATE "C", d.os_version COLLATE "C"`,
      activeConditions.values,
    );
    return {
      devices: devices.map((d) => ({ state: d.state, platform: d.platform, count: Number(d.count) })),
      active: Number(presence?.active ?? 0),
      stale: Number(presence?.stale ?? 0),
      offline: Number(presence?.offline ?? 0),
      checks: checks.map((c) => ({
        checkKey: c.check_key,
        status: c.status,
        fresh: c.fresh,
        excepted: c.excepted,
        inGrace: c.in_grace,
        count: Number(c.count),
      })),
      agentVersions: agentVersions.map((v) => ({ agentVersion: v.agent_version, count: Number(v.count) })),
      osReleases: osReleases.map((r) => ({ platform: r.platform, osVersion: r.os_version, count: Number(r.count) })),
    };
  }

  async failingResults(scope: OrgScope, orgName: string | undefined, grace: GraceRule): Promise<FailingResult[]> {
    const conditions = scopeConditions(scope, orgName);
    const found = await rows<FailingResultRow>(
      this.pool,
      failingResultsQuery(postgresDialect(conditions), conditions.list, grace),
      conditions.values,
    );
    return found.map(toFailingResult);
  }

  async dailyCompliance(scope: OrgScope, orgName: string | undefined, since: string, until: string): Promise<DailyCompliance[]> {
    const conditions = scopeConditions(scope, orgName);
    const sinceParam = conditions.param(since);
    const untilParam = conditions.param(until);
    const found = await rows<{ day: string; check_key: string; status: PostureStatus; count: string }>(
      this.pool,
      `SELECT last.day, r.check_key, r.status, COUNT(*) AS count
       FROM (SELECT to_char(r.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, MAX(r.id) AS id
             FROM posture_results r JOIN devices d ON d.id = r.device_id JOIN organizations o ON o.id = d.org_id
             ${conditions.where([`r.received_at >= ${sinceParam}`, `r.received_at < ${untilParam}`])}
             GROUP BY 1, r.device_id, r.check_key) last
       JOIN posture_results r ON r.id = last.id
       GROUP BY last.day, r.check_key, r.status ORDER BY last.day, r.check_key COLLATE "C", r.status COLLATE "C"`,
      conditions.values,
    );
    return found.map((r) => ({ day: r.day, checkKey: r.check_key, status: r.status, count: Number(r.count) }));
  }

  async latestCompliance(scope: OrgScope, orgName: string | undefined, since: string): Promise<Omit<DailyCompliance, 'day'>[]> {
    // Of every device whatever its state, as the days before: no join with devices.
    const conditions = scopeConditions(scope, orgName, 'l.org_id');
    const sinceParam = conditions.param(since);
    const found = await rows<{ check_key: string; status: PostureStatus; count: string }>(
      this.pool,
      `SELECT l.check_key, l.status, COUNT(*) AS count
       FROM latest_results l ${orgName === undefined ? '' : 'JOIN organizations o ON o.id = l.org_id'}
       ${conditions.where([`l.received_at >= ${sinceParam}`])}
       GROUP BY l.check_key, l.status ORDER BY l.check_key COLLATE "C", l.status COLLATE "C"`,
      conditions.values,
    );
    return found.map((r) => ({ checkKey: r.check_key, status: r.status, count: Number(r.count) }));
  }

  async findOrganization(name: string): Promise<Organization | undefined> {
    const [org] = await rows<Organization>(this.pool, 'SELECT id, name FROM organizations WHERE name = $1', [name]);
    return org;
  }

  async ensureOrganization(name: string, now: string): Promise<Organization> {
    return inTransaction(this.pool, (db) => ensureOrganizationIn(db, name, now));
  }

  async createAdminToken(input: { tokenHash: string; orgId: OrganizationId | null; label: string; now: string }): Promise<AdminTokenId> {
    const id = newId('adminToken');
    await this.pool.query('INSERT INTO admin_tokens (id, token_hash, org_id, label, created_at) VALUES ($1, $2, $3, $4, $5)', [
      id,
      input.tokenHash,
      input.orgId,
      input.label,
      input.now,
    ]);
    return id;
  }

  async authenticateAdminToken(tokenHash: string): Promise<AdminTokenRecord | undefined> {
    const [row] = await rows<AdminTokenRow>(this.pool, `SELECT ${ADMIN_TOKEN_COLUMNS} WHERE t.token_hash = $1 AND t.revoked_at IS NULL`, [
      tokenHash,
    ]);
    return row && toAdminToken(row);
  }

  async listAdminTokens(): Promise<AdminTokenRecord[]> {
    return (await rows<AdminTokenRow>(this.pool, `SELECT ${ADMIN_TOKEN_COLUMNS} ORDER BY t.created_at, t.id COLLATE "C"`)).map(
      toAdminToken,
    );
  }

  async revokeAdminToken(id: string, now: string): Promise<boolean> {
    return (await changes(this.pool, 'UPDATE admin_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id])) === 1;
  }

  async createAdminAccount(input: {
    email: string;
    passwordHash: string;
    orgId: OrganizationId | null;
    now: string;
  }): Promise<AdminAccountId | undefined> {
    const id = newId('adminAccount');
    const inserted = await changes(
      this.pool,
      'INSERT INTO admin_accounts (id, email, password_hash, org_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING',
      [id, input.email, input.passwordHash, input.orgId, input.now],
    );
    return inserted === 1 ? id : undefined;
  }

  async findAdminAccount(email: string): Promise<AdminAccountRecord | undefined> {
    const [row] = await rows<AdminAccountRow>(this.pool, `SELECT ${ADMIN_ACCOUNT_COLUMNS} WHERE a.email = $1`, [email]);
    return row && toAdminAccount(row);
  }

  async listAdminAccounts(): Promise<AdminAccountRecord[]> {
    return (await rows<AdminAccountRow>(this.pool, `SELECT ${ADMIN_ACCOUNT_COLUMNS} ORDER BY a.email COLLATE "C"`)).map(toAdminAccount);
  }

  async setAdminPassword(email: string, passwordHash: string): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      await db.query(DELETE_SESSIONS_OF_EMAIL, [email]);
      return (await changes(db, 'UPDATE admin_accounts SET password_hash = $1 WHERE email = $2', [passwordHash, email])) === 1;
    });
  }

  async deleteAdminAccount(email: string): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      await db.query(DELETE_SESSIONS_OF_EMAIL, [email]);
      return (await changes(db, 'DELETE FROM admin_accounts WHERE email = $1', [email])) === 1;
    });
  }

  async createSession(input: { sessionHash: string; accountId: AdminAccountId; expiresAt: string; now: string }): Promise<void> {
    await this.pool.query('INSERT INTO admin_sessions (session_hash, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
      input.sessionHash,
      input.accountId,
      input.now,
      input.expiresAt,
    ]);
  }

  async sessionAccount(sessionHash: string, now: string): Promise<AdminAccountRecord | undefined> {
    const [row] = await rows<AdminAccountRow>(
      this.pool,
      `SELECT ${ADMIN_ACCOUNT_COLUMNS} JOIN admin_sessions s ON s.account_id = a.id WHERE s.session_hash = $1 AND s.expires_at > $2`,
      [sessionHash, now],
    );
    return row && toAdminAccount(row);
  }

  async deleteSession(sessionHash: string): Promise<void> {
    await this.pool.query('DELETE FROM admin_sessions WHERE session_hash = $1', [sessionHash]);
  }

  async deleteExpiredSessions(now: string): Promise<number> {
    return changes(this.pool, 'DELETE FROM admin_sessions WHERE expires_at <= $1', [now]);
  }

  async recordSignInAttempt(
    accountKey: string,
    room: SignInAttemptRoom,
    decide: (stored: SignInAttempts | undefined) => SignInDecision,
  ): Promise<SignInDecision> {
    return inTransaction(
      this.pool,
      async (db) => {
        // A row to lock, even for the account's first attempt: inserted empty (attempts 0) when
        // missing, else locked by the no-op update, so that the account's attempts take turns.
        const [row] = await rows<SignInAttemptsRow>(
          db,
          `INSERT INTO sign_in_attempts (${SIGN_IN_ATTEMPTS_COLUMNS}) VALUES ($1, 0, 0, 0, '', 0)
           ON CONFLICT (account_key) DO UPDATE SET account_key = excluded.account_key
           RETURNING ${SIGN_IN_ATTEMPTS_COLUMNS}`,
          [accountKey],
        );
        const stored = row!.attempts === 0 ? undefined : toSignInAttempts(row!);
        const decision = decide(stored);
        if (!('counted' in decision)) return decision;
        const { attempts, firstAt, lastAt, lastAddress, blockedUntil } = decision.counted;
        await db.query(
          `UPDATE sign_in_attempts SET attempts = $2, first_at = $3, last_at = $4, last_address = $5, blocked_until = $6
           WHERE account_key = $1`,
          [accountKey, attempts, firstAt, lastAt, lastAddress, blockedUntil],
        );
        if (!stored && (await this.signInAccountsOver(db, room.maxAccounts))) {
          // SKIP LOCKED: a row another attempt holds is in use, not the one to forget (and waiting
          // for it could deadlock two new accounts making room at once).
          await db.query(
            `DELETE FROM sign_in_attempts WHERE account_key IN
               (SELECT account_key FROM sign_in_attempts WHERE last_at < $1 FOR UPDATE SKIP LOCKED)`,
            [room.staleBefore],
          );
          if (await this.signInAccountsOver(db, room.maxAccounts)) {
            await db.query(
              `DELETE FROM sign_in_attempts WHERE account_key IN
                 (SELECT account_key FROM sign_in_attempts WHERE account_key <> $1 ORDER BY attempts, last_at LIMIT 1 FOR UPDATE SKIP LOCKED)`,
              [accountKey],
            );
          }
        }
        return decision;
      },
      // A wait writes nothing (its row existed: a first attempt is never made to wait).
      (decision) => 'counted' in decision,
    );
  }

  async takeSignInAddressBudget(
    addressKey: string,
    now: number,
    decide: (fullAt: number | undefined) => SignInAddressDecision,
  ): Promise<SignInAddressDecision> {
    return inTransaction(
      this.pool,
      async (db) => {
        // A row to lock, as for the accounts' attempts: inserted with full_at 0 when missing.
        const [row] = await rows<{ full_at: number }>(
          db,
          `INSERT INTO sign_in_address_budgets (address_key, full_at) VALUES ($1, 0)
           ON CONFLICT (address_key) DO UPDATE SET address_key = excluded.address_key
           RETURNING full_at`,
          [addressKey],
        );
        const decision = decide(row!.full_at > now ? row!.full_at : undefined);
        if (!('fullAt' in decision)) return decision;
        if (row!.full_at === 0) {
          // SKIP LOCKED: a row another attempt holds is in use, not one to forget.
          await db.query(
            `DELETE FROM sign_in_address_budgets WHERE address_key IN
               (SELECT address_key FROM sign_in_address_budgets WHERE full_at <= $1 AND address_key <> $2 FOR UPDATE SKIP LOCKED)`,
            [now, addressKey],
          );
        }
        await db.query('UPDATE sign_in_address_budgets SET full_at = $2 WHERE address_key = $1', [addressKey, decision.fullAt]);
        return decision;
      },
      // A wait writes nothing (its row existed: a first attempt is never made to wait).
      (decision) => 'fullAt' in decision,
    );
  }

  private async signInAccountsOver(db: Queryable, maxAccounts: number): Promise<boolean> {
    const [count] = await rows<{ n: string }>(db, 'SELECT count(*) AS n FROM sign_in_attempts');
    return Number(count!.n) > maxAccounts;
  }

  async signInAttempts(accountKey: string): Promise<SignInAttempts | undefined> {
    const [row] = await rows<SignInAttemptsRow>(
      this.pool,
      `SELECT ${SIGN_IN_ATTEMPTS_COLUMNS} FROM sign_in_attempts WHERE account_key = $1 AND attempts > 0`,
      [accountKey],
    );
    return row && toSignInAttempts(row);
  }

  async deleteSignInAttempts(accountKey: string): Promise<void> {
    await this.pool.query('DELETE FROM sign_in_attempts WHERE account_key = $1', [accountKey]);
  }

  async createDevicePageGrant(input: {
    grantHash: string;
    kind: DevicePageGrantKind;
    device: DeviceRef;
    expiresAt: string;
    now: string;
  }): Promise<void> {
    await inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM device_page_grants WHERE expires_at <= $1', [input.now]);
      await db.query('INSERT INTO device_page_grants (grant_hash, kind, org_id, device_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        input.grantHash,
        input.kind,
        input.device.orgId,
        input.device.id,
        input.expiresAt,
      ]);
    });
  }

  async takeDevicePageCode(codeHash: string): Promise<(DeviceRef & { expiresAt: string }) | undefined> {
    // Single use: the DELETE consumes the code; a concurrent exchange waits for it, then finds nothing.
    const [row] = await rows<{ org_id: OrganizationId; device_id: DeviceId; expires_at: Date }>(
      this.pool,
      "DELETE FROM device_page_grants WHERE grant_hash = $1 AND kind = 'code' RETURNING org_id, device_id, expires_at",
      [codeHash],
    );
    return row && { id: row.device_id, orgId: row.org_id, expiresAt: row.expires_at.toISOString() };
  }

  async devicePageSession(sessionHash: string, now: string): Promise<DeviceRef | undefined> {
    const [row] = await rows<{ org_id: OrganizationId; device_id: DeviceId }>(
      this.pool,
      "SELECT org_id, device_id FROM device_page_grants WHERE grant_hash = $1 AND kind = 'session' AND expires_at > $2",
      [sessionHash, now],
    );
    return row && { id: row.device_id, orgId: row.org_id };
  }

  async organizationContact(orgId: OrganizationId): Promise<string | undefined> {
    return (await rows<{ contact: string }>(this.pool, 'SELECT contact FROM organization_contacts WHERE org_id = $1', [orgId]))[0]?.contact;
  }

  async setOrganizationContact(orgId: OrganizationId, contact: string | null, now: string): Promise<void> {
    if (contact === null) await this.pool.query('DELETE FROM organization_contacts WHERE org_id = $1', [orgId]);
    else
      await this.pool.query(
        'INSERT INTO organization_contacts (org_id, contact, updated_at) VALUES ($1, $2, $3) ON CONFLICT (org_id) DO UPDATE SET contact = excluded.contact, updated_at = excluded.updated_at',
        [orgId, contact, now],
      );
  }

  async requestDeviceCheck(deviceId: DeviceId, now: string, notBefore: string, lapsedBefore: string): Promise<string> {
    return inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM device_check_requests WHERE requested_at < $1', [lapsedBefore]);
      // A concurrent request waits on the row and then finds the newer time: one of the two is recorded.
      await db.query(
        `INSERT INTO device_check_requests (device_id, requested_at) VALUES ($1, $2)
         ON CONFLICT (device_id) DO UPDATE SET requested_at = excluded.requested_at WHERE device_check_requests.requested_at <= $3`,
        [deviceId, now, notBefore],
      );
      const [row] = await rows<{ requested_at: Date }>(db, 'SELECT requested_at FROM device_check_requests WHERE device_id = $1', [
        deviceId,
      ]);
      return row!.requested_at.toISOString();
    });
  }

  async deviceCheckRequests(since: string): Promise<Map<DeviceId, string>> {
    const found = await rows<{ device_id: DeviceId; requested_at: Date }>(
      this.pool,
      'SELECT device_id, requested_at FROM device_check_requests WHERE requested_at > $1',
      [since],
    );
    return new Map(found.map((r) => [r.device_id, r.requested_at.toISOString()]));
  }

  async exchangeToken(
    tokenHash: string,
    apiKeyHash: string,
    now: string,
    mayEnroll: (facts: EnrollmentFacts) => boolean,
  ): Promise<DeviceId | undefined> {
    return inTransaction(this.pool, async (db) => {
      // Single use: deleting the row is what consumes the token. A concurrent exchange of the same
      // token waits on the row lock and then deletes nothing. A refused token is deleted too.
      const [token] = await rows<{ device_id: DeviceId; expires_at: Date }>(
        db,
        'DELETE FROM enrollment_tokens WHERE token_hash = $1 RETURNING device_id, expires_at',
        [tokenHash],
      );
      if (!token) return undefined;
      const [device] = await rows<{ state: DeviceState; has_api_key: boolean }>(
        db,
        'SELECT state, api_key_hash IS NOT NULL AS has_api_key FROM devices WHERE id = $1 FOR UPDATE',
        [token.device_id],
      );
      if (!device) return undefined;
      if (!mayEnroll({ tokenExpiresAt: token.expires_at.toISOString(), state: device.state, hasApiKey: device.has_api_key }))
        return undefined;
      await db.query('UPDATE devices SET api_key_hash = $1, enrolled_at = $2 WHERE id = $3', [apiKeyHash, now, token.device_id]);
      return token.device_id;
    });
  }

  async authenticate(apiKeyHash: string): Promise<AuthenticatedDevice | undefined> {
    const [row] = await rows<{ id: DeviceId; org_id: OrganizationId; state: DeviceState }>(
      this.pool,
      'SELECT id, org_id, state FROM devices WHERE api_key_hash = $1',
      [apiKeyHash],
    );
    return row && { id: row.id, orgId: row.org_id, state: row.state };
  }

  /**
   * Other processes and machines commit to this database without this connection seeing it at
   * once (LISTEN/NOTIFY arrives after the commit, so a revocation could be served from a cache in
   * between): a new value on every call drops the device cache at every read, so every request
   * is authenticated by a database read made after it arrived.
   */
  externalChanges(): Promise<number> {
    this.calls += 1;
    return Promise.resolve(this.calls);
  }

  async recordDevicesSeen(seen: readonly DeviceSeen[], states: readonly DeviceState[]): Promise<void> {
    if (seen.length === 0) return;
    await changes(
      this.pool,
      `UPDATE devices d SET last_seen_at = s.at
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS s(id, org_id, at)
       WHERE d.id = s.id AND d.org_id = s.org_id AND d.state = ANY($4::text[]) AND (d.last_seen_at IS NULL OR d.last_seen_at < s.at)`,
      [seen.map((s) => s.device.id), seen.map((s) => s.device.orgId), seen.map((s) => s.at), states],
    );
  }

  async recordHeartbeat(device: DeviceRef, attributes: DeviceAttributes, now: string, transition: Transition): Promise<HeartbeatWrite> {
    try {
      const updated = await changes(
        this.pool,
        `UPDATE devices SET
           hardware_uuid = $3, serial_number = $4, hostname = $5, platform = $6, os_version = $7, agent_version = $8,
           state = $11, activated_at = COALESCE(activated_at, $9), last_seen_at = $9
         WHERE id = $1 AND org_id = $2 AND state = ANY($10::text[])`,
        [
          device.id,
          device.orgId,
          attributes.hardwareUuid,
          attributes.serialNumber,
          attributes.hostname,
          attributes.platform,
          attributes.osVersion,
          attributes.agentVersion,
          now,
          transition.from,
          transition.to,
        ],
      );
      return updated === 1 ? 'written' : 'state_refused';
    } catch (error) {
      if (isUniqueViolationOf(error, HARDWARE_UUID_INDEX)) return 'hardware_uuid_taken';
      throw error;
    }
  }

  async recordPostures<Refusal>(
    device: DeviceRef,
    { reportIds, checkKeys }: PostureReads,
    now: string,
    decide: (facts: PostureFacts) => PostureDecision<Refusal>,
  ): Promise<PostureDecision<Refusal>> {
    return inTransaction(
      this.pool,
      async (db): Promise<PostureDecision<Refusal>> => {
        // First, lock the device row: a revocation committed by another process before this point is
        // seen here, and one made after waits until these results are stored.
        const [locked] = await rows<{ state: DeviceState }>(db, 'SELECT state FROM devices WHERE id = $1 AND org_id = $2 FOR UPDATE', [
          device.id,
          device.orgId,
        ]);
        const own =
          reportIds.length === 0
            ? []
            : await rows<{ id: string }>(db, 'SELECT id FROM posture_reports WHERE id = ANY($1::text[]) AND org_id = $2', [
                reportIds,
                device.orgId,
              ]);
        // Read after the lock, in a statement of its own: it sees the keys of an upload that held the
        // lock before (a statement's snapshot is taken when it starts; READ COMMITTED).
        const held = checkKeys
          ? await rows<{ check_key: string }>(db, 'SELECT check_key FROM latest_results WHERE org_id = $1 AND device_id = $2', [
              device.orgId,
              device.id,
            ])
          : [];
        const decision = decide({
          state: locked?.state,
          ownReports: new Set(own.map((row) => row.id)),
          checkKeys: new Set(held.map((row) => row.check_key)),
        });
        if ('refuse' in decision) return decision;
        const { newReport, results } = decision.write;
        if (newReport !== null) {
          await db.query('INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES ($1, $2, $3, $4)', [
            newReport,
            device.orgId,
            device.id,
            now,
          ]);
        }
        // One statement for the whole batch: arrays of columns, unnested in order.
        const columns = {
          report: [] as string[],
          key: [] as string[],
          status: [] as string[],
          evidence: [] as (string | null)[],
          observed: [] as string[],
          runStarted: [] as string[],
          runOpens: [] as boolean[],
        };
        for (const r of results) {
          columns.report.push(r.reportId);
          columns.key.push(r.checkKey);
          columns.status.push(r.status);
          columns.evidence.push(r.evidence === null ? null : JSON.stringify(r.evidence));
          columns.observed.push(r.observedAt);
          columns.runStarted.push(r.runStartedAt);
          columns.runOpens.push(r.runOpensUpload);
        }
        // The newest of the batch's results of each check (the largest id RETURNING gives) becomes
        // that check's latest result: one row per check, as ON CONFLICT may touch a row only once.
        // Its status_since: the stored one (read under the device's lock) when the status continues.
        // The batch's runs are joined by check key: a check's last run is the one its latest ends.
        await db.query(
          `WITH inserted AS (
             INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
             SELECT $1, $2, r.report_id, r.check_key, r.status, r.evidence::json, r.observed_at, $8
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                  WITH ORDINALITY AS r(report_id, check_key, status, evidence, observed_at, position)
             ORDER BY r.position
             RETURNING id, report_id, check_key, status, evidence, observed_at, received_at),
           runs AS (
             SELECT DISTINCT ON (r.check_key) r.check_key, r.started, r.opens
             FROM unnest($4::text[], $9::text[], $10::boolean[]) WITH ORDINALITY AS r(check_key, started, opens, position)
             ORDER BY r.check_key, r.position DESC)
           INSERT INTO latest_results (org_id, device_id, check_key, result_id, report_id, status, evidence, observed_at, received_at, status_since)
           SELECT DISTINCT ON (i.check_key) $1, $2, i.check_key, i.id, i.report_id, i.status, i.evidence, i.observed_at, i.received_at,
                  CASE WHEN runs.opens AND stored.status = i.status THEN stored.status_since ELSE runs.started END
           FROM inserted i JOIN runs ON runs.check_key = i.check_key
                LEFT JOIN latest_results stored ON stored.device_id = $2 AND stored.check_key = i.check_key
           ORDER BY i.check_key, i.id DESC
           ON CONFLICT (device_id, check_key) DO UPDATE SET
             result_id = excluded.result_id, report_id = excluded.report_id, status = excluded.status,
             evidence = excluded.evidence, observed_at = excluded.observed_at, received_at = excluded.received_at,
             status_since = excluded.status_since`,
          [
            device.orgId,
            device.id,
            columns.report,
            columns.key,
            columns.status,
            columns.evidence,
            columns.observed,
            now,
            columns.runStarted,
            columns.runOpens,
          ],
        );
        return decision;
      },
      (decision) => 'write' in decision,
    );
  }

  async revokeDevice(device: DeviceRef, now: string, transition: Transition): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM enrollment_tokens WHERE device_id = (SELECT id FROM devices WHERE id = $1 AND org_id = $2)', [
        device.id,
        device.orgId,
      ]);
      const revoked = await changes(
        db,
        'UPDATE devices SET state = $1, api_key_hash = NULL, revoked_at = $2 WHERE id = $3 AND org_id = $4 AND state = ANY($5::text[])',
        [transition.to, now, device.id, device.orgId, transition.from],
      );
      return revoked === 1;
    });
  }

  async createEnrollSecret(input: NewEnrollSecret): Promise<EnrollSecretId> {
    return inTransaction(this.pool, async (db) => {
      const org = await ensureOrganizationIn(db, input.orgName, input.now);
      const id = newId('enrollSecret');
      await db.query(
        `INSERT INTO enroll_secrets (id, org_id, secret_hash, labels, note, expires_at, max_uses, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [id, org.id, input.secretHash, JSON.stringify(input.labels), input.note, input.expiresAt, input.maxUses, input.now],
      );
      return id;
    });
  }

  async findEnrollSecret(id: string): Promise<EnrollSecretRecord | undefined> {
    const [row] = await rows<EnrollSecretRow<Date, Labels>>(this.pool, `SELECT ${ENROLL_SECRET_COLUMNS} WHERE s.id = $1`, [id]);
    return row && toEnrollSecret(row, isoOf, (labels) => labels);
  }

  async listEnrollSecrets(scope: OrgScope, orgName: string | undefined): Promise<EnrollSecretRecord[]> {
    const conditions = scopeConditions(scope, orgName, 's.org_id');
    const found = await rows<EnrollSecretRow<Date, Labels>>(
      this.pool,
      `SELECT ${ENROLL_SECRET_COLUMNS} ${conditions.where()} ORDER BY s.created_at, s.id COLLATE "C"`,
      conditions.values,
    );
    return found.map((row) => toEnrollSecret(row, isoOf, (labels) => labels));
  }

  async revokeEnrollSecret(id: string, now: string): Promise<boolean> {
    return (await changes(this.pool, 'UPDATE enroll_secrets SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id])) === 1;
  }

  async registerDevice(
    secretHash: string,
    registration: NewRegistration,
    decide: (facts: RegistrationFacts) => RegistrationDecision,
  ): Promise<RegistrationWrite> {
    const { attributes: a, now } = registration;
    try {
      return await inTransaction(
        this.pool,
        async (db): Promise<RegistrationWrite> => {
          // The secret is read unlocked: its one guard is the conditional UPDATE at the end, so that
          // its row is locked (the registrations of one secret take turns, on every server) only from
          // that UPDATE to the COMMIT, not while this transaction does the rest of its work.
          const [secretRow] = await rows<EnrollSecretRow<Date, Labels>>(db, `SELECT ${ENROLL_SECRET_COLUMNS} WHERE s.secret_hash = $1`, [
            secretHash,
          ]);
          const secret = secretRow && toEnrollSecret(secretRow, isoOf, (labels) => labels);
          const [holderRow] = secret
            ? await rows<HolderRow<Date>>(
                db,
                `SELECT ${HOLDER_COLUMNS} FROM devices WHERE org_id = $1 AND hardware_uuid = $2 AND state <> 'REVOKED' FOR UPDATE`,
                [secret.orgId, a.hardwareUuid],
              )
            : [];
          const decision = decide({ secret, holder: holderRow && toHolder(holderRow, isoOf) });
          if (decision.kind === 'refuse' || !secret) return { kind: 'refused' };
          const device = { id: decision.kind === 'reissue' ? decision.device : newId('device'), orgId: secret.orgId };
          if (decision.kind === 'reissue') {
            await db.query('DELETE FROM enrollment_tokens WHERE device_id = $1', [device.id]);
            // A key its host never received (the /enroll answer lost) is no longer valid.
            await db.query('UPDATE devices SET api_key_hash = NULL, enrolled_at = NULL WHERE id = $1', [device.id]);
          } else {
            if (decision.supersede !== null) {
              await db.query('DELETE FROM enrollment_tokens WHERE device_id = $1', [decision.supersede]);
              await db.query(
                `UPDATE devices SET state = 'REVOKED', api_key_hash = NULL, revoked_at = $1, superseded_by = $2
                 WHERE id = $3 AND state <> 'REVOKED'`,
                [now, device.id, decision.supersede],
              );
            }
            if (decision.duplicateOf !== null)
              await db.query('UPDATE devices SET duplicate_of = $1 WHERE id = $2', [device.id, decision.duplicateOf]);
            await db.query(
              `INSERT INTO devices (id, org_id, state, created_at, hardware_uuid, serial_number, hostname, platform, os_version,
                                    agent_version, enroll_secret_id, supersedes, duplicate_of)
               VALUES ($1, $2, 'PENDING', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
              [
                device.id,
                secret.orgId,
                now,
                decision.duplicateOf === null ? a.hardwareUuid : null,
                a.serialNumber,
                a.hostname,
                a.platform,
                a.osVersion,
                a.agentVersion,
                secret.id,
                decision.supersede,
                decision.duplicateOf,
              ],
            );
            const labels = Object.entries(secret.labels);
            if (labels.length > 0)
              await db.query(
                'INSERT INTO device_labels (device_id, key, value) SELECT $1::text, l.key, l.value FROM unnest($2::text[], $3::text[]) AS l(key, value)',
                [device.id, labels.map(([key]) => key), labels.map(([, value]) => value)],
              );
          }
          await db.query('INSERT INTO enrollment_tokens (token_hash, device_id, expires_at) VALUES ($1, $2, $3)', [
            registration.tokenHash,
            device.id,
            registration.tokenExpiresAt,
          ]);
          // The cap's one guard, last: a use is taken (none for a reissue) only while one is left, the
          // secret not revoked and not expired, as committed when the row lock is granted; else
          // everything above is rolled back.
          const used = await changes(
            db,
            `UPDATE enroll_secrets SET uses = uses + $3
             WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) AND (max_uses IS NULL OR uses + $3 <= max_uses)`,
            [secret.id, now, decision.kind === 'reissue' ? 0 : 1],
          );
          if (used !== 1) return { kind: 'refused' };
          return { kind: 'registered', device, secretId: secret.id, decision };
        },
        (write) => write.kind === 'registered',
      );
    } catch (error) {
      // Another secret's registration of this hardware_uuid committed between the read and the insert.
      if (isUniqueViolationOf(error, HARDWARE_UUID_INDEX)) return { kind: 'hardware_uuid_taken' };
      throw error;
    }
  }

  async deviceLabels(device: DeviceId, db: Queryable = this.pool): Promise<Labels> {
    const found = await rows<{ key: string; value: string }>(
      db,
      'SELECT key, value FROM device_labels WHERE device_id = $1 ORDER BY key COLLATE "C"',
      [device],
    );
    return Object.fromEntries(found.map((row) => [row.key, row.value]));
  }

  async changeDeviceLabels(device: DeviceRef, decide: (current: Labels) => Labels): Promise<LabelChange | undefined> {
    return inTransaction(this.pool, async (db) => {
      // Label and policy changes of one organization take turns: each takes the next version.
      await db.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [device.orgId]);
      const [found] = await rows(db, 'SELECT id FROM devices WHERE id = $1 AND org_id = $2', [device.id, device.orgId]);
      if (!found) return undefined;
      const before = await this.deviceLabels(device.id, db);
      const after = decide(before);
      const [latest] = await rows<{ version: number }>(db, `SELECT ${POLICY_VERSION} AS version`, [device.orgId]);
      let version = Number(latest!.version);
      if (!sameLabels(before, after)) {
        await db.query('DELETE FROM device_labels WHERE device_id = $1', [device.id]);
        const entries = Object.entries(after);
        await db.query(
          'INSERT INTO device_labels (device_id, key, value) SELECT $1::text, l.key, l.value FROM unnest($2::text[], $3::text[]) AS l(key, value)',
          [device.id, entries.map(([key]) => key), entries.map(([, value]) => value)],
        );
        version += 1;
        await db.query('UPDATE organizations SET labels_version = $1 WHERE id = $2', [version, device.orgId]);
        await movePolicyGeneration(db);
      }
      return { before, after, version };
    });
  }

  async deleteResultsReceivedBefore(cutoff: string, limit: number): Promise<number> {
    return changes(
      this.pool,
      'DELETE FROM posture_results WHERE id IN (SELECT id FROM posture_results WHERE received_at < $1 ORDER BY id LIMIT $2)',
      [cutoff, limit],
    );
  }

  async devicesWithMoreResultsThan(keep: number, seenSince: string | null): Promise<DeviceRef[]> {
    const found = await rows<{ id: DeviceId; org_id: OrganizationId }>(
      this.pool,
      `SELECT d.id, d.org_id FROM devices d
       WHERE ($2::timestamptz IS NULL OR d.last_seen_at >= $2::timestamptz)
         AND EXISTS (SELECT 1 FROM posture_results r WHERE r.org_id = d.org_id AND r.device_id = d.id
                     ORDER BY r.id DESC LIMIT 1 OFFSET $1)`,
      [keep, seenSince],
    );
    return found.map((row) => ({ id: row.id, orgId: row.org_id }));
  }

  async deleteResultsBeyond(device: DeviceRef, keep: number, limit: number): Promise<number> {
    return changes(
      this.pool,
      `DELETE FROM posture_results WHERE id IN (
         SELECT id FROM posture_results
         WHERE org_id = $1 AND device_id = $2
           AND id <= (SELECT id FROM posture_results WHERE org_id = $1 AND device_id = $2
                      ORDER BY id DESC LIMIT 1 OFFSET $3)
         ORDER BY id LIMIT $4)`,
      [device.orgId, device.id, keep, limit],
    );
  }

  async deleteLatestReceivedBefore(cutoff: string, limit: number): Promise<number> {
    // No index on received_at, as on SQLite: every upload rewrites it. The condition is checked
    // again on the row as it is when deleted: an upload refreshing it meanwhile keeps it.
    return changes(
      this.pool,
      `DELETE FROM latest_results
       WHERE ctid = ANY(ARRAY(SELECT ctid FROM latest_results WHERE received_at < $1 LIMIT $2)) AND received_at < $1`,
      [cutoff, limit],
    );
  }

  async deleteEmptyReportsCreatedBefore(cutoff: string, limit: number): Promise<number> {
    return changes(
      this.pool,
      `DELETE FROM posture_reports WHERE id IN (
         SELECT p.id FROM posture_reports p
         WHERE p.created_at < $1 AND NOT EXISTS (SELECT 1 FROM posture_results r WHERE r.report_id = p.id)
         LIMIT $2)`,
      [cutoff, limit],
    );
  }

  // ---- server policy ---------------------------------------------------------------------------

  async policyGeneration(): Promise<string> {
    const [row] = await rows<{ value: string }>(this.pool, 'SELECT value FROM settings WHERE key = $1', [POLICY_GENERATION]);
    return row?.value ?? '0';
  }

  watchPolicyGeneration(changed: () => void, fallbackMs = POLICY_FALLBACK_MS): true {
    if (this.policyWatch) throw new Error('the policy generation is already watched');
    this.policyWatch = new PolicyGenerationWatch(this.pool.options, changed, fallbackMs);
    return true;
  }

  async orgPolicy(orgId: OrganizationId): Promise<{ version: number; labelsVersion: number; documents: PolicyDocumentRecord[] }> {
    // One statement: the versions and the documents from one snapshot.
    const found = await rows<{ version: number; labels_version: number; label: string | null; document: string | null }>(
      this.pool,
      `SELECT ${POLICY_VERSION} AS version,
              coalesce((SELECT labels_version FROM organizations WHERE id = $1), 0) AS labels_version, p.label, p.document
       FROM (SELECT 1) one LEFT JOIN policies p ON p.org_id = $1 ORDER BY p.label COLLATE "C"`,
      [orgId],
    );
    return {
      version: Number(found[0]?.version ?? 0),
      labelsVersion: Number(found[0]?.labels_version ?? 0),
      documents: found.flatMap((row) =>
        row.document === null ? [] : [{ label: row.label === '' ? null : row.label, document: row.document }],
      ),
    };
  }

  async putPolicy(change: PolicyChange): Promise<number> {
    return inTransaction(this.pool, async (db) => {
      const label = change.label ?? '';
      // Changes of one organization take turns: each takes the next version.
      await db.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [change.orgId]);
      const [previous] = await rows<{ document: string }>(db, 'SELECT document FROM policies WHERE org_id = $1 AND label = $2', [
        change.orgId,
        label,
      ]);
      if (change.document === null) await db.query('DELETE FROM policies WHERE org_id = $1 AND label = $2', [change.orgId, label]);
      else
        await db.query(
          'INSERT INTO policies (org_id, label, document) VALUES ($1, $2, $3) ON CONFLICT (org_id, label) DO UPDATE SET document = excluded.document',
          [change.orgId, label, change.document],
        );
      const [latest] = await rows<{ version: number }>(db, `SELECT ${POLICY_VERSION} AS version`, [change.orgId]);
      const version = Number(latest!.version) + 1;
      await db.query(
        'INSERT INTO policy_changes (org_id, version, label, document, previous, changed_by, changed_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [change.orgId, version, label, change.document, previous?.document ?? null, change.changedBy, change.now],
      );
      await movePolicyGeneration(db);
      return version;
    });
  }

  async policyHistory(orgId: OrganizationId, label: string | null | undefined, limit: number): Promise<PolicyChangeRecord[]> {
    const found =
      label === undefined
        ? await rows<PolicyChangeRow>(this.pool, `SELECT ${POLICY_CHANGE_COLUMNS} WHERE org_id = $1 ORDER BY version DESC LIMIT $2`, [
            orgId,
            limit,
          ])
        : await rows<PolicyChangeRow>(
            this.pool,
            `SELECT ${POLICY_CHANGE_COLUMNS} WHERE org_id = $1 AND label = $2 ORDER BY version DESC LIMIT $3`,
            [orgId, label ?? '', limit],
          );
    return found.map(toPolicyChange);
  }

  async latestLifecycleSet(): Promise<LifecycleSetRecord | undefined> {
    const [row] = await rows<{ version: number; data: string; imported_by: string; imported_at: Date }>(
      this.pool,
      'SELECT version, data, imported_by, imported_at FROM lifecycle_sets ORDER BY version DESC LIMIT 1',
    );
    return row && { version: Number(row.version), data: row.data, importedBy: row.imported_by, importedAt: isoTime(row.imported_at) };
  }

  async importLifecycleSet(input: { data: string; importedBy: string; now: string }): Promise<number> {
    return inTransaction(this.pool, async (db) => {
      // Imports take turns: each takes the next version.
      await db.query('LOCK TABLE lifecycle_sets IN SHARE ROW EXCLUSIVE MODE');
      const [latest] = await rows<{ version: number | null }>(db, 'SELECT max(version) AS version FROM lifecycle_sets');
      const version = Number(latest?.version ?? 0) + 1;
      await db.query('INSERT INTO lifecycle_sets (version, data, imported_by, imported_at) VALUES ($1, $2, $3, $4)', [
        version,
        input.data,
        input.importedBy,
        input.now,
      ]);
      await movePolicyGeneration(db);
      return version;
    });
  }

  async createPolicyException(input: Omit<PolicyExceptionRecord, 'id'>): Promise<string> {
    return inTransaction(this.pool, async (db) => {
      const id = newId('policyException');
      await db.query(
        `INSERT INTO policy_exceptions (id, org_id, device_id, label, check_key, reason, expires_at, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, input.orgId, input.deviceId, input.label, input.checkKey, input.reason, input.expiresAt, input.createdBy, input.createdAt],
      );
      await movePolicyGeneration(db);
      return id;
    });
  }

  async activePolicyExceptions(orgId: OrganizationId | null, now: string): Promise<PolicyExceptionRecord[]> {
    const found =
      orgId === null
        ? await rows<PolicyExceptionRow>(this.pool, `SELECT ${POLICY_EXCEPTION_COLUMNS} WHERE expires_at > $1 ORDER BY expires_at, id`, [
            now,
          ])
        : await rows<PolicyExceptionRow>(
            this.pool,
            `SELECT ${POLICY_EXCEPTION_COLUMNS} WHERE org_id = $1 AND expires_at > $2 ORDER BY expires_at, id`,
            [orgId, now],
          );
    return found.map(toPolicyException);
  }

  async deletePolicyException(orgId: OrganizationId, id: string): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      const deleted = (await changes(db, 'DELETE FROM policy_exceptions WHERE org_id = $1 AND id = $2', [orgId, id])) === 1;
      if (deleted) await movePolicyGeneration(db);
      return deleted;
    });
  }

  // ---- audit log -------------------------------------------------------------------------------

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await this.pool.query(
      'INSERT INTO audit_log (at, actor, address, action, org_id, target_type, target_id, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [entry.at, entry.actor, entry.address, entry.action, entry.orgId, entry.targetType, entry.targetId, entry.detail],
    );
  }

  async auditPage(query: AuditQuery): Promise<AuditEntryRecord[]> {
    const { where, values } = auditConditions(query, (index) => `$${index + 1}`);
    const found = await rows<AuditRow>(this.pool, `SELECT ${AUDIT_COLUMNS} ${where} ORDER BY a.id DESC LIMIT $${values.length + 1}`, [
      ...values,
      query.limit,
    ]);
    return found.map(toAuditEntry);
  }

  async deleteAuditBefore(cutoff: string, limit: number): Promise<number> {
    return changes(this.pool, 'DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 LIMIT $2)', [cutoff, limit]);
  }

  // ---- webhooks and the alert sweep --------------------------------------------------------------

  async createWebhook(record: Omit<WebhookRecord, 'orgName'>): Promise<void> {
    await this.pool.query(
      `INSERT INTO webhooks (id, org_id, url, format, events, include_evidence, secret, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.id,
        record.orgId,
        record.url,
        record.format,
        record.events.join(','),
        record.includeEvidence,
        record.secret,
        record.createdBy,
        record.createdAt,
      ],
    );
  }

  async listWebhooks(orgId: OrganizationId | null): Promise<WebhookRecord[]> {
    const found =
      orgId === null
        ? await rows<WebhookRow>(this.pool, `SELECT ${WEBHOOK_COLUMNS} ORDER BY w.created_at, w.id`)
        : await rows<WebhookRow>(this.pool, `SELECT ${WEBHOOK_COLUMNS} WHERE w.org_id = $1 ORDER BY w.created_at, w.id`, [orgId]);
    return found.map(toWebhook);
  }

  async deleteWebhook(orgId: OrganizationId | null, id: string): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      const [found] = await rows<{ id: string }>(
        db,
        'SELECT id FROM webhooks WHERE id = $1 AND ($2::text IS NULL OR org_id = $2) FOR UPDATE',
        [id, orgId],
      );
      if (!found) return false;
      await db.query('DELETE FROM webhook_deliveries WHERE webhook_id = $1', [id]);
      await db.query('DELETE FROM webhooks WHERE id = $1', [id]);
      return true;
    });
  }

  async alertCandidates(orgId: OrganizationId, cutoffs: { staleBefore: string; reenrolledAfter: string }): Promise<AlertCandidates> {
    // One snapshot for the five reads.
    return inTransaction(this.pool, async (db) => {
      await db.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const failing = await rows<{ device_id: string; check_key: string; since: string }>(
        db,
        `SELECT lr.device_id, lr.check_key, lr.status_since AS since FROM latest_results lr JOIN devices d ON d.id = lr.device_id
         WHERE lr.org_id = $1 AND lr.status = 'FAIL' AND d.state = 'ACTIVE' AND NOT EXISTS (
           SELECT 1 FROM alert_marks m WHERE m.device_id = lr.device_id AND m.kind = 'failing' AND m.subject = lr.check_key)`,
        [orgId],
      );
      const ended = await rows<{ device_id: string; subject: string; since: string; status: PostureStatus | null; state: DeviceState }>(
        db,
        `SELECT m.device_id, m.subject, m.since, lr.status, d.state FROM alert_marks m JOIN devices d ON d.id = m.device_id
         LEFT JOIN latest_results lr ON lr.device_id = m.device_id AND lr.check_key = m.subject
         WHERE m.org_id = $1 AND m.kind = 'failing'
           AND (lr.status IS NULL OR lr.status <> 'FAIL' OR lr.status_since <> m.since OR d.state <> 'ACTIVE')`,
        [orgId],
      );
      const stale = await rows<{ id: string; last_seen_at: Date }>(
        db,
        `SELECT d.id, d.last_seen_at FROM devices d WHERE d.org_id = $1 AND d.state = 'ACTIVE' AND d.last_seen_at < $2
           AND NOT EXISTS (SELECT 1 FROM alert_marks m WHERE m.device_id = d.id AND m.kind = 'stale')`,
        [orgId, cutoffs.staleBefore],
      );
      const staleEnded = await rows<{ device_id: string; since: string }>(
        db,
        `SELECT m.device_id, m.since FROM alert_marks m JOIN devices d ON d.id = m.device_id
         WHERE m.org_id = $1 AND m.kind = 'stale' AND (d.state <> 'ACTIVE' OR d.last_seen_at > m.since::timestamptz)`,
        [orgId],
      );
      const reenrolled = await rows<{ id: string; supersedes: string; created_at: Date }>(
        db,
        `SELECT d.id, d.supersedes, d.created_at FROM devices d WHERE d.org_id = $1 AND d.supersedes IS NOT NULL AND d.created_at > $2
           AND NOT EXISTS (SELECT 1 FROM alert_marks m WHERE m.device_id = d.id AND m.kind = 'reenrolled')`,
        [orgId, cutoffs.reenrolledAfter],
      );
      return {
        failing: failing.map((r) => ({ deviceId: r.device_id as DeviceId, checkKey: r.check_key, since: r.since })),
        ended: ended.map((r) => ({
          mark: { orgId, deviceId: r.device_id as DeviceId, kind: 'failing' as const, subject: r.subject, since: r.since },
          status: r.status,
          deviceState: r.state,
        })),
        stale: stale.map((r) => ({ deviceId: r.id as DeviceId, lastSeenAt: isoOf(r.last_seen_at) })),
        staleEnded: staleEnded.map((r) => ({
          orgId,
          deviceId: r.device_id as DeviceId,
          kind: 'stale' as const,
          subject: '',
          since: r.since,
        })),
        reenrolled: reenrolled.map((r) => ({
          deviceId: r.id as DeviceId,
          supersedes: r.supersedes as DeviceId,
          createdAt: isoOf(r.created_at),
        })),
      };
    });
  }

  async recordAlert(
    change: { raise: AlertMark } | { clear: AlertMark },
    deliveries: readonly NewDelivery[],
    now: string,
  ): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      // Of processes raising the same mark at once, one inserts; the others wait for its commit, then insert nothing.
      const changed =
        'raise' in change
          ? await changes(
              db,
              `INSERT INTO alert_marks (org_id, device_id, kind, subject, since) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (device_id, kind, subject) DO NOTHING`,
              [change.raise.orgId, change.raise.deviceId, change.raise.kind, change.raise.subject, change.raise.since],
            )
          : await changes(db, 'DELETE FROM alert_marks WHERE device_id = $1 AND kind = $2 AND subject = $3 AND since = $4', [
              change.clear.deviceId,
              change.clear.kind,
              change.clear.subject,
              change.clear.since,
            ]);
      if (changed !== 1) return false;
      for (const d of deliveries)
        await db.query(
          `INSERT INTO webhook_deliveries (webhook_id, org_id, event_id, event_type, device_id, body, state, attempts, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7)`,
          [d.webhookId, d.orgId, d.eventId, d.eventType, d.deviceId, d.body, now],
        );
      return true;
    });
  }

  async dueDeliveries(now: string, limit: number): Promise<DueDelivery[]> {
    const found = await rows<DeliveryRow>(
      this.pool,
      `SELECT ${DELIVERY_COLUMNS}, w.url, w.secret FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.state = 'pending' AND d.next_attempt_at <= $1 ORDER BY d.next_attempt_at, d.id LIMIT $2`,
      [now, limit],
    );
    return found.map(toDueDelivery);
  }

  async claimDelivery(id: number, now: string, leaseUntil: string): Promise<boolean> {
    return (
      (await changes(
        this.pool,
        `UPDATE webhook_deliveries SET next_attempt_at = $1, attempts = attempts + 1
         WHERE id = $2 AND state = 'pending' AND next_attempt_at <= $3`,
        [leaseUntil, id, now],
      )) === 1
    );
  }

  async finishDelivery(id: number, outcome: DeliveryOutcome): Promise<void> {
    await this.pool.query(
      'UPDATE webhook_deliveries SET state = $1, last_status = $2, last_error = $3, next_attempt_at = $4, finished_at = $5 WHERE id = $6',
      [outcome.state, outcome.lastStatus, outcome.lastError, outcome.nextAttemptAt, outcome.finishedAt, id],
    );
  }

  async deliveryLog(orgId: OrganizationId | null, webhookId: string | undefined, limit: number): Promise<DeliveryRecord[]> {
    const found = await rows<DeliveryRow>(
      this.pool,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
       WHERE ($1::text IS NULL OR d.org_id = $1) AND ($2::text IS NULL OR d.webhook_id = $2) ORDER BY d.id DESC LIMIT $3`,
      [orgId, webhookId ?? null, limit],
    );
    return found.map(toDelivery);
  }

  async ownPolicyDocuments(orgId: OrganizationId | null): Promise<{ orgId: OrganizationId; document: string }[]> {
    const found = await rows<{ org_id: OrganizationId; document: string }>(
      this.pool,
      `SELECT org_id, document FROM policies WHERE label = '' AND ($1::text IS NULL OR org_id = $1) ORDER BY org_id COLLATE "C"`,
      [orgId],
    );
    return found.map((row) => ({ orgId: row.org_id, document: row.document }));
  }

  async deleteDeliveriesBefore(cutoff: string, limit: number): Promise<number> {
    return changes(
      this.pool,
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1 LIMIT $2)`,
      [cutoff, limit],
    );
  }
}

function toStoredResult(row: PostureRow): StoredPostureResult {
  return {
    id: Number(row.id),
    reportId: row.report_id as PostureReportId,
    checkKey: row.check_key,
    status: row.status,
    evidence: row.evidence,
    observedAt: row.observed_at,
    receivedAt: row.received_at.toISOString(),
  };
}

function toAdminToken(row: AdminTokenRow): AdminTokenRecord {
  return {
    id: row.id as AdminTokenId,
    orgId: row.org_id as OrganizationId | null,
    orgName: row.org_name,
    label: row.label,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString(),
  };
}

function toSignInAttempts(row: SignInAttemptsRow): SignInAttempts {
  return {
    attempts: row.attempts,
    firstAt: Number(row.first_at),
    lastAt: Number(row.last_at),
    lastAddress: row.last_address,
    blockedUntil: Number(row.blocked_until),
  };
}

function toAdminAccount(row: AdminAccountRow): AdminAccountRecord {
  return {
    id: row.id as AdminAccountId,
    email: row.email,
    passwordHash: row.password_hash,
    orgId: row.org_id as OrganizationId | null,
    orgName: row.org_name,
    createdAt: row.created_at.toISOString(),
  };
}

/** In the caller's transaction: moves policyGeneration (Store), and notifies the processes watching it at the commit. */
async function movePolicyGeneration(db: Queryable): Promise<void> {
  await db.query(
    `WITH moved AS (
       INSERT INTO settings (key, value) VALUES ($1, '1')
       ON CONFLICT (key) DO UPDATE SET value = (settings.value::bigint + 1)::text
       RETURNING value)
     SELECT pg_notify($2, value) FROM moved`,
    [POLICY_GENERATION, POLICY_CHANNEL],
  );
}

// The SQLite engine of the store (store.ts says what each operation means): every statement as a
// prepared statement; multi-statement writes in BEGIN IMMEDIATE transactions. better-sqlite3 is
// synchronous; `settle` turns each call's value or throw into the interface's promise.
import type { Database, Statement } from 'better-sqlite3';
import type { Platform, PostureStatus } from '../../protocol/schemas';
import {
  newId,
  type AdminAccountId,
  type AdminTokenId,
  type DeviceId,
  type EnrollSecretId,
  type OrganizationId,
  type PostureReportId,
} from '../ids';
import { SCHEMA_VERSION, userVersion } from './migrations';
import type { WalCheckpointer } from './walCheckpointer';
import {
  devicesByState,
  type AdminAccountRecord,
  type AdminTokenRecord,
  type AuthenticatedDevice,
  type ComplianceCounts,
  type DailyCompliance,
  type DevicePageGrantKind,
  type DevicePageQuery,
  type DeviceSortKey,
  type OrgScope,
  type Organization,
  type DeviceAttributes,
  type DeviceRecord,
  type DeviceListRow,
  type FailingResult,
  type DeviceRef,
  type DeviceSeen,
  type DeviceState,
  type EnrollmentFacts,
  type EnrollSecretRecord,
  type HolderOfHardwareUuid,
  type Labels,
  type LabelChange,
  sameLabels,
  type NewDevice,
  type NewEnrollSecret,
  type NewRegistration,
  type RegistrationDecision,
  type RegistrationWrite,
  type HeartbeatWrite,
  type PostureDecision,
  type PostureFacts,
  type PostureReads,
  type RegistrationFacts,
  type ResultToWrite,
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
  type WalUse,
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
  DEVICE_OF_L,
  listConditions,
  summaryColumns,
  versionSortKey,
  toFailingResult,
  toSummary,
  type Dialect,
  type FailingResultRow,
  type SummaryRow,
} from './deviceListSql';
import { DEVICE_COLUMNS, containsPattern, deviceColumnsAnd, toDeviceRecord, type DeviceRow } from './deviceRows';
import { ENROLL_SECRET_COLUMNS, HOLDER_COLUMNS, toEnrollSecret, toHolder, type EnrollSecretRow, type HolderRow } from './secretRows';

interface PostureRow {
  id: number;
  report_id: string;
  check_key: string;
  status: PostureStatus;
  evidence: string | null;
  observed_at: string;
  received_at: string;
}

const POSTURE_COLUMNS = 'id, report_id, check_key, status, evidence, observed_at, received_at';

/** The named parameters of a page of a device's results (history, status changes). */
function historyParameters(device: DeviceRef, options: { checkKey?: string; beforeId?: number; limit: number }) {
  return {
    org_id: device.orgId,
    device_id: device.id,
    check_key: options.checkKey ?? null,
    before: options.beforeId ?? null,
    limit: options.limit,
  };
}

/** The sort expressions of the device list; each has an index with and without org_id in front (migration 3). */
// failing_checks: no index, computed per device by the grace periods of the time (deviceListSql.ts,
// failingChecks); bench:list measures it.
const SORT_EXPRESSIONS: Record<Exclude<DeviceSortKey, 'failing_checks'>, string> = {
  created_at: 'd.created_at',
  hostname: "COALESCE(d.hostname, '')",
  last_seen_at: "COALESCE(d.last_seen_at, '')",
  // In version order (1.10.0 after 1.9.0): deviceListSql.ts, versionSortKey, registered with each connection.
  agent_version: "version_sort_key(COALESCE(d.agent_version, ''))",
};

interface SignInAttemptsRow {
  account_key: string;
  attempts: number;
  first_at: number;
  last_at: number;
  last_address: string;
  blocked_until: number;
}

const SIGN_IN_ATTEMPTS_COLUMNS = 'account_key, attempts, first_at, last_at, last_address, blocked_until';

interface AdminTokenRow {
  id: string;
  org_id: string | null;
  org_name: string | null;
  label: string;
  created_at: string;
  revoked_at: string | null;
}

interface AdminAccountRow {
  id: string;
  email: string;
  password_hash: string;
  org_id: string | null;
  org_name: string | null;
  created_at: string;
}

const ADMIN_TOKEN_COLUMNS = `t.id, t.org_id, o.name AS org_name, t.label, t.created_at, t.revoked_at
  FROM admin_tokens t LEFT JOIN organizations o ON o.id = t.org_id`;
const ADMIN_ACCOUNT_COLUMNS = `a.id, a.email, a.password_hash, a.org_id, o.name AS org_name, a.created_at
  FROM admin_accounts a LEFT JOIN organizations o ON o.id = a.org_id`;

/** `WHERE` conditions and parameters limiting devices `d` (or rows with `orgColumn`) joined with organizations `o` to a scope and an organization name. */
function scopeConditions(
  scope: OrgScope,
  orgName: string | undefined,
  orgColumn = 'd.org_id',
): { conditions: string[]; params: Record<string, unknown> } {
  const conditions: string[] = [];
  const params: Record<string, unknown> = {};
  if (scope.orgId !== null) {
    conditions.push(`${orgColumn} = @scope_org`);
    params.scope_org = scope.orgId;
  }
  if (orgName !== undefined) {
    conditions.push('o.name = @org_name');
    params.org_name = orgName;
  }
  return { conditions, params };
}

/** deviceListSql.ts's SQL in SQLite's terms: named parameters @l0, @l1, … added to `params`. */
function sqliteDialect(params: Record<string, unknown>): Dialect {
  let next = 0;
  return {
    param(value) {
      const name = `l${next++}`;
      params[name] = value;
      return `@${name}`;
    },
    objectOf: (key, value) => `json_group_object(${key}, ${value})`,
    evidenceRule: "CASE WHEN json_type(l.evidence, '$.rule') = 'text' THEN json_extract(l.evidence, '$.rule') END",
    // toISOString's form, in UTC: compared as text (NULL when SQLite cannot read the time).
    instant: (column) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column})`,
    instantParam(value) {
      return this.param(value);
    },
  };
}

const where = (conditions: readonly string[]) => (conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`);

/** `IN (?, ?)`: one placeholder per state a rule names (the states are bound before any named parameter). */
const inStates = (states: readonly DeviceState[]) => `IN (${states.map(() => '?').join(', ')})`;

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export class SqliteStore implements Store {
  private readonly statements;
  private readonly dynamic = new Map<string, Statement>();

  constructor(
    private readonly db: Database,
    private readonly checkpointer?: WalCheckpointer,
  ) {
    db.function('version_sort_key', { deterministic: true }, (version) => versionSortKey(String(version)));
    const s = <P extends unknown[] | object = unknown[], R = unknown>(sql: string): Statement<P, R> => db.prepare<P, R>(sql);
    this.statements = {
      countDevicesByState: s<[], { state: DeviceState; devices: number }>('SELECT state, count(*) AS devices FROM devices GROUP BY state'),
      getSetting: s<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      putSetting: s<[string, string]>(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      insertOrganization: s<[string, string, string]>(
        'INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
      ),
      organizationByName: s<[string], { id: OrganizationId }>('SELECT id FROM organizations WHERE name = ?'),
      insertDevice: s<[string, string, string | null, DeviceState, string]>(
        'INSERT INTO devices (id, org_id, name, state, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      insertToken: s<[string, string, string]>('INSERT INTO enrollment_tokens (token_hash, device_id, expires_at) VALUES (?, ?, ?)'),
      deviceById: s<[string], DeviceRow<string>>(`SELECT ${DEVICE_COLUMNS} WHERE d.id = ?`),
      allDevices: s<[], DeviceRow<string>>(`SELECT ${DEVICE_COLUMNS} ORDER BY o.name, d.created_at, d.id`),
      devicesOfOrganization: s<[string], DeviceRow<string>>(`SELECT ${DEVICE_COLUMNS} WHERE o.name = ? ORDER BY d.created_at, d.id`),
      // Single use: deleting the row is what consumes the token, atomically.
      consumeToken: s<[string], { device_id: DeviceId; expires_at: string }>(
        'DELETE FROM enrollment_tokens WHERE token_hash = ? RETURNING device_id, expires_at',
      ),
      enrollmentOfDevice: s<[string], { state: DeviceState; has_api_key: number }>(
        'SELECT state, api_key_hash IS NOT NULL AS has_api_key FROM devices WHERE id = ?',
      ),
      setApiKey: s<[string, string, string]>('UPDATE devices SET api_key_hash = ?, enrolled_at = ? WHERE id = ?'),
      deviceByKey: s<[string], { id: DeviceId; org_id: OrganizationId; state: DeviceState }>(
        'SELECT id, org_id, state FROM devices WHERE api_key_hash = ?',
      ),
      stateOfDevice: s<[string, string], { state: DeviceState }>('SELECT state FROM devices WHERE id = ? AND org_id = ?'),
      // Moves whenever another connection commits (https://sqlite.org/pragma.html#pragma_data_version).
      dataVersion: s<[], number>('PRAGMA data_version').pluck(),
      reportInOrganization: s<[string, string], { id: string }>('SELECT id FROM posture_reports WHERE id = ? AND org_id = ?'),
      insertReport: s<[string, string, string, string]>(
        'INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES (?, ?, ?, ?)',
      ),
      insertResult: s<[string, string, string, string, string, string | null, string, string]>(
        `INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      posturesOfDevice: s<[string, string], PostureRow>(
        `SELECT ${POSTURE_COLUMNS} FROM posture_results WHERE org_id = ? AND device_id = ? ORDER BY id`,
      ),
      // The same status as stored: only columns no index covers change, so SQLite rewrites the row
      // and none of latest_results' indexes (at the real cadence nearly every result; the upsert
      // below moved about 12 more pages of an upload's ~35 into the WAL).
      // status_since: the stored one continues when the upload's run of the status opened it (null here).
      refreshLatest: s<[number, string, string | null, string, string, string | null, string, string, string]>(
        `UPDATE latest_results SET result_id = ?, report_id = ?, evidence = ?, observed_at = ?, received_at = ?,
           status_since = COALESCE(?, status_since)
         WHERE device_id = ? AND check_key = ? AND status = ?`,
      ),
      upsertLatest: s<[string, string, string, number, string, string, string | null, string, string, string]>(
        `INSERT INTO latest_results (org_id, device_id, check_key, result_id, report_id, status, evidence, observed_at, received_at, status_since)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (device_id, check_key) DO UPDATE SET
           result_id = excluded.result_id, report_id = excluded.report_id, status = excluded.status,
           evidence = excluded.evidence, observed_at = excluded.observed_at, received_at = excluded.received_at,
           status_since = excluded.status_since`,
      ),
      // By device id alone, the primary key's covering index: with org_id = ? as well, SQLite picks
      // latest_results_by_check (covering too) and reads the whole organization's latest results
      // (measured: a third of bench:heartbeat's posture throughput). recordPostures reads the keys
      // only after the device's row was found by id and organization.
      checkKeysOfDevice: s<[string], string>('SELECT check_key FROM latest_results WHERE device_id = ?').pluck(),
      latestOfDevice: s<[string, string], PostureRow & { status_since: string }>(
        `SELECT result_id AS id, report_id, check_key, status, evidence, observed_at, received_at, status_since
         FROM latest_results WHERE org_id = ? AND device_id = ? ORDER BY check_key`,
      ),
      history: s<{ org_id: string; device_id: string; check_key: string | null; before: number | null; limit: number }, PostureRow>(
        `SELECT ${POSTURE_COLUMNS} FROM posture_results
         WHERE org_id = @org_id AND device_id = @device_id AND id < COALESCE(@before, 9223372036854775807)
           AND (@check_key IS NULL OR check_key = @check_key)
         ORDER BY id DESC LIMIT @limit`,
      ),
      // The status before each result comes from the window over all of the device's results (of
      // the check asked for); only then are the older pages' ids cut off.
      statusChanges: s<
        { org_id: string; device_id: string; check_key: string | null; before: number | null; limit: number },
        PostureRow & { previous_status: PostureStatus | null }
      >(
        `SELECT * FROM (
           SELECT ${POSTURE_COLUMNS}, LAG(status) OVER (PARTITION BY check_key ORDER BY id) AS previous_status FROM posture_results
           WHERE org_id = @org_id AND device_id = @device_id AND (@check_key IS NULL OR check_key = @check_key))
         WHERE (previous_status IS NULL OR previous_status <> status) AND id < COALESCE(@before, 9223372036854775807)
         ORDER BY id DESC LIMIT @limit`,
      ),
      insertAdminToken: s<[string, string, string | null, string, string]>(
        'INSERT INTO admin_tokens (id, token_hash, org_id, label, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      adminTokenByHash: s<[string], AdminTokenRow>(`SELECT ${ADMIN_TOKEN_COLUMNS} WHERE t.token_hash = ? AND t.revoked_at IS NULL`),
      allAdminTokens: s<[], AdminTokenRow>(`SELECT ${ADMIN_TOKEN_COLUMNS} ORDER BY t.created_at, t.id`),
      revokeAdminToken: s<[string, string]>('UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      insertAdminAccount: s<[string, string, string, string | null, string]>(
        'INSERT INTO admin_accounts (id, email, password_hash, org_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING',
      ),
      adminAccountByEmail: s<[string], AdminAccountRow>(`SELECT ${ADMIN_ACCOUNT_COLUMNS} WHERE a.email = ?`),
      allAdminAccounts: s<[], AdminAccountRow>(`SELECT ${ADMIN_ACCOUNT_COLUMNS} ORDER BY a.email`),
      setAdminPassword: s<[string, string]>('UPDATE admin_accounts SET password_hash = ? WHERE email = ?'),
      deleteSessionsOfEmail: s<[string]>('DELETE FROM admin_sessions WHERE account_id = (SELECT id FROM admin_accounts WHERE email = ?)'),
      deleteAdminAccount: s<[string]>('DELETE FROM admin_accounts WHERE email = ?'),
      insertSession: s<[string, string, string, string]>(
        'INSERT INTO admin_sessions (session_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
      ),
      sessionAccount: s<[string, string], AdminAccountRow>(
        `SELECT ${ADMIN_ACCOUNT_COLUMNS} JOIN admin_sessions s ON s.account_id = a.id WHERE s.session_hash = ? AND s.expires_at > ?`,
      ),
      deleteSession: s<[string]>('DELETE FROM admin_sessions WHERE session_hash = ?'),
      deleteExpiredSessions: s<[string]>('DELETE FROM admin_sessions WHERE expires_at <= ?'),
      signInAttempts: s<[string], SignInAttemptsRow>(`SELECT ${SIGN_IN_ATTEMPTS_COLUMNS} FROM sign_in_attempts WHERE account_key = ?`),
      putSignInAttempts: s<SignInAttemptsRow>(
        `INSERT INTO sign_in_attempts (${SIGN_IN_ATTEMPTS_COLUMNS})
         VALUES (@account_key, @attempts, @first_at, @last_at, @last_address, @blocked_until)
         ON CONFLICT (account_key) DO UPDATE SET attempts = excluded.attempts, first_at = excluded.first_at,
           last_at = excluded.last_at, last_address = excluded.last_address, blocked_until = excluded.blocked_until`,
      ),
      countSignInAccounts: s<[], { n: number }>('SELECT count(*) AS n FROM sign_in_attempts'),
      deleteStaleSignInAttempts: s<[number]>('DELETE FROM sign_in_attempts WHERE last_at < ?'),
      deleteLeastAttemptedSignIns: s<[string]>(
        `DELETE FROM sign_in_attempts WHERE account_key =
           (SELECT account_key FROM sign_in_attempts WHERE account_key <> ? ORDER BY attempts, last_at LIMIT 1)`,
      ),
      deleteSignInAttempts: s<[string]>('DELETE FROM sign_in_attempts WHERE account_key = ?'),
      signInAddressBudget: s<[string], { full_at: number }>('SELECT full_at FROM sign_in_address_budgets WHERE address_key = ?'),
      putSignInAddressBudget: s<[string, number]>(
        `INSERT INTO sign_in_address_budgets (address_key, full_at) VALUES (?, ?)
         ON CONFLICT (address_key) DO UPDATE SET full_at = excluded.full_at`,
      ),
      deleteFullSignInAddressBudgets: s<[number]>('DELETE FROM sign_in_address_budgets WHERE full_at <= ?'),
      insertDevicePageGrant: s<[string, DevicePageGrantKind, string, string, string]>(
        'INSERT INTO device_page_grants (grant_hash, kind, org_id, device_id, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      deleteExpiredDevicePageGrants: s<[string]>('DELETE FROM device_page_grants WHERE expires_at <= ?'),
      takeDevicePageCode: s<[string], { org_id: OrganizationId; device_id: DeviceId; expires_at: string }>(
        "DELETE FROM device_page_grants WHERE grant_hash = ? AND kind = 'code' RETURNING org_id, device_id, expires_at",
      ),
      devicePageSession: s<[string, string], { org_id: OrganizationId; device_id: DeviceId }>(
        "SELECT org_id, device_id FROM device_page_grants WHERE grant_hash = ? AND kind = 'session' AND expires_at > ?",
      ),
      organizationContact: s<[string], { contact: string }>('SELECT contact FROM organization_contacts WHERE org_id = ?'),
      putOrganizationContact: s<[string, string, string]>(
        'INSERT INTO organization_contacts (org_id, contact, updated_at) VALUES (?, ?, ?) ON CONFLICT (org_id) DO UPDATE SET contact = excluded.contact, updated_at = excluded.updated_at',
      ),
      deleteOrganizationContact: s<[string]>('DELETE FROM organization_contacts WHERE org_id = ?'),
      putDeviceCheckRequest: s<[string, string, string]>(
        `INSERT INTO device_check_requests (device_id, requested_at) VALUES (?, ?)
         ON CONFLICT (device_id) DO UPDATE SET requested_at = excluded.requested_at WHERE device_check_requests.requested_at <= ?`,
      ),
      deviceCheckRequest: s<[string], { requested_at: string }>('SELECT requested_at FROM device_check_requests WHERE device_id = ?'),
      deleteLapsedCheckRequests: s<[string]>('DELETE FROM device_check_requests WHERE requested_at < ?'),
      deviceCheckRequestsSince: s<[string], { device_id: DeviceId; requested_at: string }>(
        'SELECT device_id, requested_at FROM device_check_requests WHERE requested_at > ?',
      ),
      organizationNamed: s<[string], { id: OrganizationId; name: string }>('SELECT id, name FROM organizations WHERE name = ?'),
      deleteTokenOfDevice: s<[string, string]>(
        'DELETE FROM enrollment_tokens WHERE device_id = (SELECT id FROM devices WHERE id = ? AND org_id = ?)',
      ),
      deleteResultsReceivedBefore: s<[string, number]>(
        'DELETE FROM posture_results WHERE id IN (SELECT id FROM posture_results WHERE received_at < ? ORDER BY id LIMIT ?)',
      ),
      devicesWithMoreResultsThan: s<{ keep: number; since: string | null }, { id: DeviceId; org_id: OrganizationId }>(
        `SELECT d.id, d.org_id FROM devices d
         WHERE (@since IS NULL OR d.last_seen_at >= @since)
           AND EXISTS (SELECT 1 FROM posture_results r WHERE r.org_id = d.org_id AND r.device_id = d.id
                       ORDER BY r.id DESC LIMIT 1 OFFSET @keep)`,
      ),
      deleteResultsBeyond: s<{ org_id: string; device_id: string; keep: number; limit: number }>(
        `DELETE FROM posture_results WHERE id IN (
           SELECT id FROM posture_results
           WHERE org_id = @org_id AND device_id = @device_id
             AND id <= (SELECT id FROM posture_results WHERE org_id = @org_id AND device_id = @device_id
                        ORDER BY id DESC LIMIT 1 OFFSET @keep)
           ORDER BY id LIMIT @limit)`,
      ),
      // No index on received_at: the upload's refresh of a latest result would then rewrite one (see
      // refreshLatest); the sweep scans the table instead, once per batch.
      deleteLatestReceivedBefore: s<[string, number]>(
        `DELETE FROM latest_results WHERE rowid IN (SELECT rowid FROM latest_results WHERE received_at < ? LIMIT ?)`,
      ),
      deleteEmptyReportsCreatedBefore: s<[string, number]>(
        `DELETE FROM posture_reports WHERE id IN (
           SELECT p.id FROM posture_reports p
           WHERE p.created_at < ? AND NOT EXISTS (SELECT 1 FROM posture_results r WHERE r.report_id = p.id)
           LIMIT ?)`,
      ),
      insertEnrollSecret: s<[string, string, string, string, string | null, string | null, number | null, string]>(
        `INSERT INTO enroll_secrets (id, org_id, secret_hash, labels, note, expires_at, max_uses, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      enrollSecretById: s<[string], EnrollSecretRow<string, string>>(`SELECT ${ENROLL_SECRET_COLUMNS} WHERE s.id = ?`),
      revokeEnrollSecret: s<[string, string]>('UPDATE enroll_secrets SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      secretByHash: s<[string], EnrollSecretRow<string, string>>(`SELECT ${ENROLL_SECRET_COLUMNS} WHERE s.secret_hash = ?`),
      holderOfHardwareUuid: s<[string, string], HolderRow<string>>(
        `SELECT ${HOLDER_COLUMNS} FROM devices WHERE org_id = ? AND hardware_uuid = ? AND state <> 'REVOKED'`,
      ),
      // The cap's one guard: a use is taken only while one is left, the secret is not revoked and not expired.
      useEnrollSecret: s<{ id: string; now: string }>(
        `UPDATE enroll_secrets SET uses = uses + 1
         WHERE id = @id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now) AND (max_uses IS NULL OR uses < max_uses)`,
      ),
      supersede: s<{ id: string; by: string; now: string }>(
        `UPDATE devices SET state = 'REVOKED', api_key_hash = NULL, revoked_at = @now, superseded_by = @by
         WHERE id = @id AND state <> 'REVOKED'`,
      ),
      markDuplicate: s<[string, string]>('UPDATE devices SET duplicate_of = ? WHERE id = ?'),
      // A reissue: a key its host never received (the /enroll answer lost) is no longer valid.
      dropUnreceivedKey: s<[string]>('UPDATE devices SET api_key_hash = NULL, enrolled_at = NULL WHERE id = ?'),
      insertRegisteredDevice: s<Record<string, unknown>>(
        `INSERT INTO devices (id, org_id, state, created_at, hardware_uuid, serial_number, hostname, platform, os_version,
                              agent_version, enroll_secret_id, supersedes, duplicate_of)
         VALUES (@id, @org_id, @state, @now, @hardware_uuid, @serial_number, @hostname, @platform, @os_version,
                 @agent_version, @secret_id, @supersedes, @duplicate_of)`,
      ),
      deleteTokenOf: s<[string]>('DELETE FROM enrollment_tokens WHERE device_id = ?'),
      insertLabel: s<[string, string, string]>('INSERT INTO device_labels (device_id, key, value) VALUES (?, ?, ?)'),
      labelsOfDevice: s<[string], { key: string; value: string }>('SELECT key, value FROM device_labels WHERE device_id = ? ORDER BY key'),
    };
  }

  /**
   * Every write goes through here: while the checkpoint thread rewinds the WAL (walCheckpointer.ts)
   * writes wait for it as promises instead of in SQLite's busy handler, which sleeps on the event
   * loop. Reads go on: a RESTART checkpoint holds off writers only.
   */
  private write<T>(work: () => T): Promise<T> {
    const paused = this.checkpointer?.writesPaused();
    return paused ? paused.then(() => this.write(work)) : settle(work);
  }

  async close(): Promise<void> {
    // The checkpoint thread first, then this connection (the last one checkpoints and removes the WAL).
    await this.checkpointer?.stop();
    return settle(() => {
      this.db.close();
    });
  }

  schemaVersions(): Promise<SchemaVersions> {
    return settle(() => ({ found: userVersion(this.db), known: SCHEMA_VERSION }));
  }

  countDevicesByState(): Promise<Record<DeviceState, number>> {
    return settle(() => devicesByState(this.statements.countDevicesByState.all()));
  }

  walUse(): WalUse | undefined {
    return this.checkpointer?.use();
  }

  poolUse(): undefined {
    return undefined;
  }

  getSetting(key: string): Promise<string | undefined> {
    return settle(() => this.statements.getSetting.get(key)?.value);
  }

  putSetting(key: string, value: string): Promise<void> {
    return this.write(() => {
      this.statements.putSetting.run(key, value);
    });
  }

  createDevice(input: NewDevice): Promise<DeviceId> {
    return this.write(() => {
      const st = this.statements;
      return this.db
        .transaction(() => {
          st.insertOrganization.run(newId('organization'), input.orgName, input.now);
          const org = st.organizationByName.get(input.orgName);
          if (!org) throw new Error('organization vanished while creating a device');
          const deviceId = newId('device');
          st.insertDevice.run(deviceId, org.id, input.name, input.state, input.now);
          st.insertToken.run(input.tokenHash, deviceId, input.tokenExpiresAt);
          return deviceId;
        })
        .immediate();
    });
  }

  findDevice(id: string): Promise<DeviceRecord | undefined> {
    return settle(() => {
      const row = this.statements.deviceById.get(id);
      return row && toDeviceRecord(row, (time) => time);
    });
  }

  listDevices(orgName?: string): Promise<DeviceRecord[]> {
    return settle(() => {
      const rows = orgName === undefined ? this.statements.allDevices.all() : this.statements.devicesOfOrganization.all(orgName);
      return rows.map((row) => toDeviceRecord(row, (time) => time));
    });
  }

  listPostures(device: DeviceRef): Promise<StoredPostureResult[]> {
    return settle(() => this.statements.posturesOfDevice.all(device.orgId, device.id).map(toStoredResult));
  }

  listDevicePage(query: DevicePageQuery): Promise<DeviceListRow[]> {
    return settle(() => {
      const { filter } = query;
      const { conditions, params } = scopeConditions(query.scope, filter.orgName);
      const add = (condition: string, name: string, value: unknown) => {
        conditions.push(condition);
        params[name] = value;
      };
      if (filter.state !== undefined) add('d.state = @state', 'state', filter.state);
      if (filter.hostnameContains !== undefined)
        add("LOWER(d.hostname) LIKE LOWER(@hostname) ESCAPE '\\'", 'hostname', containsPattern(filter.hostnameContains));
      if (filter.lastSeenBefore !== undefined) add('d.last_seen_at < @seen_before', 'seen_before', filter.lastSeenBefore);
      if (filter.lastSeenAfter !== undefined) add('d.last_seen_at >= @seen_after', 'seen_after', filter.lastSeenAfter);
      const dialect = sqliteDialect(params);
      conditions.push(...listConditions(filter, dialect, query.grace));
      const sort = query.sort === 'failing_checks' ? failingChecks(dialect, query.grace) : SORT_EXPRESSIONS[query.sort];
      const direction = query.descending ? 'DESC' : 'ASC';
      if (query.after !== null) {
        const value = query.sort === 'agent_version' ? 'version_sort_key(@after_value)' : '@after_value';
        conditions.push(`(${sort}, d.id) ${query.descending ? '<' : '>'} (${value}, @after_id)`);
        // A count compares as a number: SQLite orders every number before any text.
        params.after_value = query.sort === 'failing_checks' ? Number(query.after.value) : query.after.value;
        params.after_id = query.after.id;
      }
      params.limit = query.limit;
      const sql = `SELECT ${deviceColumnsAnd(summaryColumns(dialect, query.grace))} ${where(conditions)} ORDER BY ${sort} ${direction}, d.id ${direction} LIMIT @limit`;
      return this.prepared<DeviceRow<string> & SummaryRow>(sql)
        .all(params)
        .map((row) => ({ ...toDeviceRecord(row, (time) => time), ...toSummary(row) }));
    });
  }

  latestResults(device: DeviceRef): Promise<LatestPostureResult[]> {
    return settle(() =>
      this.statements.latestOfDevice.all(device.orgId, device.id).map((row) => ({ ...toStoredResult(row), statusSince: row.status_since })),
    );
  }

  postureHistory(device: DeviceRef, options: { checkKey?: string; beforeId?: number; limit: number }): Promise<StoredPostureResult[]> {
    return settle(() => this.statements.history.all(historyParameters(device, options)).map(toStoredResult));
  }

  postureStatusChanges(
    device: DeviceRef,
    options: { checkKey?: string; beforeId?: number; limit: number },
  ): Promise<PostureStatusChange[]> {
    return settle(() =>
      this.statements.statusChanges
        .all(historyParameters(device, options))
        .map((row) => ({ ...toStoredResult(row), previousStatus: row.previous_status })),
    );
  }

  complianceCounts(scope: OrgScope, orgName: string | undefined, cutoffs: ComplianceCutoffs): Promise<ComplianceCounts> {
    return settle(() => {
      const { conditions, params } = scopeConditions(scope, orgName);
      const devices = this.prepared<{ state: ComplianceCounts['devices'][number]['state']; platform: Platform | null; count: number }>(
        `SELECT d.state, d.platform, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
         ${where(conditions)} GROUP BY d.state, d.platform ORDER BY d.state, d.platform`,
      ).all(params);
      const active = [...conditions, "d.state = 'ACTIVE'"];
      const presence = this.prepared<{ active: number; stale: number | null; offline: number | null }>(
        `SELECT COUNT(*) AS active,
                SUM(CASE WHEN d.last_seen_at < @stale_before THEN 1 ELSE 0 END) AS stale,
                SUM(CASE WHEN d.last_seen_at < @offline_before THEN 1 ELSE 0 END) AS offline
         FROM devices d JOIN organizations o ON o.id = d.org_id ${where(active)}`,
      ).get({ ...params, stale_before: cutoffs.staleBefore, offline_before: cutoffs.offlineBefore });
      // Without a join: the ACTIVE devices' results are those of no device in another state (a few),
      // and a result carries its device's ids (half the time of the join at 20,000 devices).
      const scoped = scopeConditions(scope, orgName, 'l.org_id');
      const checkParams: Record<string, unknown> = { ...scoped.params, fresh_since: cutoffs.resultsFreshSince };
      const dialect = sqliteDialect(checkParams);
      const excepted = exceptedCondition(dialect, cutoffs.exceptionsAt, DEVICE_OF_L);
      const inGrace = inGraceCondition(dialect, { cutoffs: cutoffs.graces, now: cutoffs.exceptionsAt }, DEVICE_OF_L);
      const ofActive = [...scoped.conditions, "l.device_id NOT IN (SELECT id FROM devices WHERE state <> 'ACTIVE')"];
      const checks = this.prepared<{
        check_key: string;
        status: PostureStatus;
        fresh: number;
        excepted: number;
        in_grace: number;
        count: number;
      }>(
        `SELECT l.check_key, l.status, CASE WHEN l.received_at >= @fresh_since THEN 1 ELSE 0 END AS fresh,
                CASE WHEN l.status = 'FAIL' AND ${excepted} THEN 1 ELSE 0 END AS excepted,
                CASE WHEN l.status = 'FAIL' AND ${inGrace} THEN 1 ELSE 0 END AS in_grace, COUNT(*) AS count
         FROM latest_results l ${orgName === undefined ? '' : 'JOIN organizations o ON o.id = l.org_id'}
         ${where(ofActive)} GROUP BY l.check_key, l.status, fresh, excepted, in_grace ORDER BY l.check_key, l.status`,
      ).all(checkParams);
      const agentVersions = this.prepared<{ agent_version: string | null; count: number }>(
        `SELECT d.agent_version, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
         ${where(active)} GROUP BY d.agent_version ORDER BY count DESC, d.agent_version`,
      ).all(params);
      const osReleases = this.prepared<{ platform: Platform | null; os_version: string | null; count: number }>(
        `SELECT d.platform, d.os_version, COUNT(*) AS count FROM devices d JOIN organizations o ON o.id = d.org_id
         ${where(active)} GROUP BY d.platform, d.os_version ORDER BY count DESC, d.platform, d.os_version`,
      ).all(params);
      return {
        devices,
        active: presence?.active ?? 0,
        stale: presence?.stale ?? 0,
        offline: presence?.offline ?? 0,
        checks: checks.map((c) => ({
          checkKey: c.check_key,
          status: c.status,
          fresh: c.fresh === 1,
          excepted: c.excepted === 1,
          inGrace: c.in_grace === 1,
          count: c.count,
        })),
        agentVersions: agentVersions.map((v) => ({ agentVersion: v.agent_version, count: v.count })),
        osReleases: osReleases.map((r) => ({ platform: r.platform, osVersion: r.os_version, count: r.count })),
      };
    });
  }

  failingResults(scope: OrgScope, orgName: string | undefined, grace: GraceRule): Promise<FailingResult[]> {
    return settle(() => {
      const { conditions, params } = scopeConditions(scope, orgName);
      return this.prepared<FailingResultRow>(failingResultsQuery(sqliteDialect(params), conditions, grace))
        .all(params)
        .map(toFailingResult);
    });
  }

  dailyCompliance(scope: OrgScope, orgName: string | undefined, since: string, until: string): Promise<DailyCompliance[]> {
    return settle(() => {
      const { conditions, params } = scopeConditions(scope, orgName);
      const rows = this.prepared<{ day: string; check_key: string; status: PostureStatus; count: number }>(
        `SELECT last.day, r.check_key, r.status, COUNT(*) AS count
         FROM (SELECT SUBSTR(r.received_at, 1, 10) AS day, MAX(r.id) AS id
               FROM posture_results r JOIN devices d ON d.id = r.device_id JOIN organizations o ON o.id = d.org_id
               ${where([...conditions, 'r.received_at >= @since', 'r.received_at < @until'])}
               GROUP BY SUBSTR(r.received_at, 1, 10), r.device_id, r.check_key) last
         JOIN posture_results r ON r.id = last.id
         GROUP BY last.day, r.check_key, r.status ORDER BY last.day, r.check_key, r.status`,
      ).all({ ...params, since, until });
      return rows.map((r) => ({ day: r.day, checkKey: r.check_key, status: r.status, count: r.count }));
    });
  }

  latestCompliance(scope: OrgScope, orgName: string | undefined, since: string): Promise<Omit<DailyCompliance, 'day'>[]> {
    return settle(() => {
      // Of every device whatever its state, as the days before: no join with devices (a third of the time).
      const { conditions, params } = scopeConditions(scope, orgName, 'l.org_id');
      return this.prepared<{ check_key: string; status: PostureStatus; count: number }>(
        `SELECT l.check_key, l.status, COUNT(*) AS count
         FROM latest_results l ${orgName === undefined ? '' : 'JOIN organizations o ON o.id = l.org_id'}
         ${where([...conditions, 'l.received_at >= @since'])} GROUP BY l.check_key, l.status ORDER BY l.check_key, l.status`,
      )
        .all({ ...params, since })
        .map((r) => ({ checkKey: r.check_key, status: r.status, count: r.count }));
    });
  }

  findOrganization(name: string): Promise<Organization | undefined> {
    return settle(() => this.statements.organizationNamed.get(name));
  }

  ensureOrganization(name: string, now: string): Promise<Organization> {
    return this.write(() =>
      this.db
        .transaction(() => {
          this.statements.insertOrganization.run(newId('organization'), name, now);
          const org = this.statements.organizationNamed.get(name);
          if (!org) throw new Error('organization vanished while creating it');
          return org;
        })
        .immediate(),
    );
  }

  createAdminToken(input: { tokenHash: string; orgId: OrganizationId | null; label: string; now: string }): Promise<AdminTokenId> {
    return this.write(() => {
      const id = newId('adminToken');
      this.statements.insertAdminToken.run(id, input.tokenHash, input.orgId, input.label, input.now);
      return id;
    });
  }

  authenticateAdminToken(tokenHash: string): Promise<AdminTokenRecord | undefined> {
    return settle(() => {
      const row = this.statements.adminTokenByHash.get(tokenHash);
      return row && toAdminToken(row);
    });
  }

  listAdminTokens(): Promise<AdminTokenRecord[]> {
    return settle(() => this.statements.allAdminTokens.all().map(toAdminToken));
  }

  revokeAdminToken(id: string, now: string): Promise<boolean> {
    return this.write(() => this.statements.revokeAdminToken.run(now, id).changes === 1);
  }

  createAdminAccount(input: {
    email: string;
    passwordHash: string;
    orgId: OrganizationId | null;
    now: string;
  }): Promise<AdminAccountId | undefined> {
    return this.write(() => {
      const id = newId('adminAccount');
      return this.statements.insertAdminAccount.run(id, input.email, input.passwordHash, input.orgId, input.now).changes === 1
        ? id
        : undefined;
    });
  }

  findAdminAccount(email: string): Promise<AdminAccountRecord | undefined> {
    return settle(() => {
      const row = this.statements.adminAccountByEmail.get(email);
      return row && toAdminAccount(row);
    });
  }

  listAdminAccounts(): Promise<AdminAccountRecord[]> {
    return settle(() => this.statements.allAdminAccounts.all().map(toAdminAccount));
  }

  setAdminPassword(email: string, passwordHash: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          this.statements.deleteSessionsOfEmail.run(email);
          return this.statements.setAdminPassword.run(passwordHash, email).changes === 1;
        })
        .immediate(),
    );
  }

  deleteAdminAccount(email: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          this.statements.deleteSessionsOfEmail.run(email);
          return this.statements.deleteAdminAccount.run(email).changes === 1;
        })
        .immediate(),
    );
  }

  createSession(input: { sessionHash: string; accountId: AdminAccountId; expiresAt: string; now: string }): Promise<void> {
    return this.write(() => {
      this.statements.insertSession.run(input.sessionHash, input.accountId, input.now, input.expiresAt);
    });
  }

  sessionAccount(sessionHash: string, now: string): Promise<AdminAccountRecord | undefined> {
    return settle(() => {
      const row = this.statements.sessionAccount.get(sessionHash, now);
      return row && toAdminAccount(row);
    });
  }

  deleteSession(sessionHash: string): Promise<void> {
    return this.write(() => {
      this.statements.deleteSession.run(sessionHash);
    });
  }

  deleteExpiredSessions(now: string): Promise<number> {
    return this.write(() => this.statements.deleteExpiredSessions.run(now).changes);
  }

  recordSignInAttempt(
    accountKey: string,
    room: SignInAttemptRoom,
    decide: (stored: SignInAttempts | undefined) => SignInDecision,
  ): Promise<SignInDecision> {
    const st = this.statements;
    return this.write(() =>
      this.db
        .transaction(() => {
          const stored = st.signInAttempts.get(accountKey);
          const decision = decide(stored && toSignInAttempts(stored));
          if (!('counted' in decision)) return decision;
          st.putSignInAttempts.run(signInAttemptsRow(accountKey, decision.counted));
          if (!stored && st.countSignInAccounts.get()!.n > room.maxAccounts) {
            st.deleteStaleSignInAttempts.run(room.staleBefore);
            if (st.countSignInAccounts.get()!.n > room.maxAccounts) st.deleteLeastAttemptedSignIns.run(accountKey);
          }
          return decision;
        })
        .immediate(),
    );
  }

  signInAttempts(accountKey: string): Promise<SignInAttempts | undefined> {
    return settle(() => {
      const row = this.statements.signInAttempts.get(accountKey);
      return row && toSignInAttempts(row);
    });
  }

  deleteSignInAttempts(accountKey: string): Promise<void> {
    return this.write(() => {
      this.statements.deleteSignInAttempts.run(accountKey);
    });
  }

  takeSignInAddressBudget(
    addressKey: string,
    now: number,
    decide: (fullAt: number | undefined) => SignInAddressDecision,
  ): Promise<SignInAddressDecision> {
    const st = this.statements;
    return this.write(() =>
      this.db
        .transaction(() => {
          const stored = st.signInAddressBudget.get(addressKey);
          const decision = decide(stored && stored.full_at > now ? stored.full_at : undefined);
          if (!('fullAt' in decision)) return decision;
          if (!stored) st.deleteFullSignInAddressBudgets.run(now);
          st.putSignInAddressBudget.run(addressKey, decision.fullAt);
          return decision;
        })
        .immediate(),
    );
  }

  createDevicePageGrant(input: {
    grantHash: string;
    kind: DevicePageGrantKind;
    device: DeviceRef;
    expiresAt: string;
    now: string;
  }): Promise<void> {
    return this.write(() => {
      this.db.transaction(() => {
        this.statements.deleteExpiredDevicePageGrants.run(input.now);
        this.statements.insertDevicePageGrant.run(input.grantHash, input.kind, input.device.orgId, input.device.id, input.expiresAt);
      })();
    });
  }

  takeDevicePageCode(codeHash: string): Promise<(DeviceRef & { expiresAt: string }) | undefined> {
    return this.write(() => {
      const row = this.statements.takeDevicePageCode.get(codeHash);
      return row && { id: row.device_id, orgId: row.org_id, expiresAt: row.expires_at };
    });
  }

  devicePageSession(sessionHash: string, now: string): Promise<DeviceRef | undefined> {
    return settle(() => {
      const row = this.statements.devicePageSession.get(sessionHash, now);
      return row && { id: row.device_id, orgId: row.org_id };
    });
  }

  organizationContact(orgId: OrganizationId): Promise<string | undefined> {
    return settle(() => this.statements.organizationContact.get(orgId)?.contact);
  }

  setOrganizationContact(orgId: OrganizationId, contact: string | null, now: string): Promise<void> {
    return this.write(() => {
      if (contact === null) this.statements.deleteOrganizationContact.run(orgId);
      else this.statements.putOrganizationContact.run(orgId, contact, now);
    });
  }

  requestDeviceCheck(deviceId: DeviceId, now: string, notBefore: string, lapsedBefore: string): Promise<string> {
    return this.write(() =>
      this.db.transaction(() => {
        this.statements.deleteLapsedCheckRequests.run(lapsedBefore);
        this.statements.putDeviceCheckRequest.run(deviceId, now, notBefore);
        return this.statements.deviceCheckRequest.get(deviceId)!.requested_at;
      })(),
    );
  }

  deviceCheckRequests(since: string): Promise<Map<DeviceId, string>> {
    return settle(() => new Map(this.statements.deviceCheckRequestsSince.all(since).map((r) => [r.device_id, r.requested_at])));
  }

  /** Statements built from filters and from the states a rule names, prepared once per distinct text. */
  // ---- server policy ---------------------------------------------------------------------------

  policyGeneration(): Promise<string> {
    return settle(
      () => this.prepared<{ value: string }, []>(`SELECT value FROM settings WHERE key = '${POLICY_GENERATION}'`).get()?.value ?? '0',
    );
  }

  /** Another connection's commit moves data_version, which the device cache reads once per turn (externalChanges). */
  watchPolicyGeneration(): false {
    return false;
  }

  /** In the caller's transaction: moves policyGeneration. */
  private movePolicyGeneration(): void {
    this.prepared<unknown, []>(
      `INSERT INTO settings (key, value) VALUES ('${POLICY_GENERATION}', '1')
       ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`,
    ).run();
  }

  /** The organization's policy version: its newest document change's, or its latest label change's (Store.orgPolicy). */
  private policyVersion(orgId: OrganizationId): number {
    return this.prepared<{ version: number }, [string, string]>(
      `SELECT max(coalesce((SELECT max(version) FROM policy_changes WHERE org_id = ?), 0),
                  coalesce((SELECT labels_version FROM organizations WHERE id = ?), 0)) AS version`,
    ).get(orgId, orgId)!.version;
  }

  orgPolicy(orgId: OrganizationId): Promise<{ version: number; labelsVersion: number; documents: PolicyDocumentRecord[] }> {
    return settle(() =>
      this.db
        .transaction(() => {
          const version = this.policyVersion(orgId);
          const labelsVersion =
            this.prepared<{ labels_version: number }, [string]>('SELECT labels_version FROM organizations WHERE id = ?').get(orgId)
              ?.labels_version ?? 0;
          const documents = this.prepared<{ label: string; document: string }, [string]>(
            'SELECT label, document FROM policies WHERE org_id = ? ORDER BY label',
          )
            .all(orgId)
            .map((row) => ({ label: row.label === '' ? null : row.label, document: row.document }));
          return { version, labelsVersion, documents };
        })
        .deferred(),
    );
  }

  putPolicy(change: PolicyChange): Promise<number> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const label = change.label ?? '';
          const previous = this.prepared<{ document: string }, [string, string]>(
            'SELECT document FROM policies WHERE org_id = ? AND label = ?',
          ).get(change.orgId, label)?.document;
          if (change.document === null)
            this.prepared<unknown, [string, string]>('DELETE FROM policies WHERE org_id = ? AND label = ?').run(change.orgId, label);
          else
            this.prepared<unknown, [string, string, string]>(
              'INSERT INTO policies (org_id, label, document) VALUES (?, ?, ?) ON CONFLICT (org_id, label) DO UPDATE SET document = excluded.document',
            ).run(change.orgId, label, change.document);
          const version = this.policyVersion(change.orgId) + 1;
          this.prepared<unknown, unknown[]>(
            `INSERT INTO policy_changes (org_id, version, label, document, previous, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          ).run(change.orgId, version, label, change.document, previous ?? null, change.changedBy, change.now);
          this.movePolicyGeneration();
          return version;
        })
        .immediate(),
    );
  }

  policyHistory(orgId: OrganizationId, label: string | null | undefined, limit: number): Promise<PolicyChangeRecord[]> {
    return settle(() => {
      const rows =
        label === undefined
          ? this.prepared<PolicyChangeRow, [string, number]>(
              `SELECT ${POLICY_CHANGE_COLUMNS} WHERE org_id = ? ORDER BY version DESC LIMIT ?`,
            ).all(orgId, limit)
          : this.prepared<PolicyChangeRow, [string, string, number]>(
              `SELECT ${POLICY_CHANGE_COLUMNS} WHERE org_id = ? AND label = ? ORDER BY version DESC LIMIT ?`,
            ).all(orgId, label ?? '', limit);
      return rows.map(toPolicyChange);
    });
  }

  latestLifecycleSet(): Promise<LifecycleSetRecord | undefined> {
    return settle(() => {
      const row = this.prepared<{ version: number; data: string; imported_by: string; imported_at: string }, []>(
        'SELECT version, data, imported_by, imported_at FROM lifecycle_sets ORDER BY version DESC LIMIT 1',
      ).get();
      return row && { version: row.version, data: row.data, importedBy: row.imported_by, importedAt: row.imported_at };
    });
  }

  importLifecycleSet(input: { data: string; importedBy: string; now: string }): Promise<number> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const version =
            (this.prepared<{ version: number | null }, []>('SELECT max(version) AS version FROM lifecycle_sets').get()?.version ?? 0) + 1;
          this.prepared<unknown, unknown[]>('INSERT INTO lifecycle_sets (version, data, imported_by, imported_at) VALUES (?, ?, ?, ?)').run(
            version,
            input.data,
            input.importedBy,
            input.now,
          );
          this.movePolicyGeneration();
          return version;
        })
        .immediate(),
    );
  }

  createPolicyException(input: Omit<PolicyExceptionRecord, 'id'>): Promise<string> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const id = newId('policyException');
          this.prepared<unknown, unknown[]>(
            `INSERT INTO policy_exceptions (id, org_id, device_id, label, check_key, reason, expires_at, created_by, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            id,
            input.orgId,
            input.deviceId,
            input.label,
            input.checkKey,
            input.reason,
            input.expiresAt,
            input.createdBy,
            input.createdAt,
          );
          this.movePolicyGeneration();
          return id;
        })
        .immediate(),
    );
  }

  activePolicyExceptions(orgId: OrganizationId | null, now: string): Promise<PolicyExceptionRecord[]> {
    return settle(() =>
      (orgId === null
        ? this.prepared<PolicyExceptionRow, [string]>(
            `SELECT ${POLICY_EXCEPTION_COLUMNS} WHERE expires_at > ? ORDER BY expires_at, id`,
          ).all(now)
        : this.prepared<PolicyExceptionRow, [string, string]>(
            `SELECT ${POLICY_EXCEPTION_COLUMNS} WHERE org_id = ? AND expires_at > ? ORDER BY expires_at, id`,
          ).all(orgId, now)
      ).map(toPolicyException),
    );
  }

  deletePolicyException(orgId: OrganizationId, id: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const deleted =
            this.prepared<unknown, [string, string]>('DELETE FROM policy_exceptions WHERE org_id = ? AND id = ?').run(orgId, id).changes ===
            1;
          if (deleted) this.movePolicyGeneration();
          return deleted;
        })
        .immediate(),
    );
  }

  // ---- audit log -------------------------------------------------------------------------------

  appendAudit(entry: NewAuditEntry): Promise<void> {
    return this.write(() => {
      this.prepared<unknown, unknown[]>(
        'INSERT INTO audit_log (at, actor, address, action, org_id, target_type, target_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(entry.at, entry.actor, entry.address, entry.action, entry.orgId, entry.targetType, entry.targetId, entry.detail);
    });
  }

  auditPage(query: AuditQuery): Promise<AuditEntryRecord[]> {
    return settle(() => {
      const { where, values } = auditConditions(query, () => '?');
      return this.prepared<AuditRow, unknown[]>(`SELECT ${AUDIT_COLUMNS} ${where} ORDER BY a.id DESC LIMIT ?`)
        .all(...values, query.limit)
        .map(toAuditEntry);
    });
  }

  deleteAuditBefore(cutoff: string, limit: number): Promise<number> {
    return this.write(
      () =>
        this.prepared<unknown, [string, number]>('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? LIMIT ?)').run(
          cutoff,
          limit,
        ).changes,
    );
  }

  // ---- webhooks and the alert sweep --------------------------------------------------------------

  createWebhook(record: Omit<WebhookRecord, 'orgName'>): Promise<void> {
    return this.write(() => {
      this.prepared<unknown, unknown[]>(
        `INSERT INTO webhooks (id, org_id, url, format, events, include_evidence, secret, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        record.id,
        record.orgId,
        record.url,
        record.format,
        record.events.join(','),
        record.includeEvidence ? 1 : 0,
        record.secret,
        record.createdBy,
        record.createdAt,
      );
    });
  }

  listWebhooks(orgId: OrganizationId | null): Promise<WebhookRecord[]> {
    return settle(() =>
      (orgId === null
        ? this.prepared<WebhookRow, []>(`SELECT ${WEBHOOK_COLUMNS} ORDER BY w.created_at, w.id`).all()
        : this.prepared<WebhookRow, [string]>(`SELECT ${WEBHOOK_COLUMNS} WHERE w.org_id = ? ORDER BY w.created_at, w.id`).all(orgId)
      ).map(toWebhook),
    );
  }

  deleteWebhook(orgId: OrganizationId | null, id: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const found = this.prepared<{ id: string }, [string, string | null, string | null]>(
            'SELECT id FROM webhooks WHERE id = ? AND (? IS NULL OR org_id = ?)',
          ).get(id, orgId, orgId);
          if (!found) return false;
          this.prepared<unknown, [string]>('DELETE FROM webhook_deliveries WHERE webhook_id = ?').run(id);
          this.prepared<unknown, [string]>('DELETE FROM webhooks WHERE id = ?').run(id);
          return true;
        })
        .immediate(),
    );
  }

  alertCandidates(orgId: OrganizationId, cutoffs: { staleBefore: string; reenrolledAfter: string }): Promise<AlertCandidates> {
    return settle(() =>
      this.db
        .transaction((): AlertCandidates => {
          const failing = this.prepared<{ device_id: string; check_key: string; since: string }, [string]>(
            `SELECT lr.device_id, lr.check_key, lr.status_since AS since FROM latest_results lr JOIN devices d ON d.id = lr.device_id
             WHERE lr.org_id = ? AND lr.status = 'FAIL' AND d.state = 'ACTIVE' AND NOT EXISTS (
               SELECT 1 FROM alert_marks m WHERE m.device_id = lr.device_id AND m.kind = 'failing' AND m.subject = lr.check_key)`,
          ).all(orgId);
          const ended = this.prepared<
            { device_id: string; subject: string; since: string; status: PostureStatus | null; state: DeviceState },
            [string]
          >(
            `SELECT m.device_id, m.subject, m.since, lr.status, d.state FROM alert_marks m JOIN devices d ON d.id = m.device_id
             LEFT JOIN latest_results lr ON lr.device_id = m.device_id AND lr.check_key = m.subject
             WHERE m.org_id = ? AND m.kind = 'failing'
               AND (lr.status IS NULL OR lr.status <> 'FAIL' OR lr.status_since <> m.since OR d.state <> 'ACTIVE')`,
          ).all(orgId);
          const stale = this.prepared<{ id: string; last_seen_at: string }, [string, string]>(
            `SELECT d.id, d.last_seen_at FROM devices d WHERE d.org_id = ? AND d.state = 'ACTIVE' AND d.last_seen_at < ?
               AND NOT EXISTS (SELECT 1 FROM alert_marks m WHERE m.device_id = d.id AND m.kind = 'stale')`,
          ).all(orgId, cutoffs.staleBefore);
          const staleEnded = this.prepared<{ device_id: string; since: string }, [string]>(
            `SELECT m.device_id, m.since FROM alert_marks m JOIN devices d ON d.id = m.device_id
             WHERE m.org_id = ? AND m.kind = 'stale' AND (d.state <> 'ACTIVE' OR d.last_seen_at > m.since)`,
          ).all(orgId);
          const reenrolled = this.prepared<{ id: string; supersedes: string; created_at: string }, [string, string]>(
            `SELECT d.id, d.supersedes, d.created_at FROM devices d WHERE d.org_id = ? AND d.supersedes IS NOT NULL AND d.created_at > ?
               AND NOT EXISTS (SELECT 1 FROM alert_marks m WHERE m.device_id = d.id AND m.kind = 'reenrolled')`,
          ).all(orgId, cutoffs.reenrolledAfter);
          return {
            failing: failing.map((r) => ({ deviceId: r.device_id as DeviceId, checkKey: r.check_key, since: r.since })),
            ended: ended.map((r) => ({
              mark: { orgId, deviceId: r.device_id as DeviceId, kind: 'failing', subject: r.subject, since: r.since },
              status: r.status,
              deviceState: r.state,
            })),
            stale: stale.map((r) => ({ deviceId: r.id as DeviceId, lastSeenAt: r.last_seen_at })),
            staleEnded: staleEnded.map((r) => ({ orgId, deviceId: r.device_id as DeviceId, kind: 'stale', subject: '', since: r.since })),
            reenrolled: reenrolled.map((r) => ({
              deviceId: r.id as DeviceId,
              supersedes: r.supersedes as DeviceId,
              createdAt: r.created_at,
            })),
          };
        })
        .deferred(),
    );
  }

  recordAlert(change: { raise: AlertMark } | { clear: AlertMark }, deliveries: readonly NewDelivery[], now: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const changed =
            'raise' in change
              ? this.prepared<unknown, unknown[]>(
                  `INSERT INTO alert_marks (org_id, device_id, kind, subject, since) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT (device_id, kind, subject) DO NOTHING`,
                ).run(change.raise.orgId, change.raise.deviceId, change.raise.kind, change.raise.subject, change.raise.since).changes
              : this.prepared<unknown, unknown[]>(
                  'DELETE FROM alert_marks WHERE device_id = ? AND kind = ? AND subject = ? AND since = ?',
                ).run(change.clear.deviceId, change.clear.kind, change.clear.subject, change.clear.since).changes;
          if (changed !== 1) return false;
          const insert = this.prepared<unknown, unknown[]>(
            `INSERT INTO webhook_deliveries (webhook_id, org_id, event_id, event_type, device_id, body, state, attempts, next_attempt_at, created_at)
             VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
          );
          for (const d of deliveries) insert.run(d.webhookId, d.orgId, d.eventId, d.eventType, d.deviceId, d.body, now, now);
          return true;
        })
        .immediate(),
    );
  }

  dueDeliveries(now: string, limit: number): Promise<DueDelivery[]> {
    return settle(() =>
      this.prepared<DeliveryRow, [string, number]>(
        `SELECT ${DELIVERY_COLUMNS}, w.url, w.secret FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.id LIMIT ?`,
      )
        .all(now, limit)
        .map(toDueDelivery),
    );
  }

  claimDelivery(id: number, now: string, leaseUntil: string): Promise<boolean> {
    return this.write(
      () =>
        this.prepared<unknown, [string, number, string]>(
          `UPDATE webhook_deliveries SET next_attempt_at = ?, attempts = attempts + 1
           WHERE id = ? AND state = 'pending' AND next_attempt_at <= ?`,
        ).run(leaseUntil, id, now).changes === 1,
    );
  }

  finishDelivery(id: number, outcome: DeliveryOutcome): Promise<void> {
    return this.write(() => {
      this.prepared<unknown, unknown[]>(
        'UPDATE webhook_deliveries SET state = ?, last_status = ?, last_error = ?, next_attempt_at = ?, finished_at = ? WHERE id = ?',
      ).run(outcome.state, outcome.lastStatus, outcome.lastError, outcome.nextAttemptAt, outcome.finishedAt, id);
    });
  }

  deliveryLog(orgId: OrganizationId | null, webhookId: string | undefined, limit: number): Promise<DeliveryRecord[]> {
    return settle(() =>
      this.prepared<DeliveryRow, [string | null, string | null, string | null, string | null, number]>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
         WHERE (? IS NULL OR d.org_id = ?) AND (? IS NULL OR d.webhook_id = ?) ORDER BY d.id DESC LIMIT ?`,
      )
        .all(orgId, orgId, webhookId ?? null, webhookId ?? null, limit)
        .map(toDelivery),
    );
  }

  ownPolicyDocuments(orgId: OrganizationId | null): Promise<{ orgId: OrganizationId; document: string }[]> {
    return settle(() =>
      this.prepared<{ org_id: OrganizationId; document: string }, [string | null, string | null]>(
        "SELECT org_id, document FROM policies WHERE label = '' AND (? IS NULL OR org_id = ?) ORDER BY org_id",
      )
        .all(orgId, orgId)
        .map((row) => ({ orgId: row.org_id, document: row.document })),
    );
  }

  deleteDeliveriesBefore(cutoff: string, limit: number): Promise<number> {
    return this.write(
      () =>
        this.prepared<unknown, [string, number]>(
          `DELETE FROM webhook_deliveries WHERE id IN (
             SELECT id FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ? LIMIT ?)`,
        ).run(cutoff, limit).changes,
    );
  }

  private prepared<R, P extends unknown[] = [Record<string, unknown>]>(sql: string): Statement<P, R> {
    let statement = this.dynamic.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.dynamic.set(sql, statement);
    }
    return statement as unknown as Statement<P, R>;
  }

  exchangeToken(
    tokenHash: string,
    apiKeyHash: string,
    now: string,
    mayEnroll: (facts: EnrollmentFacts) => boolean,
  ): Promise<DeviceId | undefined> {
    return this.write(() => {
      const st = this.statements;
      return this.db
        .transaction(() => {
          const token = st.consumeToken.get(tokenHash);
          const device = token && st.enrollmentOfDevice.get(token.device_id);
          if (!token || !device) return undefined;
          if (!mayEnroll({ tokenExpiresAt: token.expires_at, state: device.state, hasApiKey: device.has_api_key === 1 })) return undefined;
          st.setApiKey.run(apiKeyHash, now, token.device_id);
          return token.device_id;
        })
        .immediate();
    });
  }

  authenticate(apiKeyHash: string): Promise<AuthenticatedDevice | undefined> {
    return settle(() => {
      const row = this.statements.deviceByKey.get(apiKeyHash);
      return row && { id: row.id, orgId: row.org_id, state: row.state };
    });
  }

  externalChanges(): Promise<number> {
    return settle(() => this.statements.dataVersion.get() as number);
  }

  recordDevicesSeen(seen: readonly DeviceSeen[], states: readonly DeviceState[]): Promise<void> {
    return this.write(() => {
      const deviceSeen = this.prepared<unknown, unknown[]>(
        `UPDATE devices SET last_seen_at = ?
         WHERE state ${inStates(states)} AND id = ? AND org_id = ? AND (last_seen_at IS NULL OR last_seen_at < ?)`,
      );
      this.db
        .transaction(() => {
          for (const { device, at } of seen) deviceSeen.run(at, ...states, device.id, device.orgId, at);
        })
        .immediate();
    });
  }

  recordHeartbeat(device: DeviceRef, attributes: DeviceAttributes, now: string, transition: Transition): Promise<HeartbeatWrite> {
    return this.write(() => {
      const recordHeartbeat = this.prepared<unknown, unknown[]>(
        `UPDATE devices SET
           hardware_uuid = @hardware_uuid, serial_number = @serial_number, hostname = @hostname,
           platform = @platform, os_version = @os_version, agent_version = @agent_version,
           state = @to, activated_at = COALESCE(activated_at, @now), last_seen_at = @now
         WHERE state ${inStates(transition.from)} AND id = @id AND org_id = @org_id`,
      );
      try {
        const { changes } = recordHeartbeat.run(...transition.from, {
          id: device.id,
          org_id: device.orgId,
          now,
          to: transition.to,
          hardware_uuid: attributes.hardwareUuid,
          serial_number: attributes.serialNumber,
          hostname: attributes.hostname,
          platform: attributes.platform,
          os_version: attributes.osVersion,
          agent_version: attributes.agentVersion,
        });
        return changes === 1 ? 'written' : 'state_refused';
      } catch (error) {
        if (isUniqueViolation(error)) return 'hardware_uuid_taken';
        throw error;
      }
    });
  }

  recordPostures<Refusal>(
    device: DeviceRef,
    reads: PostureReads,
    now: string,
    decide: (facts: PostureFacts) => PostureDecision<Refusal>,
  ): Promise<PostureDecision<Refusal>> {
    return this.write(() => {
      const st = this.statements;
      return this.db
        .transaction((): PostureDecision<Refusal> => {
          const decision = decide({
            state: st.stateOfDevice.get(device.id, device.orgId)?.state,
            ownReports: new Set(reads.reportIds.filter((id) => st.reportInOrganization.get(id, device.orgId))),
            checkKeys: new Set(reads.checkKeys ? st.checkKeysOfDevice.all(device.id) : []),
          });
          if ('refuse' in decision) return decision;
          const { newReport, results } = decision.write;
          if (newReport !== null) st.insertReport.run(newReport, device.orgId, device.id, now);
          // The newest of the batch's results of each check becomes that check's latest result:
          // one upsert per check, not one per result (as on PostgreSQL).
          const latest = new Map<string, { id: number; result: ResultToWrite; evidence: string | null }>();
          for (const r of results) {
            const evidence = r.evidence === null ? null : JSON.stringify(r.evidence);
            const { lastInsertRowid } = st.insertResult.run(
              device.orgId,
              device.id,
              r.reportId,
              r.checkKey,
              r.status,
              evidence,
              r.observedAt,
              now,
            );
            latest.set(r.checkKey, { id: Number(lastInsertRowid), result: r, evidence });
          }
          for (const { id, result: r, evidence } of latest.values()) {
            const continued = r.runOpensUpload ? null : r.runStartedAt;
            const refreshed = st.refreshLatest.run(
              id,
              r.reportId,
              evidence,
              r.observedAt,
              now,
              continued,
              device.id,
              r.checkKey,
              r.status,
            ).changes;
            if (refreshed === 0)
              st.upsertLatest.run(
                device.orgId,
                device.id,
                r.checkKey,
                id,
                r.reportId,
                r.status,
                evidence,
                r.observedAt,
                now,
                r.runStartedAt,
              );
          }
          return decision;
        })
        .immediate();
    });
  }

  revokeDevice(device: DeviceRef, now: string, transition: Transition): Promise<boolean> {
    return this.write(() => {
      const st = this.statements;
      const revoke = this.prepared<unknown, unknown[]>(
        `UPDATE devices SET state = ?, api_key_hash = NULL, revoked_at = ? WHERE id = ? AND org_id = ? AND state ${inStates(transition.from)}`,
      );
      return this.db
        .transaction(() => {
          st.deleteTokenOfDevice.run(device.id, device.orgId);
          return revoke.run(transition.to, now, device.id, device.orgId, ...transition.from).changes === 1;
        })
        .immediate();
    });
  }

  createEnrollSecret(input: NewEnrollSecret): Promise<EnrollSecretId> {
    return this.write(() => {
      const st = this.statements;
      return this.db
        .transaction(() => {
          st.insertOrganization.run(newId('organization'), input.orgName, input.now);
          const org = st.organizationByName.get(input.orgName);
          if (!org) throw new Error('organization vanished while creating an enrollment secret');
          const id = newId('enrollSecret');
          const labels = JSON.stringify(input.labels);
          st.insertEnrollSecret.run(id, org.id, input.secretHash, labels, input.note, input.expiresAt, input.maxUses, input.now);
          return id;
        })
        .immediate();
    });
  }

  findEnrollSecret(id: string): Promise<EnrollSecretRecord | undefined> {
    return settle(() => {
      const row = this.statements.enrollSecretById.get(id);
      return row && toEnrollSecret(row, (time) => time, parseLabels);
    });
  }

  listEnrollSecrets(scope: OrgScope, orgName: string | undefined): Promise<EnrollSecretRecord[]> {
    return settle(() => {
      const { conditions, params } = scopeConditions(scope, orgName, 's.org_id');
      const sql = `SELECT ${ENROLL_SECRET_COLUMNS} ${where(conditions)} ORDER BY s.created_at, s.id`;
      return this.prepared<EnrollSecretRow<string, string>>(sql)
        .all(params)
        .map((row) => toEnrollSecret(row, (time) => time, parseLabels));
    });
  }

  revokeEnrollSecret(id: string, now: string): Promise<boolean> {
    return this.write(() => this.statements.revokeEnrollSecret.run(now, id).changes === 1);
  }

  registerDevice(
    secretHash: string,
    registration: NewRegistration,
    decide: (facts: RegistrationFacts) => RegistrationDecision,
  ): Promise<RegistrationWrite> {
    return this.write(() => {
      const st = this.statements;
      const { attributes: a, now } = registration;
      return this.db
        .transaction((): RegistrationWrite => {
          const secretRow = st.secretByHash.get(secretHash);
          const secret = secretRow && toEnrollSecret(secretRow, (time) => time, parseLabels);
          const holderRow = secret && st.holderOfHardwareUuid.get(secret.orgId, a.hardwareUuid);
          const holder: HolderOfHardwareUuid | undefined = holderRow && toHolder(holderRow, (time) => time);
          const decision = decide({ secret, holder });
          if (decision.kind === 'refuse' || !secret) return { kind: 'refused' };
          const device = { id: decision.kind === 'reissue' ? decision.device : newId('device'), orgId: secret.orgId };
          if (decision.kind === 'reissue') {
            st.deleteTokenOf.run(device.id);
            st.dropUnreceivedKey.run(device.id);
          } else {
            if (st.useEnrollSecret.run({ id: secret.id, now }).changes !== 1) return { kind: 'refused' };
            if (decision.supersede !== null) st.supersede.run({ id: decision.supersede, by: device.id, now });
            if (decision.supersede !== null) st.deleteTokenOf.run(decision.supersede);
            if (decision.duplicateOf !== null) st.markDuplicate.run(device.id, decision.duplicateOf);
            st.insertRegisteredDevice.run({
              id: device.id,
              org_id: secret.orgId,
              state: 'PENDING',
              now,
              hardware_uuid: decision.duplicateOf === null ? a.hardwareUuid : null,
              serial_number: a.serialNumber,
              hostname: a.hostname,
              platform: a.platform,
              os_version: a.osVersion,
              agent_version: a.agentVersion,
              secret_id: secret.id,
              supersedes: decision.supersede,
              duplicate_of: decision.duplicateOf,
            });
            for (const [key, value] of Object.entries(secret.labels)) st.insertLabel.run(device.id, key, value);
          }
          st.insertToken.run(registration.tokenHash, device.id, registration.tokenExpiresAt);
          return { kind: 'registered', device, secretId: secret.id, decision };
        })
        .immediate();
    });
  }

  deviceLabels(device: DeviceId): Promise<Labels> {
    return settle(() => Object.fromEntries(this.statements.labelsOfDevice.all(device).map((row) => [row.key, row.value])));
  }

  changeDeviceLabels(device: DeviceRef, decide: (current: Labels) => Labels): Promise<LabelChange | undefined> {
    return this.write(() =>
      this.db
        .transaction((): LabelChange | undefined => {
          const found = this.prepared<{ id: string }, [string, string]>('SELECT id FROM devices WHERE id = ? AND org_id = ?').get(
            device.id,
            device.orgId,
          );
          if (!found) return undefined;
          const before = Object.fromEntries(this.statements.labelsOfDevice.all(device.id).map((row) => [row.key, row.value]));
          const after = decide(before);
          let version = this.policyVersion(device.orgId);
          if (!sameLabels(before, after)) {
            this.prepared<unknown, [string]>('DELETE FROM device_labels WHERE device_id = ?').run(device.id);
            for (const [key, value] of Object.entries(after)) this.statements.insertLabel.run(device.id, key, value);
            version += 1;
            this.prepared<unknown, [number, string]>('UPDATE organizations SET labels_version = ? WHERE id = ?').run(version, device.orgId);
            this.movePolicyGeneration();
          }
          return { before, after, version };
        })
        .immediate(),
    );
  }

  deleteResultsReceivedBefore(cutoff: string, limit: number): Promise<number> {
    return this.write(() => this.statements.deleteResultsReceivedBefore.run(cutoff, limit).changes);
  }

  devicesWithMoreResultsThan(keep: number, seenSince: string | null): Promise<DeviceRef[]> {
    return settle(() =>
      this.statements.devicesWithMoreResultsThan.all({ keep, since: seenSince }).map((row) => ({ id: row.id, orgId: row.org_id })),
    );
  }

  deleteResultsBeyond(device: DeviceRef, keep: number, limit: number): Promise<number> {
    return this.write(() => this.statements.deleteResultsBeyond.run({ org_id: device.orgId, device_id: device.id, keep, limit }).changes);
  }

  deleteLatestReceivedBefore(cutoff: string, limit: number): Promise<number> {
    return this.write(() => this.statements.deleteLatestReceivedBefore.run(cutoff, limit).changes);
  }

  deleteEmptyReportsCreatedBefore(cutoff: string, limit: number): Promise<number> {
    return this.write(() => this.statements.deleteEmptyReportsCreatedBefore.run(cutoff, limit).changes);
  }
}

/** The value of a synchronous call as a promise; its throw as a rejection. */
export function settle<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

const parseLabels = (text: string) => JSON.parse(text) as Labels;

function toStoredResult(row: PostureRow): StoredPostureResult {
  return {
    id: row.id,
    reportId: row.report_id as PostureReportId,
    checkKey: row.check_key,
    status: row.status,
    evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as Record<string, unknown>),
    observedAt: row.observed_at,
    receivedAt: row.received_at,
  };
}

function toAdminToken(row: AdminTokenRow): AdminTokenRecord {
  return {
    id: row.id as AdminTokenId,
    orgId: row.org_id as OrganizationId | null,
    orgName: row.org_name,
    label: row.label,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function toSignInAttempts(row: SignInAttemptsRow): SignInAttempts {
  return {
    attempts: row.attempts,
    firstAt: row.first_at,
    lastAt: row.last_at,
    lastAddress: row.last_address,
    blockedUntil: row.blocked_until,
  };
}

function signInAttemptsRow(accountKey: string, attempts: SignInAttempts): SignInAttemptsRow {
  return {
    account_key: accountKey,
    attempts: attempts.attempts,
    first_at: attempts.firstAt,
    last_at: attempts.lastAt,
    last_address: attempts.lastAddress,
    blocked_until: attempts.blockedUntil,
  };
}

function toAdminAccount(row: AdminAccountRow): AdminAccountRecord {
  return {
    id: row.id as AdminAccountId,
    email: row.email,
    passwordHash: row.password_hash,
    orgId: row.org_id as OrganizationId | null,
    orgName: row.org_name,
    createdAt: row.created_at,
  };
}

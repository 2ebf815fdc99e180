// The PostgreSQL engine of the store (store.ts says what each operation means), for several server
// processes and machines on one database. Every guarantee that must hold across processes is the
// database's: an enrollment token is consumed by one DELETE … RETURNING (a second exchange waits
// for the first to commit, then finds nothing); a hardware_uuid is decided by the partial unique
// index; a posture upload locks its device row first, so a revocation committed elsewhere is seen.
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { PostureStatus } from '../../protocol/schemas';
import { POSTGRES_SCHEMA_VERSION, schemaVersion } from './postgresMigrations';
import { newId, parseId, type DeviceId, type OrganizationId, type PostureReportId } from '../ids';
import {
  devicesByState,
  type AuthenticatedDevice,
  type DeviceAttributes,
  type DeviceRecord,
  type DeviceRef,
  type DeviceSeen,
  type DeviceState,
  type HeartbeatOutcome,
  type NewPostureResult,
  type PoolUse,
  type PosturesOutcome,
  type RevokeOutcome,
  type SchemaVersions,
  type Store,
  type StoredPostureResult,
} from './store';
import { DEVICE_COLUMNS, toDeviceRecord, type DeviceRow } from './deviceRows';

/** What a query runs on: the pool (one statement, its own transaction) or a transaction's client. */
type Queryable = Pick<Pool | PoolClient, 'query'>;

interface PostureRow {
  report_id: string;
  check_key: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observed_at: string;
  received_at: Date;
}

const HARDWARE_UUID_INDEX = 'devices_hardware_uuid_per_org';

function isUniqueViolationOf(error: unknown, constraint: string): boolean {
  const fields = error as { code?: unknown; constraint?: unknown };
  return error instanceof Error && fields.code === '23505' && fields.constraint === constraint;
}

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
  const client = await pool.connect();
  // Stays set when BEGIN, COMMIT or ROLLBACK fails: the connection is in an unknown state, so it is discarded.
  let broken = true;
  try {
    await client.query('BEGIN');
    let result: T;
    try {
      result = await work(client);
    } catch (error) {
      await client.query('ROLLBACK');
      broken = false;
      throw error;
    }
    await client.query(commits(result) ? 'COMMIT' : 'ROLLBACK');
    broken = false;
    return result;
  } finally {
    client.release(broken);
  }
}

export class PostgresStore implements Store {
  /** See externalChanges. */
  private calls = 0;

  constructor(private readonly pool: Pool) {}

  async close(): Promise<void> {
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

  async createDevice(input: {
    orgName: string;
    name: string | null;
    tokenHash: string;
    tokenExpiresAt: string;
    now: string;
  }): Promise<DeviceId> {
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
      await db.query("INSERT INTO devices (id, org_id, name, state, created_at) VALUES ($1, $2, $3, 'PENDING', $4)", [
        deviceId,
        org.id,
        input.name,
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
      `SELECT report_id, check_key, status, evidence, observed_at, received_at
       FROM posture_results WHERE org_id = $1 AND device_id = $2 ORDER BY id`,
      [device.orgId, device.id],
    );
    return found.map((row) => ({
      reportId: row.report_id as PostureReportId,
      checkKey: row.check_key,
      status: row.status,
      evidence: row.evidence,
      observedAt: row.observed_at,
      receivedAt: row.received_at.toISOString(),
    }));
  }

  async exchangeToken(tokenHash: string, apiKeyHash: string, now: string): Promise<DeviceId | undefined> {
    return inTransaction(this.pool, async (db) => {
      // Single use: deleting the row is what consumes the token. A concurrent exchange of the same
      // token waits on the row lock and then deletes nothing. An expired token is deleted too.
      const [token] = await rows<{ device_id: DeviceId; expires_at: Date }>(
        db,
        'DELETE FROM enrollment_tokens WHERE token_hash = $1 RETURNING device_id, expires_at',
        [tokenHash],
      );
      if (!token || token.expires_at.getTime() <= Date.parse(now)) return undefined;
      const updated = await changes(
        db,
        "UPDATE devices SET api_key_hash = $1, enrolled_at = $2 WHERE id = $3 AND state = 'PENDING' AND api_key_hash IS NULL",
        [apiKeyHash, now, token.device_id],
      );
      return updated === 1 ? token.device_id : undefined;
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
   * between): a new value on every call keeps the device cache off, and every request
   * authenticates against the database.
   */
  externalChanges(): Promise<number> {
    this.calls += 1;
    return Promise.resolve(this.calls);
  }

  async recordDevicesSeen(seen: readonly DeviceSeen[]): Promise<void> {
    if (seen.length === 0) return;
    await changes(
      this.pool,
      `UPDATE devices d SET last_seen_at = s.at
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS s(id, org_id, at)
       WHERE d.id = s.id AND d.org_id = s.org_id AND d.state = 'ACTIVE' AND (d.last_seen_at IS NULL OR d.last_seen_at < s.at)`,
      [seen.map((s) => s.device.id), seen.map((s) => s.device.orgId), seen.map((s) => s.at)],
    );
  }

  async recordHeartbeat(device: AuthenticatedDevice, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome> {
    try {
      const updated = await changes(
        this.pool,
        `UPDATE devices SET
           hardware_uuid = $3, serial_number = $4, hostname = $5, platform = $6, os_version = $7, agent_version = $8,
           state = 'ACTIVE', activated_at = COALESCE(activated_at, $9), last_seen_at = $9
         WHERE id = $1 AND org_id = $2 AND state <> 'REVOKED'`,
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
        ],
      );
      return updated === 1 ? { kind: 'recorded' } : { kind: 'revoked' };
    } catch (error) {
      if (isUniqueViolationOf(error, HARDWARE_UUID_INDEX)) return { kind: 'conflict' };
      throw error;
    }
  }

  async recordPostures(device: AuthenticatedDevice, results: readonly NewPostureResult[], now: string): Promise<PosturesOutcome> {
    return inTransaction(
      this.pool,
      async (db): Promise<PosturesOutcome> => {
        // First, lock the device row (and touch it): a revocation committed by another process before
        // this point is seen here, and one made after waits until these results are stored.
        const touched = await changes(db, "UPDATE devices SET last_seen_at = $1 WHERE id = $2 AND org_id = $3 AND state = 'ACTIVE'", [
          now,
          device.id,
          device.orgId,
        ]);
        if (touched !== 1) return { kind: 'not_active' };
        const known = new Set<string>();
        for (const [index, result] of results.entries()) {
          const id = result.correlationId;
          if (id === null || known.has(id)) continue;
          const reportId = parseId('postureReport', id);
          const found =
            reportId && (await rows(db, 'SELECT 1 FROM posture_reports WHERE id = $1 AND org_id = $2', [reportId, device.orgId]));
          if (!found || found.length === 0) return { kind: 'invalid_correlation_id', index };
          known.add(id);
        }
        let createdReportId: PostureReportId | null = null;
        if (results.some((r) => r.correlationId === null)) {
          createdReportId = newId('postureReport');
          await db.query('INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES ($1, $2, $3, $4)', [
            createdReportId,
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
        };
        for (const r of results) {
          const reportId = r.correlationId ?? createdReportId;
          if (reportId === null) throw new Error('result without a posture report');
          columns.report.push(reportId);
          columns.key.push(r.checkKey);
          columns.status.push(r.status);
          columns.evidence.push(r.evidence === null ? null : JSON.stringify(r.evidence));
          columns.observed.push(r.observedAt);
        }
        await db.query(
          `INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
         SELECT $1, $2, r.report_id, r.check_key, r.status, r.evidence::json, r.observed_at, $8
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
              WITH ORDINALITY AS r(report_id, check_key, status, evidence, observed_at, position)
         ORDER BY r.position`,
          [device.orgId, device.id, columns.report, columns.key, columns.status, columns.evidence, columns.observed, now],
        );
        return { kind: 'recorded', createdReportId };
      },
      (outcome) => outcome.kind === 'recorded',
    );
  }

  async revokeDevice(device: DeviceRef, now: string): Promise<RevokeOutcome> {
    return inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM enrollment_tokens WHERE device_id = (SELECT id FROM devices WHERE id = $1 AND org_id = $2)', [
        device.id,
        device.orgId,
      ]);
      const revoked = await changes(
        db,
        "UPDATE devices SET state = 'REVOKED', api_key_hash = NULL, revoked_at = $1 WHERE id = $2 AND org_id = $3 AND state <> 'REVOKED'",
        [now, device.id, device.orgId],
      );
      return revoked === 1 ? 'revoked' : 'already_revoked';
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
}

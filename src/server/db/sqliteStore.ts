// The SQLite engine of the store (store.ts says what each operation means): every statement as a
// prepared statement; multi-statement writes in BEGIN IMMEDIATE transactions. better-sqlite3 is
// synchronous; `settle` turns each call's value or throw into the interface's promise.
import type { Database, Statement } from 'better-sqlite3';
import type { Platform, PostureStatus } from '../../protocol/schemas';
import { newId, parseId, type DeviceId, type OrganizationId, type PostureReportId } from '../ids';
import type {
  AuthenticatedDevice,
  DeviceAttributes,
  DeviceRecord,
  DeviceRef,
  DeviceState,
  HeartbeatOutcome,
  NewPostureResult,
  PosturesOutcome,
  RevokeOutcome,
  Store,
  StoredPostureResult,
} from './store';

interface DeviceRow {
  id: string;
  org_id: string;
  org_name: string;
  name: string | null;
  state: DeviceState;
  hardware_uuid: string | null;
  serial_number: string | null;
  hostname: string | null;
  platform: Platform | null;
  os_version: string | null;
  agent_version: string | null;
  created_at: string;
  enrolled_at: string | null;
  activated_at: string | null;
  last_seen_at: string | null;
  revoked_at: string | null;
  token_expires_at: string | null;
}

interface PostureRow {
  report_id: string;
  check_key: string;
  status: PostureStatus;
  evidence: string | null;
  observed_at: string;
  received_at: string;
}

const DEVICE_COLUMNS = `
  d.id, d.org_id, o.name AS org_name, d.name, d.state, d.hardware_uuid, d.serial_number, d.hostname,
  d.platform, d.os_version, d.agent_version, d.created_at, d.enrolled_at, d.activated_at,
  d.last_seen_at, d.revoked_at, t.expires_at AS token_expires_at
  FROM devices d
  JOIN organizations o ON o.id = d.org_id
  LEFT JOIN enrollment_tokens t ON t.device_id = d.id`;

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export class SqliteStore implements Store {
  private readonly statements;

  constructor(private readonly db: Database) {
    const s = <P extends unknown[] | object = unknown[], R = unknown>(sql: string): Statement<P, R> => db.prepare<P, R>(sql);
    this.statements = {
      ping: s<[], { ok: number }>('SELECT 1 AS ok'),
      getSetting: s<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      putSetting: s<[string, string]>(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      insertOrganization: s<[string, string, string]>(
        'INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
      ),
      organizationByName: s<[string], { id: OrganizationId }>('SELECT id FROM organizations WHERE name = ?'),
      insertDevice: s<[string, string, string | null, string]>(
        "INSERT INTO devices (id, org_id, name, state, created_at) VALUES (?, ?, ?, 'PENDING', ?)",
      ),
      insertToken: s<[string, string, string]>('INSERT INTO enrollment_tokens (token_hash, device_id, expires_at) VALUES (?, ?, ?)'),
      deviceById: s<[string], DeviceRow>(`SELECT ${DEVICE_COLUMNS} WHERE d.id = ?`),
      allDevices: s<[], DeviceRow>(`SELECT ${DEVICE_COLUMNS} ORDER BY o.name, d.created_at, d.id`),
      devicesOfOrganization: s<[string], DeviceRow>(`SELECT ${DEVICE_COLUMNS} WHERE o.name = ? ORDER BY d.created_at, d.id`),
      // Single use: deleting the row is what consumes the token, atomically.
      consumeToken: s<[string], { device_id: DeviceId; expires_at: string }>(
        'DELETE FROM enrollment_tokens WHERE token_hash = ? RETURNING device_id, expires_at',
      ),
      setApiKey: s<[string, string, string]>(
        "UPDATE devices SET api_key_hash = ?, enrolled_at = ? WHERE id = ? AND state = 'PENDING' AND api_key_hash IS NULL",
      ),
      deviceByKey: s<[string], { id: DeviceId; org_id: OrganizationId; state: DeviceState }>(
        'SELECT id, org_id, state FROM devices WHERE api_key_hash = ?',
      ),
      stateOfDevice: s<[string, string], { state: DeviceState }>('SELECT state FROM devices WHERE id = ? AND org_id = ?'),
      recordHeartbeat: s<
        [
          {
            id: string;
            org_id: string;
            now: string;
            hardware_uuid: string;
            serial_number: string | null;
            hostname: string;
            platform: string;
            os_version: string;
            agent_version: string;
          },
        ]
      >(`UPDATE devices SET
           hardware_uuid = @hardware_uuid, serial_number = @serial_number, hostname = @hostname,
           platform = @platform, os_version = @os_version, agent_version = @agent_version,
           state = 'ACTIVE', activated_at = COALESCE(activated_at, @now), last_seen_at = @now
         WHERE id = @id AND org_id = @org_id AND state <> 'REVOKED'`),
      touchDevice: s<[string, string, string]>('UPDATE devices SET last_seen_at = ? WHERE id = ? AND org_id = ?'),
      reportInOrganization: s<[string, string], { id: string }>('SELECT id FROM posture_reports WHERE id = ? AND org_id = ?'),
      insertReport: s<[string, string, string, string]>(
        'INSERT INTO posture_reports (id, org_id, device_id, created_at) VALUES (?, ?, ?, ?)',
      ),
      insertResult: s<[string, string, string, string, string, string | null, string, string]>(
        `INSERT INTO posture_results (org_id, device_id, report_id, check_key, status, evidence, observed_at, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      posturesOfDevice: s<[string, string], PostureRow>(
        `SELECT report_id, check_key, status, evidence, observed_at, received_at
         FROM posture_results WHERE org_id = ? AND device_id = ? ORDER BY id`,
      ),
      revokeDevice: s<[string, string, string]>(
        "UPDATE devices SET state = 'REVOKED', api_key_hash = NULL, revoked_at = ? WHERE id = ? AND org_id = ? AND state <> 'REVOKED'",
      ),
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
      deleteEmptyReportsCreatedBefore: s<[string, number]>(
        `DELETE FROM posture_reports WHERE id IN (
           SELECT p.id FROM posture_reports p
           WHERE p.created_at < ? AND NOT EXISTS (SELECT 1 FROM posture_results r WHERE r.report_id = p.id)
           LIMIT ?)`,
      ),
    };
  }

  close(): Promise<void> {
    return settle(() => {
      this.db.close();
    });
  }

  ping(): Promise<void> {
    return settle(() => {
      this.statements.ping.get();
    });
  }

  getSetting(key: string): Promise<string | undefined> {
    return settle(() => this.statements.getSetting.get(key)?.value);
  }

  putSetting(key: string, value: string): Promise<void> {
    return settle(() => {
      this.statements.putSetting.run(key, value);
    });
  }

  createDevice(input: { orgName: string; name: string | null; tokenHash: string; tokenExpiresAt: string; now: string }): Promise<DeviceId> {
    return settle(() => {
      const st = this.statements;
      return this.db
        .transaction(() => {
          st.insertOrganization.run(newId('organization'), input.orgName, input.now);
          const org = st.organizationByName.get(input.orgName);
          if (!org) throw new Error('organization vanished while creating a device');
          const deviceId = newId('device');
          st.insertDevice.run(deviceId, org.id, input.name, input.now);
          st.insertToken.run(input.tokenHash, deviceId, input.tokenExpiresAt);
          return deviceId;
        })
        .immediate();
    });
  }

  findDevice(id: string): Promise<DeviceRecord | undefined> {
    return settle(() => {
      const row = this.statements.deviceById.get(id);
      return row && toDeviceRecord(row);
    });
  }

  listDevices(orgName?: string): Promise<DeviceRecord[]> {
    return settle(() => {
      const rows = orgName === undefined ? this.statements.allDevices.all() : this.statements.devicesOfOrganization.all(orgName);
      return rows.map(toDeviceRecord);
    });
  }

  listPostures(device: DeviceRef): Promise<StoredPostureResult[]> {
    return settle(() => {
      return this.statements.posturesOfDevice.all(device.orgId, device.id).map((row) => ({
        reportId: row.report_id as PostureReportId,
        checkKey: row.check_key,
        status: row.status,
        evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as Record<string, unknown>),
        observedAt: row.observed_at,
        receivedAt: row.received_at,
      }));
    });
  }

  exchangeToken(tokenHash: string, apiKeyHash: string, now: string): Promise<DeviceId | undefined> {
    return settle(() => {
      const st = this.statements;
      return this.db
        .transaction(() => {
          const token = st.consumeToken.get(tokenHash);
          if (!token || token.expires_at <= now) return undefined;
          return st.setApiKey.run(apiKeyHash, now, token.device_id).changes === 1 ? token.device_id : undefined;
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

  recordHeartbeat(device: AuthenticatedDevice, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome> {
    return settle(() => {
      try {
        const { changes } = this.statements.recordHeartbeat.run({
          id: device.id,
          org_id: device.orgId,
          now,
          hardware_uuid: attributes.hardwareUuid,
          serial_number: attributes.serialNumber,
          hostname: attributes.hostname,
          platform: attributes.platform,
          os_version: attributes.osVersion,
          agent_version: attributes.agentVersion,
        });
        return changes === 1 ? { kind: 'recorded' } : { kind: 'revoked' };
      } catch (error) {
        if (isUniqueViolation(error)) return { kind: 'conflict' };
        throw error;
      }
    });
  }

  recordPostures(device: AuthenticatedDevice, results: readonly NewPostureResult[], now: string): Promise<PosturesOutcome> {
    return settle(() => {
      const st = this.statements;
      return this.db
        .transaction((): PosturesOutcome => {
          if (st.stateOfDevice.get(device.id, device.orgId)?.state !== 'ACTIVE') return { kind: 'not_active' };
          const known = new Set<string>();
          for (const [index, result] of results.entries()) {
            const id = result.correlationId;
            if (id === null || known.has(id)) continue;
            const reportId = parseId('postureReport', id);
            if (!reportId || !st.reportInOrganization.get(reportId, device.orgId)) return { kind: 'invalid_correlation_id', index };
            known.add(id);
          }
          let createdReportId: PostureReportId | null = null;
          if (results.some((r) => r.correlationId === null)) {
            createdReportId = newId('postureReport');
            st.insertReport.run(createdReportId, device.orgId, device.id, now);
          }
          for (const r of results) {
            const reportId = r.correlationId ?? createdReportId;
            if (reportId === null) throw new Error('result without a posture report');
            const evidence = r.evidence === null ? null : JSON.stringify(r.evidence);
            st.insertResult.run(device.orgId, device.id, reportId, r.checkKey, r.status, evidence, r.observedAt, now);
          }
          st.touchDevice.run(now, device.id, device.orgId);
          return { kind: 'recorded', createdReportId };
        })
        .immediate();
    });
  }

  revokeDevice(device: DeviceRef, now: string): Promise<RevokeOutcome> {
    return settle(() => {
      const st = this.statements;
      return this.db
        .transaction((): RevokeOutcome => {
          st.deleteTokenOfDevice.run(device.id, device.orgId);
          return st.revokeDevice.run(now, device.id, device.orgId).changes === 1 ? 'revoked' : 'already_revoked';
        })
        .immediate();
    });
  }

  deleteResultsReceivedBefore(cutoff: string, limit: number): Promise<number> {
    return settle(() => this.statements.deleteResultsReceivedBefore.run(cutoff, limit).changes);
  }

  devicesWithMoreResultsThan(keep: number, seenSince: string | null): Promise<DeviceRef[]> {
    return settle(() =>
      this.statements.devicesWithMoreResultsThan.all({ keep, since: seenSince }).map((row) => ({ id: row.id, orgId: row.org_id })),
    );
  }

  deleteResultsBeyond(device: DeviceRef, keep: number, limit: number): Promise<number> {
    return settle(() => this.statements.deleteResultsBeyond.run({ org_id: device.orgId, device_id: device.id, keep, limit }).changes);
  }

  deleteEmptyReportsCreatedBefore(cutoff: string, limit: number): Promise<number> {
    return settle(() => this.statements.deleteEmptyReportsCreatedBefore.run(cutoff, limit).changes);
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

function toDeviceRecord(row: DeviceRow): DeviceRecord {
  return {
    id: row.id as DeviceId,
    orgId: row.org_id as OrganizationId,
    orgName: row.org_name,
    name: row.name,
    state: row.state,
    hardwareUuid: row.hardware_uuid,
    serialNumber: row.serial_number,
    hostname: row.hostname,
    platform: row.platform,
    osVersion: row.os_version,
    agentVersion: row.agent_version,
    createdAt: row.created_at,
    enrolledAt: row.enrolled_at,
    activatedAt: row.activated_at,
    lastSeenAt: row.last_seen_at,
    revokedAt: row.revoked_at,
    tokenExpiresAt: row.token_expires_at,
  };
}

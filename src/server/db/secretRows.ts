// The enrollment-secret queries and row mappings both engines share: the same columns, read back
// with the engine's own types (SQLite: ISO text and JSON text; PostgreSQL: Date and jsonb).
import type { DeviceId, EnrollSecretId, OrganizationId } from '../ids';
import type { DeviceState, EnrollSecretRecord, HolderOfHardwareUuid, Labels } from './store';

/** `SELECT ${ENROLL_SECRET_COLUMNS} WHERE …`: a secret with its organization's name, never its hash. */
export const ENROLL_SECRET_COLUMNS = `
  s.id, s.org_id, o.name AS org_name, s.labels, s.note, s.expires_at, s.max_uses, s.uses, s.revoked_at, s.created_at
  FROM enroll_secrets s
  JOIN organizations o ON o.id = s.org_id`;

export interface EnrollSecretRow<Time, LabelsColumn> {
  id: string;
  org_id: string;
  org_name: string;
  labels: LabelsColumn;
  note: string | null;
  expires_at: Time | null;
  max_uses: number | null;
  uses: number;
  revoked_at: Time | null;
  created_at: Time;
}

export function toEnrollSecret<Time, LabelsColumn>(
  row: EnrollSecretRow<Time, LabelsColumn>,
  iso: (time: Time) => string,
  labels: (column: LabelsColumn) => Labels,
): EnrollSecretRecord {
  return {
    id: row.id as EnrollSecretId,
    orgId: row.org_id as OrganizationId,
    orgName: row.org_name,
    labels: labels(row.labels),
    note: row.note,
    expiresAt: row.expires_at === null ? null : iso(row.expires_at),
    maxUses: row.max_uses,
    uses: row.uses,
    revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
    createdAt: iso(row.created_at),
  };
}

/** `SELECT ${HOLDER_COLUMNS} FROM devices WHERE …`: what a registration reads of the device holding its hardware_uuid. */
export const HOLDER_COLUMNS = `id, state, enroll_secret_id, hostname, serial_number, created_at, enrolled_at, last_seen_at`;

export interface HolderRow<Time> {
  id: string;
  state: DeviceState;
  enroll_secret_id: string | null;
  hostname: string | null;
  serial_number: string | null;
  created_at: Time;
  enrolled_at: Time | null;
  last_seen_at: Time | null;
}

export function toHolder<Time>(row: HolderRow<Time>, iso: (time: Time) => string): HolderOfHardwareUuid {
  return {
    id: row.id as DeviceId,
    state: row.state,
    enrollSecretId: row.enroll_secret_id as EnrollSecretId | null,
    hostname: row.hostname,
    serialNumber: row.serial_number,
    createdAt: iso(row.created_at),
    enrolledAt: row.enrolled_at === null ? null : iso(row.enrolled_at),
    lastSeenAt: row.last_seen_at === null ? null : iso(row.last_seen_at),
  };
}

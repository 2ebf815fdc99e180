// The device query and row mapping both engines share: the same columns and joins, read back with
// the engine's own type of timestamp (SQLite: ISO text; PostgreSQL: timestamptz as Date).
import type { Platform } from '../../protocol/schemas';
import type { DeviceId, EnrollSecretId, OrganizationId } from '../ids';
import type { DeviceRecord, DeviceState } from './store';

const DEVICE_FIELDS = `
  d.id, d.org_id, o.name AS org_name, d.name, d.state, d.hardware_uuid, d.serial_number, d.hostname,
  d.platform, d.os_version, d.agent_version, d.created_at, d.enrolled_at, d.activated_at,
  d.last_seen_at, d.revoked_at, t.expires_at AS token_expires_at,
  d.enroll_secret_id, d.supersedes, d.superseded_by, d.duplicate_of`;
const DEVICE_FROM = `
  FROM devices d
  JOIN organizations o ON o.id = d.org_id
  LEFT JOIN enrollment_tokens t ON t.device_id = d.id`;

/** `SELECT ${DEVICE_COLUMNS} WHERE …`: a device with its organization's name and unused token's expiry. */
export const DEVICE_COLUMNS = DEVICE_FIELDS + DEVICE_FROM;

/** DEVICE_COLUMNS with more columns of the same rows (the list's, deviceListSql.ts). */
export const deviceColumnsAnd = (extra: string) => `${DEVICE_FIELDS}, ${extra}${DEVICE_FROM}`;

export interface DeviceRow<Time> {
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
  created_at: Time;
  enrolled_at: Time | null;
  activated_at: Time | null;
  last_seen_at: Time | null;
  revoked_at: Time | null;
  token_expires_at: Time | null;
  enroll_secret_id: string | null;
  supersedes: string | null;
  superseded_by: string | null;
  duplicate_of: string | null;
}

export function toDeviceRecord<Time>(row: DeviceRow<Time>, iso: (time: Time) => string): DeviceRecord {
  const optional = (time: Time | null) => (time === null ? null : iso(time));
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
    createdAt: iso(row.created_at),
    enrolledAt: optional(row.enrolled_at),
    activatedAt: optional(row.activated_at),
    lastSeenAt: optional(row.last_seen_at),
    revokedAt: optional(row.revoked_at),
    tokenExpiresAt: optional(row.token_expires_at),
    enrollSecretId: row.enroll_secret_id as EnrollSecretId | null,
    supersedes: row.supersedes as DeviceId | null,
    supersededBy: row.superseded_by as DeviceId | null,
    duplicateOf: row.duplicate_of as DeviceId | null,
  };
}

/** LIKE pattern matching `text` literally anywhere (escape character `\`), for the hostname filter. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

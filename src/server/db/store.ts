// The store: the engine-neutral interface between the server and its database, and the records it
// speaks in. Agent-facing operations are scoped by organization (tenant); the store sees only
// credential hashes, never plaintext.
import type { Platform, PostureStatus } from '../../protocol/schemas';
import type { DeviceId, OrganizationId, PostureReportId } from '../ids';

export type DeviceState = 'PENDING' | 'ACTIVE' | 'REVOKED';

export interface AuthenticatedDevice {
  id: DeviceId;
  orgId: OrganizationId;
  state: DeviceState;
}

export interface DeviceRecord {
  id: DeviceId;
  orgId: OrganizationId;
  orgName: string;
  name: string | null;
  state: DeviceState;
  hardwareUuid: string | null;
  serialNumber: string | null;
  hostname: string | null;
  platform: Platform | null;
  osVersion: string | null;
  agentVersion: string | null;
  createdAt: string;
  enrolledAt: string | null;
  activatedAt: string | null;
  lastSeenAt: string | null;
  revokedAt: string | null;
  /** Expiry of the device's unused enrollment token, if it still has one. */
  tokenExpiresAt: string | null;
}

export interface DeviceAttributes {
  hardwareUuid: string;
  serialNumber: string | null;
  hostname: string;
  platform: Platform;
  osVersion: string;
  agentVersion: string;
}

export interface NewPostureResult {
  checkKey: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observedAt: string;
  correlationId: string | null;
}

export interface StoredPostureResult {
  reportId: PostureReportId;
  checkKey: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observedAt: string;
  receivedAt: string;
}

export type HeartbeatOutcome = { kind: 'recorded' } | { kind: 'conflict' } | { kind: 'revoked' };

export type PosturesOutcome =
  | { kind: 'recorded'; createdReportId: PostureReportId | null }
  | { kind: 'not_active' }
  | { kind: 'invalid_correlation_id'; index: number };

export type RevokeOutcome = 'revoked' | 'already_revoked';

/** A device as tenant-scoped operations name it. */
export interface DeviceRef {
  id: DeviceId;
  orgId: OrganizationId;
}

/**
 * Everything the routes, the admin commands and the retention sweep ask of the database. Engines
 * (today SQLite, `sqliteStore.ts`) implement it; SQL never leaves `src/server/db/`. Every
 * operation is asynchronous, so an engine that talks to a database server over the network fits.
 */
export interface Store {
  close(): Promise<void>;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  getSetting(key: string): Promise<string | undefined>;
  putSetting(key: string, value: string): Promise<void>;

  /** A PENDING device in `orgName` (created when missing) with its enrollment token. */
  createDevice(input: { orgName: string; name: string | null; tokenHash: string; tokenExpiresAt: string; now: string }): Promise<DeviceId>;
  findDevice(id: string): Promise<DeviceRecord | undefined>;
  listDevices(orgName?: string): Promise<DeviceRecord[]>;
  /** The device's stored results, oldest first. */
  listPostures(device: DeviceRef): Promise<StoredPostureResult[]>;
  /** Revokes the device's API key and any unused enrollment token. */
  revokeDevice(device: DeviceRef, now: string): Promise<RevokeOutcome>;

  /**
   * Consumes an enrollment token and gives its device the API key. Undefined when the token is
   * unknown, already used, expired (it is deleted then too) or its device is not PENDING.
   */
  exchangeToken(tokenHash: string, apiKeyHash: string, now: string): Promise<DeviceId | undefined>;
  authenticate(apiKeyHash: string): Promise<AuthenticatedDevice | undefined>;
  recordHeartbeat(device: AuthenticatedDevice, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome>;
  /**
   * Stores one request's results atomically. Results without a correlation id share one new
   * posture report; a given correlation id must name a report of the device's organization.
   */
  recordPostures(device: AuthenticatedDevice, results: readonly NewPostureResult[], now: string): Promise<PosturesOutcome>;

  // Retention: each call deletes at most `limit` rows in one short transaction and returns how
  // many it deleted, so that a sweep never holds the write lock for long.
  /** Deletes results received before `cutoff`. */
  deleteResultsReceivedBefore(cutoff: string, limit: number): Promise<number>;
  /** Devices seen at or after `seenSince` (every device when null) that hold more than `keep` results. */
  devicesWithMoreResultsThan(keep: number, seenSince: string | null): Promise<DeviceRef[]>;
  /** Deletes the device's oldest results beyond its newest `keep`. */
  deleteResultsBeyond(device: DeviceRef, keep: number, limit: number): Promise<number>;
  /** Deletes posture reports created before `cutoff` that no longer hold any result. */
  deleteEmptyReportsCreatedBefore(cutoff: string, limit: number): Promise<number>;
}

// The store: the engine-neutral interface between the server and its database, and the records it
// speaks in. Agent-facing operations are scoped by organization (tenant); the store sees only
// credential hashes, never plaintext.
import type { Platform, PostureStatus } from '../../protocol/schemas';
import type { StatusRun } from '../statusSince';
import type { GraceCutoffs } from '../deviceLifecycle';
import type { AdminAccountId, AdminTokenId, DeviceId, EnrollSecretId, OrganizationId, PostureReportId, WebhookId } from '../ids';

export type DeviceState = 'PENDING' | 'ACTIVE' | 'REVOKED';

/** Every state's count from an engine's GROUP BY rows (a state without devices has no row). */
export function devicesByState(rows: readonly { state: DeviceState; devices: number | string }[]): Record<DeviceState, number> {
  const counts = { PENDING: 0, ACTIVE: 0, REVOKED: 0 };
  for (const row of rows) counts[row.state] = Number(row.devices);
  return counts;
}

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
  /** The enrollment secret that registered the device (null: created by an admin). */
  enrollSecretId: EnrollSecretId | null;
  /** The REVOKED record this one replaced when the machine enrolled again (re-enrollment). */
  supersedes: DeviceId | null;
  /** The record that replaced this one (set when it was revoked by a re-enrollment). */
  supersededBy: DeviceId | null;
  /** Another record that reported this one's hardware_uuid from another host at the same time (a clone). */
  duplicateOf: DeviceId | null;
}

/** A device to create, with the hash and expiry of its enrollment token. */
export interface NewDevice {
  orgName: string;
  name: string | null;
  state: DeviceState;
  tokenHash: string;
  tokenExpiresAt: string;
  now: string;
}

export interface DeviceAttributes {
  hardwareUuid: string;
  serialNumber: string | null;
  hostname: string;
  platform: Platform;
  osVersion: string;
  agentVersion: string;
}

/** A result as an upload brings it (the route has validated it), its correlation id not yet checked. */
export interface NewPostureResult {
  checkKey: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observedAt: string;
  correlationId: string | null;
}

/** The times the overview's counts are cut at (src/server/admin.ts), and each organization's grace cutoffs. */
export interface ComplianceCutoffs {
  staleBefore: string;
  offlineBefore: string;
  resultsFreshSince: string;
  exceptionsAt: string;
  graces: readonly GraceCutoffs[];
}

export interface StoredPostureResult {
  /** Order of arrival: a larger id was received later. */
  id: number;
  reportId: PostureReportId;
  checkKey: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observedAt: string;
  receivedAt: string;
}

/** A check's latest result, with when its status began (src/server/statusSince.ts). */
/** A result whose status differs from the check's result before it (previousStatus null: the check's first). */
export interface PostureStatusChange extends StoredPostureResult {
  previousStatus: PostureStatus | null;
}

export interface LatestPostureResult extends StoredPostureResult {
  statusSince: string;
}

/**
 * A change of state the device lifecycle allows (src/server/deviceLifecycle.ts): a store applies it
 * only to a device whose state, when the write happens, is one of `from`.
 */
export interface Transition {
  from: readonly DeviceState[];
  to: DeviceState;
}

/** What a conditional heartbeat write met: written, a state outside the transition's `from`, or the hardware_uuid index. */
export type HeartbeatWrite = 'written' | 'state_refused' | 'hardware_uuid_taken';

/** What an enrollment is decided on: the consumed token and its device, as they are when the token is consumed. */
export interface EnrollmentFacts {
  tokenExpiresAt: string;
  state: DeviceState;
  hasApiKey: boolean;
}

/** What a posture upload is decided on, read in its transaction with the device's row locked. */
export interface PostureFacts {
  /** Undefined when there is no such device. */
  state: DeviceState | undefined;
  /** Those of the report ids asked about that are posture reports of the device's organization. */
  ownReports: ReadonlySet<string>;
  /** The check keys of the device's latest results, when asked for (PostureReads); else empty. */
  checkKeys: ReadonlySet<string>;
}

/** What a posture upload's transaction reads besides the device's state. */
export interface PostureReads {
  /** Report ids to look up in the device's organization. */
  reportIds: readonly PostureReportId[];
  /** Whether to read the check keys of the device's latest results (their count is the device's cardinality). */
  checkKeys: boolean;
}

/** An upload's results as they are stored: each with its posture report, `newReport` created first when set. */
interface PostureWrite {
  newReport: PostureReportId | null;
  results: readonly ResultToWrite[];
}

export interface ResultToWrite extends StatusRun {
  reportId: PostureReportId;
  checkKey: string;
  status: PostureStatus;
  evidence: Record<string, unknown> | null;
  observedAt: string;
}

/** The lifecycle's answer to an upload's facts: what to store, or a refusal (nothing is stored). */
export type PostureDecision<Refusal> = { write: PostureWrite } | { refuse: Refusal };

export interface SchemaVersions {
  found: number;
  known: number;
}

export interface PoolUse {
  /** Open connections. */
  total: number;
  /** Open connections not in use. */
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

export interface WalUse {
  /** Pages in the write-ahead log at the last checkpoint. */
  frames: number;
  /** Times the log was rewound because it had grown past its bound (walCheckpointer.ts). */
  rewinds: number;
}

/** A heartbeat that changed nothing but the time the device was last seen. */
export interface DeviceSeen {
  device: DeviceRef;
  at: string;
}

/** A device as tenant-scoped operations name it. */
export interface DeviceRef {
  id: DeviceId;
  orgId: OrganizationId;
}

/** Which organizations an admin credential reaches: one, or (null) all. */
export interface OrgScope {
  orgId: OrganizationId | null;
}

export interface DeviceFilter {
  /** Only this organization (by name), within the scope. */
  orgName?: string;
  state?: DeviceState;
  /** A platform, or 'UNKNOWN': none reported yet (no heartbeat). */
  platform?: string;
  /** A check key that fails (past its grace period, not excepted: the overview's FAIL), or '*' for any check. */
  failingCheck?: string;
  /** A substring of the hostname (case-insensitive for ASCII). */
  hostnameContains?: string;
  lastSeenBefore?: string;
  lastSeenAfter?: string;
  agentVersion?: string;
  osVersion?: string;
  /** Devices carrying this label. */
  label?: { key: string; value: string };
  /** Devices with at least this many failing checks (as failingCheck). */
  minFailing?: number;
  /**
   * One check's latest result: its status (MISSING: the device has none; FAIL: failing after its
   * grace period or excepted, IN_GRACE: a FAIL no exception covers still within it), received before a time (stale),
   * its evidence's rule, a FAIL an exception covers at `now` or not.
   */
  check?: {
    key: string;
    status?: PostureStatus | 'MISSING' | 'IN_GRACE';
    receivedBefore?: string;
    rule?: string;
    excepted?: { is: boolean; now: string };
  };
}

/**
 * The grace periods at `now` (deviceLifecycle.ts, graceCutoffs), and `now` for the exceptions: a
 * FAIL in grace is one no exception covers that began after its cutoff.
 */
export interface GraceRule {
  cutoffs: readonly GraceCutoffs[];
  now: string;
}

export type DeviceSortKey = 'created_at' | 'hostname' | 'last_seen_at' | 'failing_checks' | 'agent_version';

/** A device as the list shows it: with its latest status per check, how many fail, and its labels. */
export interface DeviceListRow extends DeviceRecord {
  /** Its checks that fail past their grace period, no exception covering them. */
  failingChecks: number;
  checks: Record<string, PostureStatus>;
  /** The keys of its FAILs within their grace period (no exception covering them), and of its excepted FAILs. */
  inGrace: string[];
  excepted: string[];
  labels: Labels;
}

export interface DevicePageQuery {
  scope: OrgScope;
  filter: DeviceFilter;
  /** What decides which FAILs fail: failing counts, the failing filters, FAIL and IN_GRACE. */
  grace: GraceRule;
  sort: DeviceSortKey;
  descending: boolean;
  /** Rows strictly after this (sort value, device id) in the order asked for. */
  after: { value: string; id: string } | null;
  limit: number;
}

export interface Organization {
  id: OrganizationId;
  name: string;
}

export interface ComplianceCounts {
  /** Devices per state and platform (platform null until the first heartbeat). */
  devices: { state: DeviceState; platform: Platform | null; count: number }[];
  /** ACTIVE devices in all, and those not seen since `staleBefore` / `offlineBefore`. */
  active: number;
  stale: number;
  offline: number;
  /**
   * Latest results of ACTIVE devices per check and status; `fresh` when received at or after
   * `resultsFreshSince`; `excepted`: a FAIL an exception of the device or its labels covers at `exceptionsAt`;
   * `inGrace`: a FAIL not excepted and within its grace period (`graces`).
   */
  checks: { checkKey: string; status: PostureStatus; fresh: boolean; excepted: boolean; inGrace: boolean; count: number }[];
  /** ACTIVE devices per agent version, and per platform and OS version. */
  agentVersions: { agentVersion: string | null; count: number }[];
  osReleases: { platform: Platform | null; osVersion: string | null; count: number }[];
}

export interface FailingResult {
  deviceId: DeviceId;
  platform: Platform | null;
  hostname: string | null;
  checkKey: string;
  /** The evidence's `rule` when it is a string. */
  rule: string | null;
}

export interface DailyCompliance {
  /** YYYY-MM-DD (UTC). */
  day: string;
  checkKey: string;
  status: PostureStatus;
  /** Devices whose last result of that check received that day had this status. */
  count: number;
}

export interface AdminTokenRecord {
  id: AdminTokenId;
  orgId: OrganizationId | null;
  orgName: string | null;
  label: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface AdminAccountRecord {
  id: AdminAccountId;
  email: string;
  passwordHash: string;
  orgId: OrganizationId | null;
  orgName: string | null;
  createdAt: string;
}

/** One stored policy document: the organization's own (label null) or a label's refinement ("key=value"). */
export interface PolicyDocumentRecord {
  label: string | null;
  /** The policy as the administrator wrote it (JSON, validated by checks/policy.ts). */
  document: string;
}

/** One change of an organization's policy: which version it made, of which document, by whom, when. */
export interface PolicyChangeRecord {
  version: number;
  label: string | null;
  /** The document after the change; null when it was removed. */
  document: string | null;
  /** The document before; null when there was none. */
  previous: string | null;
  changedBy: string;
  changedAt: string;
}

/** A change to make: `document` null removes the label's (or the organization's) document. */
export interface PolicyChange {
  orgId: OrganizationId;
  label: string | null;
  document: string | null;
  changedBy: string;
  now: string;
}

export interface LifecycleSetRecord {
  version: number;
  /** JSON: per platform, the data set as checks/lifecycleTable.ts describes it. */
  data: string;
  importedBy: string;
  importedAt: string;
}

export interface PolicyExceptionRecord {
  id: string;
  orgId: OrganizationId;
  /** One device, or (deviceId null) every device carrying `label`. */
  deviceId: DeviceId | null;
  label: string | null;
  checkKey: string;
  reason: string;
  expiresAt: string;
  createdBy: string;
  createdAt: string;
}

/** Labels: key=value pairs a secret gives the devices it registers, or an admin sets (policies target them). */
export type Labels = Readonly<Record<string, string>>;

/** Whether two label sets hold the same pairs (whatever their order). */
export function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** What changeDeviceLabels did: the labels before and after, and the organization's policy version after. */
export interface LabelChange {
  before: Labels;
  after: Labels;
  version: number;
}

export interface NewEnrollSecret {
  orgName: string;
  secretHash: string;
  labels: Labels;
  note: string | null;
  expiresAt: string | null;
  maxUses: number | null;
  now: string;
}

export interface EnrollSecretRecord {
  id: EnrollSecretId;
  orgId: OrganizationId;
  orgName: string;
  labels: Labels;
  note: string | null;
  expiresAt: string | null;
  maxUses: number | null;
  /** Devices registered with it. */
  uses: number;
  revokedAt: string | null;
  createdAt: string;
}

/** A registration as the route received it, with the hash and expiry of the token it will answer with. */
export interface NewRegistration {
  attributes: DeviceAttributes;
  tokenHash: string;
  tokenExpiresAt: string;
  now: string;
}

/** The organization's device (not REVOKED) that already holds the hardware_uuid a registration reports. */
export interface HolderOfHardwareUuid {
  id: DeviceId;
  state: DeviceState;
  enrollSecretId: EnrollSecretId | null;
  hostname: string | null;
  serialNumber: string | null;
  createdAt: string;
  enrolledAt: string | null;
  lastSeenAt: string | null;
}

/** What a registration is decided on, read in its transaction (PostgreSQL: the holder locked; the secret guarded by its conditional UPDATE). */
export interface RegistrationFacts {
  /** Undefined when no secret has that hash. */
  secret: Pick<EnrollSecretRecord, 'id' | 'orgId' | 'expiresAt' | 'maxUses' | 'uses' | 'revokedAt'> | undefined;
  holder: HolderOfHardwareUuid | undefined;
}

/**
 * The lifecycle's answer to a registration's facts (src/server/deviceLifecycle.ts): refuse; give
 * the holder (a registration retried before it enrolled) a new token; or create a device (one use
 * of the secret), superseding the holder or recorded as its duplicate.
 */
export type RegistrationDecision =
  { kind: 'refuse' } | { kind: 'reissue'; device: DeviceId } | { kind: 'create'; supersede: DeviceId | null; duplicateOf: DeviceId | null };

/**
 * What a registration's transaction did: `refused` also when the secret's conditional use count
 * found it used up; `hardware_uuid_taken` when a concurrent registration through another secret
 * took the hardware_uuid first (PostgreSQL; nothing was written, the caller decides again).
 */
export type RegistrationWrite =
  | { kind: 'refused' }
  | { kind: 'hardware_uuid_taken' }
  | { kind: 'registered'; device: DeviceRef; secretId: EnrollSecretId; decision: Exclude<RegistrationDecision, { kind: 'refuse' }> };

/**
 * Console sign-in attempts counted on one account since its last sign-in
 * (src/server/console/signInThrottle.ts decides); times in epoch milliseconds.
 */
export interface SignInAttempts {
  attempts: number;
  firstAt: number;
  lastAt: number;
  /** The client address of the last attempt (X-Forwarded-For's behind a trusted proxy). */
  lastAddress: string;
  /** No attempt is let through before this time (0: none). */
  blockedUntil: number;
}

/** An attempt let through and counted (`counted`, written), or one that must wait (nothing written). */
export type SignInDecision = { counted: SignInAttempts } | { waitMs: number };

/**
 * One console sign-in attempt from a client address: let through, its budget then full again at
 * `fullAt` (epoch ms, fractional: the generic cell rate algorithm's theoretical arrival time,
 * src/server/console/signInThrottle.ts decides), or to wait `waitMs` (nothing written).
 */
export type SignInAddressDecision = { fullAt: number } | { waitMs: number };

/** How many accounts' attempts are kept, and which are forgotten first to make room. */
export interface SignInAttemptRoom {
  maxAccounts: number;
  /** Rows last attempted before this time (epoch ms) are stale: they go first. */
  staleBefore: number;
}

/**
 * Everything the routes, the admin commands and the retention sweep ask of the database. Engines
 * (`sqliteStore.ts`, `postgresStore.ts`) implement it; SQL never leaves `src/server/db/`. Every
 * operation is asynchronous, so an engine that talks to a database server over the network fits.
 * The writes that change a device's state hold no rule of their own: the device lifecycle
 * (src/server/deviceLifecycle.ts) passes each its transition, or decides inside its transaction
 * (a synchronous `decide`, so that it runs within SQLite's synchronous transactions too).
 */
export interface Store {
  close(): Promise<void>;
  /** The database's schema version and the one this program knows; throws when the database does not answer. */
  schemaVersions(): Promise<SchemaVersions>;
  /** How many devices are in each state. */
  countDevicesByState(): Promise<Record<DeviceState, number>>;
  /** The connection pool's use, for an engine that has one (PostgreSQL). */
  poolUse(): PoolUse | undefined;
  /** The write-ahead log, where this process checkpoints it from a thread (SQLite under `serve`). */
  walUse(): WalUse | undefined;
  getSetting(key: string): Promise<string | undefined>;
  putSetting(key: string, value: string): Promise<void>;

  /** A device in `state` in `orgName` (created when missing) with its enrollment token. */
  createDevice(input: NewDevice): Promise<DeviceId>;
  findDevice(id: string): Promise<DeviceRecord | undefined>;
  /** One page of devices in the order asked for, at most `limit`, in one query. */
  listDevicePage(query: DevicePageQuery): Promise<DeviceListRow[]>;
  /** The newest result of each check of the device, by check key. */
  latestResults(device: DeviceRef): Promise<LatestPostureResult[]>;
  /** The device's results newest first, those with an id below `beforeId` when given, optionally of one check. */
  postureHistory(device: DeviceRef, options: { checkKey?: string; beforeId?: number; limit: number }): Promise<StoredPostureResult[]>;
  /**
   * The device's status changes newest first, optionally of one check: each result whose status
   * differs from the check's result before it (by id, over all of the device's results), those with
   * an id below `beforeId` when given.
   */
  postureStatusChanges(device: DeviceRef, options: { checkKey?: string; beforeId?: number; limit: number }): Promise<PostureStatusChange[]>;
  complianceCounts(scope: OrgScope, orgName: string | undefined, cutoffs: ComplianceCutoffs): Promise<ComplianceCounts>;
  /**
   * The latest FAIL results of the ACTIVE devices within the scope (of one organization, by name,
   * when given) past their grace period (`graces`), in one query.
   */
  failingResults(scope: OrgScope, orgName: string | undefined, grace: GraceRule): Promise<FailingResult[]>;
  /** Per day from `since` (UTC) until before `until`, per check and status. */
  dailyCompliance(scope: OrgScope, orgName: string | undefined, since: string, until: string): Promise<DailyCompliance[]>;
  /**
   * Per check and status, the latest results received at or after `since` (a day's start: each
   * device's last result of that day, when it is the last day so far), in one query over latest_results.
   */
  latestCompliance(scope: OrgScope, orgName: string | undefined, since: string): Promise<Omit<DailyCompliance, 'day'>[]>;
  findOrganization(name: string): Promise<Organization | undefined>;
  /** The organization named so, created when missing. */
  ensureOrganization(name: string, now: string): Promise<Organization>;

  createAdminToken(input: { tokenHash: string; orgId: OrganizationId | null; label: string; now: string }): Promise<AdminTokenId>;
  /** A token that is not revoked. */
  authenticateAdminToken(tokenHash: string): Promise<AdminTokenRecord | undefined>;
  listAdminTokens(): Promise<AdminTokenRecord[]>;
  /** False when there is no such unrevoked token. */
  revokeAdminToken(id: string, now: string): Promise<boolean>;

  /** Undefined when the email is taken. */
  createAdminAccount(input: {
    email: string;
    passwordHash: string;
    orgId: OrganizationId | null;
    now: string;
  }): Promise<AdminAccountId | undefined>;
  findAdminAccount(email: string): Promise<AdminAccountRecord | undefined>;
  listAdminAccounts(): Promise<AdminAccountRecord[]>;
  /** Sets the password and ends the account's sessions; false when there is no such account. */
  setAdminPassword(email: string, passwordHash: string): Promise<boolean>;
  /** Deletes the account and its sessions; false when there is no such account. */
  deleteAdminAccount(email: string): Promise<boolean>;
  createSession(input: { sessionHash: string; accountId: AdminAccountId; expiresAt: string; now: string }): Promise<void>;
  /** The account of an unexpired session. */
  sessionAccount(sessionHash: string, now: string): Promise<AdminAccountRecord | undefined>;
  deleteSession(sessionHash: string): Promise<void>;
  /** Deletes expired sessions; returns how many. */
  deleteExpiredSessions(now: string): Promise<number>;
  /**
   * One console sign-in attempt on the account keyed `accountKey`, in one transaction that takes
   * the account's attempts in turn across every process on the database (PostgreSQL: its row
   * locked, created first when missing): asks `decide` with what is stored, writes the attempts it
   * counted, and returns its decision. When that writes a new account's row and the table then
   * holds more than `room.maxAccounts`, the stale rows are deleted, then, if it is still over, the
   * one with the fewest attempts (the least recently attempted among them).
   */
  recordSignInAttempt(
    accountKey: string,
    room: SignInAttemptRoom,
    decide: (stored: SignInAttempts | undefined) => SignInDecision,
  ): Promise<SignInDecision>;
  signInAttempts(accountKey: string): Promise<SignInAttempts | undefined>;
  /**
   * One console sign-in attempt from the client address keyed `addressKey`, in one transaction that
   * takes the address's attempts in turn across every process on the database: asks `decide` with
   * the time its budget is full again (undefined when none is stored, or it is not after `now`),
   * writes the one it answers. An address new to the table first deletes every row full again by
   * `now` (they carry nothing), so the table holds only the addresses that tried within a minute.
   */
  takeSignInAddressBudget(
    addressKey: string,
    now: number,
    decide: (fullAt: number | undefined) => SignInAddressDecision,
  ): Promise<SignInAddressDecision>;
  /** The account signed in: its attempts are forgotten. */
  deleteSignInAttempts(accountKey: string): Promise<void>;
  listDevices(orgName?: string): Promise<DeviceRecord[]>;
  /** The device's stored results, oldest first. */
  listPostures(device: DeviceRef): Promise<StoredPostureResult[]>;
  /**
   * In one transaction, when the device's state is one of `transition.from`: moves it to
   * `transition.to` (revoked_at `now`), removes its API key, and deletes any unused enrollment
   * token. False when its state was not one of them (or there is no such device). PostgreSQL: the
   * UPDATE waits for a posture upload holding the device's row (recordPostures).
   */
  revokeDevice(device: DeviceRef, now: string, transition: Transition): Promise<boolean>;

  /**
   * In one transaction: consumes the enrollment token (deleting it is what makes it single use: a
   * concurrent exchange of the same token finds nothing) and reads its device, locked; when
   * `mayEnroll` says yes, the device gets the API key (enrolled_at `now`). The token is gone
   * whatever the answer. The device's id when it got the key, else undefined.
   */
  exchangeToken(
    tokenHash: string,
    apiKeyHash: string,
    now: string,
    mayEnroll: (facts: EnrollmentFacts) => boolean,
  ): Promise<DeviceId | undefined>;
  authenticate(apiKeyHash: string): Promise<AuthenticatedDevice | undefined>;
  /**
   * A value that differs from the one the previous call returned whenever someone else (another
   * process, another connection) may have committed a change since. What the server caches above
   * the store (src/server/deviceCache.ts) is dropped when it moves, so it must move before any
   * request that follows such a commit is served. Called once per event-loop turn in which
   * requests were authenticated, after they were received (deviceCache.ts): it must be cheap. An engine that cannot tell returns a new value every time (no caching).
   */
  externalChanges(): Promise<number>;
  /**
   * One conditional write: when the device's state is one of `transition.from`, sets its
   * attributes, last_seen_at `now`, the state `transition.to`, and activated_at `now` the first
   * time. The hardware_uuid index (unique per organization among devices not REVOKED) decides
   * between devices racing for one hardware_uuid; the loser's row is left as it was.
   */
  recordHeartbeat(device: DeviceRef, attributes: DeviceAttributes, now: string, transition: Transition): Promise<HeartbeatWrite>;
  /**
   * Writes the last-seen times of heartbeats and posture uploads batched by
   * src/server/heartbeatBatch.ts, in one transaction: only to devices in one of `states`, and never
   * moving a time backwards (a later request may have been written first).
   */
  recordDevicesSeen(seen: readonly DeviceSeen[], states: readonly DeviceState[]): Promise<void>;
  /**
   * One posture upload's transaction: locks the device's row (PostgreSQL: FOR UPDATE, so that a
   * revocation committed before is seen and one made meanwhile waits for this upload, and two
   * uploads of a device take turns), reads its state, which of `reads.reportIds` are posture
   * reports of its organization and (when asked) its latest results' check keys, after the lock,
   * so that an upload racing another sees its keys; and asks `decide`.
   * Stores the write `decide` answers with (received_at `now`, each check's latest result kept in
   * latest_results) or nothing; returns its answer. A check's status_since becomes the stored one
   * when the stored status is the latest result's and its run opens the upload, else its
   * runStartedAt (StatusRun). The device's last-seen time is not written
   * here but batched with the heartbeats' (the route).
   */
  recordPostures<Refusal>(
    device: DeviceRef,
    reads: PostureReads,
    now: string,
    decide: (facts: PostureFacts) => PostureDecision<Refusal>,
  ): Promise<PostureDecision<Refusal>>;

  /** A secret in `orgName` (created when missing); its id. */
  createEnrollSecret(input: NewEnrollSecret): Promise<EnrollSecretId>;
  findEnrollSecret(id: string): Promise<EnrollSecretRecord | undefined>;
  /** The secrets within the scope (of one organization, by name, when given), oldest first. */
  listEnrollSecrets(scope: OrgScope, orgName: string | undefined): Promise<EnrollSecretRecord[]>;
  /** False when there is no such unrevoked secret. */
  revokeEnrollSecret(id: string, now: string): Promise<boolean>;
  /**
   * One registration's transaction: reads the secret by its hash (PostgreSQL: FOR UPDATE, so the
   * registrations of one secret take turns on every server) and the organization's device holding
   * the hardware_uuid (locked), asks `decide`, and writes its answer. A created device costs one
   * use through one conditional UPDATE (uses < max_uses, not revoked, not expired at `now`), so the
   * cap holds whatever `decide` saw; it gets the secret's labels, the registration's attributes,
   * and its enrollment token; a superseded holder is revoked (key and token removed) and linked
   * both ways; a duplicate pair is linked both ways and the new record holds no hardware_uuid.
   */
  registerDevice(
    secretHash: string,
    registration: NewRegistration,
    decide: (facts: RegistrationFacts) => RegistrationDecision,
  ): Promise<RegistrationWrite>;
  /** The device's labels. */
  deviceLabels(device: DeviceId): Promise<Labels>;
  /**
   * One transaction: reads the device's labels (PostgreSQL: its organization's row locked, so label
   * and policy changes of one organization take turns), asks `decide` for the new ones (it throws
   * to refuse: nothing is written), and writes them when they differ: the organization then takes
   * its next policy version (its devices fetch the policy again, src/server/deviceLabels.ts) and
   * policyGeneration moves. Undefined when the organization has no such device.
   */
  changeDeviceLabels(device: DeviceRef, decide: (current: Labels) => Labels): Promise<LabelChange | undefined>;

  // Retention: each call deletes at most `limit` rows in one short transaction and returns how
  // many it deleted, so that a sweep never holds the write lock for long.
  /** Deletes results received before `cutoff`. */
  deleteResultsReceivedBefore(cutoff: string, limit: number): Promise<number>;
  /** Devices seen at or after `seenSince` (every device when null) that hold more than `keep` results. */
  devicesWithMoreResultsThan(keep: number, seenSince: string | null): Promise<DeviceRef[]>;
  /** Deletes the device's oldest results beyond its newest `keep`. */
  deleteResultsBeyond(device: DeviceRef, keep: number, limit: number): Promise<number>;
  /**
   * Deletes latest results received before `cutoff`: the check keys a device has not reported
   * since, which then no longer count towards its cap nor show in the fleet summary.
   */
  deleteLatestReceivedBefore(cutoff: string, limit: number): Promise<number>;
  /** Deletes posture reports created before `cutoff` that no longer hold any result. */
  deleteEmptyReportsCreatedBefore(cutoff: string, limit: number): Promise<number>;

  // Server policy (src/server/policy.ts). Every write also moves policyGeneration, in its transaction.
  /** A value that moves with every committed policy, exception or lifecycle change, whoever made it. */
  policyGeneration(): Promise<string>;
  /**
   * Calls `changed` whenever another process may have moved policyGeneration, for an engine whose
   * externalChanges cannot tell it cheaply (PostgreSQL: LISTEN/NOTIFY, and every `fallbackMs` in
   * case a notification was lost; src/server/db/postgresPolicyWatch.ts), until the store closes.
   * False when the engine has no such watch: callers follow externalChanges instead (SQLite).
   */
  watchPolicyGeneration(changed: () => void, fallbackMs?: number): boolean;
  /**
   * The organization's policy version (0 before any change: it moves with every change of its
   * documents and of its devices' labels), the version its latest label change took (0: none), and
   * its current documents.
   */
  orgPolicy(orgId: OrganizationId): Promise<{ version: number; labelsVersion: number; documents: PolicyDocumentRecord[] }>;
  /** In one transaction: replaces (or removes) one document and records the change; the organization's new version. */
  putPolicy(change: PolicyChange): Promise<number>;
  /** The organization's changes, newest first (of one label's document when `label` is given; null: the organization's own). */
  policyHistory(orgId: OrganizationId, label: string | null | undefined, limit: number): Promise<PolicyChangeRecord[]>;
  /** The newest imported lifecycle data set. */
  latestLifecycleSet(): Promise<LifecycleSetRecord | undefined>;
  /** Stores a data set as the next version; returns it. */
  importLifecycleSet(input: { data: string; importedBy: string; now: string }): Promise<number>;
  createPolicyException(input: Omit<PolicyExceptionRecord, 'id'>): Promise<string>;
  /** The organization's exceptions (all organizations' with null) that have not lapsed at `now`, by expiry. */
  activePolicyExceptions(orgId: OrganizationId | null, now: string): Promise<PolicyExceptionRecord[]>;
  /** False when the organization has no such exception. */
  deletePolicyException(orgId: OrganizationId, id: string): Promise<boolean>;
  // The device page (src/server/devicePage.ts says the rules): grants are stored by hash only.
  /** Stores a grant bound to the device, and deletes the grants expired at `now`. */
  createDevicePageGrant(input: {
    grantHash: string;
    kind: DevicePageGrantKind;
    device: DeviceRef;
    expiresAt: string;
    now: string;
  }): Promise<void>;
  /** Deletes the code (whether or not it has expired: a code is used once) and returns what it was bound to. */
  takeDevicePageCode(codeHash: string): Promise<(DeviceRef & { expiresAt: string }) | undefined>;
  /** The device of a session unexpired at `now`. */
  devicePageSession(sessionHash: string, now: string): Promise<DeviceRef | undefined>;
  /** The organization's contact for its devices' users, if its admin set one. */
  organizationContact(orgId: OrganizationId): Promise<string | undefined>;
  /** Sets (or, with null, removes) the organization's contact. */
  setOrganizationContact(orgId: OrganizationId, contact: string | null, now: string): Promise<void>;

  // The audit log (src/server/audit.ts): admin actions, never a secret.
  appendAudit(entry: NewAuditEntry): Promise<void>;
  /** Entries newest first: of one organization (all with null), of one action when given, with an id below `beforeId` when given. */
  auditPage(query: AuditQuery): Promise<AuditEntryRecord[]>;
  /** Retention: deletes entries made before `cutoff` (at most `limit`); how many. */
  deleteAuditBefore(cutoff: string, limit: number): Promise<number>;
  // "Check again" from the device page (src/server/checkRequests.ts says the rules).
  /**
   * Records a check request of the device at `now` unless one was recorded after `notBefore`;
   * returns the request now on record (`now` when this one was), and deletes those older than `lapsedBefore`.
   */
  requestDeviceCheck(deviceId: DeviceId, now: string, notBefore: string, lapsedBefore: string): Promise<string>;
  /** The check requests recorded after `since`, by device. */
  deviceCheckRequests(since: string): Promise<Map<DeviceId, string>>;

  // Webhooks (src/server/webhooks.ts) and the alert sweep that feeds their outbox (src/server/alerts.ts).
  createWebhook(record: Omit<WebhookRecord, 'orgName'>): Promise<void>;
  /** The organization's webhooks (every organization's with null), oldest first. */
  listWebhooks(orgId: OrganizationId | null): Promise<WebhookRecord[]>;
  /** Deletes the organization's webhook and its deliveries, in one transaction; false when there is no such webhook. */
  deleteWebhook(orgId: OrganizationId | null, id: string): Promise<boolean>;
  /** What the alert sweep may raise or clear in the organization, from its devices, latest results and marks. */
  alertCandidates(orgId: OrganizationId, cutoffs: { staleBefore: string; reenrolledAfter: string }): Promise<AlertCandidates>;
  /**
   * In one transaction: inserts the mark to raise (nothing when one of that device, kind and subject
   * exists) or deletes the mark to clear (nothing when it is gone); only when it did, queues
   * `deliveries` (pending, due at `now`). Whether it did: of several processes sweeping at once, one does.
   */
  recordAlert(change: { raise: AlertMark } | { clear: AlertMark }, deliveries: readonly NewDelivery[], now: string): Promise<boolean>;
  /** Pending deliveries due at `now`, soonest first, with their webhook's URL, format and secret. */
  dueDeliveries(now: string, limit: number): Promise<DueDelivery[]>;
  /** Takes a due delivery for one attempt: counts the attempt and moves it to `leaseUntil`, unless another process took it first (false). */
  claimDelivery(id: number, now: string, leaseUntil: string): Promise<boolean>;
  /** An attempt's outcome: delivered or failed (finished), or pending again at `nextAttemptAt`. */
  finishDelivery(id: number, outcome: DeliveryOutcome): Promise<void>;
  /** The delivery log, newest first: the organization's (all with null), of one webhook when given. */
  deliveryLog(orgId: OrganizationId | null, webhookId: string | undefined, limit: number): Promise<DeliveryRecord[]>;
  /** Retention: deletes finished deliveries created before `cutoff` (at most `limit`); how many. */
  deleteDeliveriesBefore(cutoff: string, limit: number): Promise<number>;
  /** The organizations' own policy documents (not labels' refinements): of one organization, or all with null. */
  ownPolicyDocuments(orgId: OrganizationId | null): Promise<{ orgId: OrganizationId; document: string }[]>;
}

export type WebhookFormat = 'json' | 'slack';

export interface WebhookRecord {
  id: WebhookId;
  orgId: OrganizationId;
  orgName: string;
  url: string;
  format: WebhookFormat;
  events: string[];
  includeEvidence: boolean;
  /** The HMAC key (signing needs the key itself); never listed. */
  secret: string;
  createdBy: string;
  createdAt: string;
}

export interface NewDelivery {
  webhookId: WebhookId;
  orgId: OrganizationId;
  eventId: string;
  eventType: string;
  deviceId: DeviceId | null;
  /** The request body, exactly as sent and signed. */
  body: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord extends NewDelivery {
  id: number;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface DueDelivery extends DeliveryRecord {
  url: string;
  secret: string;
}

export interface DeliveryOutcome {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  /** Pending: when the next attempt is due. */
  nextAttemptAt: string | null;
  /** Delivered or failed: when. */
  finishedAt: string | null;
}

/** What the alert sweep has raised (alerts.ts): a check failing since a time, a device stale or re-enrolled (subject ''). */
export interface AlertMark {
  orgId: OrganizationId;
  deviceId: DeviceId;
  kind: 'failing' | 'stale' | 'reenrolled';
  subject: string;
  since: string;
}

export interface AlertCandidates {
  /** Latest results FAIL of ACTIVE devices with no failing mark of the same check and status_since. */
  failing: { deviceId: DeviceId; checkKey: string; since: string }[];
  /** Failing marks whose run ended: the latest result is another status, another run, gone, or the device is not ACTIVE. */
  ended: { mark: AlertMark; status: PostureStatus | null; deviceState: DeviceState }[];
  /** ACTIVE devices last seen before the stale cutoff, with no stale mark. */
  stale: { deviceId: DeviceId; lastSeenAt: string }[];
  /** Stale marks of devices seen since (or no longer ACTIVE). */
  staleEnded: AlertMark[];
  /** Devices that replaced a REVOKED record (re-enrollment), created after the cutoff, with no mark. */
  reenrolled: { deviceId: DeviceId; supersedes: DeviceId; createdAt: string }[];
}

export interface NewAuditEntry {
  at: string;
  /** `account:<email>`, `token:<id>`, `cli:<user>`, or `unknown` (a refused sign-in of no account). */
  actor: string;
  /** The client address (X-Forwarded-For's behind a trusted proxy); null from the CLI. */
  address: string | null;
  action: string;
  orgId: OrganizationId | null;
  targetType: string | null;
  targetId: string | null;
  /** A small JSON object of ids and outcomes (audit.ts keeps secrets out). */
  detail: string | null;
}

export interface AuditEntryRecord extends NewAuditEntry {
  /** Order of recording: larger is later. */
  id: number;
  orgName: string | null;
}

export interface AuditQuery {
  orgId: OrganizationId | null;
  action?: string;
  beforeId?: number;
  limit: number;
}

/** A device page grant: the one-time code in the URL the agent obtained, or the browser session it became. */
export type DevicePageGrantKind = 'code' | 'session';

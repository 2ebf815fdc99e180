// A device's life on the server: every rule about its state, for every engine, in this module.
//
//   device create ─▶ PENDING ─/enroll─▶ PENDING with a key ─first /heartbeat─▶ ACTIVE
//   /register ───────┘  └─────────── revocation (admin) or /unenroll ─────────────┴─▶ REVOKED (no key)
//                       (a re-enrollment's /register revokes the record it supersedes, too)
//
// The stores (src/server/db/) hold the SQL and the transactions, nothing about which change is
// allowed. Each operation here asks its store for one transaction that reads what the rule needs
// (the device's row locked where a concurrent change must wait) and calls back into a rule of this
// module, or for one conditional write whose condition is a transition of this module (the
// heartbeat: its single UPDATE is the hot path on PostgreSQL, where every heartbeat is written, so
// it costs one round trip, not a locked read first). Two rules are the schema's, as only it can
// hold them against every concurrent writer: a hardware_uuid is unique per organization among
// devices that are not REVOKED (a partial unique index), and a REVOKED device has no API key (a
// CHECK constraint). Answers are typed values; `refusalError` is the HTTP error each refusal gets.
import { CHECK_KEYS } from '../protocol/constants';
import { hashCredential, isCredential, isEnrollSecret, newCredential } from './credentials';
import type {
  DeviceAttributes,
  DeviceRef,
  DeviceState,
  EnrollmentFacts,
  HolderOfHardwareUuid,
  RegistrationDecision,
  RegistrationFacts,
  NewPostureResult,
  PostureDecision,
  PostureFacts,
  Store,
  Transition,
} from './db/store';
import { DEFAULT_MAX_CHECK_KEYS } from './limitDefaults';
import { HttpError, badRequest, conflict, keyRefused, secretRefused, tokenRefused, unauthorized } from './errors';
import { statusRuns } from './statusSince';
import { newId, parseId, type DeviceId, type EnrollSecretId, type OrganizationId, type PostureReportId } from './ids';

/** A device is created PENDING, with an enrollment token and no API key. */
export const CREATED_STATE: DeviceState = 'PENDING';

/** An enrollment token gives its device an API key only while the device is PENDING without one. */
const ENROLLABLE: readonly DeviceState[] = ['PENDING'];

/**
 * A heartbeat activates a PENDING device (spec §3) and refreshes an ACTIVE one; a REVOKED device's
 * is refused with 401 (its key is gone, but the revocation may commit after the request was
 * authenticated). Refused with 409 when the hardware_uuid is another non-REVOKED device's of the
 * organization: the device keeps its state and attributes (contract).
 */
const HEARTBEAT: Transition = { from: ['PENDING', 'ACTIVE'], to: 'ACTIVE' };

/** Only an ACTIVE device's results are stored: a PENDING (or REVOKED) device's upload gets 401 (spec §3, §5.6). */
const POSTURES_ACCEPTED_IN: readonly DeviceState[] = ['ACTIVE'];

/**
 * A batched last-seen time (an unchanged heartbeat, a stored upload; src/server/heartbeatBatch.ts)
 * is written only to an ACTIVE device: one revoked since is left as it was revoked.
 */
export const SEEN_IN: readonly DeviceState[] = ['ACTIVE'];

/**
 * Revocation by an administrator and /unenroll by the device end it from any other state: its API
 * key and any unused enrollment token are removed, so the key is refused (401) from then on.
 */
const REVOCATION: Transition = { from: ['PENDING', 'ACTIVE'], to: 'REVOKED' };

export type Refusal =
  | { kind: 'token_refused' }
  | { kind: 'revoked' }
  | { kind: 'hardware_uuid_taken' }
  | { kind: 'not_active' }
  | { kind: 'invalid_correlation_id'; index: number }
  | { kind: 'check_key_cap'; index: number; cap: number }
  | { kind: 'secret_refused' };

/** The agent API's answer to a refusal. */
export function refusalError(refusal: Refusal): HttpError {
  switch (refusal.kind) {
    case 'token_refused':
      return tokenRefused();
    case 'secret_refused':
      return secretRefused();
    case 'revoked':
      return keyRefused();
    case 'hardware_uuid_taken':
      return conflict('the hardware_uuid is already used by another device of this organization');
    case 'not_active':
      return unauthorized('the device has not completed a heartbeat yet (or was revoked)');
    case 'invalid_correlation_id':
      return badRequest(`results[${refusal.index}].correlation_id is not a posture report of this organization`);
    case 'check_key_cap':
      return badRequest(
        `results[${refusal.index}].check_key is a new check key beyond this device's cap of ${refusal.cap} distinct check keys (the nine official ones and ${refusal.cap - OFFICIAL_KEYS.size} others)`,
      );
  }
}

export type Enrollment = { kind: 'enrolled'; deviceId: DeviceId; apiKey: string } | { kind: 'token_refused' };

/** True when a consumed token may give its device a key at `now`: unexpired, and the device enrollable. */
export function mayEnroll(facts: EnrollmentFacts, now: string): boolean {
  return Date.parse(facts.tokenExpiresAt) > Date.parse(now) && ENROLLABLE.includes(facts.state) && !facts.hasApiKey;
}

/**
 * POST /enroll: exchanges a single-use enrollment token for a new API key. A token that is unknown,
 * already used, expired (consumed all the same) or not of the right shape is refused alike.
 */
export async function enroll(store: Store, token: string, now: string): Promise<Enrollment> {
  if (!isCredential(token)) return { kind: 'token_refused' };
  const apiKey = newCredential();
  const deviceId = await store.exchangeToken(hashCredential(token), hashCredential(apiKey), now, (facts) => mayEnroll(facts, now));
  return deviceId === undefined ? { kind: 'token_refused' } : { kind: 'enrolled', deviceId, apiKey };
}

export type HeartbeatOutcome = { kind: 'recorded' } | Extract<Refusal, { kind: 'revoked' | 'hardware_uuid_taken' }>;

/**
 * A heartbeat that changes something besides the last-seen time (src/server/heartbeatBatch.ts
 * answers the others): where a device becomes ACTIVE.
 */
export async function heartbeat(store: Store, device: DeviceRef, attributes: DeviceAttributes, now: string): Promise<HeartbeatOutcome> {
  switch (await store.recordHeartbeat(device, attributes, now, HEARTBEAT)) {
    case 'written':
      return { kind: 'recorded' };
    case 'state_refused':
      return { kind: 'revoked' };
    case 'hardware_uuid_taken':
      return { kind: 'hardware_uuid_taken' };
  }
}

type PostureRefusal = Extract<Refusal, { kind: 'not_active' | 'invalid_correlation_id' | 'check_key_cap' }>;
export type PosturesOutcome = { kind: 'recorded'; createdReportId: PostureReportId | null } | PostureRefusal;

/**
 * The correlation ids a store is asked about: each distinct one that is a posture report id at all.
 * Any other string (another entity's id, text the database would not take) is refused unread.
 */
export function reportIdsToCheck(results: readonly NewPostureResult[]): PostureReportId[] {
  const ids = new Set<PostureReportId>();
  for (const { correlationId } of results) {
    const id = correlationId === null ? undefined : parseId('postureReport', correlationId);
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

const OFFICIAL_KEYS: ReadonlySet<string> = new Set(CHECK_KEYS);

/**
 * Whether the store must read the device's check keys for an upload: only when it carries a key
 * other than the official ones (the agent's own uploads never do, so they cost no extra read).
 */
export function needsCheckKeys(results: readonly NewPostureResult[]): boolean {
  return results.some((r) => !OFFICIAL_KEYS.has(r.checkKey));
}

/**
 * The first result whose check key would take the device past `cap` distinct check keys, or -1.
 * The official keys are always accepted (an agent never loses them to custom checks) and keep
 * their places within the cap: the device may hold `cap` − 9 other keys, those of its latest
 * results (retention removes a key not reported for longer than results are kept).
 */
export function firstKeyBeyondCap(held: ReadonlySet<string>, results: readonly NewPostureResult[], cap: number): number {
  const allowance = cap - OFFICIAL_KEYS.size;
  let others = 0;
  for (const key of held) if (!OFFICIAL_KEYS.has(key)) others += 1;
  const added = new Set<string>();
  return results.findIndex(({ checkKey }) => {
    if (OFFICIAL_KEYS.has(checkKey) || held.has(checkKey) || added.has(checkKey)) return false;
    added.add(checkKey);
    others += 1;
    return others > allowance;
  });
}

/**
 * Whether an upload's results are stored, decided on what its transaction read: only an ACTIVE
 * device's; a correlation id must name a posture report of the device's own organization (spec §4:
 * otherwise 400, the first such result named); a new check key must fit the device's cap (400,
 * the whole batch: the agent splits a refused batch until the offending results stand alone, so
 * its other results are stored); results without a correlation id share one new report.
 */
export function decidePostures(
  facts: PostureFacts,
  results: readonly NewPostureResult[],
  maxCheckKeys: number,
): PostureDecision<PostureRefusal> {
  if (!POSTURES_ACCEPTED_IN.some((state) => state === facts.state)) return { refuse: { kind: 'not_active' } };
  const index = results.findIndex((r) => r.correlationId !== null && !facts.ownReports.has(r.correlationId));
  if (index !== -1) return { refuse: { kind: 'invalid_correlation_id', index } };
  const beyond = firstKeyBeyondCap(facts.checkKeys, results, maxCheckKeys);
  if (beyond !== -1) return { refuse: { kind: 'check_key_cap', index: beyond, cap: maxCheckKeys } };
  const newReport = results.some((r) => r.correlationId === null) ? newId('postureReport') : null;
  const runs = statusRuns(results);
  return {
    write: {
      newReport,
      results: results.map((r, i) => ({
        // Checked just above: a correlation id is one of ownReports, which hold only report ids.
        reportId: (r.correlationId ?? newReport) as PostureReportId,
        checkKey: r.checkKey,
        status: r.status,
        evidence: r.evidence,
        observedAt: r.observedAt,
        ...runs[i]!,
      })),
    },
  };
}

/** POST /postures: stores a batch of results atomically, or refuses all of it. */
export async function uploadPostures(
  store: Store,
  device: DeviceRef,
  results: readonly NewPostureResult[],
  now: string,
  maxCheckKeys = DEFAULT_MAX_CHECK_KEYS,
): Promise<PosturesOutcome> {
  const reads = { reportIds: reportIdsToCheck(results), checkKeys: needsCheckKeys(results) };
  const decision = await store.recordPostures(device, reads, now, (facts) => decidePostures(facts, results, maxCheckKeys));
  return 'refuse' in decision ? decision.refuse : { kind: 'recorded', createdReportId: decision.write.newReport };
}

export type RevokeOutcome = 'revoked' | 'already_revoked';

/** Revocation (admin CLI, admin API, console: src/server/admin.ts) and /unenroll. */
export async function revoke(store: Store, device: DeviceRef, now: string): Promise<RevokeOutcome> {
  return (await store.revokeDevice(device, now, REVOCATION)) ? 'revoked' : 'already_revoked';
}

/** The one-time token a registration answers with is exchanged at once by the agent (or registered for again). */
export const REGISTERED_TOKEN_TTL_MS = 60 * 60 * 1000;

/**
 * A holder of the hardware_uuid counts as live (a clone's twin, not a machine re-imaged) while its
 * last sign of life is this many heartbeat intervals old or newer.
 */
export const LIVE_HEARTBEAT_INTERVALS = 2;

/** Whether a registration comes from the holder's host: the same hostname, and the same serial number when both have one. */
function sameHost(holder: HolderOfHardwareUuid, attributes: DeviceAttributes): boolean {
  if (holder.hostname !== attributes.hostname) return false;
  return holder.serialNumber === null || attributes.serialNumber === null || holder.serialNumber === attributes.serialNumber;
}

/**
 * A registration's rule, decided on what its transaction read (docs/server.md, "Enrollment
 * secrets"). Refused, all alike: no such secret, revoked, expired, or used up (a retry below
 * costs no use, so it is not refused for that). With a secret that may register:
 * - no device of the organization holds the hardware_uuid: a new device;
 * - the holder is this secret's own registration from the same host that never completed a
 *   heartbeat (still PENDING: the agent retried, its /register or /enroll answer lost, or it
 *   stopped before /enroll): the holder gets a new token, and loses a key it may have been given
 *   (its host never received it), so a retried registration spends no second use and creates
 *   nothing twice;
 * - the holder is live (seen within LIVE_HEARTBEAT_INTERVALS heartbeat intervals) on another host
 *   (hostname, or serial number): a clone. A new device is recorded as the holder's duplicate,
 *   without the hardware_uuid, so its heartbeats get the spec's conflict (409) until an admin
 *   revokes one of the two; neither replaces the other back and forth;
 * - otherwise the machine enrolled again (re-imaged, state deleted): a new device supersedes the
 *   holder, which is revoked (its key no longer valid) and keeps its history.
 */
export function decideRegistration(
  facts: RegistrationFacts,
  attributes: DeviceAttributes,
  now: string,
  heartbeatIntervalSeconds: number,
): RegistrationDecision {
  const { secret, holder } = facts;
  const at = Date.parse(now);
  if (secret === undefined || secret.revokedAt !== null) return { kind: 'refuse' };
  if (secret.expiresAt !== null && Date.parse(secret.expiresAt) <= at) return { kind: 'refuse' };
  if (holder === undefined) return mayUse(secret) ? { kind: 'create', supersede: null, duplicateOf: null } : { kind: 'refuse' };
  const host = sameHost(holder, attributes);
  if (host && holder.state === 'PENDING' && holder.enrollSecretId === secret.id) return { kind: 'reissue', device: holder.id };
  if (!mayUse(secret)) return { kind: 'refuse' };
  const lastSign = Date.parse(holder.lastSeenAt ?? holder.enrolledAt ?? holder.createdAt);
  const live = at - lastSign <= LIVE_HEARTBEAT_INTERVALS * heartbeatIntervalSeconds * 1000;
  if (!host && live) return { kind: 'create', supersede: null, duplicateOf: holder.id };
  return { kind: 'create', supersede: holder.id, duplicateOf: null };
}

function mayUse(secret: NonNullable<RegistrationFacts['secret']>): boolean {
  return secret.maxUses === null || secret.uses < secret.maxUses;
}

export type Registration =
  | {
      kind: 'registered';
      deviceId: DeviceId;
      secretId: EnrollSecretId;
      enrollmentToken: string;
      /** What happened to a holder of the hardware_uuid: nothing (none), superseded, or flagged as a duplicate; or a retry. */
      outcome: 'created' | 'reissued' | 'superseded' | 'duplicate';
      /** The holder superseded or flagged. */
      holder: DeviceId | null;
    }
  | { kind: 'secret_refused' };

/**
 * POST /register: an enrollment secret and the device's identity for a device record and its
 * one-time enrollment token (decideRegistration says which record). A secret not of its shape is
 * refused before any query, like an unknown one.
 */
export async function register(
  store: Store,
  secret: string,
  attributes: DeviceAttributes,
  now: string,
  heartbeatIntervalSeconds: number,
): Promise<Registration> {
  if (!isEnrollSecret(secret)) return { kind: 'secret_refused' };
  const token = newCredential();
  const registration = {
    attributes,
    tokenHash: hashCredential(token),
    tokenExpiresAt: new Date(Date.parse(now) + REGISTERED_TOKEN_TTL_MS).toISOString(),
    now,
  };
  const decide = (facts: RegistrationFacts) => decideRegistration(facts, attributes, now, heartbeatIntervalSeconds);
  let write = await store.registerDevice(hashCredential(secret), registration, decide);
  // A registration through another secret took the hardware_uuid meanwhile: decided again, it is now the holder.
  if (write.kind === 'hardware_uuid_taken') write = await store.registerDevice(hashCredential(secret), registration, decide);
  if (write.kind !== 'registered') return { kind: 'secret_refused' };
  const { decision } = write;
  const outcome =
    decision.kind === 'reissue'
      ? 'reissued'
      : decision.supersede !== null
        ? 'superseded'
        : decision.duplicateOf !== null
          ? 'duplicate'
          : 'created';
  const holder = decision.kind === 'reissue' ? null : (decision.supersede ?? decision.duplicateOf);
  return { kind: 'registered', deviceId: write.device.id, secretId: write.secretId, enrollmentToken: token, outcome, holder };
}

/** The grace settings of a policy (checks/policy.ts): a check's own, else the policy's. */
export interface GraceSettings {
  graceSeconds: number;
  graceSecondsByCheck: Partial<Record<string, number>>;
}

/** How long a new FAIL of `checkKey` is in grace (seconds; 0: none). */
export function graceSecondsFor(settings: GraceSettings, checkKey: string): number {
  return settings.graceSecondsByCheck[checkKey] ?? settings.graceSeconds;
}

/** A check's standing for the overview, the device list and webhooks (docs/server.md, "Grace periods"). */
export type FailStanding = 'failing' | 'in_grace' | 'not_failing';

/**
 * The grace rule, for every engine and every view: a FAIL counts as failing once `graceSeconds`
 * have passed since the FAIL began (status_since, when its status began); before that it is in
 * grace. A FAIL whose beginning cannot be read counts as failing: a grace is never guessed.
 */
export function failStanding(status: string, statusSince: string | null, graceSeconds: number, now: Date): FailStanding {
  if (status !== 'FAIL') return 'not_failing';
  const ends = graceEndsAt(statusSince, graceSeconds);
  // No grace, no grace: a FAIL dated ahead of the server's clock (the agent's clock is ahead) fails at once.
  return graceSeconds > 0 && ends !== undefined && now.getTime() < ends ? 'in_grace' : 'failing';
}

/**
 * The grace rule in the form the stores' SQL applies it (deviceListSql.ts, inGraceCondition): per
 * organization, per check, the time after which a FAIL's beginning puts it in grace at `now`
 * (began > now − grace ⇔ now < began + grace); null where there is no grace.
 */
export interface GraceCutoffs {
  orgId: OrganizationId;
  /** The checks with a grace of their own (graceSecondsByCheck). */
  byCheck: [checkKey: string, cutoff: string | null][];
  /** Every other check's (graceSeconds). */
  otherwise: string | null;
}

export function graceCutoffs(orgId: OrganizationId, settings: GraceSettings, now: Date): GraceCutoffs {
  const cutoff = (graceSeconds: number) => (graceSeconds > 0 ? new Date(now.getTime() - graceSeconds * 1000).toISOString() : null);
  return {
    orgId,
    byCheck: Object.entries(settings.graceSecondsByCheck).map(([checkKey, seconds]) => [checkKey, cutoff(seconds ?? 0)]),
    otherwise: cutoff(settings.graceSeconds),
  };
}

/** When a FAIL that began at `statusSince` starts counting as failing (epoch ms); undefined when that time cannot be read. */
export function graceEndsAt(statusSince: string | null, graceSeconds: number): number | undefined {
  const began = statusSince === null ? Number.NaN : Date.parse(statusSince);
  return Number.isNaN(began) ? undefined : began + graceSeconds * 1000;
}

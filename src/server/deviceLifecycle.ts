// A device's life on the server: every rule about its state, for every engine, in this module.
//
//   device create ─▶ PENDING ─/enroll─▶ PENDING with a key ─first /heartbeat─▶ ACTIVE
//                       └─────────── revocation (admin) or /unenroll ─────────────┴─▶ REVOKED (no key)
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
import { hashCredential, isCredential, newCredential } from './credentials';
import type {
  DeviceAttributes,
  DeviceRef,
  DeviceState,
  EnrollmentFacts,
  NewPostureResult,
  PostureDecision,
  PostureFacts,
  Store,
  Transition,
} from './db/store';
import { DEFAULT_MAX_CHECK_KEYS } from './limitDefaults';
import { HttpError, badRequest, conflict, keyRefused, tokenRefused, unauthorized } from './errors';
import { newId, parseId, type DeviceId, type PostureReportId } from './ids';

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
  | { kind: 'check_key_cap'; index: number; cap: number };

/** The agent API's answer to a refusal. */
export function refusalError(refusal: Refusal): HttpError {
  switch (refusal.kind) {
    case 'token_refused':
      return tokenRefused();
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
  return {
    write: {
      newReport,
      results: results.map((r) => ({
        // Checked just above: a correlation id is one of ownReports, which hold only report ids.
        reportId: (r.correlationId ?? newReport) as PostureReportId,
        checkKey: r.checkKey,
        status: r.status,
        evidence: r.evidence,
        observedAt: r.observedAt,
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

// Defaults of the connection caps and per-device rate limits, derived from the machine and from
// the schedule this server gives its agents.
import { CHECK_KEYS } from '../protocol/constants';
import { openFileLimit } from './openFileLimit';

/** Descriptors kept for the database, its -wal and -shm, logs and the listening socket. */
const RESERVED_DESCRIPTORS = 64;
const FALLBACK_CONNECTION_LIMIT = 1_000;
/** An agent on schedule sends one request per interval; the default allows four times that. */
const SCHEDULE_HEADROOM = 4;

export interface ConnectionCap {
  total: number;
  /** The requested cap, when the open-file limit forced a lower one. */
  lowered?: { requested: number; openFileLimit: number };
}

/**
 * The overall connection cap: as requested, but never so high that connections exhaust the file
 * descriptors. Past that limit the accept call fails (EMFILE) below Node, which closes such
 * connections unseen; under the cap the server sees each one and can make room for it.
 */
export function connectionCap(requested: number | undefined, limit = openFileLimit()): ConnectionCap {
  if (limit === undefined) return { total: requested ?? FALLBACK_CONNECTION_LIMIT };
  const fits = Math.max(1, limit - RESERVED_DESCRIPTORS);
  if (requested === undefined) return { total: fits };
  return requested <= fits ? { total: requested } : { total: fits, lowered: { requested, openFileLimit: limit } };
}

/**
 * Requests per device per minute that an agent on the given schedule never reaches: four times
 * its rate, and never below `floor` (restarts, `run --once` by hand, a posture cycle split in
 * batches, retries).
 */
export function defaultRequestsPerMinute(intervalSeconds: number, floor: number): number {
  return Math.max(floor, Math.ceil((SCHEDULE_HEADROOM * 60) / intervalSeconds));
}

/**
 * Registrations (/register) per client address per minute: a site behind one NAT address rolling
 * out a few hundred machines at once gets through within a minute or two (each retries on 429 with
 * Retry-After), while one address cannot try secrets at speed.
 */
export const DEFAULT_REGISTRATIONS_PER_ADDRESS = 600;
/**
 * Registrations per enrollment secret per minute: a fleet of 10,000 pushed by an MDM at once is
 * registered within a couple of minutes; a leaked secret cannot register more than this.
 */
export const DEFAULT_REGISTRATIONS_PER_SECRET = 6_000;
/**
 * Device page links (POST /device-page) per device per minute: a user opens their page a few times
 * at most (a click on a notification, `my-device` again after a link expired); each link stores a
 * code, so a device stuck in a loop cannot fill the table.
 */
export const DEFAULT_DEVICE_PAGES_PER_DEVICE = 6;

/**
 * Distinct check keys per device (--max-check-keys): the nine official ones and 55 others for an
 * organization's custom checks. At least the official ones: they are always accepted.
 */
export const DEFAULT_MAX_CHECK_KEYS = 64;
export const MIN_MAX_CHECK_KEYS = CHECK_KEYS.length;

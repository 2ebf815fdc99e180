// Defaults of the connection caps and per-device rate limits, derived from the machine and from
// the schedule this server gives its agents.
import { openFileLimit } from './openFileLimit';

/** Descriptors kept for the database, its -wal and -shm, logs and the listening socket. */
const RESERVED_DESCRIPTORS = 64;
const FALLBACK_CONNECTION_LIMIT = 1_000;
/** An agent on schedule sends one request per interval; the default allows four times that. */
const SCHEDULE_HEADROOM = 4;

export function defaultConnectionLimit(limit = openFileLimit()): number {
  return limit === undefined ? FALLBACK_CONNECTION_LIMIT : Math.max(1, limit - RESERVED_DESCRIPTORS);
}

/**
 * Requests per device per minute that an agent on the given schedule never reaches: four times
 * its rate, and never below `floor` (restarts, `run --once` by hand, a posture cycle split in
 * batches, retries).
 */
export function defaultRequestsPerMinute(intervalSeconds: number, floor: number): number {
  return Math.max(floor, Math.ceil((SCHEDULE_HEADROOM * 60) / intervalSeconds));
}

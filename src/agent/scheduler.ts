// Timing rules of the daemon, kept pure: the intervals a heartbeat answer sets, the splay that keeps a
// fleet from pulsing together, and the clock skew read from server_time.

export interface Intervals {
  heartbeatSeconds: number;
  postureSeconds: number;
}

/** Until a heartbeat answers (the spec's current defaults). */
export const INITIAL_INTERVALS: Intervals = { heartbeatSeconds: 300, postureSeconds: 3600 };
/** The longest interval a server may set; the client (client.ts) clamps longer ones to it. */
export const MAX_INTERVAL_SECONDS = 86_400;

/** Splay: up to ±10 % of an interval, never more than a minute either way. */
const SPLAY_FRACTION = 0.1;
const MAX_SPLAY_MS = 60_000;

/** Beyond this, the local clock is reported as skewed. */
export const CLOCK_SKEW_WARNING_MS = 120_000;

/**
 * The intervals after a successful heartbeat. The client validated the answer (client.ts: a whole
 * number of seconds in [1 s, 1 day], or absent); an absent field keeps the previous interval.
 */
export function intervalsFrom(
  previous: Intervals,
  answer: { heartbeat_interval_seconds?: number; posture_interval_seconds?: number },
): Intervals {
  return {
    heartbeatSeconds: answer.heartbeat_interval_seconds ?? previous.heartbeatSeconds,
    postureSeconds: answer.posture_interval_seconds ?? previous.postureSeconds,
  };
}

/** `ms` moved by a random amount within the splay, so that agents started together drift apart. */
export function withSplay(ms: number, random: () => number): number {
  const spread = Math.min(ms * SPLAY_FRACTION, MAX_SPLAY_MS);
  return Math.max(0, Math.round(ms + (random() * 2 - 1) * spread));
}

/**
 * Server clock minus local clock, in ms, taking the local time halfway through the request as the
 * moment the server stamped its answer. Null when server_time cannot be parsed.
 */
export function clockSkewMs(serverTime: string, sentAtMs: number, receivedAtMs: number): number | null {
  const server = Date.parse(serverTime);
  if (Number.isNaN(server)) return null;
  return Math.round(server - (sentAtMs + receivedAtMs) / 2);
}

// The daemon's time, injected so that its transitions run under test with a fake clock.
// Intervals, deadlines and backoff are measured on a monotonic clock: a wall-clock step (NTP
// correction, a resumed VM, a user changing the date) moves neither a due heartbeat nor a retry.
// Wall time is only for what is reported: observed_at, status.json, clock skew.

/** Node's timers hold at most 2^31 − 1 ms; a longer delay fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface Clock {
  /** Milliseconds on a monotonic clock with an arbitrary origin: for intervals and deadlines only. */
  monotonicMs(): number;
  /** Milliseconds since the epoch, as the system clock says: for reports only. */
  wallMs(): number;
  /** Calls `fire` once after `ms` (Infinity: never); returns the cancel function. */
  schedule(fire: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  monotonicMs: () => performance.now(),
  wallMs: () => Date.now(),
  schedule(fire, ms) {
    if (!Number.isFinite(ms)) return () => undefined;
    // A capped delay wakes the caller early; callers re-check what is due, so nothing fires too soon.
    const timer = setTimeout(fire, Math.max(0, Math.min(ms, MAX_TIMER_MS)));
    return () => clearTimeout(timer);
  },
};

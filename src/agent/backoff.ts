// Retry timing: bounded exponential backoff with decorrelated jitter ("Exponential Backoff And
// Jitter", AWS Architecture Blog): each delay is drawn from [base, 3 × previous delay] and capped.
// Jitter spreads a fleet's retries after an outage instead of having every agent hit the server
// at the same instant, and the lower bound (base) keeps a failing request from spinning.
// Pure apart from the injected random source and sleep, so the timing is unit-tested exactly.
import { RetryableError, InvalidResponseError } from './api';
import { MAX_TIMER_MS } from './daemonClock';

export interface RetryPolicy {
  /** First delay and lower bound of every delay (DEVICE_AGENT_RETRY_BASE_MS). */
  baseMs: number;
  /** Upper bound of every delay, Retry-After included (DEVICE_AGENT_RETRY_MAX_MS). */
  maxMs: number;
  /** Attempts per request in `run --once` (DEVICE_AGENT_RETRY_ATTEMPTS). */
  attempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 1000, maxMs: 300_000, attempts: 5 };

export type RandomSource = () => number;

export class RetrySettingError extends Error {
  override name = 'RetrySettingError';
}

const ENV_NAMES = {
  baseMs: 'DEVICE_AGENT_RETRY_BASE_MS',
  maxMs: 'DEVICE_AGENT_RETRY_MAX_MS',
  attempts: 'DEVICE_AGENT_RETRY_ATTEMPTS',
} as const;

/**
 * The retry policy from the environment; a malformed value is an error, never silently replaced.
 * Each value is at most MAX_TIMER_MS: beyond it a timer would fire at once (a retry storm).
 */
export function retryPolicyFromEnv(env: NodeJS.ProcessEnv, defaults: RetryPolicy = DEFAULT_RETRY_POLICY): RetryPolicy {
  const policy = { ...defaults };
  for (const field of Object.keys(ENV_NAMES) as (keyof RetryPolicy)[]) {
    const raw = env[ENV_NAMES[field]];
    if (raw === undefined || raw.trim() === '') continue;
    if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
      throw new RetrySettingError(`${ENV_NAMES[field]} must be a positive whole number, got "${raw}"`);
    }
    if (Number(raw) > MAX_TIMER_MS) {
      throw new RetrySettingError(`${ENV_NAMES[field]} must be at most ${MAX_TIMER_MS} (about 24.8 days), got "${raw}"`);
    }
    policy[field] = Number(raw);
  }
  if (policy.baseMs > policy.maxMs) {
    throw new RetrySettingError(`${ENV_NAMES.baseMs} (${policy.baseMs}) must not exceed ${ENV_NAMES.maxMs} (${policy.maxMs})`);
  }
  return policy;
}

/**
 * The delay after a failure, given the previous delay (undefined after a success).
 * `retryAfterMs` (from a 429/503 Retry-After) is honoured as a floor, up to the cap, with a little
 * jitter on top so that agents told the same instant do not return together.
 */
export function nextDelay(previousMs: number | undefined, policy: RetryPolicy, random: RandomSource, retryAfterMs?: number): number {
  const upper = Math.max(policy.baseMs, (previousMs ?? policy.baseMs) * 3);
  const jittered = Math.min(policy.maxMs, policy.baseMs + random() * (upper - policy.baseMs));
  if (retryAfterMs === undefined) return Math.round(jittered);
  return Math.round(Math.min(policy.maxMs, retryAfterMs + random() * policy.baseMs));
}

/** Consecutive-failure state of one kind of request (heartbeat, upload, key store). */
export class Backoff {
  private previousMs: number | undefined;
  private failureCount = 0;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly random: RandomSource = Math.random,
  ) {}

  get failures(): number {
    return this.failureCount;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  fail(retryAfterMs?: number): number {
    this.failureCount += 1;
    const delay = nextDelay(this.previousMs, this.policy, this.random, retryAfterMs);
    // Retry-After is the server's instruction for this answer only; the exponential state continues from our own delays.
    if (retryAfterMs === undefined) this.previousMs = delay;
    return delay;
  }

  reset(): void {
    this.previousMs = undefined;
    this.failureCount = 0;
  }
}

/** The server's Retry-After, in ms, when the failure is an answer that gave one. */
export function retryAfterMs(err: unknown): number | undefined {
  return err instanceof RetryableError ? err.retryAfterMs : undefined;
}

/** Failures that a later identical attempt may not meet: network, timeouts, 429, 5xx, a garbled answer. */
export function isTransient(err: unknown): err is RetryableError | InvalidResponseError {
  return err instanceof RetryableError || err instanceof InvalidResponseError;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Why `signal` aborted: the Error given to abort(), or the DOMException (an Error too) abort() makes without one. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}

export interface RetryOptions {
  policy: RetryPolicy;
  random?: RandomSource;
  sleep?: Sleep;
  signal?: AbortSignal;
  /** Called before each wait, for logging. */
  onRetry?: (err: RetryableError | InvalidResponseError, attempt: number, delayMs: number) => void;
}

/**
 * Runs `operation` up to `policy.attempts` times while it fails transiently (`run --once`);
 * any other error, and the last transient one, is thrown to the caller.
 */
export async function withRetries<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = new Backoff(options.policy, options.random);
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (err) {
      if (!isTransient(err) || attempt >= options.policy.attempts) throw err;
      const delay = backoff.fail(retryAfterMs(err));
      options.onRetry?.(err, attempt, delay);
      await wait(delay, options.signal);
    }
  }
}

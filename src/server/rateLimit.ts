// Per-device request budgets (and per address or per enrollment secret for /register): a token
// bucket per key that refills continuously. A device that
// empties its bucket is answered 429 with Retry-After until enough budget has come back. The state
// lives in this process (a restart forgets it; each server process has its own budgets).
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { deviceOf } from './auth';
import { HttpError } from './errors';

const MINUTE_MS = 60_000;

export interface Budget {
  /** Units a device may spend per minute; also the burst. 0 means unlimited. */
  perMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastPrune: number;

  constructor(
    private readonly budget: Budget,
    private readonly now: () => number = Date.now,
  ) {
    this.lastPrune = now();
  }

  /** Spends `cost` units of `key`'s budget; undefined when allowed, else ms until it would be. */
  take(key: string, cost = 1): number | undefined {
    const { perMinute } = this.budget;
    if (perMinute === 0) return undefined;
    const now = this.now();
    this.pruneFullBuckets(now);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: perMinute, at: now };
      this.buckets.set(key, bucket);
    }
    // Updated in place: one object per device, not one per request.
    const tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / MINUTE_MS);
    bucket.at = now;
    if (tokens < cost) {
      bucket.tokens = tokens;
      return Math.ceil(((cost - tokens) * MINUTE_MS) / perMinute);
    }
    bucket.tokens = tokens - cost;
    return undefined;
  }

  /** Buckets that have refilled carry no information: forgetting them bounds memory to active devices. */
  private pruneFullBuckets(now: number): void {
    if (now - this.lastPrune < MINUTE_MS) return;
    this.lastPrune = now;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.at >= MINUTE_MS) this.buckets.delete(key);
    }
  }
}

/** 429 with Retry-After; `who` sent too much: this device, this address, this enrollment secret. */
export function tooManyRequests(what: string, waitMs: number, who = 'this device'): HttpError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new HttpError('too_many_requests', `${who} sent ${what} faster than this server allows; retry after ${seconds} s`, {
    'retry-after': String(seconds),
  });
}

/** Spends `cost` units of the device's budget in `limiter`; a 429 HttpError when it has not enough left. */
export function spendDeviceBudget(limiter: RateLimiter, deviceId: string, what: string, cost = 1): void {
  const wait = limiter.take(deviceId, cost);
  if (wait !== undefined) throw tooManyRequests(what, wait);
}

/**
 * onRequest hook, after authentication and before the body is read: spends the device's budget,
 * `cost` units for this request.
 */
export function limitDevice(limiter: RateLimiter, what: string, cost: (request: FastifyRequest) => number = () => 1) {
  // A callback hook: fastify answers a throw from it as the request's error.
  return function limit(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    spendDeviceBudget(limiter, deviceOf(request).id, what, cost(request));
    done();
  };
}

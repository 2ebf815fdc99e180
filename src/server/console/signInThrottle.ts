// Console sign-in attempts per account, beside the per-address limit (--rate-limit-sign-ins, below): behind
// --trust-proxy every X-Forwarded-For address is a new client, so only a count kept per account
// bounds the passwords one account's attacker can try. The first 5 attempts are free; the 5th makes
// the next wait 30 s, and each one after it doubles the wait (1 min, 2 min, … at most 15 minutes):
// about 100 guesses a day per account, where a few typos cost nothing. An attempt is counted when
// it starts, so that parallel requests cannot all pass before the first wrong password is known; a
// successful sign-in clears the account's count. Unknown emails are counted alike, so that a delay
// does not tell which accounts exist. The counts are kept in the database (the store's
// recordSignInAttempt, one transaction per attempt), so every process serving the console, the
// `--workers` and other servers on the same database, counts against one budget; the rules are here.
//
// The per-address limit is kept in the database too (the store's takeSignInAddressBudget), for the
// same reason: n attempts a minute per client address, whichever process answers. A token bucket of
// n that refills continuously, kept as one number per address: the time its bucket is full again
// (the generic cell rate algorithm), so a row whose time has passed carries nothing and is deleted.

import { createHash } from 'node:crypto';
import type { SignInAddressDecision, SignInAttempts, SignInDecision, Store } from '../db/store';

/** Longer than any IP address's text; X-Forwarded-For is whatever the client wrote, so it is cut. */
const MAX_ADDRESS_LENGTH = 64;

export interface SignInDelayPolicy {
  /** Attempts that cost no delay. */
  freeAttempts: number;
  /** The delay after the last free attempt; each attempt after it doubles it. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** An account that made no attempt for this long starts afresh. */
  forgetAfterMs: number;
  /** Accounts tracked at most; beyond it the least attacked one is forgotten first. */
  maxAccounts: number;
}

export const SIGN_IN_DELAYS: SignInDelayPolicy = {
  freeAttempts: 5,
  firstDelayMs: 30_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 24 * 3_600_000,
  maxAccounts: 10_000,
};

/**
 * One attempt at `now` from `address` on an account with `stored` attempts: wait (not counted) while
 * the account is blocked, else counted, blocking the next attempts once the free ones are spent.
 */
export function decideSignInAttempt(
  stored: SignInAttempts | undefined,
  now: number,
  address: string,
  policy: SignInDelayPolicy,
): SignInDecision {
  const current = stored && fresh(stored, now, policy) ? stored : undefined;
  if (current !== undefined && now < current.blockedUntil) return { waitMs: current.blockedUntil - now };
  const attempts = (current?.attempts ?? 0) + 1;
  const beyondFree = attempts - policy.freeAttempts;
  return {
    counted: {
      attempts,
      firstAt: current?.firstAt ?? now,
      lastAt: now,
      lastAddress: address,
      blockedUntil: beyondFree >= 0 ? now + Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** beyondFree) : 0,
    },
  };
}

function fresh(attempts: SignInAttempts, now: number, policy: SignInDelayPolicy): boolean {
  return now - attempts.lastAt < policy.forgetAfterMs;
}

export class SignInThrottle {
  constructor(
    private readonly store: Store,
    private readonly policy: SignInDelayPolicy = SIGN_IN_DELAYS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * One sign-in attempt for `account` (its normalised email) from `clientAddress`: the ms to wait
   * when it must not be tried now (it is then not counted), else undefined, and it is counted.
   */
  async attempt(account: string, clientAddress: string): Promise<number | undefined> {
    const now = this.now();
    const address = clientAddress.slice(0, MAX_ADDRESS_LENGTH);
    const room = { maxAccounts: this.policy.maxAccounts, staleBefore: now - this.policy.forgetAfterMs };
    const decision = await this.store.recordSignInAttempt(keyOf(account), room, (stored) =>
      decideSignInAttempt(stored, now, address, this.policy),
    );
    return 'waitMs' in decision ? decision.waitMs : undefined;
  }

  /** The account signed in: its count starts afresh. */
  async succeeded(account: string): Promise<void> {
    await this.store.deleteSignInAttempts(keyOf(account));
  }

  /** The attempts counted for `account` since its last sign-in, when there are any. */
  async attemptsOf(account: string): Promise<Readonly<SignInAttempts> | undefined> {
    const stored = await this.store.signInAttempts(keyOf(account));
    return stored && fresh(stored, this.now(), this.policy) ? stored : undefined;
  }
}

const MINUTE_MS = 60_000;

/**
 * One attempt at `now` from an address whose budget of `perMinute` attempts (also the burst) is full
 * again at `fullAt` (undefined: full now): let through, each attempt moving that time a
 * 1/perMinute minute later, as long as it stays within a minute of now; else the wait until it would.
 */
export function decideAddressAttempt(fullAt: number | undefined, now: number, perMinute: number): SignInAddressDecision {
  const after = Math.max(fullAt ?? now, now) + MINUTE_MS / perMinute;
  const overdraft = after - now - MINUTE_MS;
  return overdraft > 0 ? { waitMs: Math.ceil(overdraft) } : { fullAt: after };
}

/** Console sign-in attempts per client address (--rate-limit-sign-ins), across every process on the database. */
export class SignInAddressLimit {
  constructor(
    private readonly store: Store,
    /** 0: no limit. */
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** One attempt from `clientAddress`: the ms to wait when it must not be tried now (not counted), else undefined. */
  async attempt(clientAddress: string): Promise<number | undefined> {
    if (this.perMinute === 0) return undefined;
    const now = this.now();
    const decision = await this.store.takeSignInAddressBudget(keyOf(clientAddress), now, (fullAt) =>
      decideAddressAttempt(fullAt, now, this.perMinute),
    );
    return 'waitMs' in decision ? decision.waitMs : undefined;
  }
}

/** By the SHA-256 of the email or address: a row's size does not depend on what a client typed. */
function keyOf(account: string): string {
  return createHash('sha256').update(account).digest('base64url');
}

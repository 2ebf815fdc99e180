// Console sign-in attempts per account, beside the per-address limit (--rate-limit-sign-ins): behind
// --trust-proxy every X-Forwarded-For address is a new client, so only a count kept per account
// bounds the passwords one account's attacker can try. The first 5 attempts are free; the 5th makes
// the next wait 30 s, and each one after it doubles the wait (1 min, 2 min, … at most 15 minutes):
// about 100 guesses a day per account and process, where a few typos cost nothing. An
// attempt is counted when it starts, so that parallel requests cannot all pass before the first
// wrong password is known; a successful sign-in clears the account's count. Unknown emails are
// counted alike, so that a delay does not tell which accounts exist. The counts live in this process,
// like the per-address budgets (a restart forgets them; each `--workers` process keeps its own).

import { createHash } from 'node:crypto';

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

/** What an account's other sessions are told, and what the log says. */
export interface AccountAttempts {
  /** Attempts counted since the last successful sign-in (the one in progress included). */
  attempts: number;
  firstAt: number;
  lastAt: number;
  /** The client address of the last attempt (X-Forwarded-For's behind a trusted proxy). */
  lastAddress: string;
  /** No attempt is let through before this time (epoch ms; 0: none). */
  blockedUntil: number;
}

export class SignInThrottle {
  /** By the SHA-256 of the email: an entry's size does not depend on what a client typed. */
  private readonly accounts = new Map<string, AccountAttempts>();

  constructor(
    private readonly policy: SignInDelayPolicy = SIGN_IN_DELAYS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * One sign-in attempt for `account` (its normalised email) from `address`: the ms to wait when it
   * must not be tried now (it is then not counted), else undefined, and it is counted.
   */
  attempt(account: string, clientAddress: string): number | undefined {
    const now = this.now();
    const key = keyOf(account);
    const address = clientAddress.slice(0, MAX_ADDRESS_LENGTH);
    let entry = this.current(key, now);
    if (entry !== undefined && now < entry.blockedUntil) return entry.blockedUntil - now;
    if (entry === undefined) {
      this.makeRoom(now);
      entry = { attempts: 0, firstAt: now, lastAt: now, lastAddress: address, blockedUntil: 0 };
      this.accounts.set(key, entry);
    }
    entry.attempts += 1;
    entry.lastAt = now;
    entry.lastAddress = address;
    const beyondFree = entry.attempts - this.policy.freeAttempts;
    if (beyondFree >= 0) entry.blockedUntil = now + Math.min(this.policy.maxDelayMs, this.policy.firstDelayMs * 2 ** beyondFree);
    return undefined;
  }

  /** The account signed in: its count starts afresh. */
  succeeded(account: string): void {
    this.accounts.delete(keyOf(account));
  }

  /** The attempts counted for `account` since its last sign-in, when there are any. */
  attemptsOf(account: string): Readonly<AccountAttempts> | undefined {
    return this.current(keyOf(account), this.now());
  }

  private current(key: string, now: number): AccountAttempts | undefined {
    const entry = this.accounts.get(key);
    if (entry === undefined || now - entry.lastAt < this.policy.forgetAfterMs) return entry;
    this.accounts.delete(key);
    return undefined;
  }

  /**
   * Bounds memory under a spray of invented emails: forgets the stale, then the account with the
   * fewest attempts (the oldest of those), so that the accounts under attack are the ones kept.
   */
  private makeRoom(now: number): void {
    if (this.accounts.size < this.policy.maxAccounts) return;
    let fewest: [string, AccountAttempts] | undefined;
    for (const [key, entry] of this.accounts) {
      if (now - entry.lastAt >= this.policy.forgetAfterMs) this.accounts.delete(key);
      else if (fewest === undefined || entry.attempts < fewest[1].attempts) fewest = [key, entry];
    }
    // Still full means some entry was not stale: `fewest` is one.
    if (this.accounts.size >= this.policy.maxAccounts) this.accounts.delete(fewest![0]);
  }
}

function keyOf(account: string): string {
  return createHash('sha256').update(account).digest('base64url');
}

// The per-account sign-in delay and the per-address limit (src/server/console/signInThrottle.ts) over
// a real store (SQLite; a real PostgreSQL in the `postgres` project), with a clock the test moves.
// Over real HTTP, with rotating X-Forwarded-For addresses and two servers on one database: security.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  SIGN_IN_DELAYS,
  SignInAddressLimit,
  SignInThrottle,
  decideAddressAttempt,
  decideSignInAttempt,
  type SignInDelayPolicy,
} from '../../src/server/console/signInThrottle';
import type { Store } from '../../src/server/db/store';
import { openInspectedTestStore } from '../support/testStore';

let dir: string;
let store: Store;
let countRows: (table: string) => Promise<number>;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-sign-in-'));
  ({ store, countRows } = await openInspectedTestStore(dir));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The defaults but a first delay of 1 s, which keeps the numbers below readable. */
function throttle(policy: Partial<SignInDelayPolicy> = {}) {
  const clock = { now: 1_000_000 };
  const limiter = new SignInThrottle(store, { ...SIGN_IN_DELAYS, firstDelayMs: 1000, ...policy }, () => clock.now);
  return { limiter, clock };
}

test('the defaults: 5 free attempts, then 30 s doubling up to 15 minutes; forgotten after a day; 10,000 accounts', async () => {
  expect(SIGN_IN_DELAYS).toEqual({
    freeAttempts: 5,
    firstDelayMs: 30_000,
    maxDelayMs: 15 * 60_000,
    forgetAfterMs: 24 * 3_600_000,
    maxAccounts: 10_000,
  });
  const clock = { now: 0 };
  const limiter = new SignInThrottle(store, undefined, () => clock.now);
  await attempts(limiter, 5);
  expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBe(30_000);
});

/** `n` attempts at the current time, one after the other; the waits answered (undefined: let through and counted). */
async function attempts(limiter: SignInThrottle, n: number, account = 'a@x.test', address = '192.0.2.1') {
  const waits: (number | undefined)[] = [];
  for (let i = 0; i < n; i += 1) waits.push(await limiter.attempt(account, address));
  return waits;
}

describe('per account', () => {
  test('five attempts are free; the fifth makes the next wait 1 s, then 2 s, 4 s: doubling', async () => {
    const { limiter, clock } = throttle();
    expect(await attempts(limiter, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBe(1000);
    clock.now += 999;
    expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBe(1);
    clock.now += 1;
    for (const delay of [2000, 4000, 8000]) {
      expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBeUndefined();
      expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBe(delay);
      if (delay < 8000) clock.now += delay;
    }
    expect(await limiter.attemptsOf('a@x.test')).toEqual({
      attempts: 8,
      firstAt: 1_000_000,
      lastAt: clock.now,
      lastAddress: '192.0.2.1',
      blockedUntil: clock.now + 8000,
    });
  });

  test('a refused attempt is not counted, and the delay never exceeds 15 minutes', async () => {
    const { limiter, clock } = throttle();
    await attempts(limiter, 5);
    await attempts(limiter, 20);
    expect((await limiter.attemptsOf('a@x.test'))?.attempts).toBe(5);
    for (let i = 0; i < 30; i += 1) {
      clock.now = (await limiter.attemptsOf('a@x.test'))!.blockedUntil;
      expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBeUndefined();
    }
    expect((await limiter.attemptsOf('a@x.test'))!.blockedUntil - clock.now).toBe(15 * 60_000);
  });

  test('every address counts for the same account; another account has its own count', async () => {
    const { limiter } = throttle();
    for (let i = 0; i < 5; i += 1) expect(await limiter.attempt('a@x.test', `198.51.100.${i}`)).toBeUndefined();
    expect(await limiter.attempt('a@x.test', '203.0.113.9')).toBe(1000);
    expect((await limiter.attemptsOf('a@x.test'))?.lastAddress).toBe('198.51.100.4');
    expect(await limiter.attempt('b@x.test', '198.51.100.0')).toBeUndefined();
    expect((await limiter.attemptsOf('b@x.test'))?.attempts).toBe(1);
  });

  test('a sign-in clears the count', async () => {
    const { limiter } = throttle();
    await attempts(limiter, 4);
    await limiter.succeeded('a@x.test');
    expect(await limiter.attemptsOf('a@x.test')).toBeUndefined();
    expect(await attempts(limiter, 5)).toEqual(Array(5).fill(undefined));
  });

  test('an account without an attempt for 24 hours starts afresh', async () => {
    const { limiter, clock } = throttle();
    await attempts(limiter, 5);
    clock.now += 24 * 3_600_000 - 1;
    expect((await limiter.attemptsOf('a@x.test'))?.attempts).toBe(5);
    clock.now += 1;
    expect(await limiter.attemptsOf('a@x.test')).toBeUndefined();
    expect(await attempts(limiter, 5)).toEqual(Array(5).fill(undefined));
    expect(await limiter.attemptsOf('a@x.test')).toMatchObject({ attempts: 5, firstAt: clock.now });
    expect(await limiter.attempt('a@x.test', '192.0.2.1')).toBe(1000);
  });

  test('two throttles on one store (two processes on one database) count against one budget', async () => {
    const { limiter: first, clock } = throttle();
    const second = new SignInThrottle(store, { ...SIGN_IN_DELAYS, firstDelayMs: 1000 }, () => clock.now);
    await attempts(first, 3);
    await attempts(second, 2);
    expect(await first.attempt('a@x.test', '192.0.2.1')).toBe(1000);
    expect((await second.attemptsOf('a@x.test'))?.attempts).toBe(5);
    await second.succeeded('a@x.test');
    expect(await first.attemptsOf('a@x.test')).toBeUndefined();
  });

  test('attempts made at once are each counted: as many are let through as are free, no more', async () => {
    const { limiter } = throttle();
    const waits = await Promise.all(Array.from({ length: 12 }, (_, i) => limiter.attempt('a@x.test', `198.51.100.${i}`)));
    expect(waits.filter((wait) => wait === undefined)).toHaveLength(5);
    expect((await limiter.attemptsOf('a@x.test'))?.attempts).toBe(5);
  });
});

describe('the decision', () => {
  const policy = { ...SIGN_IN_DELAYS, firstDelayMs: 1000 };
  test('a stale record starts afresh; a blocked one waits; the fifth attempt blocks', () => {
    const stored = { attempts: 7, firstAt: 1, lastAt: 10, lastAddress: 'old', blockedUntil: 10 + 16_000 };
    expect(decideSignInAttempt(stored, 10 + 24 * 3_600_000, 'new', policy)).toEqual({
      counted: { attempts: 1, firstAt: 10 + 24 * 3_600_000, lastAt: 10 + 24 * 3_600_000, lastAddress: 'new', blockedUntil: 0 },
    });
    expect(decideSignInAttempt(stored, 20, 'new', policy)).toEqual({ waitMs: 16_000 - 10 });
    expect(decideSignInAttempt({ ...stored, attempts: 4, blockedUntil: 0 }, 20, 'new', policy)).toEqual({
      counted: { attempts: 5, firstAt: 1, lastAt: 20, lastAddress: 'new', blockedUntil: 1020 },
    });
  });
});

describe('bounded', () => {
  test('an email or an address of any length costs the same: the address is cut to 64 characters', async () => {
    const { limiter } = throttle();
    const long = `${'x'.repeat(16_000)}@x.test`;
    await limiter.attempt(long, `198.51.100.1${'0'.repeat(1000)}`);
    expect(await limiter.attemptsOf(long)).toMatchObject({ attempts: 1, lastAddress: `198.51.100.1${'0'.repeat(52)}` });
    expect(await limiter.attemptsOf(long.slice(1))).toBeUndefined();
  });

  test('at the bound, a spray of new emails forgets the least attacked account, never the attacked one', async () => {
    const { limiter, clock } = throttle({ maxAccounts: 3 });
    await attempts(limiter, 5, 'target@x.test');
    clock.now = (await limiter.attemptsOf('target@x.test'))!.blockedUntil;
    await attempts(limiter, 2, 'second@x.test');
    for (let i = 0; i < 20; i += 1) {
      clock.now += 1;
      await limiter.attempt(`spray${i}@x.test`, '192.0.2.1');
    }
    expect((await limiter.attemptsOf('target@x.test'))?.attempts).toBe(5);
    expect((await limiter.attemptsOf('second@x.test'))?.attempts).toBe(2);
    expect((await limiter.attemptsOf('spray19@x.test'))?.attempts).toBe(1);
    expect(await limiter.attemptsOf('spray18@x.test')).toBeUndefined();
  });

  test('at the bound, stale accounts go first, and the least attacked among ties is the oldest', async () => {
    const { limiter, clock } = throttle({ maxAccounts: 3 });
    await attempts(limiter, 3, 'stale@x.test');
    clock.now += 24 * 3_600_000;
    for (const account of ['old@x.test', 'new@x.test', 'next@x.test']) {
      clock.now += 1;
      await limiter.attempt(account, '192.0.2.1');
    }
    expect((await limiter.attemptsOf('old@x.test'))?.attempts).toBe(1);
    clock.now += 1;
    await limiter.attempt('last@x.test', '192.0.2.1');
    expect(await limiter.attemptsOf('old@x.test')).toBeUndefined();
    expect(
      await Promise.all(['new@x.test', 'next@x.test', 'last@x.test'].map(async (account) => (await limiter.attemptsOf(account))?.attempts)),
    ).toEqual([1, 1, 1]);
  });
});

describe('per client address', () => {
  function addressLimit(perMinute: number) {
    const clock = { now: 1_000_000 };
    return { limit: new SignInAddressLimit(store, perMinute, () => clock.now), clock };
  }
  async function tries(limit: SignInAddressLimit, n: number, address = '192.0.2.1') {
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < n; i += 1) waits.push(await limit.attempt(address));
    return waits;
  }
  const BUDGETS = 'sign_in_address_budgets';

  test('the budget at once, then one attempt back every 1/n minute; a refused one is not counted; other addresses untouched', async () => {
    const { limit, clock } = addressLimit(3);
    expect(await tries(limit, 5)).toEqual([undefined, undefined, undefined, 20_000, 20_000]);
    expect(await limit.attempt('192.0.2.2')).toBeUndefined();
    clock.now += 19_999;
    expect(await limit.attempt('192.0.2.1')).toBe(1);
    clock.now += 1;
    expect(await tries(limit, 2)).toEqual([undefined, 20_000]);
    clock.now += 60_000;
    expect(await tries(limit, 4)).toEqual([undefined, undefined, undefined, 20_000]);
  });

  test('attempts made at once are each counted: as many are let through as the budget, no more', async () => {
    const { limit } = addressLimit(3);
    const waits = await Promise.all(Array.from({ length: 8 }, () => limit.attempt('192.0.2.1')));
    expect(waits.filter((wait) => wait === undefined)).toHaveLength(3);
  });

  test('0: no limit, and nothing is stored', async () => {
    const { limit } = addressLimit(0);
    expect(await tries(limit, 30)).toEqual(Array.from({ length: 30 }, () => undefined));
    expect(await countRows(BUDGETS)).toBe(0);
  });

  test('bounded: an address full again is deleted when a new one arrives, one still limited never is', async () => {
    const { limit, clock } = addressLimit(10); // one attempt back every 6 s
    expect((await tries(limit, 11, 'busy')).at(-1)).toBe(6000);
    // An attacker rotating addresses, one every 50 ms for 5 s: each row is full again 6 s after its attempt.
    for (let i = 0; i < 100; i += 1) {
      clock.now += 50;
      expect(await limit.attempt(`198.51.100.${i}`)).toBeUndefined();
    }
    expect(await countRows(BUDGETS)).toBe(101);
    expect(await limit.attempt('busy')).toBe(1000);
    // One a second from now on: only the addresses of the last 6 s stay.
    for (let i = 0; i < 100; i += 1) {
      clock.now += 1000;
      await limit.attempt(`203.0.113.${i}`);
    }
    expect(await countRows(BUDGETS)).toBe(6);
    clock.now += 6000;
    await limit.attempt('192.0.2.9');
    expect(await countRows(BUDGETS)).toBe(1);
  });

  test('the decision: a time passed is a full budget; exactly a minute ahead is allowed; waits are whole ms', () => {
    expect(decideAddressAttempt(undefined, 1000, 3)).toEqual({ fullAt: 21_000 });
    expect(decideAddressAttempt(500, 1000, 3)).toEqual({ fullAt: 21_000 });
    expect(decideAddressAttempt(41_000, 1000, 3)).toEqual({ fullAt: 61_000 });
    expect(decideAddressAttempt(41_001, 1000, 3)).toEqual({ waitMs: 1 });
    expect(decideAddressAttempt(61_000, 1000, 7)).toEqual({ waitMs: 8572 });
  });
});

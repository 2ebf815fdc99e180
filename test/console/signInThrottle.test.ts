// The per-account sign-in delay (src/server/console/signInThrottle.ts), in process with a clock the
// test moves. Over real HTTP, with rotating X-Forwarded-For addresses: security.test.ts.
import { describe, expect, test } from 'vitest';
import { SIGN_IN_DELAYS, SignInThrottle, type SignInDelayPolicy } from '../../src/server/console/signInThrottle';

/** The defaults but a first delay of 1 s, which keeps the numbers below readable. */
function throttle(policy: Partial<SignInDelayPolicy> = {}) {
  const clock = { now: 1_000_000 };
  const limiter = new SignInThrottle({ ...SIGN_IN_DELAYS, firstDelayMs: 1000, ...policy }, () => clock.now);
  return { limiter, clock };
}

test('the defaults: 5 free attempts, then 30 s doubling up to 15 minutes; forgotten after a day; 10,000 accounts', () => {
  expect(SIGN_IN_DELAYS).toEqual({
    freeAttempts: 5,
    firstDelayMs: 30_000,
    maxDelayMs: 15 * 60_000,
    forgetAfterMs: 24 * 3_600_000,
    maxAccounts: 10_000,
  });
  const clock = { now: 0 };
  const limiter = new SignInThrottle(undefined, () => clock.now);
  attempts(limiter, 5);
  expect(limiter.attempt('a@x.test', '192.0.2.1')).toBe(30_000);
});

/** `n` attempts at the current time; the waits answered (undefined: let through and counted). */
const attempts = (limiter: SignInThrottle, n: number, account = 'a@x.test', address = '192.0.2.1') =>
  Array.from({ length: n }, () => limiter.attempt(account, address));

describe('per account', () => {
  test('five attempts are free; the fifth makes the next wait 1 s, then 2 s, 4 s: doubling', () => {
    const { limiter, clock } = throttle();
    expect(attempts(limiter, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(limiter.attempt('a@x.test', '192.0.2.1')).toBe(1000);
    clock.now += 999;
    expect(limiter.attempt('a@x.test', '192.0.2.1')).toBe(1);
    clock.now += 1;
    for (const delay of [2000, 4000, 8000]) {
      expect(limiter.attempt('a@x.test', '192.0.2.1')).toBeUndefined();
      expect(limiter.attempt('a@x.test', '192.0.2.1')).toBe(delay);
      if (delay < 8000) clock.now += delay;
    }
    expect(limiter.attemptsOf('a@x.test')).toEqual({
      attempts: 8,
      firstAt: 1_000_000,
      lastAt: clock.now,
      lastAddress: '192.0.2.1',
      blockedUntil: clock.now + 8000,
    });
  });

  test('a refused attempt is not counted, and the delay never exceeds 15 minutes', () => {
    const { limiter, clock } = throttle();
    attempts(limiter, 5);
    attempts(limiter, 100);
    expect(limiter.attemptsOf('a@x.test')?.attempts).toBe(5);
    for (let i = 0; i < 30; i += 1) {
      clock.now = limiter.attemptsOf('a@x.test')!.blockedUntil;
      expect(limiter.attempt('a@x.test', '192.0.2.1')).toBeUndefined();
    }
    expect(limiter.attemptsOf('a@x.test')!.blockedUntil - clock.now).toBe(15 * 60_000);
  });

  test('every address counts for the same account; another account has its own count', () => {
    const { limiter } = throttle();
    for (let i = 0; i < 5; i += 1) expect(limiter.attempt('a@x.test', `198.51.100.${i}`)).toBeUndefined();
    expect(limiter.attempt('a@x.test', '203.0.113.9')).toBe(1000);
    expect(limiter.attemptsOf('a@x.test')?.lastAddress).toBe('198.51.100.4');
    expect(limiter.attempt('b@x.test', '198.51.100.0')).toBeUndefined();
    expect(limiter.attemptsOf('b@x.test')?.attempts).toBe(1);
  });

  test('a sign-in clears the count', () => {
    const { limiter } = throttle();
    attempts(limiter, 4);
    limiter.succeeded('a@x.test');
    expect(limiter.attemptsOf('a@x.test')).toBeUndefined();
    expect(attempts(limiter, 5)).toEqual(Array(5).fill(undefined));
  });

  test('an account without an attempt for 24 hours starts afresh', () => {
    const { limiter, clock } = throttle();
    attempts(limiter, 5);
    clock.now += 24 * 3_600_000 - 1;
    expect(limiter.attemptsOf('a@x.test')?.attempts).toBe(5);
    clock.now += 1;
    expect(limiter.attemptsOf('a@x.test')).toBeUndefined();
    expect(attempts(limiter, 5)).toEqual(Array(5).fill(undefined));
    expect(limiter.attempt('a@x.test', '192.0.2.1')).toBe(1000);
  });
});

describe('memory', () => {
  test('an email or an address of any length costs the same: the address is cut to 64 characters', () => {
    const { limiter } = throttle();
    const long = `${'x'.repeat(16_000)}@x.test`;
    limiter.attempt(long, `198.51.100.1${'0'.repeat(1000)}`);
    expect(limiter.attemptsOf(long)).toMatchObject({ attempts: 1, lastAddress: `198.51.100.1${'0'.repeat(52)}` });
    expect(limiter.attemptsOf(long.slice(1))).toBeUndefined();
  });

  test('at the bound, a spray of new emails forgets the least attacked account, never the attacked one', () => {
    const { limiter, clock } = throttle({ maxAccounts: 3 });
    attempts(limiter, 5, 'target@x.test');
    clock.now = limiter.attemptsOf('target@x.test')!.blockedUntil;
    attempts(limiter, 2, 'second@x.test');
    for (let i = 0; i < 50; i += 1) limiter.attempt(`spray${i}@x.test`, '192.0.2.1');
    expect(limiter.attemptsOf('target@x.test')?.attempts).toBe(5);
    expect(limiter.attemptsOf('second@x.test')?.attempts).toBe(2);
    expect(limiter.attemptsOf('spray49@x.test')?.attempts).toBe(1);
    expect(limiter.attemptsOf('spray48@x.test')).toBeUndefined();
  });

  test('at the bound, stale accounts go first, and the least attacked among ties is the oldest', () => {
    const { limiter, clock } = throttle({ maxAccounts: 3 });
    attempts(limiter, 3, 'stale@x.test');
    clock.now += 24 * 3_600_000;
    limiter.attempt('old@x.test', '192.0.2.1');
    limiter.attempt('new@x.test', '192.0.2.1');
    limiter.attempt('next@x.test', '192.0.2.1');
    expect(limiter.attemptsOf('old@x.test')?.attempts).toBe(1);
    limiter.attempt('last@x.test', '192.0.2.1');
    expect(limiter.attemptsOf('old@x.test')).toBeUndefined();
    expect([limiter.attemptsOf('new@x.test'), limiter.attemptsOf('next@x.test'), limiter.attemptsOf('last@x.test')]).toEqual([
      expect.objectContaining({ attempts: 1 }),
      expect.objectContaining({ attempts: 1 }),
      expect.objectContaining({ attempts: 1 }),
    ]);
  });
});

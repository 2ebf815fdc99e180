import { describe, expect, it } from 'vitest';
import { ConflictError, InvalidResponseError, RetryableError } from '../../src/agent/api';
import {
  Backoff,
  DEFAULT_RETRY_POLICY,
  nextDelay,
  retryPolicyFromEnv,
  RetrySettingError,
  sleep,
  retryAfterMs,
  withRetries,
} from '../../src/agent/backoff';
import { getEventListeners } from 'node:events';

const policy = { baseMs: 1000, maxMs: 300_000, attempts: 5 };
const constant = (value: number) => () => value;

describe('nextDelay (decorrelated jitter)', () => {
  it('draws each delay from [base, 3 × previous]', () => {
    expect(nextDelay(undefined, policy, constant(0))).toBe(1000);
    expect(nextDelay(undefined, policy, constant(1))).toBe(3000);
    expect(nextDelay(4000, policy, constant(0))).toBe(1000);
    expect(nextDelay(4000, policy, constant(1))).toBe(12_000);
    expect(nextDelay(4000, policy, constant(0.5))).toBe(6500);
  });

  it('never exceeds the cap, however long the outage', () => {
    let previous: number | undefined;
    for (let i = 0; i < 50; i += 1) previous = nextDelay(previous, policy, constant(1));
    expect(previous).toBe(300_000);
  });

  it('honours Retry-After as a floor, with jitter on top, up to the cap', () => {
    expect(nextDelay(undefined, policy, constant(0), 20_000)).toBe(20_000);
    expect(nextDelay(undefined, policy, constant(0.5), 20_000)).toBe(20_500);
    expect(nextDelay(undefined, policy, constant(1), 3_600_000)).toBe(300_000);
  });
});

describe('Backoff', () => {
  it('grows while failures continue and starts over after a success', () => {
    const backoff = new Backoff(policy, constant(1));
    expect([backoff.fail(), backoff.fail(), backoff.fail()]).toEqual([3000, 9000, 27_000]);
    expect(backoff.failures).toBe(3);
    backoff.reset();
    expect(backoff.failures).toBe(0);
    expect(backoff.fail()).toBe(3000);
  });

  it('does not let one Retry-After inflate the following delays', () => {
    const backoff = new Backoff(policy, constant(1));
    expect(backoff.fail(60_000)).toBe(61_000);
    expect(backoff.fail()).toBe(3000);
  });

  it('spreads agents that failed together (no stampede)', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const delays = Array.from({ length: 200 }, () => new Backoff(policy, random)).map((b) => {
      b.fail();
      b.fail();
      return b.fail();
    });
    const distinctSeconds = new Set(delays.map((d) => Math.floor(d / 1000)));
    expect(distinctSeconds.size).toBeGreaterThan(15);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(1000);
  });
});

describe('retryPolicyFromEnv', () => {
  it('defaults to the contract values', () => {
    expect(retryPolicyFromEnv({})).toEqual({ baseMs: 1000, maxMs: 300_000, attempts: 5 });
    expect(DEFAULT_RETRY_POLICY).toEqual({ baseMs: 1000, maxMs: 300_000, attempts: 5 });
  });

  it('reads 1 as a value, surrounding spaces as nothing, and an empty value as unset', () => {
    expect(retryPolicyFromEnv({ DEVICE_AGENT_RETRY_BASE_MS: '1', DEVICE_AGENT_RETRY_ATTEMPTS: ' 1 ' })).toMatchObject({
      baseMs: 1,
      attempts: 1,
    });
    expect(retryPolicyFromEnv({ DEVICE_AGENT_RETRY_BASE_MS: '', DEVICE_AGENT_RETRY_MAX_MS: '   ' })).toEqual(DEFAULT_RETRY_POLICY);
    expect(retryPolicyFromEnv({ DEVICE_AGENT_RETRY_BASE_MS: '700', DEVICE_AGENT_RETRY_MAX_MS: '700' })).toMatchObject({
      baseMs: 700,
      maxMs: 700,
    });
  });

  it.each(['5e3', '0x10', '1.5', '+5', '5 ms'])('refuses "%s": whole decimal numbers only', (raw) => {
    expect(() => retryPolicyFromEnv({ DEVICE_AGENT_RETRY_MAX_MS: raw })).toThrow(
      expect.objectContaining({
        name: 'RetrySettingError',
        message: expect.stringContaining('must be a positive whole number') as unknown,
      }),
    );
  });

  it('accepts the timer limit itself', () => {
    expect(retryPolicyFromEnv({ DEVICE_AGENT_RETRY_MAX_MS: '2147483647' }).maxMs).toBe(2 ** 31 - 1);
  });

  it('reads the three knobs', () => {
    expect(
      retryPolicyFromEnv({ DEVICE_AGENT_RETRY_BASE_MS: '10', DEVICE_AGENT_RETRY_MAX_MS: '50', DEVICE_AGENT_RETRY_ATTEMPTS: '2' }),
    ).toEqual({ baseMs: 10, maxMs: 50, attempts: 2 });
  });

  it.each([
    [{ DEVICE_AGENT_RETRY_BASE_MS: 'fast' }, /DEVICE_AGENT_RETRY_BASE_MS must be a positive whole number/],
    [{ DEVICE_AGENT_RETRY_ATTEMPTS: '0' }, /DEVICE_AGENT_RETRY_ATTEMPTS must be a positive whole number/],
    [{ DEVICE_AGENT_RETRY_MAX_MS: '-5' }, /DEVICE_AGENT_RETRY_MAX_MS/],
    [{ DEVICE_AGENT_RETRY_BASE_MS: '5000', DEVICE_AGENT_RETRY_MAX_MS: '100' }, /must not exceed/],
    // Beyond Node's timer limit a delay fires after 1 ms: a retry storm, not a long wait.
    [
      { DEVICE_AGENT_RETRY_MAX_MS: '99999999999' },
      /DEVICE_AGENT_RETRY_MAX_MS must be at most 2147483647 \(about 24.8 days\), got "99999999999"/,
    ],
    [{ DEVICE_AGENT_RETRY_BASE_MS: '2147483648' }, /DEVICE_AGENT_RETRY_BASE_MS must be at most 2147483647/],
  ])('refuses %j', (env, message) => {
    expect(() => retryPolicyFromEnv(env)).toThrow(RetrySettingError);
    expect(() => retryPolicyFromEnv(env)).toThrow(message);
  });
});

describe('retryAfterMs', () => {
  it('is the Retry-After of a retryable answer, and nothing for any other failure', () => {
    expect(retryAfterMs(new RetryableError('heartbeat', 'server answered 503', 503, undefined, 5000))).toBe(5000);
    expect(retryAfterMs(new RetryableError('heartbeat', 'connection reset'))).toBeUndefined();
    const garbled = Object.assign(new InvalidResponseError('heartbeat', 'not the protocol', 200), { retryAfterMs: 5000 });
    expect(retryAfterMs(garbled)).toBeUndefined();
  });
});

describe('withRetries', () => {
  const quick = { baseMs: 10, maxMs: 100, attempts: 3 };
  /** A sleep that returns at once, noting each delay it was asked for. */
  const recordingSleep = (waits: number[]) => (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };

  it('retries transient failures up to the attempt limit, waiting the backoff delays', async () => {
    const waits: number[] = [];
    let calls = 0;
    const error = new RetryableError('postures', 'server answered 503', 503);
    await expect(
      withRetries(
        () => {
          calls += 1;
          return Promise.reject(error);
        },
        { policy: quick, random: constant(1), sleep: recordingSleep(waits) },
      ),
    ).rejects.toBe(error);
    expect(calls).toBe(3);
    expect(waits).toEqual([30, 90]);
  });

  it('returns as soon as an attempt succeeds, and honours Retry-After', async () => {
    const waits: number[] = [];
    let calls = 0;
    const value = await withRetries(
      () => {
        calls += 1;
        if (calls === 1) return Promise.reject(new RetryableError('heartbeat', '429', 429, undefined, 50));
        if (calls === 2) return Promise.reject(new InvalidResponseError('heartbeat', 'not JSON', 200));
        return Promise.resolve('ok');
      },
      { policy: quick, random: constant(0), sleep: recordingSleep(waits) },
    );
    expect(value).toBe('ok');
    expect(waits).toEqual([50, 10]);
  });

  it('never retries an answer that a retry cannot change', async () => {
    let calls = 0;
    const conflict = new ConflictError('heartbeat', 'conflict', 409);
    await expect(
      withRetries(
        () => {
          calls += 1;
          return Promise.reject(conflict);
        },
        { policy: quick, sleep: () => Promise.resolve() },
      ),
    ).rejects.toBe(conflict);
    expect(calls).toBe(1);
  });

  it('stops waiting when aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = withRetries(() => Promise.reject(new RetryableError('postures', 'down')), {
      policy: { baseMs: 60_000, maxMs: 60_000, attempts: 5 },
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('stopping')), 20);
    await expect(pending).rejects.toThrow('stopping');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('sleep', () => {
  it('resolves after the delay, without a signal or with one that never aborts, leaving no listener behind', async () => {
    await expect(sleep(5)).resolves.toBeUndefined();
    const controller = new AbortController();
    await expect(sleep(5, controller.signal)).resolves.toBeUndefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once with the reason of a signal aborted before or during the wait', async () => {
    const started = Date.now();
    await expect(sleep(60_000, AbortSignal.abort(new Error('already stopped')))).rejects.toThrow('already stopped');
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with an Error naming the reason when the signal was aborted with something else', async () => {
    await expect(sleep(60_000, AbortSignal.abort('shutdown'))).rejects.toThrow(new Error('aborted: shutdown'));
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(42);
    await expect(waiting).rejects.toThrow(new Error('aborted: 42'));
    // abort() without a reason gives a DOMException, an Error already: passed through as it is.
    await expect(sleep(60_000, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });
});

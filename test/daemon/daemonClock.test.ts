import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, systemClock } from '../../src/agent/daemonClock';

describe('systemClock', () => {
  it('caps a timer at the limit Node can hold instead of letting it fire at once', async () => {
    let fired = 0;
    const cancelHuge = systemClock.schedule(() => (fired += 1), 99_999_999_999);
    const cancelLimit = systemClock.schedule(() => (fired += 1), MAX_TIMER_MS);
    const cancelNever = systemClock.schedule(() => (fired += 1), Number.POSITIVE_INFINITY);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toBe(0);
    for (const cancel of [cancelHuge, cancelLimit, cancelNever]) cancel();
  });

  it('fires a short timer once, and not after it was cancelled', async () => {
    let fired = 0;
    systemClock.schedule(() => (fired += 1), 5);
    systemClock.schedule(() => (fired += 100), 5)();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toBe(1);
  });

  it('measures on a monotonic clock and reports wall time', () => {
    const a = systemClock.monotonicMs();
    expect(systemClock.monotonicMs()).toBeGreaterThanOrEqual(a);
    expect(Math.abs(systemClock.wallMs() - Date.now())).toBeLessThan(1000);
  });
});

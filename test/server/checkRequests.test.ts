// "Check again" requests as heartbeat answers read them (src/server/checkRequests.ts) over a real
// store (SQLite; PostgreSQL in the `postgres` project), with the refresh clock in the test's hands:
// while the last read is under a second old a heartbeat gets its answer without a promise; a request
// recorded by another server process (another CheckRequests on the same store) shows after the next
// read, one read shared by the heartbeats that wait for it; this process's own shows at once; a
// request lapses after 15 minutes.
import { expect, test, vi } from 'vitest';
import { CheckRequests } from '../../src/server/checkRequests';
import { storeForFile } from '../support/testStore';
import { activeDevice } from './deviceLifecycleSuite';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);

const store = storeForFile('check-requests');

test('heartbeats read the requests at most once a second, without a promise in between, and see other processes’ within it', async () => {
  const [device, other] = [await activeDevice(store()), await activeDevice(store())];
  let clock = 0;
  const reads = vi.spyOn(store(), 'deviceCheckRequests');
  const checks = new CheckRequests(store(), () => clock);
  const elsewhere = new CheckRequests(store());

  // The first heartbeat reads the store(); the ones arriving meanwhile share that read.
  const first = checks.pending(device.id, NOW);
  const meanwhile = checks.pending(other.id, NOW);
  expect(first).toBeInstanceOf(Promise);
  expect(meanwhile).toBeInstanceOf(Promise);
  expect([await first, await meanwhile]).toEqual([undefined, undefined]);
  expect(reads).toHaveBeenCalledTimes(1);

  // Another process records a request: not seen until a second after the read, and then without waiting again.
  expect(await elsewhere.request(device.id, NOW)).toEqual({ kind: 'recorded', requestedAt: NOW.toISOString() });
  // A second one within the minute is refused with the time left; the page reads the store() itself.
  expect(await elsewhere.request(device.id, later(20_000))).toEqual({
    kind: 'too_soon',
    requestedAt: NOW.toISOString(),
    retryAfterMs: 40_000,
  });
  expect(await checks.current(device.id, later(20_000))).toBe(NOW.toISOString());
  expect(await checks.current(other.id, later(20_000))).toBeUndefined();
  reads.mockClear();
  clock = 999;
  expect(checks.pending(device.id, later(1))).toBeUndefined();
  expect(reads).not.toHaveBeenCalled();
  clock = 1000;
  const refreshed = checks.pending(device.id, later(2));
  expect(refreshed).toBeInstanceOf(Promise);
  expect(await refreshed).toBe(NOW.toISOString());
  expect(reads).toHaveBeenCalledTimes(1);
  expect(checks.pending(device.id, later(3))).toBe(NOW.toISOString());
  expect(checks.pending(other.id, later(3))).toBeUndefined();

  // This process's own request: in the next answer, with no read.
  const asked = await checks.request(other.id, later(4));
  expect(asked).toEqual({ kind: 'recorded', requestedAt: later(4).toISOString() });
  expect(checks.pending(other.id, later(5))).toBe(later(4).toISOString());
  expect(reads).toHaveBeenCalledTimes(1);

  // Fifteen minutes on, the first request has lapsed (and the reads leave it out too).
  expect(await checks.current(device.id, later(15 * 60_000))).toBeUndefined();
  expect(checks.pending(device.id, later(15 * 60_000))).toBeUndefined();
  expect(checks.pending(other.id, later(15 * 60_000))).toBe(later(4).toISOString());
  clock = 2000;
  expect(await checks.pending(device.id, later(15 * 60_000))).toBeUndefined();
  expect(reads).toHaveBeenCalledTimes(3);
});

test('a request recorded while a read is in flight is in the next answer, though the read began before it', async () => {
  const device = await activeDevice(store());
  // The read has its answer before the request is recorded, and hands it over only after.
  let answered = () => {};
  const readAnswered = new Promise<void>((resolve) => (answered = resolve));
  let release = () => {};
  const readHeld = new Promise<void>((resolve) => (release = resolve));
  const heldStore = new Proxy(store(), {
    get(target, property) {
      if (property === 'deviceCheckRequests')
        return async (since: string) => {
          const found = await target.deviceCheckRequests(since);
          answered();
          await readHeld;
          return found;
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const checks = new CheckRequests(heldStore, () => 0);
  const waiting = checks.pending(device.id, NOW);
  await readAnswered;
  expect(await checks.request(device.id, later(1))).toEqual({ kind: 'recorded', requestedAt: later(1).toISOString() });
  release();
  expect(await waiting).toBe(later(1).toISOString());
  expect(checks.pending(device.id, later(2))).toBe(later(1).toISOString());
});

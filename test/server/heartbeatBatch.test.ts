// Heartbeat writes (src/server/heartbeatBatch.ts) over a real SQLite store: what is written at once
// and what is batched; a batch written on the interval, at once when it is large, and in slices with
// the event loop turning between them (no single write holds every request); every heartbeat's time
// reaches the database; a slice that fails stays pending, with the rest of its batch, for the next
// flush, where a newer heartbeat that arrived meanwhile wins; the interval's timer armed only while
// something is pending (an idle server does not wake for it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { openStore } from '../../src/server/db/open';
import type { AuthenticatedDevice, DeviceAttributes, DeviceSeen, DeviceState, Store } from '../../src/server/db/store';
import { DeviceCache } from '../../src/server/deviceCache';
import { revoke } from '../../src/server/deviceLifecycle';
import { HeartbeatWriter, MAX_PENDING, ROWS_PER_WRITE } from '../../src/server/heartbeatBatch';
import { until } from '../support/agent';
import { activeStoreDevice, deviceAttributes } from '../support/storeDevices';
import type { DeviceId, OrganizationId } from '../../src/server/ids';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-batch-'));
  store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const attributes = (i: number): DeviceAttributes => deviceAttributes({ hardwareUuid: `uuid-${i}`, hostname: `host-${i}` });

/** `count` ACTIVE devices, each with its first heartbeat written (and noted by `cache`, as serve does). */
async function activeDevices(count: number, cache: DeviceCache): Promise<AuthenticatedDevice[]> {
  const devices: AuthenticatedDevice[] = [];
  for (let i = 0; i < count; i += 1) {
    const { device } = await activeStoreDevice(store, { attributes: attributes(i), orgName: 'batch', now: '2026-11-25T00:00:00.000Z' });
    cache.noteRecorded(device.id, attributes(i));
    devices.push(device);
  }
  return devices;
}

/** The store, with each recordDevicesSeen call's size and the event-loop turn it was made in. */
function recording(
  inner: Store,
  fail: (call: number) => boolean = () => false,
  whileFailing: () => Promise<unknown> = async () => {},
  failure: (call: number) => Error = () => new Error('disk I/O error'),
) {
  const calls: Array<{ rows: number; turn: number }> = [];
  let heartbeatWrites = 0;
  let turn = 0;
  let turning = true;
  const tick = () => {
    turn += 1;
    if (turning) setImmediate(tick);
  };
  setImmediate(tick);
  const wrapped = Object.create(inner) as Store;
  wrapped.recordDevicesSeen = (seen: readonly DeviceSeen[], states: readonly DeviceState[]) => {
    calls.push({ rows: seen.length, turn });
    if (!fail(calls.length)) return inner.recordDevicesSeen(seen, states);
    return whileFailing().then(() => Promise.reject(failure(calls.length)));
  };
  wrapped.recordHeartbeat = (...args) => {
    heartbeatWrites += 1;
    return inner.recordHeartbeat(...args);
  };
  return { store: wrapped, calls, heartbeatWrites: () => heartbeatWrites, turn: () => turn, stop: () => (turning = false) };
}

/** Devices the cache knows as recorded, without rows in the database (a batch then updates no row). */
function phantomDevices(count: number, cache: DeviceCache): AuthenticatedDevice[] {
  return Array.from({ length: count }, (_, i) => {
    const device = { id: `dev_phantom${i}` as DeviceId, orgId: 'org_phantom' as OrganizationId, state: 'ACTIVE' as const };
    cache.noteRecorded(device.id, attributes(i));
    return device;
  });
}

/** Log lines, parsed. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

test('a changed heartbeat is written before it is answered; a repeated one is batched; a refused one is not remembered', async () => {
  const cache = new DeviceCache(store, 10_000);
  const [device] = await activeDevices(1, cache);
  const recorder = recording(store);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  const moved = { ...attributes(0), hostname: 'renamed' };

  expect(await writer.record(device!, moved, '2026-11-25T00:01:00.000Z')).toEqual({ kind: 'recorded' });
  expect(recorder.heartbeatWrites()).toBe(1);
  expect((await store.findDevice(device!.id))?.hostname).toBe('renamed');
  // The same again: answered from the batch, written by the next flush.
  expect(await writer.record(device!, moved, '2026-11-25T00:02:00.000Z')).toEqual({ kind: 'recorded' });
  expect(recorder.heartbeatWrites()).toBe(1);
  await writer.flush();
  expect((await store.findDevice(device!.id))?.lastSeenAt).toBe('2026-11-25T00:02:00.000Z');

  // Revoked meanwhile: the store refuses it, and the next heartbeat goes to the store again.
  await revoke(store, device!, '2026-11-25T00:03:00.000Z');
  cache.noteRecorded(device!.id, attributes(0));
  expect(await writer.record(device!, { ...attributes(0), hostname: 'again' }, '2026-11-25T00:04:00.000Z')).toEqual({ kind: 'revoked' });
  expect(await writer.record(device!, { ...attributes(0), hostname: 'again' }, '2026-11-25T00:05:00.000Z')).toEqual({ kind: 'revoked' });
  expect(recorder.heartbeatWrites()).toBe(3);
  await writer.stop();
  recorder.stop();
});

test('a pending heartbeat is written on the interval, without a flush or a stop', async () => {
  const cache = new DeviceCache(store, 10_000);
  const [device] = await activeDevices(1, cache);
  const writer = new HeartbeatWriter(store, cache, pino({ level: 'silent' }));
  await writer.record(device!, attributes(0), '2026-11-25T00:06:00.000Z');
  expect((await store.findDevice(device!.id))?.lastSeenAt).not.toBe('2026-11-25T00:06:00.000Z');
  await until(
    async () => (await store.findDevice(device!.id))?.lastSeenAt,
    (seen) => seen === '2026-11-25T00:06:00.000Z',
    60_000,
    'the pending heartbeat written',
  );
  await writer.stop();
});

test('the interval runs only while something is pending: no timer before the first heartbeat nor after its write; a failed write plans the retry, not once stopped', async () => {
  const cache = new DeviceCache(store, 10_000);
  const [device] = await activeDevices(1, cache);
  // The first write meets a busy database (weather: a warning with its reason), the third, at the stop, a defect.
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const recorder = recording(
    store,
    (call) => call === 1 || call === 3,
    async () => {},
    (call) => (call === 1 ? busy() : new Error('disk I/O error')),
  );
  const { logger, lines } = capturedLogger();
  // Only the writer's timers are faked: the store and the recorder turn the event loop as usual.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  try {
    const writer = new HeartbeatWriter(recorder.store, cache, logger);
    expect(vi.getTimerCount()).toBe(0);
    await writer.record(device!, attributes(0), '2026-11-25T00:09:00.000Z');
    expect(vi.getTimerCount()).toBe(1);
    // A second heartbeat joins the planned write.
    await writer.record(device!, attributes(0), '2026-11-25T00:09:01.000Z');
    expect(vi.getTimerCount()).toBe(1);
    // The first write fails: the retry is planned.
    await vi.advanceTimersByTimeAsync(250);
    // The failed write's retry is planned once the failure has come back (turns of the event loop).
    for (let turns = 0; vi.getTimerCount() === 0 && turns < 1_000; turns += 1) await nextTurn();
    expect(recorder.calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(250);
    await writer.flush();
    expect(recorder.calls.map((call) => call.rows)).toEqual([1, 1]);
    expect((await store.findDevice(device!.id))?.lastSeenAt).toBe('2026-11-25T00:09:01.000Z');
    // Written: nothing pending, nothing planned.
    expect(vi.getTimerCount()).toBe(0);
    // The write at the stop fails: no retry is planned for a stopped writer.
    await writer.record(device!, attributes(0), '2026-11-25T00:09:02.000Z');
    await writer.stop();
    expect(recorder.calls).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
    expect(lines.map((line) => [line.level, line.reason, line.err === undefined, line.msg])).toEqual([
      [40, 'database is locked', true, 'writing last-seen times failed; retrying with the next batch'],
      [50, undefined, false, 'writing last-seen times failed; retrying with the next batch'],
    ]);
  } finally {
    vi.useRealTimers();
    recorder.stop();
  }
});

test('a batch reaching MAX_PENDING is written at once; nothing pending writes nothing', async () => {
  const cache = new DeviceCache(store, MAX_PENDING * 2);
  const devices = phantomDevices(MAX_PENDING, cache);
  const recorder = recording(store);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  for (const [i, device] of devices.entries()) await writer.record(device, attributes(i), '2026-11-25T00:07:00.000Z');
  // Not the interval: the last record started the write in its own turn.
  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE]);
  await writer.flush();
  expect(recorder.calls.reduce((sum, call) => sum + call.rows, 0)).toBe(MAX_PENDING);
  const calls = recorder.calls.length;
  await writer.flush();
  await writer.stop();
  recorder.stop();
  expect(recorder.calls).toHaveLength(calls);
});

test('a large batch is written in slices, the first at once, then one per turn of the event loop; every time reaches the database', async () => {
  const cache = new DeviceCache(store, 10_000);
  const devices = await activeDevices(ROWS_PER_WRITE * 2 + 7, cache);
  const recorder = recording(store);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  const at = '2026-11-25T00:05:00.000Z';
  for (const [i, device] of devices.entries()) expect(await writer.record(device, attributes(i), at)).toEqual({ kind: 'recorded' });
  const turn = recorder.turn();
  await writer.stop();
  recorder.stop();

  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE, ROWS_PER_WRITE, 7]);
  expect(recorder.calls[0]!.turn).toBe(turn);
  for (let i = 1; i < recorder.calls.length; i += 1) expect(recorder.calls[i]!.turn).toBeGreaterThan(recorder.calls[i - 1]!.turn);
  for (const device of devices) expect((await store.findDevice(device.id))?.lastSeenAt).toBe(at);
});

test('a batch of exactly two slices is two writes', async () => {
  const cache = new DeviceCache(store, 10_000);
  const devices = phantomDevices(ROWS_PER_WRITE * 2, cache);
  const recorder = recording(store);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  for (const [i, device] of devices.entries()) await writer.record(device, attributes(i), '2026-11-25T00:08:00.000Z');
  await writer.stop();
  recorder.stop();
  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE, ROWS_PER_WRITE]);
});

test('a slice that fails is logged and stays pending with the rest of its batch; the next flush writes it, a newer heartbeat winning', async () => {
  const cache = new DeviceCache(store, 10_000);
  const devices = await activeDevices(ROWS_PER_WRITE + 3, cache);
  const at = '2026-11-25T00:05:00.000Z';
  const later = '2026-11-25T00:05:01.000Z';
  // While the failing slice is being written, its last device heartbeats again.
  const recorder = recording(
    store,
    (call) => call === 2,
    () => writer.record(devices.at(-1)!, attributes(devices.length - 1), later),
  );
  const { logger, lines } = capturedLogger();
  const writer = new HeartbeatWriter(recorder.store, cache, logger);
  for (const [i, device] of devices.entries()) await writer.record(device, attributes(i), at);
  await writer.flush();
  expect(lines.map((line) => [line.level, line.devices, line.msg])).toEqual([
    [50, 3, 'writing last-seen times failed; retrying with the next batch'],
  ]);
  // The first slice was written; the second failed and is still pending.
  const written = await Promise.all(devices.map(async (device) => (await store.findDevice(device.id))?.lastSeenAt));
  expect(written.filter((time) => time === at)).toHaveLength(ROWS_PER_WRITE);
  await writer.stop();
  recorder.stop();
  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE, 3, 3]);
  for (const device of devices.slice(0, -1)) expect((await store.findDevice(device.id))?.lastSeenAt).toBe(at);
  expect((await store.findDevice(devices.at(-1)!.id))?.lastSeenAt).toBe(later);
});

// Batched last-seen writes (src/server/heartbeatBatch.ts) over a real SQLite store: a batch larger
// than one transaction's worth is written in slices with the event loop turning between them (no
// single write holds every request), every heartbeat's time reaches the database, and a slice that
// fails stays pending, with the rest of its batch, for the next flush.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { hashCredential, newCredential } from '../../src/server/credentials';
import { openStore } from '../../src/server/db/open';
import type { AuthenticatedDevice, DeviceAttributes, DeviceSeen, Store } from '../../src/server/db/store';
import { DeviceCache } from '../../src/server/deviceCache';
import { HeartbeatWriter, ROWS_PER_WRITE } from '../../src/server/heartbeatBatch';

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

const attributes = (i: number): DeviceAttributes => ({
  hardwareUuid: `uuid-${i}`,
  serialNumber: null,
  hostname: `host-${i}`,
  platform: 'LINUX',
  osVersion: 'Debian 12',
  agentVersion: '0.1.0',
});

/** `count` ACTIVE devices, each with its first heartbeat written (and noted by `cache`, as serve does). */
async function activeDevices(count: number, cache: DeviceCache): Promise<AuthenticatedDevice[]> {
  const now = '2026-11-25T00:00:00.000Z';
  const devices: AuthenticatedDevice[] = [];
  for (let i = 0; i < count; i += 1) {
    const tokenHash = hashCredential(newCredential());
    await store.createDevice({ orgName: 'batch', name: null, tokenHash, tokenExpiresAt: '2999-01-01T00:00:00.000Z', now });
    const keyHash = hashCredential(newCredential());
    await store.exchangeToken(tokenHash, keyHash, now);
    const device = (await store.authenticate(keyHash))!;
    expect((await store.recordHeartbeat(device, attributes(i), now)).kind).toBe('recorded');
    cache.noteRecorded(device.id, attributes(i));
    devices.push(device);
  }
  return devices;
}

/** The store, with each recordDevicesSeen call's size and the event-loop turn it was made in. */
function recording(inner: Store, fail: (call: number) => boolean = () => false) {
  const calls: Array<{ rows: number; turn: number }> = [];
  let turn = 0;
  let turning = true;
  const tick = () => {
    turn += 1;
    if (turning) setImmediate(tick);
  };
  setImmediate(tick);
  const wrapped = Object.create(inner) as Store;
  wrapped.recordDevicesSeen = (seen: readonly DeviceSeen[]) => {
    calls.push({ rows: seen.length, turn });
    return fail(calls.length) ? Promise.reject(new Error('disk I/O error')) : inner.recordDevicesSeen(seen);
  };
  return { store: wrapped, calls, stop: () => (turning = false) };
}

test('a large batch is written in slices, the event loop turning between them, and every time reaches the database', async () => {
  const cache = new DeviceCache(store, 10_000);
  const devices = await activeDevices(ROWS_PER_WRITE * 2 + 7, cache);
  const recorder = recording(store);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  const at = '2026-11-25T00:05:00.000Z';
  for (const [i, device] of devices.entries()) expect(await writer.record(device, attributes(i), at)).toEqual({ kind: 'recorded' });
  await writer.stop();
  recorder.stop();

  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE, ROWS_PER_WRITE, 7]);
  for (let i = 1; i < recorder.calls.length; i += 1) expect(recorder.calls[i]!.turn).toBeGreaterThan(recorder.calls[i - 1]!.turn);
  for (const device of devices) expect((await store.findDevice(device.id))?.lastSeenAt).toBe(at);
});

test('a slice that fails stays pending with the rest of its batch and is written by the next flush', async () => {
  const cache = new DeviceCache(store, 10_000);
  const devices = await activeDevices(ROWS_PER_WRITE + 3, cache);
  const recorder = recording(store, (call) => call === 2);
  const writer = new HeartbeatWriter(recorder.store, cache, pino({ level: 'silent' }));
  const at = '2026-11-25T00:05:00.000Z';
  for (const [i, device] of devices.entries()) await writer.record(device, attributes(i), at);
  await writer.flush();
  // The first slice was written; the second failed and is still pending.
  const written = await Promise.all(devices.map(async (device) => (await store.findDevice(device.id))?.lastSeenAt));
  expect(written.filter((time) => time === at)).toHaveLength(ROWS_PER_WRITE);
  await writer.stop();
  recorder.stop();
  expect(recorder.calls.map((call) => call.rows)).toEqual([ROWS_PER_WRITE, 3, 3]);
  for (const device of devices) expect((await store.findDevice(device.id))?.lastSeenAt).toBe(at);
});

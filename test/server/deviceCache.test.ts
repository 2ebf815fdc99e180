// The device cache (src/server/deviceCache.ts) over a real SQLite store, with a second connection
// to the same file standing in for the admin CLI: when it reads whether someone else committed
// (once per event-loop turn, for every request authenticated in that turn) and what that read sees.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openStore } from '../../src/server/db/open';
import type { Store } from '../../src/server/db/store';
import { DeviceCache } from '../../src/server/deviceCache';
import { revoke } from '../../src/server/deviceLifecycle';
import type { DeviceId, OrganizationId } from '../../src/server/ids';
import { activeStoreDevice } from '../support/storeDevices';

let dir: string;
let store: Store;
/** Another connection to the same database, as the admin CLI would have. */
let admin: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-cache-'));
  const location = { engine: 'sqlite' as const, path: join(dir, 'server.db') };
  store = await openStore(location);
  admin = await openStore(location);
});

afterEach(async () => {
  await store.close();
  await admin.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An enrolled (ACTIVE) device, created by the admin CLI's connection: its id, organization and API key hash. */
async function activeDevice(): Promise<{ id: DeviceId; orgId: OrganizationId; keyHash: string }> {
  const { device, keyHash } = await activeStoreDevice(store, { creator: admin, orgName: 'cache' });
  return { id: device.id, orgId: device.orgId, keyHash };
}

/** The store, counting its reads of externalChanges. */
function counting(inner: Store): { store: Store; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(inner) as Store;
  wrapped.externalChanges = () => {
    reads += 1;
    return inner.externalChanges();
  };
  return { store: wrapped, reads: () => reads };
}

describe('the device cache', () => {
  test('a revocation committed after a request was received, in the same event-loop turn, is seen by that request', async () => {
    const device = await activeDevice();
    const cache = new DeviceCache(store, 100);
    expect((await cache.authenticate(device.keyHash))?.state).toBe('ACTIVE');
    expect((await cache.authenticate(device.keyHash))?.state).toBe('ACTIVE');

    // The request is received (its authentication starts), then another connection commits the
    // revocation before this turn's reads are over: SQLite commits synchronously in the call.
    const answer = cache.authenticate(device.keyHash);
    void revoke(admin, { id: device.id, orgId: device.orgId }, new Date().toISOString());

    expect(await answer).toBeUndefined();
  });

  test('the requests authenticated in one event-loop turn share one read of externalChanges', async () => {
    const devices = [await activeDevice(), await activeDevice(), await activeDevice()];
    const { store: countingStore, reads } = counting(store);
    const cache = new DeviceCache(countingStore, 100);

    const answers = await Promise.all(devices.map((d) => cache.authenticate(d.keyHash)));
    expect(answers.map((a) => a?.id)).toEqual(devices.map((d) => d.id));
    expect(reads()).toBe(1);

    await nextTurn();
    await Promise.all(devices.map((d) => cache.authenticate(d.keyHash)));
    expect(reads()).toBe(2);
  });

  test('a failed read of externalChanges fails the requests waiting on it, and the next turn reads again', async () => {
    const device = await activeDevice();
    const failing = Object.create(store) as Store;
    let fail = true;
    failing.externalChanges = () => (fail ? Promise.reject(new Error('database is locked')) : store.externalChanges());
    const cache = new DeviceCache(failing, 100);

    const first = cache.authenticate(device.keyHash);
    const second = cache.authenticate(device.keyHash);
    await expect(first).rejects.toThrow('database is locked');
    await expect(second).rejects.toThrow('database is locked');

    fail = false;
    expect((await cache.authenticate(device.keyHash))?.id).toBe(device.id);
  });

  test('tells its listeners (the policy cache) when another connection committed, once per change; at every request when it caches nothing', async () => {
    const device = await activeDevice();
    const cache = new DeviceCache(store, 100);
    let told = 0;
    cache.onExternalChange(() => (told += 1));
    await cache.authenticate(device.keyHash);
    expect(told).toBe(1);
    await nextTurn();
    await cache.authenticate(device.keyHash);
    expect(told).toBe(1);
    // This connection's own commit is not someone else's.
    await store.ensureOrganization('own', new Date().toISOString());
    await nextTurn();
    await cache.authenticate(device.keyHash);
    expect(told).toBe(1);
    await admin.ensureOrganization('elsewhere', new Date().toISOString());
    await nextTurn();
    await cache.authenticate(device.keyHash);
    expect(told).toBe(2);

    const uncached = new DeviceCache(store, 0);
    let toldUncached = 0;
    uncached.onExternalChange(() => (toldUncached += 1));
    await uncached.authenticate(device.keyHash);
    await uncached.authenticate(device.keyHash);
    expect(toldUncached).toBe(2);
  });
});

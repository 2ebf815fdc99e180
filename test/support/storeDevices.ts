// Devices made directly on a Store (the server's engine-neutral interface), for the tests of what
// sits on top of it (device cache, heartbeat writes, checkpoints, latest results): enrolled with a
// one-time token, then turned ACTIVE by a first heartbeat, as the routes would.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { hashCredential, newCredential } from '../../src/server/credentials';
import type { AuthenticatedDevice, DeviceAttributes, Store } from '../../src/server/db/store';

/** Heartbeat attributes with a hardware_uuid of their own. */
export function deviceAttributes(overrides: Partial<DeviceAttributes> = {}): DeviceAttributes {
  return {
    hardwareUuid: `uuid-${randomUUID()}`,
    serialNumber: null,
    hostname: 'h',
    platform: 'LINUX',
    osVersion: 'x',
    agentVersion: '0.1.0',
    ...overrides,
  };
}

export interface StoreDevice {
  device: AuthenticatedDevice;
  /** Hash of its API key (what authenticate() takes). */
  keyHash: string;
}

/**
 * An ACTIVE device of organization `orgName`: created and enrolled through `creator` (another
 * connection, such as the admin CLI's, when given), its first heartbeat recorded through `store`.
 */
export async function activeStoreDevice(
  store: Store,
  options: { attributes?: DeviceAttributes; orgName?: string; creator?: Store; now?: string } = {},
): Promise<StoreDevice> {
  const now = options.now ?? new Date().toISOString();
  const creator = options.creator ?? store;
  const tokenHash = hashCredential(newCredential());
  const id = await creator.createDevice({
    orgName: options.orgName ?? 'acme',
    name: null,
    tokenHash,
    tokenExpiresAt: '2999-01-01T00:00:00.000Z',
    now,
  });
  const keyHash = hashCredential(newCredential());
  expect(await creator.exchangeToken(tokenHash, keyHash, now)).toBe(id);
  const device = await store.authenticate(keyHash);
  expect(device?.id).toBe(id);
  expect((await store.recordHeartbeat(device!, options.attributes ?? deviceAttributes(), now)).kind).toBe('recorded');
  return { device: { ...device!, state: 'ACTIVE' }, keyHash };
}

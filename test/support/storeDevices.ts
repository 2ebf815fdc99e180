// Devices made directly on a Store (the server's engine-neutral interface), for the tests of what
// sits on top of it (device cache, heartbeat writes, checkpoints, latest results): enrolled with a
// one-time token, then turned ACTIVE by a first heartbeat, through the device lifecycle as the
// routes do.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { hashCredential, newCredential } from '../../src/server/credentials';
import type { AuthenticatedDevice, DeviceAttributes, Store } from '../../src/server/db/store';
import { CREATED_STATE, enroll, heartbeat } from '../../src/server/deviceLifecycle';

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
  const token = newCredential();
  const id = await creator.createDevice({
    orgName: options.orgName ?? 'acme',
    name: null,
    state: CREATED_STATE,
    tokenHash: hashCredential(token),
    tokenExpiresAt: '2999-01-01T00:00:00.000Z',
    now,
  });
  const enrollment = await enroll(creator, token, now);
  expect(enrollment).toMatchObject({ kind: 'enrolled', deviceId: id });
  const keyHash = hashCredential(enrollment.kind === 'enrolled' ? enrollment.apiKey : '');
  const device = await store.authenticate(keyHash);
  expect(device?.id).toBe(id);
  expect(await heartbeat(store, device!, options.attributes ?? deviceAttributes(), now)).toEqual({ kind: 'recorded' });
  return { device: { ...device!, state: 'ACTIVE' }, keyHash };
}

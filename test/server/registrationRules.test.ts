// The registration rule (deviceLifecycle.ts: decideRegistration) as a pure function on its facts,
// and `register` on a real SQLite store: retry, supersede, duplicate, labels, the cap, and the one
// retry after a concurrent registration took the hardware_uuid (a PostgreSQL race, replayed here).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { hashCredential, newEnrollSecret } from '../../src/server/credentials';
import { openStore } from '../../src/server/db/open';
import type { DeviceAttributes, HolderOfHardwareUuid, RegistrationFacts, Store } from '../../src/server/db/store';
import {
  LIVE_HEARTBEAT_INTERVALS,
  REGISTERED_TOKEN_TTL_MS,
  decideRegistration,
  heartbeat,
  mayEnroll,
  register,
} from '../../src/server/deviceLifecycle';
import type { DeviceId, EnrollSecretId, OrganizationId } from '../../src/server/ids';

const NOW = '2026-11-25T12:00:00.000Z';
const INTERVAL = 300;
const SECRET_ID = 'ens_0123456789abcdef0123456789abcdef' as EnrollSecretId;
const HOLDER_ID = 'dev_0123456789abcdef0123456789abcdef' as DeviceId;
const ATTRIBUTES: DeviceAttributes = {
  hardwareUuid: 'HW-1',
  serialNumber: 'SN-1',
  hostname: 'laptop',
  platform: 'LINUX',
  osVersion: 'Debian 12',
  agentVersion: '0.1.0',
};
const SECRET: NonNullable<RegistrationFacts['secret']> = {
  id: SECRET_ID,
  orgId: 'org_0123456789abcdef0123456789abcdef' as OrganizationId,
  expiresAt: null,
  maxUses: null,
  uses: 0,
  revokedAt: null,
};
/** An ACTIVE holder seen just now from the same host. */
const HOLDER: HolderOfHardwareUuid = {
  id: HOLDER_ID,
  state: 'ACTIVE',
  enrollSecretId: SECRET_ID,
  hostname: 'laptop',
  serialNumber: 'SN-1',
  createdAt: '2026-11-01T00:00:00.000Z',
  enrolledAt: '2026-11-01T00:00:01.000Z',
  lastSeenAt: NOW,
};
const decide = (facts: Partial<RegistrationFacts>, attributes: Partial<DeviceAttributes> = {}) =>
  decideRegistration({ secret: SECRET, holder: undefined, ...facts }, { ...ATTRIBUTES, ...attributes }, NOW, INTERVAL);
const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const LIVE_MS = LIVE_HEARTBEAT_INTERVALS * INTERVAL * 1000;
const create = { kind: 'create', supersede: null, duplicateOf: null };
const supersede = { kind: 'create', supersede: HOLDER_ID, duplicateOf: null };
const duplicate = { kind: 'create', supersede: null, duplicateOf: HOLDER_ID };
const reissue = { kind: 'reissue', device: HOLDER_ID };
const refuse = { kind: 'refuse' };

describe('decideRegistration', () => {
  test('a secret that may register and no holder: a new device', () => {
    expect(decide({})).toEqual(create);
    expect(decide({ secret: { ...SECRET, maxUses: 2, uses: 1, expiresAt: at(1) } })).toEqual(create);
  });

  test('refused alike: no secret, revoked, expired (at the instant too), used up', () => {
    expect(decide({ secret: undefined })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, revokedAt: at(-1) } })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, expiresAt: NOW } })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, expiresAt: at(-1) } })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, maxUses: 2, uses: 2 } })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, maxUses: 2, uses: 2 }, holder: HOLDER })).toEqual(refuse);
    // A revoked or expired secret does not even give a retry its token again.
    const retry = { ...HOLDER, state: 'PENDING' as const };
    expect(decide({ secret: { ...SECRET, revokedAt: at(-1) }, holder: retry })).toEqual(refuse);
    expect(decide({ secret: { ...SECRET, expiresAt: at(-1) }, holder: retry })).toEqual(refuse);
  });

  test('a retry before the first heartbeat (this secret, same host, PENDING) gets its device again, even when used up', () => {
    const retry = { ...HOLDER, state: 'PENDING' as const, lastSeenAt: null, enrolledAt: null };
    expect(decide({ holder: retry })).toEqual(reissue);
    // Its /enroll answer lost: the device was given a key its host never received.
    expect(decide({ holder: { ...retry, enrolledAt: at(-1000) } })).toEqual(reissue);
    expect(decide({ holder: retry, secret: { ...SECRET, maxUses: 1, uses: 1 } })).toEqual(reissue);
    expect(decide({ holder: { ...retry, serialNumber: null } })).toEqual(reissue);
    expect(decide({ holder: retry }, { serialNumber: null })).toEqual(reissue);
    // Not a retry: another secret's, an admin's device, or one that heartbeated.
    expect(decide({ holder: { ...retry, enrollSecretId: 'ens_ffffffffffffffffffffffffffffffff' as EnrollSecretId } })).toEqual(supersede);
    expect(decide({ holder: { ...retry, enrollSecretId: null } })).toEqual(supersede);
    expect(decide({ holder: { ...retry, state: 'ACTIVE' } })).toEqual(supersede);
  });

  test('the same host again: supersedes the holder (re-enrollment), live or not', () => {
    expect(decide({ holder: HOLDER })).toEqual(supersede);
    expect(decide({ holder: { ...HOLDER, lastSeenAt: at(-LIVE_MS - 1) } })).toEqual(supersede);
  });

  test('another host (hostname, or serial number when both have one) while the holder is live: a duplicate', () => {
    expect(decide({ holder: HOLDER }, { hostname: 'clone' })).toEqual(duplicate);
    expect(decide({ holder: HOLDER }, { serialNumber: 'SN-2' })).toEqual(duplicate);
    expect(decide({ holder: { ...HOLDER, lastSeenAt: at(-LIVE_MS) } }, { hostname: 'clone' })).toEqual(duplicate);
    // Live by its enrollment, or its creation, when it was never seen.
    expect(decide({ holder: { ...HOLDER, lastSeenAt: null, enrolledAt: at(-1000) } }, { hostname: 'clone' })).toEqual(duplicate);
    expect(decide({ holder: { ...HOLDER, lastSeenAt: null, enrolledAt: null, createdAt: at(-1000) } }, { hostname: 'clone' })).toEqual(
      duplicate,
    );
    // A duplicate costs a use: not once the secret is used up.
    expect(decide({ holder: HOLDER, secret: { ...SECRET, maxUses: 1, uses: 1 } }, { hostname: 'clone' })).toEqual(refuse);
  });

  test('another host after the holder went quiet (more than two intervals): supersedes (re-imaged under a new name)', () => {
    expect(decide({ holder: { ...HOLDER, lastSeenAt: at(-LIVE_MS - 1) } }, { hostname: 'renamed' })).toEqual(supersede);
    expect(
      decide({ holder: { ...HOLDER, lastSeenAt: null, enrolledAt: at(-LIVE_MS - 1), createdAt: NOW } }, { hostname: 'renamed' }),
    ).toEqual(supersede);
  });
});

/** The store with its registerDevice replaced (every other operation the store's own). */
function replacingRegister(store: Store, registerDevice: Store['registerDevice']): Store {
  return Object.assign(Object.create(store) as Store, { registerDevice });
}

describe('register on a real SQLite store', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'registration-'));
    store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') }, {});
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function newSecret(options: { maxUses?: number; labels?: Record<string, string> } = {}): Promise<string> {
    const secret = newEnrollSecret();
    await store.createEnrollSecret({
      orgName: 'acme',
      secretHash: hashCredential(secret),
      labels: options.labels ?? {},
      note: null,
      expiresAt: null,
      maxUses: options.maxUses ?? null,
      now: NOW,
    });
    return secret;
  }

  test('a new device with the secret’s labels, its attributes and a token valid for an hour; one use', async () => {
    const secret = await newSecret({ labels: { team: 'finance' } });
    const registered = await register(store, secret, ATTRIBUTES, NOW, INTERVAL);
    if (registered.kind !== 'registered') throw new Error(registered.kind);
    expect(registered).toMatchObject({ outcome: 'created', holder: null });
    expect(registered.enrollmentToken).toMatch(/^[0-9a-f]{96}$/);
    expect(await store.deviceLabels(registered.deviceId)).toEqual({ team: 'finance' });
    const device = await store.findDevice(registered.deviceId);
    expect(device).toMatchObject({ state: 'PENDING', hardwareUuid: 'HW-1', hostname: 'laptop', enrollSecretId: registered.secretId });
    // One hour: the agent exchanges it at once.
    expect(device?.tokenExpiresAt).toBe(at(3_600_000));
    expect(REGISTERED_TOKEN_TTL_MS).toBe(3_600_000);
    expect((await store.findEnrollSecret(registered.secretId))?.uses).toBe(1);
  });

  test('outcomes: reissued (no use), superseded, duplicate; each holder named', async () => {
    const secret = await newSecret();
    const first = await register(store, secret, ATTRIBUTES, NOW, INTERVAL);
    if (first.kind !== 'registered') throw new Error(first.kind);
    const again = await register(store, secret, ATTRIBUTES, NOW, INTERVAL);
    if (again.kind !== 'registered') throw new Error(again.kind);
    expect(again).toMatchObject({ outcome: 'reissued', holder: null, deviceId: first.deviceId });
    const device = { id: again.deviceId, orgId: (await store.findDevice(again.deviceId))!.orgId };
    const lostKey = hashCredential('k'.repeat(96));
    expect(await store.exchangeToken(hashCredential(again.enrollmentToken), lostKey, NOW, () => true)).toBe(again.deviceId);
    // The /enroll answer was lost: the host registers again before any heartbeat. The same device,
    // no second use, and the key it never received is gone, so its new token can enroll it.
    const retried = await register(store, secret, ATTRIBUTES, at(1000), INTERVAL);
    if (retried.kind !== 'registered') throw new Error(retried.kind);
    expect(retried).toMatchObject({ outcome: 'reissued', holder: null, deviceId: first.deviceId });
    expect(await store.authenticate(lostKey)).toBeUndefined();
    expect(await store.findDevice(first.deviceId)).toMatchObject({ state: 'PENDING', enrolledAt: null });
    const key = hashCredential('j'.repeat(96));
    expect(await store.exchangeToken(hashCredential(retried.enrollmentToken), key, at(1000), (facts) => mayEnroll(facts, at(1000)))).toBe(
      first.deviceId,
    );
    expect((await store.listEnrollSecrets({ orgId: null }, 'acme'))[0]?.uses).toBe(1);
    // After its first heartbeat the device is no longer a retry: registering again supersedes it.
    expect(await heartbeat(store, device, ATTRIBUTES, at(2000))).toEqual({ kind: 'recorded' });
    const reenrolled = await register(store, secret, ATTRIBUTES, at(3000), INTERVAL);
    expect(reenrolled).toMatchObject({ outcome: 'superseded', holder: first.deviceId });
    const clone = await register(store, secret, { ...ATTRIBUTES, hostname: 'clone' }, at(4000), INTERVAL);
    expect(clone).toMatchObject({ outcome: 'duplicate', holder: reenrolled.kind === 'registered' && reenrolled.deviceId });
    expect((await store.listEnrollSecrets({ orgId: null }, 'acme'))[0]?.uses).toBe(3);
  });

  test('a malformed secret is refused before the store is asked; an unknown one by the store', async () => {
    const asked: string[] = [];
    const watching = replacingRegister(store, (...args) => {
      asked.push('registerDevice');
      return store.registerDevice(...args);
    });
    expect(await register(watching, 'das_short', ATTRIBUTES, NOW, INTERVAL)).toEqual({ kind: 'secret_refused' });
    expect(asked).toEqual([]);
    expect(await register(watching, newEnrollSecret(), ATTRIBUTES, NOW, INTERVAL)).toEqual({ kind: 'secret_refused' });
    expect(asked).toEqual(['registerDevice']);
  });

  test('when a concurrent registration took the hardware_uuid, it is decided once more (and only once)', async () => {
    const secret = await newSecret();
    let races = 1;
    const racing = replacingRegister(store, (...args) =>
      races-- > 0 ? Promise.resolve({ kind: 'hardware_uuid_taken' }) : store.registerDevice(...args),
    );
    expect(await register(racing, secret, ATTRIBUTES, NOW, INTERVAL)).toMatchObject({ kind: 'registered', outcome: 'created' });
    races = 2;
    expect(await register(racing, secret, { ...ATTRIBUTES, hardwareUuid: 'HW-2' }, NOW, INTERVAL)).toEqual({ kind: 'secret_refused' });
  });
});

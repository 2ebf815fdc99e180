// The device lifecycle's rules (src/server/deviceLifecycle.ts) as each engine's store carries them
// out: one suite, run on SQLite by deviceLifecycle.test.ts and on PostgreSQL by
// postgres/deviceLifecycle.test.ts, each with a real store of its engine and no HTTP in between.
import { describe, expect, test } from 'vitest';
import { hashCredential, newCredential } from '../../src/server/credentials';
import type { DeviceRef, DeviceState, NewPostureResult, PostureReads, Store } from '../../src/server/db/store';
import { CREATED_STATE, SEEN_IN, enroll, heartbeat, revoke, uploadPostures } from '../../src/server/deviceLifecycle';
import type { DeviceId } from '../../src/server/ids';
import { deviceAttributes } from '../support/storeDevices';

export const T0 = '2026-11-25T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();
const DAY = '2026-11-26T00:00:00.000Z';

interface NewDevice extends DeviceRef {
  token: string;
}

/** A device created as the admin layer creates one (or in `state`), with a token valid until `expiresAt`. */
export async function createdDevice(
  store: Store,
  options: { org?: string; state?: DeviceState; expiresAt?: string } = {},
): Promise<NewDevice> {
  const token = newCredential();
  const org = options.org ?? 'lifecycle';
  const id = await store.createDevice({
    orgName: org,
    name: null,
    state: options.state ?? CREATED_STATE,
    tokenHash: hashCredential(token),
    tokenExpiresAt: options.expiresAt ?? DAY,
    now: T0,
  });
  return { id, orgId: (await store.findOrganization(org))!.id, token };
}

/** A created device enrolled at T0: its API key. */
export async function enrolledDevice(store: Store, org?: string): Promise<DeviceRef & { apiKey: string }> {
  const device = await createdDevice(store, { org });
  const enrollment = await enroll(store, device.token, T0);
  if (enrollment.kind !== 'enrolled') throw new Error(`enrollment refused: ${enrollment.kind}`);
  return { id: device.id, orgId: device.orgId, apiKey: enrollment.apiKey };
}

/** An enrolled device activated by a heartbeat at T0. */
export async function activeDevice(store: Store, org?: string): Promise<DeviceRef & { apiKey: string; hardwareUuid: string }> {
  const device = await enrolledDevice(store, org);
  const attributes = deviceAttributes();
  expect(await heartbeat(store, device, attributes, T0)).toEqual({ kind: 'recorded' });
  return { ...device, hardwareUuid: attributes.hardwareUuid };
}

export const newResult = (overrides: Partial<NewPostureResult> = {}): NewPostureResult => ({
  checkKey: 'FIREWALL_ENABLED',
  status: 'PASS',
  evidence: { enabled: true },
  observedAt: T0,
  correlationId: null,
  ...overrides,
});

export function lifecycleOnStore(name: string, store: () => Store): void {
  const find = async (id: DeviceId) => (await store().findDevice(id))!;

  describe(`${name}: creation and enrollment`, () => {
    test('a created device is PENDING with its token and no key; enrolling gives it a key and consumes the token', async () => {
      const device = await createdDevice(store());
      expect(await find(device.id)).toMatchObject({ state: 'PENDING', enrolledAt: null, tokenExpiresAt: DAY });

      const enrollment = await enroll(store(), device.token, at(5));
      expect(enrollment).toEqual({ kind: 'enrolled', deviceId: device.id, apiKey: expect.stringMatching(/^[0-9a-f]{96}$/) as unknown });
      // Still PENDING: the first heartbeat activates it.
      expect(await find(device.id)).toMatchObject({ state: 'PENDING', enrolledAt: at(5), activatedAt: null, tokenExpiresAt: null });
      const apiKey = enrollment.kind === 'enrolled' ? enrollment.apiKey : '';
      expect(await store().authenticate(hashCredential(apiKey))).toEqual({ id: device.id, orgId: device.orgId, state: 'PENDING' });

      expect(await enroll(store(), device.token, at(6))).toEqual({ kind: 'token_refused' });
    });

    test('a token is refused once it expires, and consumed all the same', async () => {
      const valid = await createdDevice(store(), { expiresAt: at(10) });
      expect((await enroll(store(), valid.token, at(9.999))).kind).toBe('enrolled');

      const expired = await createdDevice(store(), { expiresAt: at(10) });
      expect(await enroll(store(), expired.token, at(10))).toEqual({ kind: 'token_refused' });
      expect(await find(expired.id)).toMatchObject({ state: 'PENDING', enrolledAt: null, tokenExpiresAt: null });
    });

    test('a token is refused when it is not a credential, unknown, revoked, or its device is no longer PENDING', async () => {
      expect(await enroll(store(), 'not-a-token', T0)).toEqual({ kind: 'token_refused' });
      expect(await enroll(store(), newCredential(), T0)).toEqual({ kind: 'token_refused' });
      const revoked = await createdDevice(store());
      await revoke(store(), revoked, T0);
      expect(await enroll(store(), revoked.token, T0)).toEqual({ kind: 'token_refused' });
      // Only the store can make an ACTIVE device that still has a token: the rule, not the data, refuses it.
      const active = await createdDevice(store(), { state: 'ACTIVE' });
      expect(await enroll(store(), active.token, T0)).toEqual({ kind: 'token_refused' });
      expect(await find(active.id)).toMatchObject({ state: 'ACTIVE', enrolledAt: null, tokenExpiresAt: null });
    });
  });

  describe(`${name}: heartbeats`, () => {
    test('the first heartbeat activates a PENDING device; later ones refresh it and keep its activation time', async () => {
      const device = await enrolledDevice(store());
      const attributes = deviceAttributes({ hostname: 'first' });
      expect(await heartbeat(store(), device, attributes, at(1))).toEqual({ kind: 'recorded' });
      expect(await find(device.id)).toMatchObject({
        state: 'ACTIVE',
        activatedAt: at(1),
        lastSeenAt: at(1),
        hardwareUuid: attributes.hardwareUuid,
        hostname: 'first',
      });
      expect(await heartbeat(store(), device, { ...attributes, hostname: 'second' }, at(2))).toEqual({ kind: 'recorded' });
      expect(await find(device.id)).toMatchObject({ state: 'ACTIVE', activatedAt: at(1), lastSeenAt: at(2), hostname: 'second' });
    });

    test('a revoked device is refused and left as revoked', async () => {
      for (const activated of [false, true]) {
        const device = activated ? await activeDevice(store()) : await enrolledDevice(store());
        await revoke(store(), device, at(1));
        expect(await heartbeat(store(), device, deviceAttributes({ hostname: 'late' }), at(2))).toEqual({ kind: 'revoked' });
        expect(await find(device.id)).toMatchObject({ state: 'REVOKED', lastSeenAt: activated ? T0 : null });
        expect((await find(device.id)).hostname).not.toBe('late');
      }
    });

    test("another device's hardware_uuid is refused: a PENDING device stays PENDING, an ACTIVE one keeps its attributes", async () => {
      const taken = await activeDevice(store());
      const pending = await enrolledDevice(store());
      const conflicting = deviceAttributes({ hardwareUuid: taken.hardwareUuid });
      expect(await heartbeat(store(), pending, conflicting, at(1))).toEqual({ kind: 'hardware_uuid_taken' });
      expect(await find(pending.id)).toMatchObject({ state: 'PENDING', hardwareUuid: null, activatedAt: null, lastSeenAt: null });

      const active = await activeDevice(store());
      const before = await find(active.id);
      expect(await heartbeat(store(), active, conflicting, at(1))).toEqual({ kind: 'hardware_uuid_taken' });
      expect(await find(active.id)).toEqual(before);
    });

    test("a revoked device's hardware_uuid is free, and so is one of another organization", async () => {
      const revoked = await activeDevice(store());
      await revoke(store(), revoked, at(1));
      const successor = await enrolledDevice(store());
      expect(await heartbeat(store(), successor, deviceAttributes({ hardwareUuid: revoked.hardwareUuid }), at(2))).toEqual({
        kind: 'recorded',
      });
      const elsewhere = await enrolledDevice(store(), 'lifecycle-other');
      expect(await heartbeat(store(), elsewhere, deviceAttributes({ hardwareUuid: revoked.hardwareUuid }), at(2))).toEqual({
        kind: 'recorded',
      });
    });

    test("a batched last-seen time reaches ACTIVE devices only, never moving one's time backwards", async () => {
      const active = await activeDevice(store());
      const pending = await enrolledDevice(store());
      const revoked = await activeDevice(store());
      await revoke(store(), revoked, at(1));
      await store().recordDevicesSeen(
        [active, pending, revoked].map((device) => ({ device, at: at(5) })),
        SEEN_IN,
      );
      expect((await find(active.id)).lastSeenAt).toBe(at(5));
      expect((await find(pending.id)).lastSeenAt).toBeNull();
      expect((await find(revoked.id)).lastSeenAt).toBe(T0);
      await store().recordDevicesSeen([{ device: active, at: at(3) }], SEEN_IN);
      expect((await find(active.id)).lastSeenAt).toBe(at(5));
    });
  });

  describe(`${name}: posture uploads`, () => {
    test('only an ACTIVE device has its results stored; a PENDING or revoked one is refused and nothing is stored', async () => {
      const pending = await enrolledDevice(store());
      expect(await uploadPostures(store(), pending, [newResult()], at(1))).toEqual({ kind: 'not_active' });
      expect(await store().listPostures(pending)).toEqual([]);

      const active = await activeDevice(store());
      const outcome = await uploadPostures(store(), active, [newResult()], at(1));
      expect(outcome).toEqual({ kind: 'recorded', createdReportId: expect.stringMatching(/^rpt_[0-9a-f]{32}$/) as unknown });

      await revoke(store(), active, at(2));
      expect(await uploadPostures(store(), active, [newResult()], at(3))).toEqual({ kind: 'not_active' });
      expect(await store().listPostures(active)).toHaveLength(1);

      const unknown = { id: 'dev_00000000000000000000000000000000' as DeviceId, orgId: active.orgId };
      expect(await uploadPostures(store(), unknown, [newResult()], at(3))).toEqual({ kind: 'not_active' });
    });

    test('results without a correlation id share one new report; a report of the organization may be named again', async () => {
      const device = await activeDevice(store());
      const first = await uploadPostures(store(), device, [newResult(), newResult({ checkKey: 'SCREEN_LOCK', status: 'FAIL' })], at(1));
      if (first.kind !== 'recorded' || first.createdReportId === null) throw new Error(`not recorded: ${JSON.stringify(first)}`);
      const report = first.createdReportId;

      // Another device of the same organization may add to it; with only named results, no report is created.
      const sibling = await activeDevice(store());
      expect(await uploadPostures(store(), sibling, [newResult({ correlationId: report })], at(2))).toEqual({
        kind: 'recorded',
        createdReportId: null,
      });
      const mixed = await uploadPostures(store(), device, [newResult({ correlationId: report }), newResult({ status: 'FAIL' })], at(3));
      expect(mixed).toMatchObject({ kind: 'recorded', createdReportId: expect.stringMatching(/^rpt_/) as unknown });
      expect(mixed).not.toEqual({ kind: 'recorded', createdReportId: report });

      const stored = await store().listPostures(device);
      expect(stored.map((r) => [r.reportId, r.checkKey, r.status, r.evidence, r.observedAt, r.receivedAt])).toEqual([
        [report, 'FIREWALL_ENABLED', 'PASS', { enabled: true }, T0, at(1)],
        [report, 'SCREEN_LOCK', 'FAIL', { enabled: true }, T0, at(1)],
        [report, 'FIREWALL_ENABLED', 'PASS', { enabled: true }, T0, at(3)],
        [mixed.kind === 'recorded' ? mixed.createdReportId : '', 'FIREWALL_ENABLED', 'FAIL', { enabled: true }, T0, at(3)],
      ]);
      expect((await store().postureHistory(sibling, { limit: 10 })).map((r) => r.reportId)).toEqual([report]);
    });

    test("a correlation id that is not a report of the device's organization refuses the whole batch, naming the first", async () => {
      const device = await activeDevice(store());
      const outsider = await activeDevice(store(), 'lifecycle-outsider');
      const foreign = await uploadPostures(store(), outsider, [newResult()], at(1));
      const foreignReport = foreign.kind === 'recorded' ? foreign.createdReportId! : '';
      const cases: [string, number][] = [
        [foreignReport, 1],
        ['rpt_00000000000000000000000000000000', 1],
        [device.id, 1],
        ['RPT_' + foreignReport.slice(4), 1],
        ['not\u0000an id', 1],
      ];
      for (const [correlationId, index] of cases) {
        const batch = [newResult(), newResult({ correlationId }), newResult({ correlationId: 'rpt_ffffffffffffffffffffffffffffffff' })];
        expect(await uploadPostures(store(), device, batch, at(2))).toEqual({ kind: 'invalid_correlation_id', index });
      }
      expect(await store().listPostures(device)).toEqual([]);
      // Not ACTIVE comes first.
      await revoke(store(), device, at(3));
      expect(await uploadPostures(store(), device, [newResult({ correlationId: 'x' })], at(4))).toEqual({ kind: 'not_active' });
    });

    test('a new check key beyond the cap refuses the whole batch; the keys the device holds are read in its transaction', async () => {
      const device = await activeDevice(store());
      const other = await activeDevice(store());
      const keys = (...checkKeys: string[]) => checkKeys.map((checkKey) => newResult({ checkKey }));
      const reads: PostureReads[] = [];
      const watched = Object.create(store()) as Store;
      watched.recordPostures = (...args) => {
        reads.push(args[1]);
        return store().recordPostures(...args);
      };
      // Room for the nine official keys and one other.
      expect(await uploadPostures(watched, device, keys('FIREWALL_ENABLED', 'CUSTOM_A'), at(1), 10)).toMatchObject({ kind: 'recorded' });
      expect(await uploadPostures(watched, other, keys('CUSTOM_B'), at(1), 10)).toMatchObject({ kind: 'recorded' });
      expect(await uploadPostures(watched, device, keys('SCREEN_LOCK', 'CUSTOM_A', 'CUSTOM_B'), at(2), 10)).toEqual({
        kind: 'check_key_cap',
        index: 2,
        cap: 10,
      });
      expect((await store().listPostures(device)).map((r) => r.checkKey)).toEqual(['FIREWALL_ENABLED', 'CUSTOM_A']);
      expect(await uploadPostures(watched, device, keys('SCREEN_LOCK', 'CUSTOM_A'), at(3), 10)).toMatchObject({ kind: 'recorded' });
      // Only a batch with a key other than the official ones needs the device's keys.
      expect(reads.map((read) => read.checkKeys)).toEqual([true, true, true, true]);
      expect(await uploadPostures(watched, device, keys('SCREEN_LOCK', 'TIME_SYNC'), at(4), 10)).toMatchObject({ kind: 'recorded' });
      expect(reads.at(-1)).toEqual({ reportIds: [], checkKeys: false });
    });

    test('an empty batch is accepted and stores nothing', async () => {
      const device = await activeDevice(store());
      expect(await uploadPostures(store(), device, [], at(1))).toEqual({ kind: 'recorded', createdReportId: null });
      expect(await store().listPostures(device)).toEqual([]);
    });
  });

  describe(`${name}: revocation`, () => {
    test('revoking an ACTIVE device removes its key; revoking it again changes nothing', async () => {
      const device = await activeDevice(store());
      expect(await revoke(store(), device, at(1))).toBe('revoked');
      expect(await find(device.id)).toMatchObject({ state: 'REVOKED', revokedAt: at(1) });
      expect(await store().authenticate(hashCredential(device.apiKey))).toBeUndefined();
      expect(await revoke(store(), device, at(2))).toBe('already_revoked');
      expect((await find(device.id)).revokedAt).toBe(at(1));
    });

    test('revoking a PENDING device ends its key, or its unused token', async () => {
      const enrolled = await enrolledDevice(store());
      expect(await revoke(store(), enrolled, at(1))).toBe('revoked');
      expect(await store().authenticate(hashCredential(enrolled.apiKey))).toBeUndefined();

      const created = await createdDevice(store());
      expect(await revoke(store(), created, at(1))).toBe('revoked');
      expect(await find(created.id)).toMatchObject({ state: 'REVOKED', tokenExpiresAt: null });
      expect(await enroll(store(), created.token, at(2))).toEqual({ kind: 'token_refused' });
    });

    test('a device is revoked only within its own organization', async () => {
      const device = await activeDevice(store());
      const other = await activeDevice(store(), 'lifecycle-elsewhere');
      expect(await revoke(store(), { id: device.id, orgId: other.orgId }, at(1))).toBe('already_revoked');
      expect((await find(device.id)).state).toBe('ACTIVE');
    });
  });
}

// POST /heartbeat against the real server: activation, schedule, validation, uniqueness, limits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BODY_LIMITS, PLATFORMS, ROUTES } from '../../src/protocol/schemas';
import { NO_RATE_LIMITS, startServer, type RunningServer } from '../support/server';
import { call, enroll, enrolledDevice, expectError, heartbeat, heartbeatBody, heldBody, type EnrolledDevice } from './client';
import { anyString } from '../support/matchers';

let server: RunningServer;
beforeAll(async () => {
  // One device sends many requests here: the per-device limits are tested in rateLimits.test.ts.
  server = await startServer({ args: NO_RATE_LIMITS });
});
afterAll(async () => {
  await server?.stop();
});

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe.concurrent('POST /heartbeat', () => {
  test('the first heartbeat moves PENDING to ACTIVE and returns the schedule', async () => {
    const device = await enrolledDevice(server, { activate: false });
    expect((await server.showDevice(device.deviceId)).state).toBe('PENDING');
    const body = heartbeatBody({ hostname: 'alice-laptop', platform: 'DARWIN', os_version: 'macOS 15.1' });
    const before = Date.now();
    const answer = await heartbeat(server, device.apiKey, body);
    expect(answer.status).toBe(200);
    // The spec's four fields, and the policy extension's one (docs/server.md, "Policy"; off with --no-policy: policy.test.ts).
    expect(Object.keys(answer.body ?? {}).sort()).toEqual([
      'device_id',
      'heartbeat_interval_seconds',
      'policy_version',
      'posture_interval_seconds',
      'server_time',
    ]);
    expect(answer.body).toMatchObject({ device_id: device.deviceId, heartbeat_interval_seconds: 300, posture_interval_seconds: 3600 });
    expect(answer.body?.server_time).toMatch(RFC3339_UTC);
    expect(Math.abs(Date.parse(String(answer.body?.server_time)) - before)).toBeLessThan(5_000);
    expect(await server.showDevice(device.deviceId)).toMatchObject({
      state: 'ACTIVE',
      hardware_uuid: body.hardware_uuid,
      serial_number: body.serial_number,
      hostname: 'alice-laptop',
      platform: 'DARWIN',
      os_version: 'macOS 15.1',
      agent_version: body.agent_version,
      last_seen_at: anyString(),
    });
  });

  test('later heartbeats keep the device ACTIVE and update what it reports', async () => {
    const device = await enrolledDevice(server);
    const answer = await heartbeat(
      server,
      device.apiKey,
      heartbeatBody({ hardware_uuid: device.hardwareUuid, hostname: 'renamed', agent_version: '0.2.0', serial_number: undefined }),
    );
    expect(answer.status).toBe(200);
    expect(await server.showDevice(device.deviceId)).toMatchObject({
      state: 'ACTIVE',
      hostname: 'renamed',
      agent_version: '0.2.0',
      serial_number: null,
    });
  });

  test('each of the four platforms is accepted', async () => {
    const device = await enrolledDevice(server, { activate: false });
    for (const platform of PLATFORMS) {
      expect((await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid, platform }))).status).toBe(200);
      expect((await server.showDevice(device.deviceId)).platform).toBe(platform);
    }
  });

  test('unknown fields are ignored', async () => {
    const device = await enrolledDevice(server, { activate: false });
    expect((await heartbeat(server, device.apiKey, { ...heartbeatBody(), uptime: 12, tags: ['a'] })).status).toBe(200);
  });

  describe('invalid bodies get 400 and leave the device PENDING', () => {
    let pending: EnrolledDevice;
    beforeAll(async () => {
      pending = await enrolledDevice(server, { activate: false });
    });
    afterAll(async () => {
      expect((await server.showDevice(pending.deviceId)).state).toBe('PENDING');
    });
    const cases: [string, (body: Record<string, unknown>) => unknown][] = [
      ...(['hardware_uuid', 'hostname', 'platform', 'os_version', 'agent_version'] as const).map(
        (field): [string, (body: Record<string, unknown>) => unknown] => [`missing ${field}`, (body) => ({ ...body, [field]: undefined })],
      ),
      ['an invalid platform', (body) => ({ ...body, platform: 'MACOS' })],
      ['a lower-case platform', (body) => ({ ...body, platform: 'linux' })],
      ['a numeric hostname', (body) => ({ ...body, hostname: 7 })],
      ['an empty hardware_uuid', (body) => ({ ...body, hardware_uuid: '' })],
      ['a null serial_number', (body) => ({ ...body, serial_number: null })],
      ['an array body', (body) => [body]],
      ['a null body', () => null],
    ];
    test.each(cases)('%s', async (_what, mutate) => {
      const answer = await call(server, ROUTES.heartbeat, {
        apiKey: pending.apiKey,
        raw: JSON.stringify(mutate(heartbeatBody())),
        headers: { 'content-type': 'application/json' },
      });
      expectError(answer, 400, 'bad_request');
    });
  });

  describe('authentication', () => {
    test('no Authorization header: 401 with WWW-Authenticate', async () => {
      const answer = await call(server, ROUTES.heartbeat, { json: heartbeatBody() });
      expectError(answer, 401, 'unauthorized');
      expect(answer.headers['www-authenticate']).toBe('Bearer');
    });

    test.each([
      ['an unknown key', `Bearer ${'c'.repeat(96)}`],
      ['a key that is not 96 hex', 'Bearer abc'],
      ['another scheme', `Basic ${'c'.repeat(96)}`],
      ['a bare key', 'c'.repeat(96)],
    ])('%s: 401', async (_what, authorization) => {
      expectError(await call(server, ROUTES.heartbeat, { json: heartbeatBody(), headers: { authorization } }), 401, 'unauthorized');
    });

    test('the scheme is case-insensitive', async () => {
      const device = await enrolledDevice(server, { activate: false });
      const answer = await call(server, ROUTES.heartbeat, { json: heartbeatBody(), headers: { authorization: `bearer ${device.apiKey}` } });
      expect(answer.status).toBe(200);
    });

    test('an enrollment token is not an API key', async () => {
      const device = await server.createDevice();
      expectError(await heartbeat(server, device.enrollment_token), 401, 'unauthorized');
      expect((await enroll(server, device.enrollment_token)).status).toBe(200);
    });

    test('an invalid key is refused before the body is validated', async () => {
      expectError(await call(server, ROUTES.heartbeat, { apiKey: 'd'.repeat(96), json: { nonsense: true } }), 401, 'unauthorized');
    });

    test('a device revoked while its heartbeat is in flight gets 401, and the heartbeat is not recorded', async () => {
      const device = await enrolledDevice(server);
      const held = heldBody(
        server,
        ROUTES.heartbeat,
        device.apiKey,
        heartbeatBody({ hardware_uuid: device.hardwareUuid, hostname: 'in-flight' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200)); // the server authenticates on the headers
      await server.revokeDevice(device.deviceId);
      held.release();
      const answer = await held.answer;
      expectError(answer, 401, 'unauthorized');
      expect(answer.body?.message).toMatch(/revoked/);
      expect(await server.showDevice(device.deviceId)).toMatchObject({ state: 'REVOKED', hostname: 'test-host' });
    });
  });

  describe("hardware_uuid is unique among the organization's non-revoked devices", () => {
    test('a second device with the same hardware_uuid gets 409 and stays PENDING', async () => {
      const first = await enrolledDevice(server, { org: 'uniq-org' });
      const second = await enrolledDevice(server, { org: 'uniq-org', activate: false });
      const answer = await heartbeat(server, second.apiKey, heartbeatBody({ hardware_uuid: first.hardwareUuid }));
      expectError(answer, 409, 'conflict');
      expect(answer.body?.message).toBe('the hardware_uuid is already used by another device of this organization');
      const shown = await server.showDevice(second.deviceId);
      expect(shown).toMatchObject({ state: 'PENDING', hardware_uuid: null });
      // Not a dead credential: the same key works with another hardware_uuid.
      expect((await heartbeat(server, second.apiKey)).status).toBe(200);
    });

    test("an ACTIVE device cannot take another device's hardware_uuid", async () => {
      const first = await enrolledDevice(server, { org: 'uniq-org-2' });
      const second = await enrolledDevice(server, { org: 'uniq-org-2' });
      expectError(await heartbeat(server, second.apiKey, heartbeatBody({ hardware_uuid: first.hardwareUuid })), 409, 'conflict');
      expect((await server.showDevice(second.deviceId)).hardware_uuid).toBe(second.hardwareUuid);
    });

    test('the same hardware_uuid in another organization is fine', async () => {
      const first = await enrolledDevice(server, { org: 'org-a' });
      const other = await enrolledDevice(server, { org: 'org-b', hardwareUuid: first.hardwareUuid });
      expect((await server.showDevice(other.deviceId)).state).toBe('ACTIVE');
    });

    test("a revoked device's hardware_uuid may be reused", async () => {
      const first = await enrolledDevice(server, { org: 'reuse-org' });
      const second = await enrolledDevice(server, { org: 'reuse-org', activate: false });
      expectError(await heartbeat(server, second.apiKey, heartbeatBody({ hardware_uuid: first.hardwareUuid })), 409, 'conflict');
      await server.revokeDevice(first.deviceId);
      expect((await heartbeat(server, second.apiKey, heartbeatBody({ hardware_uuid: first.hardwareUuid }))).status).toBe(200);
      expect((await server.showDevice(second.deviceId)).state).toBe('ACTIVE');
    });

    test('a device may keep sending its own hardware_uuid', async () => {
      const device = await enrolledDevice(server);
      const body = heartbeatBody({ hardware_uuid: device.hardwareUuid });
      expect((await heartbeat(server, device.apiKey, body)).status).toBe(200);
      expect((await heartbeat(server, device.apiKey, body)).status).toBe(200);
    });
  });

  test(`a body of exactly ${BODY_LIMITS.heartbeat} bytes is read; one byte more gets 413`, async () => {
    const device = await enrolledDevice(server, { activate: false });
    const base = heartbeatBody();
    const sized = (size: number) => {
      const empty = JSON.stringify({ ...base, pad: '' });
      return JSON.stringify({ ...base, pad: 'x'.repeat(size - empty.length) });
    };
    const send = (raw: string) =>
      call(server, ROUTES.heartbeat, { apiKey: device.apiKey, raw, headers: { 'content-type': 'application/json' } });
    expectError(await send(sized(BODY_LIMITS.heartbeat + 1)), 413, 'payload_too_large');
    expect((await server.showDevice(device.deviceId)).state).toBe('PENDING');
    expect(Buffer.byteLength(sized(BODY_LIMITS.heartbeat))).toBe(BODY_LIMITS.heartbeat);
    expect((await send(sized(BODY_LIMITS.heartbeat))).status).toBe(200);
  });
});

describe('--heartbeat-interval and --posture-interval', () => {
  test('are what the heartbeat returns', async () => {
    const tuned = await startServer({ args: ['--heartbeat-interval', '17', '--posture-interval', '42'] });
    try {
      const device = await enrolledDevice(tuned, { activate: false });
      const answer = await heartbeat(tuned, device.apiKey);
      expect(answer.body).toMatchObject({ heartbeat_interval_seconds: 17, posture_interval_seconds: 42 });
    } finally {
      await tuned.stop();
    }
  });
});

// POST /unenroll and administrator revocation: the key stops working (401 afterwards).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BODY_LIMITS, ROUTES } from '../../src/protocol/schemas';
import { until } from '../support/agent';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result, unenroll } from './client';
import { anyString } from '../support/matchers';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

async function expectKeyDead(apiKey: string): Promise<void> {
  expectError(await heartbeat(server, apiKey), 401, 'unauthorized');
  expectError(await postures(server, apiKey, { results: [result()] }), 401, 'unauthorized');
  expectError(await unenroll(server, apiKey), 401, 'unauthorized');
}

describe.concurrent('POST /unenroll', () => {
  test('204 with no body; the key is refused afterwards and the device is REVOKED', async () => {
    const device = await enrolledDevice(server);
    const answer = await unenroll(server, device.apiKey);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    await expectKeyDead(device.apiKey);
    const shown = await server.showDevice(device.deviceId);
    expect(shown).toMatchObject({ state: 'REVOKED', revoked_at: anyString() });
  });

  test('a PENDING device may unenroll too', async () => {
    const device = await enrolledDevice(server, { activate: false });
    expect((await unenroll(server, device.apiKey)).status).toBe(204);
    await expectKeyDead(device.apiKey);
    expect((await server.showDevice(device.deviceId)).state).toBe('REVOKED');
  });

  test('each unenrollment is logged with its device id, never with the key', async () => {
    const device = await enrolledDevice(server);
    expect((await unenroll(server, device.apiKey)).status).toBe(204);
    const unenrolled = () => logEntries(server.logs()).filter((l) => l.msg === 'device unenrolled' && l.device_id === device.deviceId);
    await until(unenrolled, (lines) => lines.length > 0, 60_000, 'the unenrollment logged');
    expect(unenrolled()).toHaveLength(1);
    expect(server.logs()).not.toContain(device.apiKey);
  });

  test('the hardware_uuid of an unenrolled device may be used again', async () => {
    const first = await enrolledDevice(server, { org: 'unenroll-reuse' });
    expect((await unenroll(server, first.apiKey)).status).toBe(204);
    const second = await enrolledDevice(server, { org: 'unenroll-reuse', hardwareUuid: first.hardwareUuid });
    expect((await server.showDevice(second.deviceId)).hardware_uuid).toBe(first.hardwareUuid);
  });

  test.each([
    ['no body and no Content-Type', {}],
    ['an empty JSON body', { headers: { 'content-type': 'application/json' }, raw: '' }],
    ['an empty object', { json: {} }],
    ['unknown fields', { json: { reason: 'uninstall' } }],
    ['Content-Type with charset', { headers: { 'content-type': 'application/json; charset=utf-8' }, raw: '{}' }],
  ])('accepts %s', async (_what, options) => {
    const device = await enrolledDevice(server, { activate: false });
    expect((await call(server, ROUTES.unenroll, { apiKey: device.apiKey, ...options })).status).toBe(204);
  });

  test.each([
    ['a JSON array', { json: [] }],
    ['a JSON string', { json: 'bye' }],
    ['invalid JSON', { headers: { 'content-type': 'application/json' }, raw: '{' }],
    ['a text body', { headers: { 'content-type': 'text/plain' }, raw: 'bye' }],
  ])('refuses %s with 400 and keeps the key', async (_what, options) => {
    const device = await enrolledDevice(server, { activate: false });
    expectError(await call(server, ROUTES.unenroll, { apiKey: device.apiKey, ...options }), 400, 'bad_request');
    expect((await heartbeat(server, device.apiKey)).status).toBe(200);
  });

  test(`a body of exactly ${BODY_LIMITS.unenroll} bytes is read; one byte more gets 413`, async () => {
    const device = await enrolledDevice(server, { activate: false });
    const sized = (size: number) => JSON.stringify({ pad: 'x'.repeat(size - JSON.stringify({ pad: '' }).length) });
    const send = (raw: string) =>
      call(server, ROUTES.unenroll, { apiKey: device.apiKey, raw, headers: { 'content-type': 'application/json' } });
    expectError(await send(sized(BODY_LIMITS.unenroll + 1)), 413, 'payload_too_large');
    expect((await heartbeat(server, device.apiKey)).status).toBe(200);
    expect(Buffer.byteLength(sized(BODY_LIMITS.unenroll))).toBe(BODY_LIMITS.unenroll);
    expect((await send(sized(BODY_LIMITS.unenroll))).status).toBe(204);
  });

  test('no Authorization header gets 401', async () => {
    expectError(await call(server, ROUTES.unenroll), 401, 'unauthorized');
  });
});

describe.concurrent('device revoke (administrator)', () => {
  test('an ACTIVE device: 401 afterwards, state REVOKED', async () => {
    const device = await enrolledDevice(server);
    await server.revokeDevice(device.deviceId);
    await expectKeyDead(device.apiKey);
    expect((await server.showDevice(device.deviceId)).state).toBe('REVOKED');
  });

  test('a PENDING device: 401 afterwards, even for its first heartbeat', async () => {
    const device = await enrolledDevice(server, { activate: false });
    await server.revokeDevice(device.deviceId);
    expectError(await heartbeat(server, device.apiKey, heartbeatBody()), 401, 'unauthorized');
  });

  test('stored postures stay visible after revocation', async () => {
    const device = await enrolledDevice(server);
    expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
    await server.revokeDevice(device.deviceId);
    expect((await server.showDevice(device.deviceId)).postures).toHaveLength(1);
  });
});

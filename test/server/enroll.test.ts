// POST /enroll against the real server: token exchange, single use, expiry, validation, limits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BODY_LIMITS, ROUTES } from '../../src/protocol/schemas';
import { until } from '../support/agent';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { call, enroll, expectError, heartbeat } from './client';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A JSON body of exactly `size` bytes carrying `token` (padded with an unknown field). */
function enrollBodyOfSize(token: string, size: number): string {
  const empty = JSON.stringify({ token, pad: '' });
  return JSON.stringify({ token, pad: 'x'.repeat(size - empty.length) });
}

describe.concurrent('POST /enroll', () => {
  test('exchanges a token for a 96-hex API key; the device stays PENDING', async () => {
    const device = await server.createDevice({ name: 'laptop' });
    const answer = await enroll(server, device.enrollment_token);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(answer.body ?? {})).toEqual(['api_key']);
    expect(answer.body?.api_key).toMatch(/^[0-9a-f]{96}$/);
    expect(answer.body?.api_key).not.toBe(device.enrollment_token);
    const shown = await server.showDevice(device.device_id);
    expect(shown).toMatchObject({ device_id: device.device_id, state: 'PENDING', token_expires_at: null });
    expect(shown.enrolled_at).toEqual(expect.any(String));
  });

  test('each enrollment is logged once with its device id, never with the token or the key', async () => {
    const device = await server.createDevice();
    const answer = await enroll(server, device.enrollment_token);
    expect(answer.status).toBe(200);
    const enrolled = () => logEntries(server.logs()).filter((l) => l.msg === 'device enrolled' && l.device_id === device.device_id);
    await until(enrolled, (lines) => lines.length > 0, 60_000, 'the enrollment logged');
    expect(enrolled()).toHaveLength(1);
    expect(server.logs()).not.toContain(device.enrollment_token);
    expect(server.logs()).not.toContain(String(answer.body?.api_key));
  });

  test('the key works: a heartbeat with it succeeds', async () => {
    const device = await server.createDevice();
    const { body } = await enroll(server, device.enrollment_token);
    const beat = await heartbeat(server, String(body?.api_key));
    expect(beat.status).toBe(200);
    expect(beat.body?.device_id).toBe(device.device_id);
  });

  test('a token is single use: the second exchange gets 401', async () => {
    const device = await server.createDevice();
    expect((await enroll(server, device.enrollment_token)).status).toBe(200);
    const reused = await enroll(server, device.enrollment_token);
    expectError(reused, 401, 'unauthorized');
    // The token travels in the body: no Bearer challenge here.
    expect(reused.headers['www-authenticate']).toBeUndefined();
  });

  test('hex is case-insensitive: the upper-case form of a token is the same token', async () => {
    const device = await server.createDevice();
    expect((await enroll(server, device.enrollment_token.toUpperCase())).status).toBe(200);
    expectError(await enroll(server, device.enrollment_token), 401, 'unauthorized');
  });

  test.each([
    ['an unknown token', 'ab'.repeat(48)],
    ['a token that is not 96 hex', 'not-a-token'],
    ['a 95-hex token', 'a'.repeat(95)],
  ])('%s gets 401', async (_what, token) => {
    expectError(await enroll(server, token), 401, 'unauthorized');
  });

  test("a revoked device's unused token gets 401", async () => {
    const device = await server.createDevice();
    await server.revokeDevice(device.device_id);
    expectError(await enroll(server, device.enrollment_token), 401, 'unauthorized');
    expect((await server.showDevice(device.device_id)).state).toBe('REVOKED');
  });

  test('an expired token gets 401 (--token-ttl 1s)', async () => {
    const device = await server.createDevice({ tokenTtl: '1s' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expectError(await enroll(server, device.enrollment_token), 401, 'unauthorized');
  });

  test('a token inside its validity works (--token-ttl 15m)', async () => {
    const device = await server.createDevice({ tokenTtl: '15m' });
    const shown = await server.showDevice(device.device_id);
    const ttl = Date.parse(String(shown.token_expires_at)) - Date.parse(shown.created_at);
    expect(ttl).toBe(15 * 60_000);
    expect((await enroll(server, device.enrollment_token)).status).toBe(200);
  });

  test('the default validity is 7 days', async () => {
    const device = await server.createDevice();
    const shown = await server.showDevice(device.device_id);
    expect(Date.parse(String(shown.token_expires_at)) - Date.parse(shown.created_at)).toBe(7 * 86_400_000);
  });

  test.each([
    ['no token field', {}],
    ['a numeric token', { token: 42 }],
    ['an empty token', { token: '' }],
    ['a null token', { token: null }],
    ['an array body', [{ token: 'a'.repeat(96) }]],
    ['a null body', null],
    ['a string body', 'token'],
  ])('%s gets 400', async (_what, json) => {
    expectError(
      await call(server, ROUTES.enroll, { raw: JSON.stringify(json), headers: { 'content-type': 'application/json' } }),
      400,
      'bad_request',
    );
  });

  test('unknown fields are ignored', async () => {
    const device = await server.createDevice();
    const answer = await call(server, ROUTES.enroll, { json: { token: device.enrollment_token, hostname: 'x', extra: { a: 1 } } });
    expect(answer.status).toBe(200);
  });

  test('the 400 message names the field but never echoes the token', async () => {
    const device = await server.createDevice();
    const answer = await call(server, ROUTES.enroll, { json: { token: [device.enrollment_token] } });
    expectError(answer, 400, 'bad_request');
    expect(answer.body?.message).toContain('token');
    expect(answer.text).not.toContain(device.enrollment_token);
  });

  test(`a body of exactly ${BODY_LIMITS.enroll} bytes is read; one byte more gets 413`, async () => {
    const device = await server.createDevice();
    const json = { 'content-type': 'application/json' };
    const tooBig = enrollBodyOfSize(device.enrollment_token, BODY_LIMITS.enroll + 1);
    expectError(await call(server, ROUTES.enroll, { raw: tooBig, headers: json }), 413, 'payload_too_large');
    const atLimit = enrollBodyOfSize(device.enrollment_token, BODY_LIMITS.enroll);
    expect(Buffer.byteLength(atLimit)).toBe(BODY_LIMITS.enroll);
    expect((await call(server, ROUTES.enroll, { raw: atLimit, headers: json })).status).toBe(200);
  });
});

describe('one token raced by 20 requests', () => {
  test('enrolls exactly once, across two server processes sharing the database', async () => {
    const second = await startServer({ args: ['--db', server.dbPath] });
    try {
      const device = await server.createDevice();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => enroll(i % 2 === 0 ? server : second, device.enrollment_token)),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(19).fill(401)]);
      const apiKey = String(answers.find((a) => a.status === 200)?.body?.api_key);
      expect((await heartbeat(server, apiKey)).status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});

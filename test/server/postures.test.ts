// POST /postures against the real server: bring-up rule, reports and correlation ids (tenant
// isolation), validation, observed_at handling, limits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BODY_LIMITS, CHECK_KEYS, MAX_RESULTS_PER_REQUEST, POSTURE_REPORT_HEADER, ROUTES, STATUSES } from '../../src/protocol/schemas';
import { startServer, type RunningServer } from '../support/server';
import type { DeviceDetails } from '../../src/server/admin';
import { call, enrolledDevice, expectError, heartbeat, postures, result, type EnrolledDevice } from './client';

let server: RunningServer;
let device: EnrolledDevice;
beforeAll(async () => {
  server = await startServer();
  device = await enrolledDevice(server, { org: 'acme' });
});
afterAll(async () => {
  await server?.stop();
});

const REPORT_ID = /^rpt_[0-9a-f]{32}$/;

async function storedPostures(deviceId: string): Promise<DeviceDetails['postures']> {
  return (await server.showDevice(deviceId)).postures;
}

/** Sends one batch and returns the report id the server created for it. */
async function newReport(apiKey: string, results = [result()]): Promise<string> {
  const answer = await postures(server, apiKey, { results });
  expect(answer.status, answer.text).toBe(204);
  return answer.headers[POSTURE_REPORT_HEADER] as string;
}

describe('bring-up', () => {
  test('a PENDING device gets 401, even for an empty batch; its key stays valid', async () => {
    const pending = await enrolledDevice(server, { activate: false });
    const refused = await postures(server, pending.apiKey, { results: [result()] });
    expectError(refused, 401, 'unauthorized');
    expect(refused.body?.message).toBe('the device has not completed a heartbeat yet (or was revoked)');
    expectError(await postures(server, pending.apiKey, { results: [] }), 401, 'unauthorized');
    expect((await heartbeat(server, pending.apiKey)).status).toBe(200);
    expect((await postures(server, pending.apiKey, { results: [result()] })).status).toBe(204);
  });

  test('a revoked device gets 401', async () => {
    const revoked = await enrolledDevice(server);
    await server.revokeDevice(revoked.deviceId);
    expectError(await postures(server, revoked.apiKey, { results: [result()] }), 401, 'unauthorized');
  });

  test('no Authorization header gets 401', async () => {
    expectError(await call(server, ROUTES.postures, { json: { results: [] } }), 401, 'unauthorized');
  });
});

describe.concurrent('accepted batches', () => {
  test('204 with no body; results without correlation_id share one new report, named in the header', async () => {
    const own = await enrolledDevice(server);
    const results = [
      result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { enabled: false } }),
      result({ check_key: 'TIME_SYNC' }),
    ];
    const answer = await postures(server, own.apiKey, { results });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    const reportId = answer.headers[POSTURE_REPORT_HEADER];
    expect(reportId).toMatch(REPORT_ID);
    const stored = await storedPostures(own.deviceId);
    expect(stored).toEqual([
      expect.objectContaining({ correlation_id: reportId, check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { enabled: false } }),
      expect.objectContaining({ correlation_id: reportId, check_key: 'TIME_SYNC', status: 'PASS', evidence: { encrypted: true } }),
    ]);
  });

  test('each request without correlation_id gets its own report', async () => {
    const first = await newReport(device.apiKey);
    const second = await newReport(device.apiKey);
    expect(first).toMatch(REPORT_ID);
    expect(second).toMatch(REPORT_ID);
    expect(first).not.toBe(second);
  });

  test('a later batch joins a report by passing its id as correlation_id', async () => {
    const own = await enrolledDevice(server);
    const reportId = await newReport(own.apiKey, [result({ check_key: 'OS_VERSION' })]);
    const next = await postures(server, own.apiKey, { results: [result({ check_key: 'SCREEN_LOCK', correlation_id: reportId })] });
    expect(next.status).toBe(204);
    expect(next.headers[POSTURE_REPORT_HEADER]).toBeUndefined();
    expect((await storedPostures(own.deviceId)).map((p) => [p.check_key, p.correlation_id])).toEqual([
      ['OS_VERSION', reportId],
      ['SCREEN_LOCK', reportId],
    ]);
  });

  test('a batch mixing given and omitted correlation ids creates one report for the omitted ones', async () => {
    const own = await enrolledDevice(server);
    const existing = await newReport(own.apiKey);
    const answer = await postures(server, own.apiKey, {
      results: [result({ check_key: 'A', correlation_id: existing }), result({ check_key: 'B' }), result({ check_key: 'C' })],
    });
    const created = answer.headers[POSTURE_REPORT_HEADER];
    expect(created).toMatch(REPORT_ID);
    expect(created).not.toBe(existing);
    const byKey = Object.fromEntries((await storedPostures(own.deviceId)).map((p) => [p.check_key, p.correlation_id]));
    expect(byKey).toMatchObject({ A: existing, B: created, C: created });
  });

  test('a report of another device of the same organization is a valid correlation_id', async () => {
    const other = await enrolledDevice(server, { org: 'acme' });
    const reportId = await newReport(other.apiKey);
    expect((await postures(server, device.apiKey, { results: [result({ correlation_id: reportId })] })).status).toBe(204);
  });

  test('an empty batch is a no-op 204 and creates no report', async () => {
    const own = await enrolledDevice(server);
    const answer = await postures(server, own.apiKey, { results: [] });
    expect(answer.status).toBe(204);
    expect(answer.headers[POSTURE_REPORT_HEADER]).toBeUndefined();
    expect(await storedPostures(own.deviceId)).toEqual([]);
  });

  test('the nine official check keys, the four statuses and other non-empty keys are accepted', async () => {
    const own = await enrolledDevice(server);
    const results = [
      ...CHECK_KEYS.map((check_key, i) => result({ check_key, status: STATUSES[i % STATUSES.length] })),
      result({ check_key: 'VENDOR_CUSTOM_CHECK', status: 'NOT_APPLICABLE' }),
    ];
    expect((await postures(server, own.apiKey, { results })).status).toBe(204);
    const stored = await storedPostures(own.deviceId);
    expect(stored.map((p) => [p.check_key, p.status])).toEqual(results.map((r) => [r.check_key, r.status]));
  });

  test('evidence is optional and stored as sent', async () => {
    const own = await enrolledDevice(server);
    const nested = { volumes: [{ mount: '/', encrypted: true }], method: 'LUKS2', score: 0.5, note: null };
    const results = [
      result({ check_key: 'NONE', evidence: undefined }),
      result({ check_key: 'NESTED', evidence: nested }),
      result({ check_key: 'EMPTY', evidence: {} }),
    ];
    expect((await postures(server, own.apiKey, { results })).status).toBe(204);
    const evidence = Object.fromEntries((await storedPostures(own.deviceId)).map((p) => [p.check_key, p.evidence]));
    expect(evidence).toEqual({ NONE: null, NESTED: nested, EMPTY: {} });
  });

  test('unknown fields are ignored', async () => {
    const answer = await postures(server, device.apiKey, { results: [{ ...result(), severity: 'high' }], batch: 3 });
    expect(answer.status).toBe(204);
  });

  test('observed_at: stored in UTC (lowercase t/z of RFC 3339 accepted); more than 5 minutes ahead is stored as the receive time', async () => {
    const own = await enrolledDevice(server);
    const now = Date.now();
    const sent = {
      PAST: '2024-02-29T23:30:00.5+02:00',
      LOWERCASE: '2024-03-01t08:15:00z',
      AHEAD_4_MIN: new Date(now + 4 * 60_000).toISOString(),
      AHEAD_1_HOUR: new Date(now + 3_600_000).toISOString(),
      AHEAD_10_YEARS: '2036-01-01T00:00:00Z',
    };
    const results = Object.entries(sent).map(([check_key, observed_at]) => result({ check_key, observed_at }));
    const before = Date.now();
    expect((await postures(server, own.apiKey, { results })).status).toBe(204);
    const after = Date.now();
    const stored = Object.fromEntries((await storedPostures(own.deviceId)).map((p) => [p.check_key, p]));
    expect(stored.PAST?.observed_at).toBe('2024-02-29T21:30:00.500Z');
    expect(stored.LOWERCASE?.observed_at).toBe('2024-03-01T08:15:00.000Z');
    expect(stored.AHEAD_4_MIN?.observed_at).toBe(sent.AHEAD_4_MIN);
    for (const key of ['AHEAD_1_HOUR', 'AHEAD_10_YEARS']) {
      expect(stored[key]?.observed_at).toBe(stored[key]?.received_at);
      const at = Date.parse(String(stored[key]?.observed_at));
      expect(at).toBeGreaterThanOrEqual(before - 1_000);
      expect(at).toBeLessThanOrEqual(after + 1_000);
    }
  });
});

describe.concurrent('correlation ids are checked within the tenant', () => {
  let otherOrgReport: string;
  beforeAll(async () => {
    const stranger = await enrolledDevice(server, { org: 'globex' });
    otherOrgReport = await newReport(stranger.apiKey);
  });

  test.each([
    ['an unknown posture-report id', () => `rpt_${'0'.repeat(32)}`],
    ['a device id (another entity type)', () => device.deviceId],
    ['an organization-style id', () => `org_${'1'.repeat(32)}`],
    ['a free-form string', () => 'cycle-2024-01-01'],
    ["another organization's report id", () => otherOrgReport],
  ])('%s gets 400 and nothing of the batch is stored', async (_what, correlationId) => {
    const own = await enrolledDevice(server, { org: 'acme' });
    const answer = await postures(server, own.apiKey, {
      results: [result({ check_key: 'GOOD' }), result({ check_key: 'BAD', correlation_id: correlationId() })],
    });
    expectError(answer, 400, 'bad_request');
    expect(answer.body?.message).toContain('results[1].correlation_id');
    expect(await storedPostures(own.deviceId)).toEqual([]);
  });
});

describe.concurrent('invalid batches get 400', () => {
  const invalid: [string, unknown][] = [
    ['no results field', {}],
    ['results not an array', { results: { 0: result() } }],
    ['results null', { results: null }],
    ['a result that is not an object', { results: ['PASS'] }],
    ['a missing check_key', { results: [{ ...result(), check_key: undefined }] }],
    ['an empty check_key', { results: [result({ check_key: '' })] }],
    ['a numeric check_key', { results: [{ ...result(), check_key: 5 }] }],
    ['a missing status', { results: [{ ...result(), status: undefined }] }],
    ['an invalid status', { results: [{ ...result(), status: 'OK' }] }],
    ['a lower-case status', { results: [{ ...result(), status: 'pass' }] }],
    ['a missing observed_at', { results: [{ ...result(), observed_at: undefined }] }],
    ['an observed_at that is not a date', { results: [result({ observed_at: 'yesterday' })] }],
    ['an observed_at without offset', { results: [result({ observed_at: '2024-01-01T00:00:00' })] }],
    ['an impossible observed_at', { results: [result({ observed_at: '2024-02-30T00:00:00Z' })] }],
    ['a numeric observed_at', { results: [{ ...result(), observed_at: 1700000000 }] }],
    ['evidence as an array', { results: [{ ...result(), evidence: [1, 2] }] }],
    ['evidence as null', { results: [{ ...result(), evidence: null }] }],
    ['evidence as a string', { results: [{ ...result(), evidence: 'encrypted' }] }],
    ['evidence as a number', { results: [{ ...result(), evidence: 1 }] }],
    ['an empty correlation_id', { results: [result({ correlation_id: '' })] }],
    ['a numeric correlation_id', { results: [{ ...result(), correlation_id: 7 }] }],
    [`${MAX_RESULTS_PER_REQUEST + 1} results`, { results: Array.from({ length: MAX_RESULTS_PER_REQUEST + 1 }, () => result()) }],
  ];
  let own: EnrolledDevice;
  beforeAll(async () => {
    own = await enrolledDevice(server);
  });
  afterAll(async () => {
    expect(await storedPostures(own.deviceId)).toEqual([]);
  });
  test.each(invalid)('%s', async (_what, body) => {
    expectError(await postures(server, own.apiKey, body), 400, 'bad_request');
  });
});

describe('limits', () => {
  test(`${MAX_RESULTS_PER_REQUEST} results in one request are accepted`, async () => {
    const own = await enrolledDevice(server);
    // The official keys over and over: a hundred distinct keys would pass the device's cap (checkKeyCap.test.ts).
    const results = Array.from({ length: MAX_RESULTS_PER_REQUEST }, (_, i) => result({ check_key: CHECK_KEYS[i % CHECK_KEYS.length] }));
    const answer = await postures(server, own.apiKey, { results });
    expect(answer.status).toBe(204);
    const stored = await storedPostures(own.deviceId);
    expect(stored).toHaveLength(MAX_RESULTS_PER_REQUEST);
    expect(new Set(stored.map((p) => p.correlation_id))).toEqual(new Set([answer.headers[POSTURE_REPORT_HEADER]]));
  });

  test(`a body of exactly ${BODY_LIMITS.postures} bytes is read; one byte more gets 413`, async () => {
    const own = await enrolledDevice(server);
    const sized = (size: number) => {
      const results = Array.from({ length: 10 }, (_, i) => result({ check_key: `BIG_${i}`, evidence: { pad: '' } }));
      const padding = size - JSON.stringify({ results }).length;
      results[0]!.evidence = { pad: 'x'.repeat(padding) };
      return JSON.stringify({ results });
    };
    const send = (raw: string) =>
      call(server, ROUTES.postures, { apiKey: own.apiKey, raw, headers: { 'content-type': 'application/json' } });
    expectError(await send(sized(BODY_LIMITS.postures + 1)), 413, 'payload_too_large');
    expect(await storedPostures(own.deviceId)).toEqual([]);
    const atLimit = sized(BODY_LIMITS.postures);
    expect(Buffer.byteLength(atLimit)).toBe(BODY_LIMITS.postures);
    expect((await send(atLimit)).status).toBe(204);
    expect(await storedPostures(own.deviceId)).toHaveLength(10);
  });
});

// Per-device rate limits against the real server: 429 with the contract's error body and a
// Retry-After the agent honours, per device, decided before the body is stored; and defaults that
// an agent on the server's schedule never meets.
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterEach, describe, expect, test } from 'vitest';
import { enrollWithToken, makeStateDir, removeStateDir, startDaemon, stopDaemon, until } from '../support/agent';
import { ON_POSTGRES, queryDatabase } from '../support/postgres';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { Readable } from 'node:stream';
import { DEVICE_PAGE_ROUTE, ROUTES } from '../../src/protocol/schemas';
import { call, enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result } from './client';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(args: string[]): Promise<RunningServer> {
  const server = await startServer({ args });
  servers.push(server);
  return server;
}

/** One-time codes the server has stored, on either engine. */
async function codesStored(server: RunningServer): Promise<number> {
  const sql = "SELECT count(*) AS n FROM device_page_grants WHERE kind = 'code'";
  if (ON_POSTGRES) return Number((await queryDatabase<{ n: string }>(server.dbPath, sql))[0]!.n);
  const db = new Database(server.dbPath, { readonly: true });
  try {
    return (db.prepare(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function statusesLogged(server: RunningServer): (number | undefined)[] {
  return logEntries(server.logs())
    .filter((entry) => entry.msg === 'request')
    .map((entry) => entry.status);
}

describe('per-device rate limits', () => {
  test('heartbeats beyond the budget get 429 too_many_requests with Retry-After; another device is not affected', async () => {
    // 3 a minute: one comes back every 20 s, far more than these requests take on a busy machine.
    const server = await serve(['--rate-limit-heartbeats', '3']);
    const device = await enrolledDevice(server); // its first heartbeat is one of the three
    const body = heartbeatBody({ hardware_uuid: device.hardwareUuid });
    for (let i = 0; i < 2; i += 1) expect((await heartbeat(server, device.apiKey, body)).status).toBe(200);

    const refused = await heartbeat(server, device.apiKey, body);
    expectError(refused, 429, 'too_many_requests');
    expect(refused.body?.message).toMatch(/sent heartbeats faster than this server allows; retry after \d+ s/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);

    const other = await enrolledDevice(server);
    expect((await heartbeat(server, other.apiKey, heartbeatBody({ hardware_uuid: other.hardwareUuid }))).status).toBe(200);
    expect((await server.showDevice(device.deviceId)).state).toBe('ACTIVE');
  });

  test('posture uploads beyond the request budget get 429 and nothing of them is stored', async () => {
    const server = await serve(['--rate-limit-postures', '2']);
    const device = await enrolledDevice(server);
    expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
    expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
    const refused = await postures(server, device.apiKey, { results: [result({ check_key: 'REFUSED' })] });
    expectError(refused, 429, 'too_many_requests');
    expect(refused.body?.message).toMatch(/sent posture uploads faster/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const stored = (await server.showDevice(device.deviceId)).postures;
    expect(stored).toHaveLength(2);
    expect(stored.some((p) => p.check_key === 'REFUSED')).toBe(false);
  });

  test('posture bytes beyond the byte budget get 429 (the 822 MiB-in-8-s case)', async () => {
    const server = await serve(['--rate-limit-posture-mib', '1']);
    const device = await enrolledDevice(server);
    // ~600 KB each: 100 results with 6 KB of evidence.
    const big = { results: Array.from({ length: 100 }, () => result({ evidence: { note: 'x'.repeat(6_000) } })) };
    expect((await postures(server, device.apiKey, big)).status).toBe(204);
    const refused = await postures(server, device.apiKey, big);
    expectError(refused, 429, 'too_many_requests');
    expect(refused.body?.message).toMatch(/sent posture data faster/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await server.showDevice(device.deviceId)).postures).toHaveLength(100);
  });

  test('small uploads cost what they declare; a chunked upload (no Content-Length) costs the whole 1 MiB limit', async () => {
    const server = await serve(['--rate-limit-posture-mib', '1']);
    const small = await enrolledDevice(server);
    for (let i = 0; i < 3; i += 1) expect((await postures(server, small.apiKey, { results: [result()] })).status).toBe(204);

    const chunked = await enrolledDevice(server);
    const body = JSON.stringify({ results: [result()] });
    const stream = () => Readable.from([Buffer.from(body)]);
    const first = await call(server, ROUTES.postures, {
      apiKey: chunked.apiKey,
      raw: stream(),
      headers: { 'content-type': 'application/json' },
    });
    expect(first.status, first.text).toBe(204);
    expectError(
      await call(server, ROUTES.postures, {
        apiKey: chunked.apiKey,
        raw: stream(),
        headers: { 'content-type': 'application/json' },
      }),
      429,
      'too_many_requests',
    );
  });

  test('device page links beyond the budget get 429 with Retry-After and store no code; the default is 6 a minute', async () => {
    const server = await serve(['--rate-limit-device-pages', '2']);
    const device = await enrolledDevice(server);
    const link = () => call(server, DEVICE_PAGE_ROUTE, { apiKey: device.apiKey, json: {} });
    for (let i = 0; i < 2; i += 1) expect((await link()).status).toBe(200);
    const refused = await link();
    expectError(refused, 429, 'too_many_requests');
    expect(refused.body?.message).toMatch(/sent device page requests faster than this server allows; retry after \d+ s/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await codesStored(server)).toBe(2);
    const other = await enrolledDevice(server);
    expect((await call(server, DEVICE_PAGE_ROUTE, { apiKey: other.apiKey, json: {} })).status).toBe(200);

    // The default: six in a row pass, the seventh waits.
    const defaults = await serve([]);
    const user = await enrolledDevice(defaults);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await call(defaults, DEVICE_PAGE_ROUTE, { apiKey: user.apiKey, json: {} })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  test('an agent daemon on a 1 s schedule never meets the default limits', async () => {
    // Each request's line is logged at debug.
    const server = await serve(['--heartbeat-interval', '1', '--posture-interval', '1', '--log-level', 'debug']);
    const stateDir = await makeStateDir();
    try {
      await enrollWithToken(stateDir, server.url, (await server.createDevice()).enrollment_token);
      const daemon = startDaemon(stateDir);
      // What about 8 s of this schedule sends, however long a busy machine takes for it; a 429 ends the wait.
      const count = (statuses: (number | undefined)[], status: number) => statuses.filter((logged) => logged === status).length;
      await until(
        () => statusesLogged(server),
        (statuses) => statuses.includes(429) || (count(statuses, 200) >= 8 && count(statuses, 204) >= 1),
        150_000,
        '8 heartbeats and a posture upload',
      );
      expect((await stopDaemon(daemon)).code).toBe(0);
    } finally {
      await removeStateDir(stateDir);
    }
    expect(statusesLogged(server)).not.toContain(429);
  }, 240_000);
});

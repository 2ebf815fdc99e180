// What `serve` keeps in memory between requests (src/server/deviceCache.ts, heartbeatBatch.ts)
// never changes what the database says: a revocation committed by the admin CLI in another process
// is refused on the very next request although the key was served from the cache until then; a
// state change is written before it is answered (it survives a SIGKILL right after its answer);
// a repeated heartbeat's last_seen_at is written within a second, and whatever is pending at
// SIGTERM is written before the server exits.
import { afterEach, describe, expect, test } from 'vitest';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROUTES } from '../../src/protocol/schemas';
import { startServer, type RunningServer } from '../support/server';
import { enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result, type EnrolledDevice } from './client';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.crash();
});

async function serve(dbPath?: string): Promise<RunningServer> {
  const server = await startServer({ dbPath });
  servers.push(server);
  return server;
}

/** A heartbeat that repeats what the device reported before: the kind the server batches. */
async function repeatedHeartbeat(server: RunningServer, device: EnrolledDevice): Promise<string> {
  const answer = await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid, hostname: 'test-host' }));
  expect(answer.status, answer.text).toBe(200);
  return String(answer.body?.server_time);
}

describe('the device cache', () => {
  test('a revocation by the admin CLI (another process) is refused on the very next request, with the cache warm', async () => {
    const server = await serve();
    const device = await enrolledDevice(server);
    const other = await enrolledDevice(server);
    // Warm: the key has been authenticated (and cached) by several requests of each route.
    for (let i = 0; i < 3; i += 1) {
      await repeatedHeartbeat(server, device);
      expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
    }
    await repeatedHeartbeat(server, other);

    await server.revokeDevice(device.deviceId);

    expectError(await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid })), 401, 'unauthorized');
    expectError(await postures(server, device.apiKey, { results: [result()] }), 401, 'unauthorized');
    // Another device's key still works (read again from the database).
    await repeatedHeartbeat(server, other);
    expect((await server.showDevice(device.deviceId)).state).toBe('REVOKED');
  });
});

describe('heartbeat writes', () => {
  test("a repeated heartbeat's last_seen_at is in the database within one second of its answer", async () => {
    const server = await serve();
    const device = await enrolledDevice(server);
    await repeatedHeartbeat(server, device);
    const serverTime = await repeatedHeartbeat(server, device);
    await sleep(1_000);
    expect((await server.showDevice(device.deviceId)).last_seen_at).toBe(serverTime);
  });

  test("a stored posture upload's last_seen_at is in the database within one second of its answer", async () => {
    const server = await serve();
    const device = await enrolledDevice(server);
    const heartbeatTime = await repeatedHeartbeat(server, device);
    await sleep(20);
    const before = new Date().toISOString();
    expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
    const after = new Date().toISOString();
    await sleep(1_000);
    const lastSeen = String((await server.showDevice(device.deviceId)).last_seen_at);
    expect(lastSeen > heartbeatTime).toBe(true);
    expect(lastSeen >= before && lastSeen <= after).toBe(true);
  });

  test('a heartbeat still pending at SIGTERM is written before the server exits', async () => {
    const server = await serve();
    const device = await enrolledDevice(server);
    await repeatedHeartbeat(server, device);
    // The last heartbeat is in flight when SIGTERM comes: its headers before, its body after, so the
    // server accepts it while draining, moments before it closes the database.
    const body = JSON.stringify(heartbeatBody({ hardware_uuid: device.hardwareUuid, hostname: 'test-host' }));
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    socket.write(
      `POST ${ROUTES.heartbeat} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${device.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
    );
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    const closed = once(socket, 'close');
    const stopped = server.stop();
    await sleep(500);
    // write, not end: a client that half-closes its side is answered only if the handler finishes in
    // the same turn (node:http aborts the request on the client's FIN), which a database engine with
    // network round trips does not.
    socket.write(body);
    await closed;
    await stopped;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    const serverTime = (JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { server_time: string }).server_time;
    expect((await server.showDevice(device.deviceId)).last_seen_at).toBe(serverTime);
  });

  test('state changes are written before they are answered: they survive a SIGKILL right after the answer', async () => {
    const first = await serve();
    const [activated, renamed, taken, conflicting] = await Promise.all([
      enrolledDevice(first, { activate: false }),
      enrolledDevice(first),
      enrolledDevice(first),
      enrolledDevice(first, { activate: false }),
    ]);
    await repeatedHeartbeat(first, renamed); // cached, so that the next one could have been batched

    const activation = await heartbeat(first, activated.apiKey, heartbeatBody({ hardware_uuid: activated.hardwareUuid }));
    expect(activation.status).toBe(200);
    const rename = await heartbeat(first, renamed.apiKey, heartbeatBody({ hardware_uuid: renamed.hardwareUuid, hostname: 'renamed' }));
    expect(rename.status).toBe(200);
    expectError(await heartbeat(first, conflicting.apiKey, heartbeatBody({ hardware_uuid: taken.hardwareUuid })), 409, 'conflict');
    await first.crash();

    expect(await first.showDevice(activated.deviceId)).toMatchObject({ state: 'ACTIVE', last_seen_at: activation.body?.server_time });
    expect(await first.showDevice(renamed.deviceId)).toMatchObject({ hostname: 'renamed', last_seen_at: rename.body?.server_time });
    expect(await first.showDevice(conflicting.deviceId)).toMatchObject({ state: 'PENDING', hardware_uuid: null });

    // The next server on the same database knows the new state: the renamed device's old attributes are a change again.
    const second = await serve(first.dbPath);
    const back = await heartbeat(second, renamed.apiKey, heartbeatBody({ hardware_uuid: renamed.hardwareUuid, hostname: 'test-host' }));
    expect(back.status).toBe(200);
    await second.crash();
    expect(await second.showDevice(renamed.deviceId)).toMatchObject({ hostname: 'test-host', last_seen_at: back.body?.server_time });
  });
});

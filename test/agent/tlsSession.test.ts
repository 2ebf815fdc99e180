// The agent's HTTP client (src/agent/client.ts) keeps the TLS session of its server's origin across
// heartbeats and never offers it to another origin: not to another server that shares the ticket
// keys and certificate (one deployment's other instance, or the server the device is enrolled with
// next), nor to the same server under another name. Real TLS servers on loopback with a throwaway
// CA, each closing the connection after every answer, as happens between heartbeats at the real
// cadence; each records whether the connection resumed a session.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/agent/client';
import { heartbeatBody } from '../server/client';
import { makeThrowawayCa, type ThrowawayCa } from './throwawayCa';

const API_KEY = 'a'.repeat(96);

interface RecordingServer {
  server: Server;
  port: number;
  /** Per heartbeat received: whether its connection resumed a session. */
  resumed: boolean[];
}

let ca: ThrowawayCa;
const servers: RecordingServer[] = [];
const clients: ApiClient[] = [];

/** A heartbeat endpoint on loopback; servers given the same `ticketKeys` can open each other's tickets. */
async function heartbeatServer(ticketKeys: Buffer): Promise<RecordingServer> {
  const resumed: boolean[] = [];
  const server = createServer({ cert: ca.cert, key: ca.key, ticketKeys }, (request, response) => {
    resumed.push((request.socket as TLSSocket).isSessionReused());
    request.resume().on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      response.end(
        JSON.stringify({
          device_id: 'dev_00000000000000000000000000000001',
          heartbeat_interval_seconds: 300,
          posture_interval_seconds: 3600,
          server_time: new Date().toISOString(),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const recording = { server, port: (server.address() as { port: number }).port, resumed };
  servers.push(recording);
  return recording;
}

function client(serverUrl: string): ApiClient {
  const api = createApiClient({ serverUrl, caFile: ca.caFile });
  clients.push(api);
  return api;
}

/** A session ticket from a raw TLS connection to `port`, or whether offering `session` there resumed. */
function handshake(port: number, session?: Buffer): Promise<{ reused: boolean; ticket?: Buffer }> {
  return new Promise((resolve, reject) => {
    let ticket: Buffer | undefined;
    let reused = false;
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(ca.caFile, 'utf8'), session });
    socket.on('session', (next: Buffer) => (ticket = next));
    socket.on('error', reject);
    socket.on('secureConnect', () => {
      reused = socket.isSessionReused();
      socket.end('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    });
    socket.on('close', () => resolve({ reused, ticket }));
    socket.resume();
  });
}

beforeAll(() => {
  ca = makeThrowawayCa();
});

afterAll(async () => {
  await Promise.all(clients.map((api) => api.close()));
  for (const { server } of servers) server.close();
});

describe('the TLS session of the server origin', () => {
  test('resumed across heartbeats on its origin, never offered to another server sharing the ticket keys', async () => {
    const deployment = randomBytes(48);
    const a = await heartbeatServer(deployment);
    const b = await heartbeatServer(deployment);
    // B would resume a session A issued: offering it is all that could make B skip the full handshake.
    const fromA = await handshake(a.port);
    expect(fromA.ticket).toBeDefined();
    expect((await handshake(b.port, fromA.ticket)).reused).toBe(true);
    a.resumed.length = 0;
    b.resumed.length = 0;

    const toA = client(`https://127.0.0.1:${a.port}`);
    await toA.heartbeat(API_KEY, heartbeatBody());
    await toA.heartbeat(API_KEY, heartbeatBody());
    expect(a.resumed).toEqual([false, true]);

    // The device enrolled with B next (or B is another instance of the deployment): a full handshake first.
    const toB = client(`https://127.0.0.1:${b.port}`);
    await toB.heartbeat(API_KEY, heartbeatBody());
    await toB.heartbeat(API_KEY, heartbeatBody());
    expect(b.resumed).toEqual([false, true]);

    // A's session is still A's: its next connection resumes.
    await toA.heartbeat(API_KEY, heartbeatBody());
    expect(a.resumed).toEqual([false, true, true]);
  });

  test('the same server under another name is another origin: a full handshake, then its own session', async () => {
    const server = await heartbeatServer(randomBytes(48));
    const byAddress = client(`https://127.0.0.1:${server.port}`);
    await byAddress.heartbeat(API_KEY, heartbeatBody());
    await byAddress.heartbeat(API_KEY, heartbeatBody());
    const byName = client(`https://localhost:${server.port}`);
    await byName.heartbeat(API_KEY, heartbeatBody());
    await byName.heartbeat(API_KEY, heartbeatBody());
    expect(server.resumed).toEqual([false, true, false, true]);
  });
});

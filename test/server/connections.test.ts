// Connection exhaustion against the real server: per-address and overall caps, idle deadlines,
// EMFILE. Connection counts stay small (caps set low) so that this runs in seconds on 2 cores.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Agent } from 'undici';
import { afterEach, describe, expect, test } from 'vitest';
import { logEntries, startServer, type LogEntry, type RunningServer } from '../support/server';
import { ROUTES } from '../../src/protocol/schemas';
import { makeThrowawayCa } from '../agent/throwawayCa';
import { call, enrolledDevice, heartbeatBody, type EnrolledDevice } from './client';

const servers: RunningServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(args: string[], openFileLimit?: number, tls?: { cert: string; key: string }): Promise<RunningServer> {
  const server = await startServer({ args, openFileLimit, tls });
  servers.push(server);
  return server;
}

/** An idle TCP connection from `localAddress` that sends nothing (as a half-open flood does). */
function idleConnection(server: RunningServer, localAddress: string): Promise<Socket> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    socket.resume(); // read the server's close
    sockets.push(socket);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

/** Resolves true when the server closes the socket within `ms`. */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  socket.on('error', () => undefined);
  return Promise.race([closed(socket).then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

function from(localAddress: string): Agent {
  return new Agent({ localAddress });
}

/** A heartbeat from `localAddress` (another loopback address than the flood's) gets 200. */
async function expectHeartbeatAnsweredFrom(localAddress: string, server: RunningServer, device: EnrolledDevice): Promise<void> {
  const dispatcher = from(localAddress);
  try {
    const answer = await call(server, ROUTES.heartbeat, {
      apiKey: device.apiKey,
      json: heartbeatBody({ hardware_uuid: device.hardwareUuid }),
      dispatcher,
    });
    expect(answer.status, answer.text).toBe(200);
  } finally {
    await dispatcher.close();
  }
}

function warnings(server: RunningServer, event: string): LogEntry[] {
  return logEntries(server.logs()).filter((entry) => entry.event === event);
}

async function waitFor(check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const FLOOD = '127.0.0.3';

describe('connection caps', () => {
  test('with the default caps, a flood of idle connections beyond the open-file limit from one address is logged and heartbeats from another are answered', async () => {
    // The reported 20,000 idle connections, scaled down: a 256 open-file limit and 300 connections.
    const server = await serve([], 256);
    const device = await enrolledDevice(server);
    await Promise.all(Array.from({ length: 300 }, () => idleConnection(server, FLOOD)));
    await expectHeartbeatAnsweredFrom('127.0.0.2', server, device);
    await waitFor(() => warnings(server, 'per_address_cap').length > 0);
    expect(warnings(server, 'per_address_cap')[0]).toMatchObject({ level: 'warn', address: FLOOD, cap: 128 });
  });

  test('one address at its cap gets its next connection closed and a warning; another address is still answered', async () => {
    // The flood comes from 127.0.0.3: the test's own keep-alive connection (enrollment) is 127.0.0.1's.
    const server = await serve(['--max-connections-per-address', '20']);
    const device = await enrolledDevice(server);
    const flood = await Promise.all(Array.from({ length: 20 }, () => idleConnection(server, FLOOD)));

    const refused = await idleConnection(server, FLOOD);
    expect(await closedWithin(refused, 3_000)).toBe(true);
    await waitFor(() => warnings(server, 'per_address_cap').length > 0);
    expect(warnings(server, 'per_address_cap')[0]).toMatchObject({ level: 'warn', address: FLOOD, cap: 20 });
    const same = from(FLOOD);
    try {
      await expect(
        call(server, ROUTES.heartbeat, {
          apiKey: device.apiKey,
          json: heartbeatBody({ hardware_uuid: device.hardwareUuid }),
          dispatcher: same,
        }),
      ).rejects.toThrow();
    } finally {
      await same.destroy();
    }

    await expectHeartbeatAnsweredFrom('127.0.0.2', server, device);
    // The flood's own connections are still open: the cap refuses new ones, it does not cut old ones.
    expect(flood.every((socket) => !socket.destroyed)).toBe(true);
  });

  test('at the overall cap the oldest idle connection makes room, so a heartbeat is still answered', async () => {
    const server = await serve(['--max-connections', '30', '--max-connections-per-address', '0']);
    const device = await enrolledDevice(server);
    const flood: Socket[] = [];
    for (let i = 0; i < 30; i += 1) flood.push(await idleConnection(server, '127.0.0.1'));

    await expectHeartbeatAnsweredFrom('127.0.0.2', server, device);
    expect(await closedWithin(flood[0]!, 3_000)).toBe(true);
    expect(flood.slice(-5).every((socket) => !socket.destroyed)).toBe(true);
    await waitFor(() => warnings(server, 'idle_evicted').length > 0);
    expect(warnings(server, 'idle_evicted')[0]).toMatchObject({ level: 'warn', cap: 30 });
  });

  test('a connection that sends no request is closed after the 10 s header deadline', async () => {
    const server = await serve([]);
    const silent = await idleConnection(server, '127.0.0.1');
    const started = Date.now();
    expect(await closedWithin(silent, 14_000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(8_000);
  });

  test('a --max-connections above the open-file limit is lowered to fit it, so a flood never meets EMFILE and heartbeats are answered', async () => {
    const server = await serve(['--max-connections', '100000', '--max-connections-per-address', '0'], 128);
    const device = await enrolledDevice(server);
    const lowered = server
      .logs()
      .split('\n')
      .filter((line) => line.includes('does not fit the open-file limit'));
    expect(lowered).toHaveLength(1);
    expect(JSON.parse(lowered[0]!)).toMatchObject({ level: 'warn', requested: 100000, open_file_limit: 128, max_connections: 64 });

    await Promise.all(Array.from({ length: 160 }, () => idleConnection(server, '127.0.0.1')));
    await expectHeartbeatAnsweredFrom('127.0.0.2', server, device);
    await waitFor(() => warnings(server, 'idle_evicted').length > 0);
  });
});

type Transport = 'http' | 'https';

/** A server on `transport`, and how to open a connection to it that is open (TLS: handshake done). */
async function serveOver(transport: Transport, args: string[]): Promise<{ server: RunningServer; open: () => Promise<Socket> }> {
  const ca = transport === 'https' ? makeThrowawayCa() : undefined;
  const server = await serve(args, undefined, ca);
  const { hostname, port } = new URL(server.url);
  const trusted = ca && [readFileSync(ca.caFile, 'utf8')];
  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = trusted
        ? tlsConnect({ host: hostname, port: Number(port), ca: trusted }, () => resolve(socket))
        : connect({ host: hostname, port: Number(port) }, () => resolve(socket));
      socket.setEncoding('utf8');
      socket.on('error', reject);
      sockets.push(socket);
    });
  return { server, open };
}

/** Resolves with what arrived once `text` has (the server answers on `socket`). */
function received(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: string) => {
      seen += chunk;
      if (seen.includes(text)) {
        socket.off('data', onData);
        resolve(seen);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before ${JSON.stringify(text)} arrived: ${JSON.stringify(seen)}`)));
  });
}

/**
 * A request in flight on `socket`: its headers, and a body that has not come yet. With
 * `Expect: 100-continue` the server answers 100 Continue as it starts the request, so once that
 * arrives the server has taken the request.
 */
async function requestInFlight(socket: Socket): Promise<void> {
  const arrived = received(socket, '100 Continue');
  socket.write(
    `POST ${ROUTES.enroll} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`,
  );
  await arrived;
}

describe.each<Transport>(['http', 'https'])('the overall cap over %s', (transport) => {
  test('a connection with a request in flight is never closed to make room; one whose request was answered is', async () => {
    const { server, open } = await serveOver(transport, ['--max-connections', '3', '--max-connections-per-address', '0']);
    const busy = await Promise.all([open(), open(), open()]);
    for (const socket of busy) await requestInFlight(socket);

    // Every connection busy: the new one is refused, and none of the busy ones is cut.
    const refused = await open().catch(() => undefined);
    if (refused) expect(await closedWithin(refused, 10_000)).toBe(true);
    await waitFor(() => warnings(server, 'total_cap').length > 0);
    expect(warnings(server, 'total_cap')[0]).toMatchObject({ level: 'warn', cap: 3 });
    expect(busy.every((socket) => !socket.destroyed)).toBe(true);

    // The middle one's request is answered (400: no token) and its connection is idle: it makes room.
    const answered = received(busy[1], '\r\n\r\n{');
    busy[1].write('{}');
    expect(await answered).toContain('400 Bad Request');
    const next = await open();
    expect(await closedWithin(busy[1], 10_000)).toBe(true);
    await requestInFlight(next);
    expect([busy[0], busy[2], next].every((socket) => !socket.destroyed)).toBe(true);
  });
});

test('over TLS, a closed connection frees its place under the per-address cap', async () => {
  const { server, open } = await serveOver('https', ['--max-connections-per-address', '3']);
  for (let i = 0; i < 10; i += 1) {
    const socket = await open();
    const answer = received(socket, '{"status":"ok"}');
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await answer;
    await closed(socket);
  }
  expect(warnings(server, 'per_address_cap')).toEqual([]);
});

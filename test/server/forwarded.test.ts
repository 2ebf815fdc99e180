// `serve --trust-proxy`: behind a TLS-terminating proxy the per-address cap applies to the agent's
// address from X-Forwarded-For, and that header is believed only on connections from the proxy.
// Two loopback addresses play the parts: 127.0.0.2 is the configured proxy, 127.0.0.1 is not.
import { connect, type Socket } from 'node:net';
import { describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { startServer, tryServerCli, type RunningServer } from '../support/server';
import { expectUsageError } from './client';

const PROXY = '127.0.0.2';
const NOT_PROXY = '127.0.0.1';

interface Exchange {
  socket: Socket;
  /** Everything the server sent until it closed the connection. */
  answer: Promise<string>;
}

function open(server: RunningServer, localAddress: string, text: string): Promise<Exchange> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let received = '';
    const answer = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.once('error', () => undefined); // a refused connection shows as an empty answer
    socket.once('connect', () => {
      socket.write(text.replaceAll('{host}', `${hostname}:${port}`));
      resolve({ socket, answer });
    });
    socket.once('error', reject);
  });
}

const health = (forwardedFor: string) =>
  `GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Forwarded-For: ${forwardedFor}\r\nConnection: close\r\n\r\n`;
/** A heartbeat without credentials, as agents send it (the direct path's shape, src/server/agentRoute.ts). */
const heartbeat = (forwardedFor: string) =>
  `POST ${ROUTES.heartbeat} HTTP/1.1\r\nHost: {host}\r\nX-Forwarded-For: ${forwardedFor}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
/** Headers complete, body never sent: the request stays in flight. */
const stalled = (forwardedFor: string) =>
  `POST ${ROUTES.enroll} HTTP/1.1\r\nHost: {host}\r\nX-Forwarded-For: ${forwardedFor}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`;
const statusOf = (answer: string) => /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'closed';

describe('--trust-proxy', () => {
  test('requests through the proxy are capped per forwarded agent address; X-Forwarded-For from anyone else is ignored', async () => {
    const server = await startServer({ args: ['--trust-proxy', `${PROXY},10.0.0.0/8`, '--max-connections-per-address', '2'] });
    const held: Socket[] = [];
    try {
      // The proxy holds more connections than the per-address cap: they carry many agents.
      for (let i = 0; i < 2; i++) held.push((await open(server, PROXY, stalled('203.0.113.7'))).socket);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // 203.0.113.7 has two requests in flight through the proxy: a third is refused, another agent is not.
      const third = await open(server, PROXY, health('203.0.113.7'));
      const refused = await third.answer;
      expect(statusOf(refused)).toBe('429');
      expect(refused.toLowerCase()).toContain('retry-after: 1');
      expect(statusOf(await (await open(server, PROXY, health('198.51.100.1'))).answer)).toBe('200');
      // The agent's address is the last one the proxy did not add (a client cannot pose as another by prepending).
      expect(statusOf(await (await open(server, PROXY, health('198.51.100.9, 203.0.113.7'))).answer)).toBe('429');
      expect(statusOf(await (await open(server, PROXY, health('203.0.113.7, 10.1.2.3'))).answer)).toBe('429');
      // The agent routes' requests through the proxy are capped alike (before authentication: a 401 otherwise).
      expect(statusOf(await (await open(server, PROXY, heartbeat('203.0.113.7'))).answer)).toBe('429');
      expect(statusOf(await (await open(server, PROXY, heartbeat('198.51.100.1'))).answer)).toBe('401');

      // Not the proxy: the header changes nothing, and the connection cap counts the real peer.
      const direct = [await open(server, NOT_PROXY, stalled('198.51.100.50')), await open(server, NOT_PROXY, stalled('198.51.100.51'))];
      held.push(...direct.map((exchange) => exchange.socket));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(statusOf(await (await open(server, NOT_PROXY, health('203.0.113.7'))).answer)).toBe('closed');
      for (const socket of held.splice(0)) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(statusOf(await (await open(server, NOT_PROXY, health('203.0.113.7'))).answer)).toBe('200');
    } finally {
      for (const socket of held) socket.destroy();
      await server.stop();
    }
  });

  test('a malformed list is a usage error', async () => {
    expectUsageError(
      await tryServerCli(['serve', '--db', ':memory:', '--trust-proxy', '127.0.0.1,not-an-address']),
      /--trust-proxy: "not-an-address" is not an IP address or CIDR range/,
    );
    expectUsageError(
      await tryServerCli(['serve', '--db', ':memory:', '--trust-proxy', '10.0.0.0/33']),
      /"10.0.0.0\/33" is not an IP address/,
    );
  });
});

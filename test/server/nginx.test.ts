// The reference server behind real nginx terminating TLS, configured with the block docs/server.md
// shows (scripts/bench/server/nginx.ts reads it from the page, as the benchmark does): requests pass
// over TLS, nginx keeps its upstream connection open, the server's per-address limits see each
// agent's own address, and X-Forwarded-For is believed from the configured proxy only.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchNginx, nginxConfig, type NginxSite, type RunningNginx } from '../../scripts/bench/server/nginx';
import { ROUTES } from '../../src/protocol/schemas';
import { ConsoleClient } from '../support/admin';
import { tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { startServer, type RunningServer } from '../support/server';
import { makeThrowawayCa } from '../agent/throwawayCa';

const behindNginx = requireTools(['nginx'], 'behind nginx terminating TLS (docs/server.md)');
const SIGN_INS_PER_MINUTE = 2;
/** Agents, each on its own loopback address; nginx (and so the configured proxy) is 127.0.0.1. */
const AGENT_A = '127.0.0.2';
const AGENT_B = '127.0.0.3';
/** Clients straight to the server, not through the proxy. */
const NOT_PROXY = '127.0.0.4';
const NOT_PROXY_EITHER = '127.0.0.5';

let server: RunningServer;
let nginx: RunningNginx | undefined;
let proxyUrl: string;
let ca: string;
const dispatchers: Agent[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A console user connecting from `localAddress`, through nginx (with the throwaway CA) or straight to the server. */
function consoleUser(localAddress: string, through: 'nginx' | 'direct'): ConsoleClient {
  // One connection per user: the server's per-address connection cap is 1.
  const dispatcher = new Agent({ localAddress, connections: 1, ...(through === 'nginx' ? { connect: { ca } } : {}) });
  dispatchers.push(dispatcher);
  return new ConsoleClient({ url: through === 'nginx' ? proxyUrl : server.url }, dispatcher);
}

/** The peer ports of the server's established TCP connections (from the kernel's table). */
function serverConnections(): number[] {
  const port = Number(new URL(server.url).port);
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, , state]) => state === '01' && local !== undefined && parseInt(local.split(':')[1]!, 16) === port)
    .map(([, , remote]) => parseInt(remote!.split(':')[1]!, 16));
}

/** One new TLS connection to nginx: GET /healthz, read to the end. */
function overTls(path = '/healthz'): Promise<{ protocol: string | null; fingerprint: string; response: string }> {
  const { port } = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    let response = '';
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), ca });
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    socket.on('error', reject);
    socket.on('secureConnect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: agents.example.com\r\nConnection: close\r\n\r\n`));
    socket.on('end', () => resolve({ protocol: socket.getProtocol(), fingerprint: socket.getPeerCertificate().fingerprint256, response }));
  });
}

/** A request straight to the server from `localAddress` whose body never comes: it stays in flight on an open connection. */
function heldRequest(localAddress: string, forwardedFor: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', reject);
    socket.once('connect', () => {
      // From here a refused connection shows as `closed`.
      socket.on('error', () => undefined);
      socket.write(
        `POST ${ROUTES.enroll} HTTP/1.1\r\nHost: ${hostname}\r\nX-Forwarded-For: ${forwardedFor}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      );
      resolve({ socket, closed });
    });
  });
}

const wrongPassword = (user: ConsoleClient, headers: Record<string, string> = {}) =>
  user.csrfToken().then((csrf) => user.post('/console/sign-in', { _csrf: csrf, email: 'nobody@example.com', password: 'wrong' }, headers));

describe.skipIf(behindNginx.skip)(behindNginx.title, () => {
  let certFingerprint: string;

  beforeAll(async () => {
    const throwaway = makeThrowawayCa();
    ca = readFileSync(throwaway.caFile, 'utf8');
    server = await startServer({
      args: ['--trust-proxy', '127.0.0.1', '--max-connections-per-address', '1', '--rate-limit-sign-ins', String(SIGN_INS_PER_MINUTE)],
    });
    // nginx's master runs as root here and reads the pair itself; its workers (nobody) need neither.
    const prefix = tempDir('device-agent-nginx-');
    const site: NginxSite = {
      port: await freePort(),
      upstreams: [new URL(server.url).host],
      certFile: join(prefix, 'cert.pem'),
      keyFile: join(prefix, 'key.pem'),
      prefix,
    };
    writeFileSync(site.certFile, throwaway.cert);
    writeFileSync(site.keyFile, throwaway.key, { mode: 0o600 });
    writeFileSync(join(prefix, 'nginx.conf'), nginxConfig(site));
    nginx = await launchNginx(site);
    proxyUrl = `https://127.0.0.1:${site.port}`;
    const { X509Certificate } = await import('node:crypto');
    certFingerprint = new X509Certificate(throwaway.cert).fingerprint256;
  });

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.close()));
    await server?.stop();
  });

  test('requests pass through over TLS, each agent connection on the one upstream connection nginx keeps open', async () => {
    const upstreamPorts = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const { protocol, fingerprint, response } = await overTls();
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      expect(protocol).toBe('TLSv1.3');
      expect(fingerprint).toBe(certFingerprint);
      // Between agent connections the server still holds nginx's connection open (keepalive upstream).
      const connections = serverConnections();
      expect(connections).toHaveLength(1);
      upstreamPorts.add(connections[0]!);
    }
    expect(upstreamPorts.size).toBe(1);
  });

  test('per-address limits count each agent by its own address, not the proxy', async () => {
    // Sign-in attempts are limited per client address: agent A's are spent, agent B behind the same
    // proxy still has its own. A's forged X-Forwarded-For is replaced by nginx.
    const agentA = consoleUser(AGENT_A, 'nginx');
    for (let i = 0; i < SIGN_INS_PER_MINUTE; i++)
      expect((await wrongPassword(agentA, { 'x-forwarded-for': `198.51.100.${i}` })).status).toBe(401);
    expect((await wrongPassword(agentA, { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429);
    expect((await wrongPassword(consoleUser(AGENT_B, 'nginx'))).status).toBe(401);

    // Requests in flight per agent address (--max-connections-per-address 1): a request of agent B
    // held by the proxy (its connection from 127.0.0.1 with the header nginx sets) fills B's cap, so
    // B's next one through nginx is refused while A's passes; the proxy's own connections, two now,
    // are not held to the per-address connection cap.
    const held = await heldRequest('127.0.0.1', AGENT_B);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = await consoleUser(AGENT_B, 'nginx').get('/healthz');
      expect([refused.status, refused.headers['retry-after']]).toEqual([429, '1']);
      expect(JSON.parse(refused.text)).toMatchObject({ message: '1 requests from this address are in flight; retry after 1 s' });
      expect((await consoleUser(AGENT_A, 'nginx').get('/healthz')).status).toBe(200);
    } finally {
      held.socket.destroy();
    }
  });

  test('X-Forwarded-For from a client that is not the configured proxy is not believed', async () => {
    // Straight to the server from another address: each attempt names a new address in the header,
    // yet they all count against the real peer's budget.
    const direct = consoleUser(NOT_PROXY, 'direct');
    for (let i = 0; i < SIGN_INS_PER_MINUTE; i++)
      expect((await wrongPassword(direct, { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401);
    expect((await wrongPassword(direct, { 'x-forwarded-for': '203.0.113.99' })).status).toBe(429);
    // Naming another agent does not draw on (or fill) that agent's limits: the cap counts the peer's own connections.
    // (From an address with no other connection open: the cap is 1.)
    const held = await heldRequest(NOT_PROXY_EITHER, AGENT_A);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const second = await heldRequest(NOT_PROXY_EITHER, AGENT_B);
      const outcome = await Promise.race([
        second.closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still open'), 3_000)),
      ]);
      second.socket.destroy();
      // Refused: the peer already has its one connection.
      expect(outcome).toBe('closed');
      expect((await consoleUser(AGENT_A, 'nginx').get('/healthz')).status).toBe(200);
    } finally {
      held.socket.destroy();
    }
  });
});

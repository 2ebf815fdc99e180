// The fleet over real TLS (issue 18): the reference server terminating TLS itself, with 20,000
// enrolled devices (keys round-robin, one posture upload of 9 results per 12 heartbeats), beside a
// bare node:https server with the same certificate answering the same JSON, in the same run:
//   full handshake per request · resumed session per request · keep-alive (upper bound)
//   · behind nginx terminating TLS (when nginx is installed), upstream keep-alive
// each with requests/s, p50/p99, server CPU and devices per process at 13 requests per device-hour.
// Then the share of resumed connections at the agent's cadence, compressed: the agent's own HTTP
// client (src/agent/client.ts) heartbeating on the interval the server hands out.
//   npm run build && npx tsx scripts/bench/tls.ts
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=32 BENCH_DEVICES=20000 npx tsx scripts/bench/tls.ts
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { createApiClient } from '../../src/agent/client';
import { ROUTES } from '../../src/protocol/schemas';
import { CHECKS, heartbeatRequest, provisionTokens } from './server/harness';
import { nginxConfig } from './server/nginx';
import { runLoad, type FleetRequest, type LoadResult, type Transport } from './tlsLoad';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const SERVER_BIN = fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));
/** At the default cadence a device sends 12 heartbeats (300 s) and 1 posture upload (3,600 s) an hour. */
const REQUESTS_PER_DEVICE_HOUR = 13;
const CLOCK_TICKS = 100;

/** The baseline: node:https with the same certificate, parsing the body and answering the same JSON. */
const BARE_HTTPS = `
const https = require('node:https');
const fs = require('node:fs');
const server = https.createServer({ cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) }, (req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.headers.authorization) return res.writeHead(404).end();
    JSON.parse(body);
    if (req.url === '${ROUTES.postures}') return res.writeHead(204).end();
    const answer = JSON.stringify({ device_id: 'dev_0f6f0c1d2e3a4b5c6d7e8f9012345678', heartbeat_interval_seconds: 300, posture_interval_seconds: 3600, server_time: new Date().toISOString() });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'https://127.0.0.1:' + server.address().port })));
`;

interface Device {
  apiKey: string;
  hardwareUuid: string;
}

interface Target {
  name: string;
  url: string;
  /** Processes whose CPU is the server's (nginx's master and worker, and its upstream). */
  pids: () => number[];
  sessions: Map<number, Buffer>;
}

async function main(): Promise<void> {
  if (!existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-tls-'));
  const children: ChildProcess[] = [];
  try {
    const { certFile, keyFile, cert } = makeCertificate(dir);
    const db = join(dir, 'server.db');
    process.stderr.write(`provisioning ${DEVICES} devices …\n`);
    // 100 more than the fleet: the cadence run enrolls its own agents.
    const tokens = await provisionTokens(dir, db, DEVICES + 100);
    const noLimits = ['--rate-limit-heartbeats', '0', '--rate-limit-postures', '0', '--rate-limit-posture-mib', '0'];
    const common = ['serve', '--db', db, '--host', '127.0.0.1', '--max-connections-per-address', '0', ...noLimits];
    const reference = await spawnServer(
      [...common, '--tls-cert', certFile, '--tls-key', keyFile],
      'https',
      join(dir, 'server.log'),
      children,
    );
    const bare = await spawnAnnouncing(['-e', BARE_HTTPS], join(dir, 'bare.log'), children, { CERT: certFile, KEY: keyFile });
    process.stderr.write(`enrolling ${DEVICES} devices over HTTPS …\n`);
    const devices = await enrollFleet(reference.url, cert, tokens);
    const fleet = fleetRequests(devices);

    const targets: Target[] = [
      { name: 'reference server', url: reference.url, pids: () => [reference.child.pid!], sessions: new Map() },
      { name: 'bare node:https', url: bare.url, pids: () => [bare.child.pid!], sessions: new Map() },
    ];
    const nginx = await startNginx(dir, certFile, keyFile, [...common, '--trust-proxy', '127.0.0.1'], children);
    if (nginx) targets.push(nginx);

    const rows: string[] = [];
    for (const transport of ['full', 'resume', 'keep-alive'] as Transport[]) {
      const results = new Map<string, { load: LoadResult; cpu: number }>();
      for (const target of targets) {
        process.stderr.write(`${transport}: ${target.name} …\n`);
        results.set(target.name, await measure(target, transport, fleet, cert));
      }
      const baseline = results.get('bare node:https')!;
      for (const [name, { load, cpu }] of results) {
        rows.push(
          [
            transport.padEnd(10),
            name.padEnd(34),
            `${Math.round(load.perSecond).toLocaleString('en-US').padStart(7)} req/s`,
            `${(load.perSecond / baseline.load.perSecond).toFixed(2)}×`.padStart(6),
            `p50 ${load.p50Ms.toFixed(1).padStart(5)} ms`,
            `p99 ${load.p99Ms.toFixed(1).padStart(6)} ms`,
            `CPU ${Math.round(cpu * 100)
              .toString()
              .padStart(3)} %`,
            `resumed ${Math.round(load.resumedShare * 100)
              .toString()
              .padStart(3)} %`,
            `client CPU ${Math.round(load.clientCpu * 100)
              .toString()
              .padStart(3)} %`,
            `errors ${load.errors}`,
            `${((load.perSecond * 3600) / REQUESTS_PER_DEVICE_HOUR / 1e6).toFixed(2)} M devices/process`,
            `server ${((cpu / load.perSecond) * 1000).toFixed(2)} ms CPU/request`,
            `→ ${(3600 / REQUESTS_PER_DEVICE_HOUR / (cpu / load.perSecond) / 1e6).toFixed(2)} M devices per busy core`,
          ].join('  '),
        );
      }
    }

    process.stderr.write('cadence: agents on the schedule the server hands out, compressed …\n');
    const cadence = await cadenceShare(dir, db, certFile, keyFile, children, cert, tokens.slice(devices.length));

    console.log(
      [
        `device-agent-server over TLS — ${DEVICES.toLocaleString('en-US')} enrolled devices, keys round-robin, 1 posture upload (9 results) per 12 heartbeats;`,
        `${CONNECTIONS} concurrent clients, ${SECONDS} s per row, client in one Node process on the same machine; ${machine()}`,
        `ratio: against bare node:https (same certificate, same JSON) in the same run; CPU: server processes, share of one core;`,
        `devices/process: requests/s × 3600 / ${REQUESTS_PER_DEVICE_HOUR} (12 heartbeats + 1 posture upload per device-hour);`,
        `devices per busy core: the same from the server's CPU time per request, for a machine shared with other load (client CPU near 100 %, or server and client CPU far below it, mean the run measured the machine, not the server)`,
        ...(nginx ? [] : ['(nginx not installed: no row behind nginx)']),
        '',
        ...rows,
        '',
        cadence,
      ].join('\n'),
    );
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  target: Target,
  transport: Transport,
  fleet: FleetRequest[],
  ca: string,
): Promise<{ load: LoadResult; cpu: number }> {
  const before = cpuSeconds(target.pids());
  const startedAt = performance.now();
  const load = await runLoad({
    url: target.url,
    ca,
    request: (index) => fleet[index % fleet.length]!,
    connections: CONNECTIONS,
    durationMs: SECONDS * 1000,
    transport,
    sessions: target.sessions,
  });
  const wall = (performance.now() - startedAt) / 1000;
  return { load, cpu: (cpuSeconds(target.pids()) - before) / wall };
}

/** user + system CPU seconds of these processes, from /proc. */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / CLOCK_TICKS;
}

function makeCertificate(dir: string): { certFile: string; keyFile: string; cert: string } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=localhost'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]),
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}

/** Each device enrolled through POST /enroll and activated by a heartbeat with its own hardware_uuid. */
async function enrollFleet(url: string, ca: string, tokens: string[]): Promise<Device[]> {
  const dispatcher = new Agent({ connect: { ca }, connections: 16 });
  const devices: Device[] = new Array<Device>(DEVICES);
  let next = 0;
  const post = async (path: string, body: unknown, apiKey?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const answer = await request(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`${path} answered ${answer.statusCode}: ${text}`);
    return JSON.parse(text) as { api_key?: string };
  };
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < DEVICES) {
        const index = next++;
        const enrolled = await post(ROUTES.enroll, { token: tokens[index] });
        const device = { apiKey: String(enrolled.api_key), hardwareUuid: `bench-hw-${index.toString().padStart(8, '0')}` };
        await post(ROUTES.heartbeat, heartbeatRequest(device), device.apiKey);
        devices[index] = device;
      }
    }),
  );
  await dispatcher.close();
  return devices;
}

/** The fleet's requests in order: devices round-robin, every 13th request a posture upload of 9 results. */
function fleetRequests(devices: Device[]): FleetRequest[] {
  return devices.map((device, index) => {
    const posture = index % REQUESTS_PER_DEVICE_HOUR === REQUESTS_PER_DEVICE_HOUR - 1;
    const observedAt = new Date().toISOString();
    const body = JSON.stringify(
      posture
        ? {
            results: CHECKS.map((check_key, i) => ({
              check_key,
              status: i === 3 ? 'FAIL' : 'PASS',
              evidence: { source: 'bench', detail: `result ${i}` },
              observed_at: observedAt,
            })),
          }
        : heartbeatRequest(device),
    );
    const path = posture ? ROUTES.postures : ROUTES.heartbeat;
    const head = [
      `POST ${path} HTTP/1.1`,
      'Host: localhost',
      `Authorization: Bearer ${device.apiKey}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
    ].join('\r\n');
    return { head, body };
  });
}

/**
 * Spawns a process whose output goes to a file; waits for the URL it announces, or (the server at
 * --log-level warn announces nothing) for GET /healthz at `url` to answer.
 */
async function spawnAnnouncing(
  args: string[],
  logFile: string,
  children: ChildProcess[],
  env: NodeJS.ProcessEnv = {},
  url?: string,
): Promise<{ child: ChildProcess; url: string }> {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
  children.push(child);
  closeSync(fd);
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  try {
    for (let waited = 0; waited < 15_000; waited += 50) {
      if (url !== undefined) {
        const answered = await request(`${url}/healthz`, { dispatcher: insecure }).then(
          (answer) => answer.body.text().then(() => true),
          () => false,
        );
        if (answered) return { child, url };
      } else {
        const line = readFileSync(logFile, 'utf8')
          .split('\n')
          .find((l) => l.includes('"url"'));
        if (line) return { child, url: (JSON.parse(line) as { url: string }).url };
      }
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await insecure.close();
  }
  throw new Error(`${args.join(' ')} did not start:\n${readFileSync(logFile, 'utf8')}`);
}

/** `serve` on a free port, at --log-level warn (no per-request log line: this measures the wire). */
async function spawnServer(serveArgs: string[], scheme: 'http' | 'https', logFile: string, children: ChildProcess[]) {
  const port = await freePort();
  return spawnAnnouncing(
    [SERVER_BIN, ...serveArgs, '--port', String(port), '--log-level', 'warn'],
    logFile,
    children,
    {},
    `${scheme}://127.0.0.1:${port}`,
  );
}

/**
 * nginx terminating TLS in front of a plain-HTTP reference server (on the same database), with
 * keep-alive upstream connections and the client address forwarded: the configuration of
 * docs/server.md. Undefined when nginx is not installed.
 */
async function startNginx(
  dir: string,
  certFile: string,
  keyFile: string,
  serveArgs: string[],
  children: ChildProcess[],
): Promise<Target | undefined> {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const upstream = await spawnServer(serveArgs, 'http', join(dir, 'upstream.log'), children);
  const port = await freePort();
  const upstreamAddress = new URL(upstream.url).host;
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig({ port, upstreams: [upstreamAddress], certFile, keyFile, prefix: dir }));
  const nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  children.push(nginx);
  const url = `https://127.0.0.1:${port}`;
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  for (let waited = 0; ; waited += 100) {
    try {
      await request(`${url}/healthz`, { dispatcher: insecure }).then((answer) => answer.body.text());
      break;
    } catch (error) {
      if (waited > 10_000 || nginx.exitCode !== null) throw new Error(`nginx did not start: ${(error as Error).message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await insecure.close();
  const nginxPids = () =>
    execFileSync('pgrep', ['-P', String(nginx.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  return {
    name: 'reference server behind nginx',
    url,
    pids: () => [nginx.pid!, ...nginxPids(), upstream.child.pid!],
    sessions: new Map(),
  };
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The share of heartbeats that resume a TLS session when agents follow the schedule the server
 * hands out, compressed: heartbeat 6 s and posture 12 s (so tickets live 24 s), ticket keys rotated
 * every 10 s instead of daily; each agent uses the agent's own API client, and its connection is
 * closed by the server between heartbeats (5 s keep-alive timeout) as at the real cadence.
 */
async function cadenceShare(
  dir: string,
  db: string,
  certFile: string,
  keyFile: string,
  children: ChildProcess[],
  ca: string,
  tokens: string[],
): Promise<string> {
  const AGENTS = 50;
  const ROUNDS = 5;
  const INTERVAL_MS = 6_000;
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca);
  const args = ['serve', '--db', db, '--host', '127.0.0.1', '--port', '0', '--tls-cert', certFile, '--tls-key', keyFile];
  const server = await spawnAnnouncing(
    [
      SERVER_BIN,
      ...args,
      '--heartbeat-interval',
      '6',
      '--posture-interval',
      '12',
      '--tls-ticket-key-rotation',
      '10s',
      '--tls-ticket-keys',
      join(dir, 'cadence-keys'),
      // The per-request lines (debug) say whether each connection resumed a session.
      '--log-level',
      'debug',
    ],
    join(dir, 'cadence.log'),
    children,
  );
  const clients = tokens.slice(0, AGENTS).map(() => createApiClient({ serverUrl: server.url, caFile }));
  const keys = await Promise.all(clients.map(async (client, i) => (await client.enroll(tokens[i]!)).api_key));
  for (let round = 0; round < ROUNDS; round += 1) {
    await Promise.all(clients.map((client, i) => client.heartbeat(keys[i]!, heartbeatRequest({ hardwareUuid: `cadence-${i}` }))));
    // Longer than the server's 5 s keep-alive timeout: each heartbeat comes on a new connection, as at the real cadence.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
  }
  await Promise.all(clients.map((client) => client.close()));
  const lines = readFileSync(join(dir, 'cadence.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"path":"/api/agent/v1/heartbeat"'))
    .map((line) => JSON.parse(line) as { tls_resumed?: boolean; device_id?: string });
  // Each agent's first heartbeat follows its enrollment on the same connection (a full handshake);
  // every later one comes on a new connection.
  const seen = new Set<string>();
  const later = lines.filter((line) => {
    const first = !seen.has(String(line.device_id));
    seen.add(String(line.device_id));
    return !first;
  });
  const resumed = later.filter((line) => line.tls_resumed === true).length;
  return [
    `cadence: ${AGENTS} agents (the agent's own client) × ${ROUNDS} heartbeats, every ${INTERVAL_MS / 1000} s as handed out, ticket keys rotated every 10 s:`,
    `  ${resumed} of the ${later.length} heartbeats after each agent's first resumed a TLS session (${((resumed / later.length) * 100).toFixed(1)} %)`,
  ].join('\n');
}

function machine(): string {
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  return `Node ${process.version}, ${availableParallelism()} × ${cpus()[0]?.model.trim() ?? 'CPU'}, load average ${load} at the end`;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

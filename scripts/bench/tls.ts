// The fleet over real TLS (issue 18), the `tls` section of `npm run bench:fleet`: the reference
// server terminating TLS itself, with 20,000 enrolled devices (keys round-robin, one posture upload
// of 9 results per 12 heartbeats), beside a bare node:https server with the same certificate
// answering the same JSON, in the same run:
//   full handshake per request · resumed session per request · keep-alive (upper bound)
//   · behind nginx terminating TLS (when nginx is installed), upstream keep-alive
// each with requests/s, p50/p99, server CPU and devices per process at 13 requests per device-hour.
// Then the share of resumed connections at the agent's cadence, compressed: the agent's own HTTP
// client (src/agent/client.ts) heartbeating on the interval the server hands out.
//   BENCH_SECTIONS=tls BENCH_SECONDS=10 BENCH_CONNECTIONS=32 BENCH_DEVICES=20000 npm run bench:fleet
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../src/agent/client';
import { ROUTES } from '../../src/protocol/schemas';
import {
  CHECKS,
  enrollFleet,
  heartbeatRequest,
  machine,
  makeCertificate,
  processUsage,
  provisionTokens,
  spawnBare,
  spawnReference,
  stop,
  type Device,
  type Spawned,
} from './server/harness';
import { launchNginx, nginxConfig, nginxInstalled } from './server/nginx';
import { runLoad, type FleetRequest, type LoadResult, type Transport } from './tlsLoad';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
/** At the default cadence a device sends 12 heartbeats (300 s) and 1 posture upload (3,600 s) an hour. */
const REQUESTS_PER_DEVICE_HOUR = 13;

interface Target {
  name: string;
  url: string;
  /** The server process (behind nginx: the upstream reference server). */
  pids: () => number[];
  /** nginx's master and worker, when the target is behind it: their CPU is reported apart. */
  proxyPids?: () => number[];
  sessions: Map<number, Buffer>;
}

/** The section's report: one row per transport and target, then the share resumed at the cadence. */
export async function tlsSection(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-tls-'));
  const children: ChildProcess[] = [];
  const spawned = async (server: Promise<Spawned>) => {
    const running = await server;
    children.push(running.child);
    return running;
  };
  try {
    const { certFile, keyFile, cert } = makeCertificate(dir);
    const db = join(dir, 'server.db');
    const reference = await spawned(spawnReference(dir, db, ['--tls-cert', certFile, '--tls-key', keyFile]));
    const bare = await spawned(spawnBare(dir, { certFile, keyFile }));
    process.stderr.write(`tls: enrolling ${DEVICES} devices over HTTPS …\n`);
    const devices = await enrollFleet(dir, reference.url, db, DEVICES, cert);
    const fleet = fleetRequests(devices);

    const targets: Target[] = [
      { name: 'reference server', url: reference.url, pids: () => [reference.child.pid!], sessions: new Map() },
      { name: 'bare node:https', url: bare.url, pids: () => [bare.child.pid!], sessions: new Map() },
    ];
    const nginx = await startNginx(dir, certFile, keyFile, db, children);
    if (nginx) targets.push(nginx);

    const rows: string[] = [];
    for (const transport of ['full', 'resume', 'keep-alive'] as Transport[]) {
      const results = new Map<string, { load: LoadResult; cpu: number; proxyCpu?: number }>();
      for (const target of targets) {
        process.stderr.write(`${transport}: ${target.name} …\n`);
        results.set(target.name, await measure(target, transport, fleet, cert));
      }
      const baseline = results.get('bare node:https')!;
      for (const [name, { load, cpu, proxyCpu }] of results) {
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
            ...(proxyCpu === undefined ? [] : [`nginx CPU ${Math.round(proxyCpu * 100)} %`]),
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
    const cadence = await cadenceShare(dir, db, certFile, keyFile, children, cert);

    return [
      `device-agent-server over TLS — ${DEVICES.toLocaleString('en-US')} enrolled devices, keys round-robin, 1 posture upload (9 results) per 12 heartbeats;`,
      `${CONNECTIONS} concurrent clients, ${SECONDS} s per row, client in one Node process on the same machine; ${machine()} at the end`,
      `ratio: against bare node:https (same certificate, same JSON) in the same run; CPU: the server process (behind nginx: the upstream reference server, nginx's own apart), share of one core;`,
      `devices/process: requests/s × 3600 / ${REQUESTS_PER_DEVICE_HOUR} (12 heartbeats + 1 posture upload per device-hour);`,
      `devices per busy core: the same from the server's CPU time per request, for a machine shared with other load (client CPU near 100 %, or server and client CPU far below it, mean the run measured the machine, not the server)`,
      ...(nginx ? [] : ['(nginx not installed: no row behind nginx)']),
      '',
      ...rows,
      '',
      cadence,
    ].join('\n');
  } finally {
    await Promise.all(children.map((child) => stop(child)));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  target: Target,
  transport: Transport,
  fleet: FleetRequest[],
  ca: string,
): Promise<{ load: LoadResult; cpu: number; proxyCpu?: number }> {
  const cpuSeconds = (pids: number[]) => pids.reduce((sum, pid) => sum + processUsage(pid).cpuSeconds, 0);
  const before = cpuSeconds(target.pids());
  const proxyBefore = target.proxyPids && cpuSeconds(target.proxyPids());
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
  const proxyCpu = target.proxyPids && proxyBefore !== undefined ? (cpuSeconds(target.proxyPids()) - proxyBefore) / wall : undefined;
  return { load, cpu: (cpuSeconds(target.pids()) - before) / wall, proxyCpu };
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
 * nginx terminating TLS in front of a plain-HTTP reference server (on the same database), with
 * keep-alive upstream connections and the client address forwarded: the configuration of
 * docs/server.md. Undefined when nginx is not installed.
 */
async function startNginx(
  dir: string,
  certFile: string,
  keyFile: string,
  db: string,
  children: ChildProcess[],
): Promise<Target | undefined> {
  if (!nginxInstalled()) return undefined;
  const upstream = await spawnReference(dir, db, ['--trust-proxy', '127.0.0.1']);
  children.push(upstream.child);
  const site = { port: await freePort(), upstreams: [new URL(upstream.url).host], certFile, keyFile, prefix: dir };
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(site));
  const nginx = await launchNginx(site);
  children.push(nginx.child);
  return {
    name: 'reference server behind nginx',
    url: `https://127.0.0.1:${site.port}`,
    pids: () => [upstream.child.pid!],
    // The master: processUsage adds its workers.
    proxyPids: () => [nginx.child.pid!],
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
): Promise<string> {
  const AGENTS = 50;
  const ROUNDS = 5;
  const INTERVAL_MS = 6_000;
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca);
  const tokens = await provisionTokens(dir, db, AGENTS);
  const server = await spawnReference(dir, db, [
    '--tls-cert',
    certFile,
    '--tls-key',
    keyFile,
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
  ]);
  children.push(server.child);
  const clients = tokens.map(() => createApiClient({ serverUrl: server.url, caFile }));
  const keys = await Promise.all(clients.map(async (client, i) => (await client.enroll(tokens[i]!)).api_key));
  for (let round = 0; round < ROUNDS; round += 1) {
    await Promise.all(clients.map((client, i) => client.heartbeat(keys[i]!, heartbeatRequest({ hardwareUuid: `cadence-${i}` }))));
    // Longer than the server's 5 s keep-alive timeout: each heartbeat comes on a new connection, as at the real cadence.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
  }
  await Promise.all(clients.map((client) => client.close()));
  const lines = readFileSync(server.log, 'utf8')
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

// The fleet over real TLS (issue 18), the `tls` section of `npm run bench:fleet`: the reference
// server terminating TLS itself, with 20,000 enrolled devices (keys round-robin, one posture upload
// of 9 results per 12 heartbeats), beside a bare node:https server with the same certificate
// answering the same JSON, in the same run:
//   full handshake per request · resumed session per request · keep-alive (upper bound)
//   · behind nginx terminating TLS (when nginx is installed), upstream keep-alive
// The load comes from tlsload (C and OpenSSL, server/tlsload.c: a client that costs less per
// connection than the servers it measures, and that makes exactly the handshakes asked for; wrk
// resumes about half of its connections), each row run BENCH_REPEATS times with the targets in
// alternating order. Each row: requests/s, p50/p99, the server's CPU, the client's CPU, and the
// server's CPU per request against bare node:https's in the same repeat (median, and the spread).
// Then the share of resumed connections at the agent's cadence, compressed: the agent's own HTTP
// client (src/agent/client.ts) heartbeating on the interval the server hands out.
// BENCH_TLS_COMPARE=<another build's device-agent-server.cjs> adds it as a target (on its own copy
// of the fleet's database): a change measured before and after in the same run. BENCH_TLS_TOGETHER=1
// loads the targets at the same time rather than one after another.
//   BENCH_SECTIONS=tls BENCH_SECONDS=10 BENCH_CONNECTIONS=32 BENCH_DEVICES=20000 BENCH_REPEATS=3 npm run bench:fleet
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../src/agent/client';
import {
  REQUESTS_PER_DEVICE_HOUR,
  copyDatabase,
  enrollFleet,
  fleetRequests,
  heartbeatRequest,
  machine,
  makeCertificate,
  processUsage,
  provisionTokens,
  spawnBare,
  spawnReference,
  stop,
  type Spawned,
} from './server/harness';
import { launchNginx, nginxConfig, nginxInstalled } from './server/nginx';
import { buildTlsLoad, tlsLoad, type TlsLoadResult, type TlsTransport } from './server/tlsload';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const TRANSPORTS: TlsTransport[] = ['full', 'resume', 'keep-alive'];
const BASELINE = 'bare node:https';
const COMPARE = process.env.BENCH_TLS_COMPARE;
/**
 * BENCH_TLS_TOGETHER=1: each repeat loads every target at the same time, so that all meet the same
 * machine. On this project's two-core machine, one at a time, the same-repeat CPU ratio of one
 * build ranged over up to 54 percentage points in five repeats; together, over 9-15 with three
 * targets and 14-28 with four (nginx's row included): narrower, still wider than a small change.
 */
const TOGETHER = process.env.BENCH_TLS_TOGETHER === '1';

interface Target {
  name: string;
  url: string;
  /** Its fleet's requests (wrk.lua's format). */
  requestFile: string;
  /** The server process (behind nginx: the upstream reference server). */
  pids: () => number[];
  /** nginx's master and worker, when the target is behind it: their CPU is reported apart. */
  proxyPids?: () => number[];
}

interface Sample {
  load: TlsLoadResult;
  /** The server's CPU, share of one core. */
  cpu: number;
  proxyCpu?: number;
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
    const generator = await buildTlsLoad(dir);
    const { certFile, keyFile, cert } = makeCertificate(dir);
    const db = join(dir, 'server.db');
    const tlsArgs = ['--tls-cert', certFile, '--tls-key', keyFile];
    const enrolling = await spawned(spawnReference(dir, db, tlsArgs));
    const bare = await spawned(spawnBare(dir, { certFile, keyFile }));
    process.stderr.write(`tls: enrolling ${DEVICES} devices over HTTPS …\n`);
    const devices = await enrollFleet(dir, enrolling.url, db, DEVICES, cert);
    const requestFile = join(dir, 'requests.tsv');
    writeFileSync(requestFile, `${fleetRequests(devices).join('\n')}\n`, { mode: 0o600 });
    // Each server process measured gets its own copy of the fleet: the writes of a process sharing
    // the database would empty another's device cache between its rows.
    const copyOfFleet = (name: string) => {
      const copy = join(dir, `${name}.db`);
      copyDatabase(db, copy);
      return copy;
    };

    // Every reference server measured is a fresh process on its own copy of the fleet, as the
    // compared build is: the process that enrolled the fleet carries that work's state (heap,
    // caches, WAL), and was slower than a fresh one of the same build.
    await stop(enrolling.child);
    const reference = await spawned(spawnReference(dir, copyOfFleet('reference'), tlsArgs));
    const targets: Target[] = [
      { name: 'reference server', url: reference.url, requestFile, pids: () => [reference.child.pid!] },
      { name: BASELINE, url: bare.url, requestFile, pids: () => [bare.child.pid!] },
    ];
    if (COMPARE !== undefined) {
      const compared = await spawned(spawnReference(dir, copyOfFleet('compared'), tlsArgs, [], COMPARE));
      targets.push({ name: 'reference, compared build', url: compared.url, requestFile, pids: () => [compared.child.pid!] });
    }
    const nginx = await startNginx(dir, certFile, keyFile, copyOfFleet('upstream'), requestFile, children);
    if (nginx) targets.push(nginx);
    const startedOn = machine();

    const run = (target: Target, transport: TlsTransport, seconds = SECONDS) =>
      measure(target, () =>
        tlsLoad(generator, { url: target.url, requestFile: target.requestFile, transport, connections: CONNECTIONS, seconds }),
      );
    // The steady state of a fleet: every device seen once (the server's device cache holds them all), code optimized.
    for (const target of targets) {
      process.stderr.write(`warm-up: ${target.name} …\n`);
      for (let served = 0, runs = 0; served < DEVICES && runs < 10; runs += 1) served += (await run(target, 'keep-alive', 5)).load.requests;
    }
    const samples = new Map<string, Sample[]>();
    for (let repeat = 0; repeat < REPEATS; repeat += 1) {
      for (const transport of TRANSPORTS) {
        const order = repeat % 2 === 0 ? targets : [...targets].reverse();
        const record = (target: Target, sample: Sample) => {
          const key = `${transport}|${target.name}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        };
        if (TOGETHER) {
          process.stderr.write(`${transport} ${repeat + 1}/${REPEATS}: every target at the same time …\n`);
          const measured = await Promise.all(order.map((target) => run(target, transport)));
          order.forEach((target, i) => record(target, measured[i]!));
          continue;
        }
        for (const target of order) {
          process.stderr.write(`${transport} ${repeat + 1}/${REPEATS}: ${target.name} …\n`);
          record(target, await run(target, transport));
        }
      }
    }
    const rows = TRANSPORTS.flatMap((transport) => {
      const baseline = samples.get(`${transport}|${BASELINE}`)!;
      return targets.map((target) => row(transport, target.name, samples.get(`${transport}|${target.name}`)!, baseline));
    });

    process.stderr.write('cadence: agents on the schedule the server hands out, compressed …\n');
    const cadence = await cadenceShare(dir, db, certFile, keyFile, children, cert);

    return [
      `device-agent-server over TLS — ${DEVICES.toLocaleString('en-US')} enrolled devices, keys round-robin, 1 posture upload (9 results) per 12 heartbeats, after one warm-up pass over the fleet;`,
      ...(COMPARE === undefined ? [] : [`compared build: ${COMPARE}`]),
      `load: tlsload (C, OpenSSL, certificates not verified), ${CONNECTIONS} connections in their own processes on the same machine, ${SECONDS} s per row, ${REPEATS} repeats ${TOGETHER ? 'with every target loaded at the same time (BENCH_TLS_TOGETHER: requests/s share the machine)' : 'with the targets in alternating order'} (medians; CPU ratio: median and range over the repeats);`,
      `${startedOn} at the start, ${machine().replace(/^.*load average /, 'load average ')} at the end`,
      `CPU: the server process (behind nginx: the upstream reference server, nginx's own apart) and the load generator, share of one core;`,
      `CPU/req ×bare: the server's CPU per request over bare node:https's in the same repeat (same certificate, same JSON, same transport);`,
      `devices per busy core: requests/s × 3600 / ${REQUESTS_PER_DEVICE_HOUR} (12 heartbeats + 1 posture upload per device-hour) from the server's CPU time per request`,
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

async function measure(target: Target, load: () => Promise<TlsLoadResult>): Promise<Sample> {
  const cpuSeconds = (pids: number[]) => pids.reduce((sum, pid) => sum + processUsage(pid).cpuSeconds, 0);
  const before = cpuSeconds(target.pids());
  const proxyBefore = target.proxyPids && cpuSeconds(target.proxyPids());
  const startedAt = performance.now();
  const result = await load();
  const wall = (performance.now() - startedAt) / 1000;
  const proxyCpu = target.proxyPids && proxyBefore !== undefined ? (cpuSeconds(target.proxyPids()) - proxyBefore) / wall : undefined;
  return { load: result, cpu: (cpuSeconds(target.pids()) - before) / wall, proxyCpu };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const percent = (share: number) => `${Math.round(share * 100)} %`.padStart(5);

/** One row: the target's medians, and its CPU per request over the baseline's in the same repeat. */
function row(transport: TlsTransport, name: string, samples: Sample[], baseline: Sample[]): string {
  const msPerRequest = (s: Sample) => (s.cpu / s.load.perSecond) * 1000;
  const ratios = samples.map((s, i) => msPerRequest(s) / msPerRequest(baseline[i]!));
  const rates = samples.map((s, i) => s.load.perSecond / baseline[i]!.load.perSecond);
  const ms = median(samples.map(msPerRequest));
  const proxy = samples.flatMap((s) => (s.proxyCpu === undefined ? [] : [s.proxyCpu]));
  return [
    transport.padEnd(10),
    name.padEnd(29),
    `${Math.round(median(samples.map((s) => s.load.perSecond)))
      .toLocaleString('en-US')
      .padStart(7)} req/s`,
    `${median(rates).toFixed(2)}×`.padStart(6),
    `p50 ${median(samples.map((s) => s.load.p50Ms))
      .toFixed(1)
      .padStart(6)} ms`,
    `p99 ${median(samples.map((s) => s.load.p99Ms))
      .toFixed(1)
      .padStart(6)} ms`,
    `CPU ${percent(median(samples.map((s) => s.cpu)))}`,
    ...(proxy.length === 0 ? [] : [`nginx CPU ${percent(median(proxy))}`]),
    `client CPU ${percent(median(samples.map((s) => s.load.clientCpu)))}`,
    `resumed ${percent(median(samples.map((s) => s.load.resumedShare)))}`,
    `errors ${samples.reduce((sum, s) => sum + s.load.errors, 0)}`,
    `server ${ms.toFixed(3)} ms CPU/req`,
    `${median(ratios).toFixed(2)}× bare (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    `→ ${(3600 / REQUESTS_PER_DEVICE_HOUR / (ms / 1000) / 1e6).toFixed(2)} M devices per busy core`,
  ].join('  ');
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
  requestFile: string,
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
    requestFile,
    pids: () => [upstream.child.pid!],
    // The master: processUsage adds its workers.
    proxyPids: () => [nginx.child.pid!],
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
 * hands out, compressed: heartbeat every 6 s and posture every 12 s (a grace of 24 s after each key
 * switch, four heartbeat intervals: a loaded machine stretches each round), ticket keys rotated every
 * 40 s instead of daily, so the run crosses a key switch, its grace and the native sealing around it; each agent uses the agent's own API client, and its connection is
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
  const ROUNDS = 10;
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
    '40s',
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
    `cadence: ${AGENTS} agents (the agent's own client) × ${ROUNDS} heartbeats, every ${INTERVAL_MS / 1000} s as handed out, ticket keys rotated every 40 s (a grace of 24 s after each switch):`,
    `  ${resumed} of the ${later.length} heartbeats after each agent's first resumed a TLS session (${((resumed / later.length) * 100).toFixed(1)} %)`,
  ].join('\n');
}

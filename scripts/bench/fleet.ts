// The fleet benchmark: how many devices one server process holds on this machine, on each database
// engine and on the wire agents use. A fleet of real devices (enrolled over /enroll, each with its
// own hardware_uuid) follows the server's default cadence compressed in time: per device-hour 12
// heartbeats and one posture upload of 9 results (13 requests), the devices taking turns round-robin.
//
// Sections (BENCH_SECTIONS, comma-separated; all by default):
//   sqlite    the embedded default, one process: wrk (its own process, one thread) sends that mix with
//             more and more agents in flight at once (1, 2, 4, … connections) until two steps in a row
//             fail (p99 ≥ 100 ms, or any error or non-2xx answer). The highest throughput of a passing
//             step is projected to devices at the real cadence: requests/s × 3600 / 13. wrk is
//             closed-loop: a stalled server slows the load instead of queueing it, so p99 is measured
//             under the load actually sent. Searched twice on the same fleet: a new connection per
//             request (agents reaching the server directly on their 300 s schedule) and keep-alive
//             connections (the server behind a proxy that keeps its upstream connections open).
//   postgres  the same search on a throwaway PostgreSQL cluster (Debian's server binaries, fsync on)
//             with one server process, then with `--workers 2` on the same fleet: the scaling factor.
//   tls       the server terminating TLS itself (full handshakes, resumed sessions, keep-alive) and
//             behind nginx, beside bare node:https in the same run (scripts/bench/tls.ts).
// Uses dist/: run `npm run build` first.
//   npm run bench:fleet
//   BENCH_SECTIONS=postgres BENCH_DEVICES=20000 BENCH_SECONDS=10 npm run bench:fleet
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCluster } from '../../test/support/postgresCluster';
import {
  HEARTBEATS_PER_HOUR,
  REQUESTS_PER_DEVICE_HOUR,
  RESULTS_PER_UPLOAD,
  enrollFleet,
  errorsOf,
  fleetRequests,
  machine,
  mib,
  perSecond,
  processUsage,
  requireBuild,
  spawnReference,
  stop,
  wrk,
  type Spawned,
  type WrkResult,
} from './server/harness';
import { TRANSPORTS, type Transport } from './server/transport';
import { tlsSection } from './tls';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SECTIONS = ['sqlite', 'postgres', 'tls'] as const;
const CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const P99_LIMIT_MS = 100;
const UPLOADS_PER_HOUR = REQUESTS_PER_DEVICE_HOUR - HEARTBEATS_PER_HOUR;
const GOAL_DEVICES = 1_000_000;

interface Step {
  connections: number;
  load: WrkResult;
  /** CPU of the server's processes (a --workers primary and its workers), share of one core. */
  serverCpu: number;
  /** CPU of the database server's processes (PostgreSQL), share of one core. */
  databaseCpu: number | undefined;
  rss: number;
  passed: boolean;
}

interface Search {
  lines: string[];
  /** Requests/s of the best passing step (0 when none passed). */
  rate: number;
}

function parseSections(value: string | undefined): Set<(typeof SECTIONS)[number]> {
  if (value === undefined || value === '') return new Set(SECTIONS);
  const asked = value.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_SECTIONS: unknown ${unknown.join(', ')} (one or more of: ${SECTIONS.join(', ')})`);
  return new Set(asked as (typeof SECTIONS)[number][]);
}

/** More and more agents in flight until two steps in a row fail; the table and the best passing rate. */
async function search(
  title: string,
  transport: Transport,
  server: Spawned,
  requests: string[],
  dir: string,
  databasePid?: () => number,
): Promise<Search> {
  const serverPid = server.child.pid!;
  const steps: Step[] = [];
  for (const connections of CONCURRENCY) {
    process.stderr.write(`${title} (${transport}): ${connections} in flight, ${SECONDS} s …`);
    const before = processUsage(serverPid);
    const databaseBefore = databasePid && processUsage(databasePid());
    const started = performance.now();
    const load = await wrk({ url: server.url, requests, connections, seconds: SECONDS, transport, dir });
    const wall = (performance.now() - started) / 1000;
    const after = processUsage(serverPid);
    const databaseCpu =
      databasePid && databaseBefore ? (processUsage(databasePid()).cpuSeconds - databaseBefore.cpuSeconds) / wall : undefined;
    const passed = errorsOf(load) === 0 && load.p99_us / 1000 < P99_LIMIT_MS;
    process.stderr.write(` ${Math.round(perSecond(load))}/s, p99 ${(load.p99_us / 1000).toFixed(1)} ms${passed ? '' : ' FAILED'}\n`);
    steps.push({ connections, load, serverCpu: (after.cpuSeconds - before.cpuSeconds) / wall, databaseCpu, rss: after.rss, passed });
    // One stall on a shared machine can fail a step; two failures in a row end the search.
    if (!passed && steps.at(-2)?.passed === false) break;
    // The server writes its last batch and the machine settles before the next step.
    await sleep(2_000);
  }
  const peakRss = processUsage(serverPid).peakRss;
  const percent = (share: number | undefined) => (share === undefined ? '—' : `${Math.round(share * 100)} %`);
  const row = (s: Step) =>
    [
      String(s.connections).padStart(9),
      Math.round(perSecond(s.load)).toString().padStart(9),
      (s.load.p50_us / 1000).toFixed(1).padStart(8),
      (s.load.p99_us / 1000).toFixed(1).padStart(8),
      String(errorsOf(s.load)).padStart(7),
      percent(s.serverCpu).padStart(8),
      percent(s.databaseCpu).padStart(8),
      mib(s.rss).padStart(9),
      s.passed ? '  ok' : '  failed',
    ].join('');
  const lines = [
    `${title}; ${TRANSPORTS[transport]}`,
    `in flight  req/s    p50 ms  p99 ms errors  srv CPU   db CPU  RSS MiB`,
    ...steps.map(row),
  ];
  const best = steps.filter((s) => s.passed).sort((a, b) => perSecond(b.load) - perSecond(a.load))[0];
  if (!best) return { lines: [...lines, 'no step passed'], rate: 0 };
  const rate = perSecond(best.load);
  const devicesAtCadence = Math.floor((rate * 3600) / REQUESTS_PER_DEVICE_HOUR);
  const database = best.databaseCpu === undefined ? '' : `, database CPU ${percent(best.databaseCpu)}`;
  lines.push(
    `largest load held (p99 < ${P99_LIMIT_MS} ms, no error): ${Math.round(rate)} requests/s = ${Math.round((rate * HEARTBEATS_PER_HOUR) / REQUESTS_PER_DEVICE_HOUR)} heartbeats/s + ${Math.round((rate * UPLOADS_PER_HOUR * RESULTS_PER_UPLOAD) / REQUESTS_PER_DEVICE_HOUR)} results/s; server CPU ${percent(best.serverCpu)}${database}, RSS ${mib(best.rss)} MiB (peak ${mib(peakRss)} MiB)`,
    `at the real cadence (13 requests per device-hour): ${devicesAtCadence.toLocaleString('en-US')} devices (goal ${GOAL_DEVICES.toLocaleString('en-US')} per server process: ${(devicesAtCadence / GOAL_DEVICES).toFixed(2)}×)`,
  );
  return { lines, rate };
}

async function sqliteSection(dir: string): Promise<string[]> {
  const db = join(dir, 'fleet.db');
  const server = await spawnReference(dir, db);
  process.stderr.write(`sqlite: enrolling ${DEVICES} devices …\n`);
  const devices = await enrollFleet(dir, server.url, db, DEVICES);
  const requests = fleetRequests(devices);
  const direct = await search('SQLite (the embedded default), one server process', 'close', server, requests, dir);
  const proxied = await search('SQLite, one server process', 'keep-alive', server, requests, dir);
  const exit = await stop(server.child);
  if (exit !== 0) throw new Error(`the reference server exited with ${exit}`);
  return [...direct.lines, '', ...proxied.lines];
}

/**
 * One fleet on a throwaway PostgreSQL cluster, searched with one server process and then with
 * `--workers 2` (the same devices, the same database): the scaling factor on this machine.
 */
async function postgresSection(dir: string): Promise<string[]> {
  let cluster;
  try {
    cluster = await startCluster({ durable: true });
  } catch (error) {
    return [`PostgreSQL: not measured (${(error as Error).message})`];
  }
  try {
    // The standard variable: the password never appears in a process list or a log.
    process.env.PGPASSWORD = cluster.password;
    const db = `postgres://${cluster.user}@${cluster.host}:${cluster.port}/postgres`;
    const single = await spawnReference(dir, db);
    process.stderr.write(`postgres: enrolling ${DEVICES} devices …\n`);
    const requests = fleetRequests(await enrollFleet(dir, single.url, db, DEVICES));
    const one = await search('PostgreSQL (fsync on), one server process', 'close', single, requests, dir, cluster.pid);
    await stop(single.child);
    const workers = await spawnReference(dir, db, ['--workers', '2']);
    const two = await search(
      'PostgreSQL, `serve --workers 2` (a primary handing connections to two workers)',
      'close',
      workers,
      requests,
      dir,
      cluster.pid,
    );
    await stop(workers.child);
    const scaling = one.rate > 0 ? `${(two.rate / one.rate).toFixed(2)}×` : 'not measured (one process held no step)';
    return [
      ...one.lines,
      '',
      ...two.lines,
      '',
      `scaling from one to two server processes on PostgreSQL: ${scaling} (PostgreSQL, the server processes and wrk share this machine's cores)`,
    ];
  } finally {
    delete process.env.PGPASSWORD;
    cluster.stop();
  }
}

async function main(): Promise<void> {
  const sections = parseSections(process.env.BENCH_SECTIONS);
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-fleet-'));
  const out = [
    `fleet: ${DEVICES} enrolled devices, keys round-robin, each its own hardware_uuid; per device-hour ${HEARTBEATS_PER_HOUR} heartbeats + ${UPLOADS_PER_HOUR} upload of ${RESULTS_PER_UPLOAD} results, compressed in time`,
    `wrk 1 thread in its own process; ${SECONDS} s per step; loopback; ${machine()}`,
  ];
  try {
    if (sections.has('sqlite')) out.push('', ...(await sqliteSection(dir)));
    if (sections.has('postgres')) out.push('', ...(await postgresSection(dir)));
    if (sections.has('tls')) out.push('', await tlsSection());
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

// The fleet benchmark: how many devices one server process holds on this machine. A fleet of real
// devices (enrolled over /enroll, each with its own hardware_uuid) follows the server's default
// cadence compressed in time: per device-hour 12 heartbeats and one posture upload of 9 results
// (13 requests), the devices taking turns round-robin. wrk (its own process, one thread) sends that
// mix with more and more agents in flight at once (1, 2, 4, … connections) until two steps in a
// row fail (p99 ≥ 100 ms, or any error or non-2xx answer). The highest throughput of a passing step is
// projected to devices at the real cadence: requests/s × 3600 / 13. wrk is closed-loop: a stalled
// server slows the load instead of queueing it, so p99 is measured under the load actually sent.
// Uses dist/: run `npm run build` first.
//   npm run bench:fleet
//   BENCH_DEVICES=20000 BENCH_SECONDS=10 BENCH_TRANSPORT=close|keep-alive npm run bench:fleet
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROUTES } from '../../src/protocol/schemas';
import {
  enrollFleet,
  errorsOf,
  heartbeatBody,
  machine,
  mib,
  perSecond,
  posturesBody,
  processUsage,
  requestLine,
  requireBuild,
  spawnReference,
  stop,
  wrk,
  type WrkResult,
} from './server/harness';
import { TRANSPORTS, parseTransport } from './server/transport';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TRANSPORT = parseTransport(process.env.BENCH_TRANSPORT, 'close');
const CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const P99_LIMIT_MS = 100;
/** The default cadence: 300 s heartbeats, 3,600 s posture cycles of 9 results. */
const HEARTBEATS_PER_HOUR = 12;
const UPLOADS_PER_HOUR = 1;
const RESULTS_PER_UPLOAD = 9;
const REQUESTS_PER_DEVICE_HOUR = HEARTBEATS_PER_HOUR + UPLOADS_PER_HOUR;
const GOAL_DEVICES = 1_000_000;

interface Step {
  connections: number;
  load: WrkResult;
  serverCpu: number;
  rss: number;
  passed: boolean;
}

async function main(): Promise<void> {
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-fleet-'));
  try {
    const db = join(dir, 'fleet.db');
    const server = await spawnReference(dir, db);
    const pid = server.child.pid!;
    process.stderr.write(`enrolling ${DEVICES} devices …\n`);
    const devices = await enrollFleet(dir, server.url, db, DEVICES);
    // Request i goes to device i mod N; every 13th is that device's posture upload.
    const upload = posturesBody(RESULTS_PER_UPLOAD);
    const requests = Array.from({ length: DEVICES * REQUESTS_PER_DEVICE_HOUR }, (_, i) => {
      const device = devices[i % DEVICES]!;
      return i % REQUESTS_PER_DEVICE_HOUR === REQUESTS_PER_DEVICE_HOUR - 1
        ? requestLine(device.apiKey, ROUTES.postures, upload)
        : requestLine(device.apiKey, ROUTES.heartbeat, heartbeatBody(device));
    });

    const steps: Step[] = [];
    for (const connections of CONCURRENCY) {
      process.stderr.write(`${connections} in flight, ${SECONDS} s …`);
      const before = processUsage(pid);
      const started = performance.now();
      const load = await wrk({ url: server.url, requests, connections, seconds: SECONDS, transport: TRANSPORT, dir });
      const wall = (performance.now() - started) / 1000;
      const after = processUsage(pid);
      const passed = errorsOf(load) === 0 && load.p99_us / 1000 < P99_LIMIT_MS;
      process.stderr.write(` ${Math.round(perSecond(load))}/s, p99 ${(load.p99_us / 1000).toFixed(1)} ms${passed ? '' : ' FAILED'}\n`);
      steps.push({ connections, load, serverCpu: (after.cpuSeconds - before.cpuSeconds) / wall, rss: after.rss, passed });
      // One stall on a shared machine can fail a step; two failures in a row end the search.
      if (!passed && steps.at(-2)?.passed === false) break;
      // The server writes its last batch and the machine settles before the next step.
      await sleep(2_000);
    }
    const peakRss = processUsage(pid).peakRss;
    const exit = await stop(server.child);
    if (exit !== 0) throw new Error(`the reference server exited with ${exit}`);

    const row = (s: Step) =>
      [
        String(s.connections).padStart(9),
        Math.round(perSecond(s.load)).toString().padStart(9),
        (s.load.p50_us / 1000).toFixed(1).padStart(8),
        (s.load.p99_us / 1000).toFixed(1).padStart(8),
        String(errorsOf(s.load)).padStart(7),
        `${Math.round(s.serverCpu * 100)} %`.padStart(8),
        mib(s.rss).padStart(9),
        s.passed ? '  ok' : '  failed',
      ].join('');
    const out = [
      `fleet: ${DEVICES} enrolled devices, keys round-robin, each its own hardware_uuid; per device-hour ${HEARTBEATS_PER_HOUR} heartbeats + ${UPLOADS_PER_HOUR} upload of ${RESULTS_PER_UPLOAD} results, compressed in time`,
      `transport: ${TRANSPORT} (${TRANSPORTS[TRANSPORT]}); wrk 1 thread in its own process; ${SECONDS} s per step; loopback; ${machine()}`,
      `in flight  req/s    p50 ms  p99 ms errors  srv CPU  RSS MiB`,
      ...steps.map(row),
    ];
    const best = steps.filter((s) => s.passed).sort((a, b) => perSecond(b.load) - perSecond(a.load))[0];
    if (best) {
      const rate = perSecond(best.load);
      const devicesAtCadence = Math.floor((rate * 3600) / REQUESTS_PER_DEVICE_HOUR);
      out.push(
        `largest load held (p99 < ${P99_LIMIT_MS} ms, no error): ${Math.round(rate)} requests/s = ${Math.round((rate * HEARTBEATS_PER_HOUR) / REQUESTS_PER_DEVICE_HOUR)} heartbeats/s + ${Math.round((rate * UPLOADS_PER_HOUR * RESULTS_PER_UPLOAD) / REQUESTS_PER_DEVICE_HOUR)} results/s; server CPU ${Math.round(best.serverCpu * 100)} %, RSS ${mib(best.rss)} MiB (peak ${mib(peakRss)} MiB)`,
        `at the real cadence (13 requests per device-hour): ${devicesAtCadence.toLocaleString('en-US')} devices per server process (goal ${GOAL_DEVICES.toLocaleString('en-US')}: ${(devicesAtCadence / GOAL_DEVICES).toFixed(2)}×)`,
      );
    } else {
      out.push('no step passed');
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

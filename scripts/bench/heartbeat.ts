// Heartbeat and posture throughput of the reference server beside a bare node:http server that
// parses the same JSON and answers the same way, measured the same way in the same run: wrk (one
// thread, its own process), keys round-robin over a fleet enrolled through /enroll, each device
// with its own hardware_uuid; loopback only. For what the policy extension's `policy_version`
// costs, the heartbeats also go to two fresh server processes on copies of the fleet, one with
// `--no-policy`.
// Uses dist/: run `npm run build` first.
//   npm run bench:heartbeat
//   BENCH_DEVICES=10000 BENCH_SECONDS=10 BENCH_ROUNDS=3 BENCH_CONNECTIONS=32 BENCH_TRANSPORT=keep-alive|close npm run bench:heartbeat
//   BENCH_PROFILE=<dir> npm run bench:heartbeat      (the server writes a V8 CPU profile there: node --cpu-prof)
//   BENCH_PACE_MS=25 BENCH_CONNECTIONS=8 npm run bench:heartbeat   (each connection waits 25 ms between
//     requests: about 300 requests/s, where each request meets an idle process, as at a fleet's real rate)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTES } from '../../src/protocol/schemas';
import {
  copyDatabase,
  enrollFleet,
  errorsOf,
  heartbeatBody,
  machine,
  perSecond,
  posturesBody,
  processUsage,
  requestLine,
  requireBuild,
  spawnBare,
  spawnReference,
  stop,
  wrk,
  type Spawned,
  type WrkResult,
} from './server/harness';
import { parseTransport } from './server/transport';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TRANSPORT = parseTransport(process.env.BENCH_TRANSPORT, 'keep-alive');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 0);
const RESULTS_PER_UPLOAD = 100;

/** The run with the median throughput. */
interface Run extends WrkResult {
  /** CPU time the server used during the run. */
  cpuSeconds: number;
}

/** CPU microseconds the server spent per request (per result when unit is 100). */
const cpuPer = (r: Run, unit = 1) => (r.cpuSeconds * 1e6) / (r.requests * unit);

function median(runs: Run[]): Run {
  return [...runs].sort((a, b) => perSecond(a) - perSecond(b))[Math.floor(runs.length / 2)]!;
}

async function main(): Promise<void> {
  if (!Number.isInteger(PACE_MS) || PACE_MS < 0) throw new Error('BENCH_PACE_MS must be a whole number of milliseconds');
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-'));
  try {
    const db = join(dir, 'bench.db');
    const profile = process.env.BENCH_PROFILE;
    const reference = await spawnReference(dir, db, [], profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []);
    process.stderr.write(`enrolling ${DEVICES} devices …\n`);
    const devices = await enrollFleet(dir, reference.url, db, DEVICES);
    const heartbeats = devices.map((d) => requestLine(d.apiKey, ROUTES.heartbeat, heartbeatBody(d)));
    const upload = posturesBody(RESULTS_PER_UPLOAD);
    const uploads = devices.map((d) => requestLine(d.apiKey, ROUTES.postures, upload));
    // The server's CPU time per request as well: on a shared machine the throughput of either
    // server depends on what else runs; the CPU each request costs does much less.
    const load = async (target: Spawned, requests: string[]): Promise<Run> => {
      const before = processUsage(target.child.pid!).cpuSeconds;
      const result = await wrk({
        url: target.url,
        requests,
        connections: CONNECTIONS,
        seconds: SECONDS,
        transport: TRANSPORT,
        dir,
        paceMs: PACE_MS,
      });
      return { ...result, cpuSeconds: processUsage(target.child.pid!).cpuSeconds - before };
    };

    const bare = await spawnBare(dir);
    // The extension's cost: two fresh servers, each on its own copy of the fleet (a second process's
    // writes on one database would empty the other's device cache), the same but for --no-policy.
    const copies = ['policy.db', 'no-policy.db'].map((name) => join(dir, name));
    for (const copy of copies) copyDatabase(db, copy);
    const withPolicy = await spawnReference(dir, copies[0]!);
    const noPolicy = await spawnReference(dir, copies[1]!, ['--no-policy']);
    // The machine is shared: the two servers take turns, round after round, so that a change in the
    // load from elsewhere hits both; each figure is the median of its rounds.
    const runs = {
      serverHeartbeats: [] as Run[],
      bareHeartbeats: [] as Run[],
      withPolicyHeartbeats: [] as Run[],
      noPolicyHeartbeats: [] as Run[],
      serverPostures: [] as Run[],
      barePostures: [] as Run[],
    };
    for (let round = 1; round <= ROUNDS; round += 1) {
      process.stderr.write(`round ${round}/${ROUNDS}: heartbeats, then postures, ${SECONDS} s per server …\n`);
      runs.serverHeartbeats.push(await load(reference, heartbeats));
      runs.bareHeartbeats.push(await load(bare, heartbeats));
      runs.withPolicyHeartbeats.push(await load(withPolicy, heartbeats));
      runs.noPolicyHeartbeats.push(await load(noPolicy, heartbeats));
      runs.serverPostures.push(await load(reference, uploads));
      runs.barePostures.push(await load(bare, uploads));
    }
    const exit = await stop(reference.child);
    if (exit !== 0) throw new Error(`the reference server exited with ${exit}`);
    await stop(bare.child);
    for (const copy of [withPolicy, noPolicy])
      if ((await stop(copy.child)) !== 0) throw new Error('a server on a copy did not exit cleanly');
    const serverHeartbeats = median(runs.serverHeartbeats);
    const bareHeartbeats = median(runs.bareHeartbeats);
    const withPolicyHeartbeats = median(runs.withPolicyHeartbeats);
    const noPolicyHeartbeats = median(runs.noPolicyHeartbeats);
    const serverPostures = median(runs.serverPostures);
    const barePostures = median(runs.barePostures);

    const row = (name: string, r: Run, all: Run[], unit = 1) =>
      name.padEnd(40) +
      Math.round(perSecond(r) * unit)
        .toString()
        .padStart(10) +
      (r.p50_us / 1000).toFixed(1).padStart(9) +
      (r.p99_us / 1000).toFixed(1).padStart(9) +
      String(all.reduce((n, x) => n + errorsOf(x), 0)).padStart(8) +
      cpuPer(r, unit).toFixed(1).padStart(12);
    const ratio = (a: Run, b: Run) => `${(perSecond(a) / perSecond(b)).toFixed(2)}×`;
    const rounds = (a: Run[], b: Run[]) => a.map((x, i) => ratio(x, b[i]!)).join(', ');
    const cpuRatio = (a: Run, b: Run) => `${(cpuPer(b) / cpuPer(a)).toFixed(2)}×`;
    process.stdout.write(
      [
        `${DEVICES} enrolled devices, keys round-robin; wrk 1 thread, ${CONNECTIONS} connections (${TRANSPORT}${PACE_MS > 0 ? `, each waiting ${PACE_MS} ms between requests` : ''}), ${SECONDS} s per run, median of ${ROUNDS} alternating rounds; loopback; ${machine()}`,
        `${''.padEnd(40)}${'per s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'errors'.padStart(8)}${'CPU µs each'.padStart(12)}`,
        row('heartbeats: device-agent-server (SQLite)', serverHeartbeats, runs.serverHeartbeats),
        row('heartbeats: bare node:http (same JSON)', bareHeartbeats, runs.bareHeartbeats),
        `heartbeat throughput: ${ratio(serverHeartbeats, bareHeartbeats)} bare node:http (rounds: ${rounds(runs.serverHeartbeats, runs.bareHeartbeats)}); per CPU second: ${cpuRatio(serverHeartbeats, bareHeartbeats)}`,
        row('heartbeats: a fresh server on a copy', withPolicyHeartbeats, runs.withPolicyHeartbeats),
        row('heartbeats: the same with --no-policy', noPolicyHeartbeats, runs.noPolicyHeartbeats),
        `policy extension: with it / without ${ratio(withPolicyHeartbeats, noPolicyHeartbeats)} (rounds: ${rounds(runs.withPolicyHeartbeats, runs.noPolicyHeartbeats)}); per CPU second: ${cpuRatio(withPolicyHeartbeats, noPolicyHeartbeats)}; to bare node:http ${ratio(withPolicyHeartbeats, bareHeartbeats)} and ${ratio(noPolicyHeartbeats, bareHeartbeats)}`,
        row(`results (${RESULTS_PER_UPLOAD}/upload): device-agent-server`, serverPostures, runs.serverPostures, RESULTS_PER_UPLOAD),
        row(`results (${RESULTS_PER_UPLOAD}/upload): bare node:http`, barePostures, runs.barePostures, RESULTS_PER_UPLOAD),
        `posture ingestion: ${ratio(serverPostures, barePostures)} bare node:http, results stored per second (rounds: ${rounds(runs.serverPostures, runs.barePostures)}); per CPU second: ${cpuRatio(serverPostures, barePostures)}`,
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

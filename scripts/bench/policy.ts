// The policy route after one policy change (issue 29): a fleet enrolled through /enroll, a policy set
// for its organization with the admin CLI (a change: every device's next heartbeat announces a new
// policy_version), then every device fetches POST /policy, keys round-robin so that the first pass
// is each device's one fetch after the change; beside heartbeats of the same fleet and server in
// alternating rounds (each policy round after a change of its own, so each starts from a cache the
// change emptied). The answers come from memory (PolicyCache): one read of the organization's
// documents and the lifecycle data per change, whatever the number of devices. wrk one thread, its
// own process; loopback only. Uses dist/: run `npm run build` first.
//   npm run bench:policy
//   BENCH_DEVICES=20000 BENCH_SECONDS=10 BENCH_ROUNDS=3 BENCH_CONNECTIONS=32 npm run bench:policy
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXTENSION_ROUTES, ROUTES } from '../../src/protocol/schemas';
import {
  enrollFleet,
  errorsOf,
  heartbeatBody,
  machine,
  perSecond,
  processUsage,
  requestLine,
  requireBuild,
  spawnReference,
  stop,
  wrk,
  type Spawned,
  type WrkResult,
} from './server/harness';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER_BIN = fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));
/** provisionTokens's organization. */
const ORG = 'bench';

interface Run extends WrkResult {
  cpuSeconds: number;
}

const cpuPer = (r: Run) => (r.cpuSeconds * 1e6) / r.requests;
const median = (runs: Run[]) => [...runs].sort((a, b) => perSecond(a) - perSecond(b))[Math.floor(runs.length / 2)]!;

async function main(): Promise<void> {
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-'));
  try {
    const db = join(dir, 'bench.db');
    const server = await spawnReference(dir, db);
    process.stderr.write(`enrolling ${DEVICES} devices …\n`);
    const devices = await enrollFleet(dir, server.url, db, DEVICES);
    const heartbeats = devices.map((d) => requestLine(d.apiKey, ROUTES.heartbeat, heartbeatBody(d)));
    const fetches = devices.map((d) => requestLine(d.apiKey, EXTENSION_ROUTES.policy, '{"platform":"LINUX"}'));
    let change = 0;
    /** One policy change, as an administrator makes it: the CLI, another process, on the same database. */
    const changePolicy = () => {
      change += 1;
      const file = join(dir, 'policy.json');
      writeFileSync(
        file,
        JSON.stringify({ password: { minLength: 8 + change }, osVersion: { acceptExtendedSupport: { debianLts: true } } }),
      );
      execFileSync(process.execPath, [SERVER_BIN, 'policy', 'set', '--db', db, '--org', ORG, '--file', file], { stdio: 'ignore' });
    };
    const load = async (target: Spawned, requests: string[]): Promise<Run> => {
      const before = processUsage(target.child.pid!).cpuSeconds;
      const result = await wrk({ url: target.url, requests, connections: CONNECTIONS, seconds: SECONDS, transport: 'keep-alive', dir });
      return { ...result, cpuSeconds: processUsage(target.child.pid!).cpuSeconds - before };
    };
    const runs = { policy: [] as Run[], heartbeats: [] as Run[] };
    for (let round = 1; round <= ROUNDS; round += 1) {
      process.stderr.write(`round ${round}/${ROUNDS}: a policy change, every device fetches; then heartbeats; ${SECONDS} s each …\n`);
      changePolicy();
      runs.policy.push(await load(server, fetches));
      runs.heartbeats.push(await load(server, heartbeats));
    }
    const exit = await stop(server.child);
    if (exit !== 0) throw new Error(`the reference server exited with ${exit}`);

    const policy = median(runs.policy);
    const beats = median(runs.heartbeats);
    const row = (name: string, r: Run, all: Run[]) =>
      name.padEnd(36) +
      Math.round(perSecond(r)).toString().padStart(10) +
      (r.p50_us / 1000).toFixed(1).padStart(9) +
      (r.p99_us / 1000).toFixed(1).padStart(9) +
      String(all.reduce((n, x) => n + errorsOf(x), 0)).padStart(8) +
      cpuPer(r).toFixed(1).padStart(12);
    const passes = (r: Run) => (r.requests / DEVICES).toFixed(1);
    process.stdout.write(
      [
        `${DEVICES} enrolled devices, keys round-robin; wrk 1 thread, ${CONNECTIONS} keep-alive connections, ${SECONDS} s per run, median of ${ROUNDS} alternating rounds; loopback; ${machine()}`,
        `${''.padEnd(36)}${'per s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'errors'.padStart(8)}${'CPU µs each'.padStart(12)}`,
        row('POST /policy after a change', policy, runs.policy),
        row('POST /heartbeat', beats, runs.heartbeats),
        `policy fetches: ${(perSecond(policy) / perSecond(beats)).toFixed(2)}× heartbeats (rounds: ${runs.policy.map((p, i) => `${(perSecond(p) / perSecond(runs.heartbeats[i]!)).toFixed(2)}×`).join(', ')}); the fleet fetched ${runs.policy.map(passes).join(', ')} times over per round; the whole fleet's fetches after a change take ${(DEVICES / perSecond(policy)).toFixed(1)} s of one process`,
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

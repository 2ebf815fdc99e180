// Registrations with one enrollment secret (POST /api/agent/v1/register): 10,000 devices in one
// burst, each with its own hardware_uuid, from BENCH_CONNECTIONS connections at once, against the
// reference server (SQLite) and, in the same run, a bare node:http server that parses the same JSON
// and answers the same shape. The two take turns over BENCH_ROUNDS rounds (a new secret each round
// on the server); it prints registrations per second of each (median), the ratio, and the server's
// CPU time per registration. Loopback only; uses dist/: run `npm run build` first.
//   npm run bench:register
//   BENCH_DEVICES=10000 BENCH_CONNECTIONS=64 BENCH_ROUNDS=3 npm run bench:register
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { EXTENSION_ROUTES } from '../../src/protocol/constants';
import {
  heartbeatRequest,
  machine,
  processUsage,
  requireBuild,
  spawnAnnouncing,
  spawnReference,
  stop,
  type Spawned,
} from './server/harness';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER_BIN = fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));
const run = promisify(execFile);

/** The baseline: reads and parses each body, answers a registration's JSON (a fresh random token), stores nothing. */
const BARE_REGISTER = `
const { randomBytes } = require('node:crypto');
const server = require('node:http').createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '${EXTENSION_ROUTES.register}') return res.writeHead(404).end();
    JSON.parse(body);
    const answer = JSON.stringify({ device_id: 'dev_' + randomBytes(16).toString('hex'), enrollment_token: randomBytes(48).toString('hex'), secret_id: 'ens_0f6f0c1d2e3a4b5c6d7e8f9012345678' });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));
`;

interface Burst {
  seconds: number;
  /** Answers other than 200. */
  refused: number;
  cpuSeconds: number;
}

/** `DEVICES` registrations, `CONNECTIONS` in flight at a time; wall time from the first request to the last answer. */
async function burst(target: Spawned, secret: string, round: number): Promise<Burst> {
  const bodies = Array.from({ length: DEVICES }, (_, i) =>
    JSON.stringify({ enroll_secret: secret, ...heartbeatRequest({ hardwareUuid: `bench-${round}-${i.toString().padStart(8, '0')}` }) }),
  );
  const pool = new Pool(target.url, { connections: CONNECTIONS });
  let next = 0;
  let refused = 0;
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      const answer = await pool.request({
        method: 'POST',
        path: EXTENSION_ROUTES.register,
        headers: { 'content-type': 'application/json' },
        body: bodies[i],
      });
      await answer.body.text();
      if (answer.statusCode !== 200) refused += 1;
    }
  };
  const cpuBefore = processUsage(target.child.pid!).cpuSeconds;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  } finally {
    await pool.close();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, refused, cpuSeconds: processUsage(target.child.pid!).cpuSeconds - cpuBefore };
}

async function newSecret(db: string): Promise<string> {
  const { stdout } = await run(process.execPath, [SERVER_BIN, 'secret', 'create', '--db', db, '--org', 'bench', '--json']);
  return (JSON.parse(stdout) as { enroll_secret: string }).enroll_secret;
}

const perSecond = (b: Burst) => DEVICES / b.seconds;
const median = (bursts: Burst[]) => [...bursts].sort((a, b) => perSecond(a) - perSecond(b))[Math.floor(bursts.length / 2)]!;

async function main(): Promise<void> {
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-'));
  try {
    const db = join(dir, 'bench.db');
    // Registrations are limited per address and per secret by default (600 and 6,000 a minute):
    // the burst comes from one address with one secret, so both are off here.
    const reference = await spawnReference(dir, db, ['--rate-limit-registrations', '0', '--rate-limit-registrations-per-secret', '0']);
    const bare = await spawnAnnouncing(['-e', BARE_REGISTER], dir, 'bare');
    const runs = { server: [] as Burst[], bare: [] as Burst[] };
    for (let round = 1; round <= ROUNDS; round += 1) {
      process.stderr.write(`round ${round}/${ROUNDS}: ${DEVICES} registrations on each …\n`);
      runs.server.push(await burst(reference, await newSecret(db), round));
      runs.bare.push(await burst(bare, 'das_bare', round));
    }
    const exit = await stop(reference.child);
    if (exit !== 0) throw new Error(`the reference server exited with ${exit}`);
    await stop(bare.child);
    const server = median(runs.server);
    const baseline = median(runs.bare);
    const row = (name: string, b: Burst, all: Burst[]) =>
      name.padEnd(44) +
      Math.round(perSecond(b)).toString().padStart(10) +
      b.seconds.toFixed(2).padStart(10) +
      String(all.reduce((n, x) => n + x.refused, 0)).padStart(9) +
      ((b.cpuSeconds * 1e6) / DEVICES).toFixed(0).padStart(13);
    const rounds = runs.server.map((s, i) => `${(perSecond(s) / perSecond(runs.bare[i]!)).toFixed(2)}×`).join(', ');
    process.stdout.write(
      [
        `${DEVICES} registrations in one burst, ${CONNECTIONS} connections (keep-alive), one secret per round, median of ${ROUNDS} alternating rounds; loopback; ${machine()}`,
        `${''.padEnd(44)}${'per s'.padStart(10)}${'burst s'.padStart(10)}${'non-200'.padStart(9)}${'CPU µs each'.padStart(13)}`,
        row('register: device-agent-server (SQLite)', server, runs.server),
        row('register: bare node:http (same JSON)', baseline, runs.bare),
        `registration throughput: ${(perSecond(server) / perSecond(baseline)).toFixed(2)}× bare node:http (rounds: ${rounds}); per CPU second: ${(baseline.cpuSeconds / server.cpuSeconds).toFixed(2)}×`,
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

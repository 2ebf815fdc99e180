// Heartbeat throughput of the reference server beside a bare node:http server answering the
// same JSON, measured the same way in the same run (autocannon, loopback only).
//   npx tsx scripts/bench/heartbeat.ts        (uses dist/: run `npm run build` first)
//   BENCH_SECONDS=5 BENCH_CONNECTIONS=20 npx tsx scripts/bench/heartbeat.ts
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../../src/protocol/schemas';

interface Histogram {
  average: number;
  p50: number;
  p99: number;
}
interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon is CommonJS without types: required, and typed by the declarations above.
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SERVER_BIN = fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));

const HEARTBEAT = JSON.stringify({
  hardware_uuid: '4C4C4544-0035-4810-8057-B7C04F4E3533',
  serial_number: 'C02XK1ABJGH5',
  hostname: 'bench-host',
  platform: 'LINUX',
  os_version: 'Debian GNU/Linux 12 (bookworm)',
  agent_version: '0.1.0',
});

/** The baseline: node:http reading and parsing the body, answering the heartbeat JSON. */
const BARE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '${ROUTES.heartbeat}' || !req.headers.authorization) {
      res.writeHead(404).end();
      return;
    }
    JSON.parse(body);
    const answer = JSON.stringify({ device_id: 'dev_0f6f0c1d2e3a4b5c6d7e8f9012345678', heartbeat_interval_seconds: 300, posture_interval_seconds: 3600, server_time: new Date().toISOString() });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));
`;

/** Spawns a server whose output goes to a file (so that nothing in this process drains it) and waits for its URL. */
async function spawnServer(args: string[], logFile: string): Promise<{ child: ChildProcess; url: string }> {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  for (let waited = 0; waited < 10_000; waited += 50) {
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('"url"'));
    if (line) return { child, url: (JSON.parse(line) as { url: string }).url };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start:\n${readFileSync(logFile, 'utf8')}`);
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function load(url: string, apiKey: string): Promise<AutocannonResult> {
  return autocannon({
    url: `${url}${ROUTES.heartbeat}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: HEARTBEAT,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
}

async function main(): Promise<void> {
  if (!existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-bench-'));
  try {
    const db = join(dir, 'bench.db');
    // One device key drives the whole load from one address: its per-device heartbeat limit is off
    // and the per-address connection cap fits the load, or this would measure 429s and refusals.
    const limits = ['--rate-limit-heartbeats', '0', '--max-connections-per-address', String(Math.max(128, CONNECTIONS))];
    const reference = await spawnServer(
      [SERVER_BIN, 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0', ...limits],
      join(dir, 'server.log'),
    );
    const device = JSON.parse(
      execFileSync(process.execPath, [SERVER_BIN, 'device', 'create', '--db', db, '--org', 'bench', '--json'], { encoding: 'utf8' }),
    ) as { enrollment_token: string };
    const enrolled = await fetch(`${reference.url}${ROUTES.enroll}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: device.enrollment_token }),
    });
    const { api_key: apiKey } = (await enrolled.json()) as { api_key: string };
    const first = await fetch(`${reference.url}${ROUTES.heartbeat}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: HEARTBEAT,
    });
    if (first.status !== 200) throw new Error(`first heartbeat answered ${first.status}`);

    process.stderr.write(`device-agent-server: ${SECONDS} s …\n`);
    const server = await load(reference.url, apiKey);
    await stop(reference.child);

    const bare = await spawnServer(['-e', BARE_SERVER], join(dir, 'bare.log'));
    process.stderr.write(`bare node:http: ${SECONDS} s …\n`);
    const baseline = await load(bare.url, apiKey);
    await stop(bare.child);

    const row = (name: string, r: AutocannonResult) =>
      `${name.padEnd(34)}${Math.round(r.requests.average).toString().padStart(8)}${r.latency.p50.toFixed(1).padStart(9)}${r.latency.p99.toFixed(1).padStart(9)}${String(r.non2xx + r.errors).padStart(13)}`;
    process.stdout.write(
      [
        `POST ${ROUTES.heartbeat}: ${CONNECTIONS} connections, ${SECONDS} s each, loopback, Node ${process.version}, ${availableParallelism()} × ${cpus()[0]?.model.trim() ?? 'CPU'}`,
        `${''.padEnd(34)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'non-2xx+err'.padStart(13)}`,
        row('device-agent-server (SQLite, logs)', server),
        row('bare node:http (same JSON)', baseline),
        `reference server throughput: ${((server.requests.average / baseline.requests.average) * 100).toFixed(0)} % of the bare baseline`,
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

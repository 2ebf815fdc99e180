// What the server benchmarks share: the built server and a bare node:http baseline as child
// processes, a fleet of devices enrolled over real HTTP, wrk runs, and the server's CPU and memory
// read from /proc. Load generators run in their own processes so the server under test keeps a core.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Agent, request, type Dispatcher } from 'undici';
import { ROUTES } from '../../../src/protocol/schemas';
import type { Transport } from './transport';
import { Sqlite } from '../sqlite';

const run = promisify(execFile);
const SERVER_BIN = fileURLToPath(new URL('../../../dist/device-agent-server.cjs', import.meta.url));
const WRK_SCRIPT = fileURLToPath(new URL('wrk.lua', import.meta.url));
const PROVISION_ENTRY = fileURLToPath(new URL('provision.ts', import.meta.url));
const ENROLL_CONCURRENCY = 16;

export function machine(): string {
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  return `Node ${process.version}, ${availableParallelism()} × ${cpus()[0]?.model.trim() ?? 'CPU'}, load average ${load}`;
}

export function requireBuild(): void {
  if (!existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run \`npm run build\` first`);
}

/**
 * The baseline: node:http (node:https with CERT and KEY set, the same certificate as the server's)
 * reading and parsing each body as JSON and answering what the reference server answers (the
 * heartbeat's JSON, 204 for postures), nothing stored.
 */
const BARE_SERVER = `
const fs = require('node:fs');
const tls = process.env.CERT ? { cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) } : undefined;
const server = (tls ? require('node:https').createServer.bind(null, tls) : require('node:http').createServer)((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.headers.authorization) return res.writeHead(404).end();
    JSON.parse(body);
    if (req.url === '${ROUTES.postures}') return res.writeHead(204).end();
    if (req.url !== '${ROUTES.heartbeat}') return res.writeHead(404).end();
    const answer = JSON.stringify({ device_id: 'dev_0f6f0c1d2e3a4b5c6d7e8f9012345678', heartbeat_interval_seconds: 300, posture_interval_seconds: 3600, server_time: new Date().toISOString() });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: (tls ? 'https' : 'http') + '://127.0.0.1:' + server.address().port })));
`;

export interface Spawned {
  child: ChildProcess;
  url: string;
  /** Its standard output and error. */
  log: string;
}

let spawned = 0;

/** Spawns a server whose output goes to its own file (nothing in this process drains it) and waits for its URL. */
export async function spawnAnnouncing(args: string[], dir: string, name: string, env: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  const logFile = join(dir, `${name}-${(spawned += 1)}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
  closeSync(fd);
  for (let waited = 0; waited < 15_000; waited += 50) {
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('"url"'));
    if (line) return { child, url: (JSON.parse(line) as { url: string }).url, log: logFile };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start:\n${readFileSync(logFile, 'utf8')}`);
}

/**
 * The reference server at its defaults, except the per-device rate limits: compressed time makes
 * every device send far faster than its schedule, so they are raised (not turned off: their cost
 * stays in the figure), and the load comes from one address.
 */
export function spawnReference(
  dir: string,
  db: string,
  extra: string[] = [],
  nodeArgs: string[] = [],
  serverBin = SERVER_BIN,
): Promise<Spawned> {
  const limits = ['--rate-limit-heartbeats', '1000000', '--rate-limit-postures', '1000000', '--rate-limit-posture-mib', '1000000'];
  const args = [
    ...nodeArgs,
    serverBin,
    'serve',
    '--db',
    db,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--max-connections-per-address',
    '0',
    ...limits,
  ];
  return spawnAnnouncing([...args, ...extra], dir, 'server');
}

/** The bare baseline; over TLS with the server's certificate when `tls` is given. */
export function spawnBare(dir: string, tls?: { certFile: string; keyFile: string }): Promise<Spawned> {
  return spawnAnnouncing(['-e', BARE_SERVER], dir, 'bare', tls ? { CERT: tls.certFile, KEY: tls.keyFile } : {});
}

export async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

export interface Device {
  apiKey: string;
  hardwareUuid: string;
}

/** A heartbeat as the device's agent sends it. */
export function heartbeatRequest(device: Pick<Device, 'hardwareUuid'>) {
  return {
    hardware_uuid: device.hardwareUuid,
    serial_number: `SN-${device.hardwareUuid.slice(-12)}`,
    hostname: `bench-${device.hardwareUuid.slice(-12)}`,
    platform: 'LINUX' as const,
    os_version: 'Debian GNU/Linux 12 (bookworm)',
    agent_version: '0.1.0',
  };
}

export const heartbeatBody = (device: Device): string => JSON.stringify(heartbeatRequest(device));

const CHECKS = [
  'DISK_ENCRYPTION',
  'FIREWALL',
  'SCREEN_LOCK',
  'OS_UPDATES',
  'OS_SUPPORTED',
  'ANTIVIRUS',
  'PASSWORD_POLICY',
  'REMOTE_LOGIN',
  'TIME_SYNC',
];

/** A posture upload of `count` results, shaped like the agent's (evidence included). */
export function posturesBody(count: number): string {
  const observedAt = new Date().toISOString();
  const results = Array.from({ length: count }, (_, i) => ({
    check_key: CHECKS[i % CHECKS.length],
    status: i % 7 === 0 ? 'FAIL' : 'PASS',
    evidence: { source: 'bench', detail: `result ${i}`, values: [i, i + 1] },
    observed_at: observedAt,
  }));
  return JSON.stringify({ results });
}

/** The default cadence: per device-hour 12 heartbeats (300 s) and 1 posture upload of 9 results (3,600 s). */
export const HEARTBEATS_PER_HOUR = 12;
export const REQUESTS_PER_DEVICE_HOUR = 13;
export const RESULTS_PER_UPLOAD = 9;

/** The fleet's requests as wrk.lua lines: request i goes to device i mod N; every 13th is that device's posture upload. */
export function fleetRequests(devices: Device[]): string[] {
  const upload = posturesBody(RESULTS_PER_UPLOAD);
  return Array.from({ length: devices.length * REQUESTS_PER_DEVICE_HOUR }, (_, i) => {
    const device = devices[i % devices.length]!;
    return i % REQUESTS_PER_DEVICE_HOUR === REQUESTS_PER_DEVICE_HOUR - 1
      ? requestLine(device.apiKey, ROUTES.postures, upload)
      : requestLine(device.apiKey, ROUTES.heartbeat, heartbeatBody(device));
  });
}

/**
 * `count` devices of one organization, each enrolled through POST /enroll with its own token and
 * activated by a first heartbeat with its own hardware_uuid, as real agents would.
 */
export async function enrollFleet(dir: string, url: string, db: string, count: number, ca?: string): Promise<Device[]> {
  const tokens = await provisionTokens(dir, db, count);
  const devices: Device[] = new Array<Device>(tokens.length);
  const dispatcher = new Agent({ connect: ca === undefined ? {} : { ca }, connections: ENROLL_CONCURRENCY });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < tokens.length; i = next++) {
      const apiKey = await postJson<{ api_key: string }>(dispatcher, url, ROUTES.enroll, { token: tokens[i] });
      const device = { apiKey: apiKey.api_key, hardwareUuid: `bench-${process.pid}-${i.toString().padStart(8, '0')}` };
      await postJson(dispatcher, url, ROUTES.heartbeat, JSON.parse(heartbeatBody(device)), device.apiKey);
      devices[i] = device;
    }
  };
  try {
    await Promise.all(Array.from({ length: ENROLL_CONCURRENCY }, worker));
  } finally {
    await dispatcher.close();
  }
  return devices;
}

/**
 * A consistent copy of a SQLite database another process is serving (VACUUM INTO): the same fleet
 * for a second server process, whose writes then do not empty the first one's device cache.
 */
export function copyDatabase(from: string, to: string): void {
  const source = new Sqlite(from, { readonly: true });
  try {
    source.prepare('VACUUM INTO ?').run(to);
  } finally {
    source.close();
  }
}

/** `count` PENDING devices of organization `bench` created through the server's Store, as `device create` does: their enrollment tokens. */
export async function provisionTokens(dir: string, db: string, count: number): Promise<string[]> {
  const bundle = await bundleHelper(PROVISION_ENTRY, join(dir, 'provision.cjs'));
  const { stdout } = await run(process.execPath, [bundle, db, 'bench', String(count)], { maxBuffer: 1 << 30, env: helperEnv() });
  return stdout.trim().split('\n');
}

const NODE_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));
/** The helpers' bundles live in a temporary directory; their native addons come from this checkout. */
const helperEnv = () => ({ ...process.env, NODE_PATH: NODE_MODULES });

/** A helper script bundled like the server itself (CommonJS, native addons external), to run with plain node. */
async function bundleHelper(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['better-sqlite3', 'better-sqlite3-napi'],
    logLevel: 'warning',
  });
  return outfile;
}

async function postJson<T>(dispatcher: Dispatcher, url: string, path: string, body: unknown, apiKey?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const answer = await request(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`${path} answered ${answer.statusCode}: ${text}`);
  return JSON.parse(text) as T;
}

export interface WrkResult {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
}

export interface LoadOptions {
  url: string;
  /** One line per request (`requestLine`), taken round-robin. */
  requests: string[];
  connections: number;
  seconds: number;
  transport: Transport;
  dir: string;
  /**
   * Each connection waits this long after an answer before its next request: a rate far below
   * saturation, as a fleet's, where each request meets an idle process. 0 (the default): closed loop.
   */
  paceMs?: number;
}

/** One line of a wrk request file. */
export function requestLine(apiKey: string, path: string, body: string): string {
  return `${apiKey}\t${path}\t${body}`;
}

/** A wrk run (one thread, its own process), closed-loop unless paced; every error kind counted. */
export async function wrk(options: LoadOptions): Promise<WrkResult> {
  const file = join(options.dir, 'requests.tsv');
  writeFileSync(file, `${options.requests.join('\n')}\n`, { mode: 0o600 });
  const { stdout } = await run(
    'wrk',
    [
      '-t1',
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      WRK_SCRIPT,
      options.url,
      '--',
      file,
      options.transport,
      String(options.paceMs ?? 0),
    ],
    { maxBuffer: 1 << 24 },
  ).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('wrk is missing: apt-get install -y wrk');
    throw error;
  });
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
  return JSON.parse(line) as WrkResult;
}

export const perSecond = (r: WrkResult): number => r.requests / (r.duration_us / 1e6);
export const errorsOf = (r: WrkResult): number => r.connect + r.read + r.write + r.status + r.timeout;

/** The process and its descendants (a `--workers` primary's workers, a PostgreSQL postmaster's backends). */
function processTree(root: number): number[] {
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) {
    for (const task of readdirSync(`/proc/${tree[i]}/task`)) {
      const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, 'utf8').trim();
      if (children) tree.push(...children.split(' ').map(Number));
    }
  }
  return tree;
}

/**
 * CPU seconds (user + system) the process and its descendants, live or reaped, have used so far, and their resident
 * memory now and at peak (bytes; the peak is the sum of each process's own peak).
 */
export function processUsage(pid: number): { cpuSeconds: number; rss: number; peakRss: number } {
  let cpuSeconds = 0;
  let rss = 0;
  let peakRss = 0;
  for (const member of processTree(pid)) {
    let stat: string;
    let status: string;
    try {
      stat = readFileSync(`/proc/${member}/stat`, 'utf8');
      status = readFileSync(`/proc/${member}/status`, 'utf8');
    } catch {
      continue; // ended since it was listed
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime and cstime are fields 14 to 17 of stat(5), in clock ticks (100 per second
    // on Linux); cutime and cstime are the children it reaped, so a PostgreSQL backend or a worker
    // that ended between two readings still counts.
    cpuSeconds += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    rss += kib('VmRSS');
    peakRss += kib('VmHWM');
  }
  return { cpuSeconds, rss, peakRss };
}

export const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);

/**
 * A self-signed P-256 certificate for 127.0.0.1 and localhost, and its key, written into `dir`/tls:
 * a directory of their own, as a deployment keeps them. The server watches their directory for
 * renewals; beside the benchmark's database and logs every write there was a watch event.
 */
export function makeCertificate(dir: string): { certFile: string; keyFile: string; cert: string } {
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  const certFile = join(tlsDir, 'cert.pem');
  const keyFile = join(tlsDir, 'key.pem');
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

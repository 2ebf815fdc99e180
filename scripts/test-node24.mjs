// `npm run test:node24 [-- <vitest args>]`: the whole suite on the Node runtime the executables
// ship (linux-x64's, from the npm registry like `npm run package`), beside `npm test` on the
// machine's Node. better-sqlite3 is a native addon built per Node ABI: its Node 24 build is made
// once from source against that runtime's headers, cached in .cache/, swapped in for the run and
// swapped back afterwards. Don't run another test run in this checkout meanwhile: it would load
// the other runtime's addon. Without arguments it runs the `sqlite` project (every test): the
// PostgreSQL rerun of the server files exercises the same JavaScript through `pg`, which has no
// native part, and `npm test` already runs it on Node 20.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TARGETS, fetchPackage } from './package.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.cache', 'addons');
const [runtimeName, runtimeVersion, nodePath] = TARGETS['linux-x64'].runtime;
const runtime = fetchPackage(runtimeName, runtimeVersion);
const node24 = join(runtime, nodePath);
const env = { ...process.env, PATH: `${dirname(node24)}${delimiter}${process.env.PATH}` };

function run(file, args, options = {}) {
  const result = spawnSync(file, args, { stdio: 'inherit', env, cwd: ROOT, ...options });
  return result.status ?? 1;
}

const abiOf = (node) => spawnSync(node, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim();
const addonDir = dirname(createRequire(join(ROOT, 'package.json')).resolve('better-sqlite3/package.json'));
const addon = join(addonDir, 'build', 'Release', 'better_sqlite3.node');
const addonVersion = createRequire(join(ROOT, 'package.json'))('better-sqlite3/package.json').version;
const cached = (abi) => join(CACHE, `better-sqlite3-${addonVersion}-abi${abi}.node`);

mkdirSync(CACHE, { recursive: true });
const hostAbi = abiOf(process.execPath);
const shippedAbi = abiOf(node24);
// The addon in place is the machine's Node build (npm ci made it); keep it to put back.
if (!existsSync(cached(hostAbi))) copyFileSync(addon, cached(hostAbi));
let status = 1;
try {
  if (!existsSync(cached(shippedAbi))) {
    console.log(`building better-sqlite3 ${addonVersion} for Node ${runtimeVersion} (ABI ${shippedAbi}) from source`);
    if (run('npm', ['rebuild', 'better-sqlite3', '--build-from-source', `--nodedir=${runtime}`]) !== 0) {
      throw new Error('better-sqlite3 did not build for the shipped runtime');
    }
    copyFileSync(addon, cached(shippedAbi));
  } else {
    copyFileSync(cached(shippedAbi), addon);
  }
  console.log(`vitest on Node ${runtimeVersion}`);
  status = run(node24, [
    join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    ...(process.argv.length > 2 ? process.argv.slice(2) : ['--project', 'sqlite']),
  ]);
} finally {
  copyFileSync(cached(hostAbi), addon);
}
process.exit(status);

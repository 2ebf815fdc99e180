// `npm run test:node24 [-- <vitest args>]`: the whole suite on the Node runtime the executables
// ship (linux-x64's, from the npm registry like `npm run package`), beside `npm test` on the
// machine's Node. On Node 24 the server loads better-sqlite3 13 (Node-API, prebuilt:
// src/server/db/sqliteDriver.ts), so nothing is rebuilt; better-sqlite3 12 stays built for the
// machine's Node, and a database opened with it here would fail at once on its ABI instead of aborting
// at random later (nodejs/node#65446). Without arguments it runs the `sqlite` project (every test):
// the PostgreSQL rerun of the server files exercises the same JavaScript through `pg`, which has no
// native part, and `npm test` already runs it on Node 20.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TARGETS, fetchPackage } from './package.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [runtimeName, runtimeVersion, nodePath] = TARGETS['linux-x64'].runtime;
const node24 = join(fetchPackage(runtimeName, runtimeVersion), nodePath);

console.log(`vitest on Node ${runtimeVersion}`);
const result = spawnSync(
  node24,
  [
    join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    ...(process.argv.length > 2 ? process.argv.slice(2) : ['--project', 'sqlite']),
  ],
  { stdio: 'inherit', cwd: ROOT, env: { ...process.env, PATH: `${dirname(node24)}${delimiter}${process.env.PATH}` } },
);
process.exit(result.status ?? 1);

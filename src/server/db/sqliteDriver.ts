// The SQLite driver for the running Node, in one place: the server, its WAL checkpoint thread, the
// tests and the benchmarks all load the same module, so none of them brings in the other one.
import type Database from 'better-sqlite3';

/**
 * better-sqlite3 13 (Node-API) where the runtime offers Node-API 10, which its prebuilt addon is
 * built for (Node 24; on Node 20, which offers 9, that addon crashes the process); 12 elsewhere.
 * 12 wraps its objects in Node's ObjectWrap, and Node 24 aborts the process (SIGABRT, "Assertion
 * failed: (env) != nullptr") when V8 finalizes one after the environment is gone
 * (nodejs/node#65446): seen in `device show` and in test workers on Node 24. The two have the same
 * API.
 */
const NODE_API_SQLITE = Number(process.versions.napi) >= 10;

// Literal names, so that the bundler (scripts/build.mjs) sees them and keeps them external.
export const Sqlite: typeof Database = NODE_API_SQLITE
  ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- chosen by the running Node, loaded synchronously
    (require('better-sqlite3-napi') as typeof Database)
  : // eslint-disable-next-line @typescript-eslint/no-require-imports -- chosen by the running Node, loaded synchronously
    (require('better-sqlite3') as typeof Database);

/** The same module's file, for the WAL checkpoint thread (walCheckpointer.ts). */
export const sqliteModuleFile = (): string =>
  NODE_API_SQLITE ? require.resolve('better-sqlite3-napi') : require.resolve('better-sqlite3');

// The server's SQLite driver for these ESM scripts, which have no `require` of their own to load
// src/server/db/sqliteDriver.ts: the same choice (13 where the runtime offers Node-API 10, 12
// elsewhere; the reasons are there).
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';

const require = createRequire(import.meta.url);
export const Sqlite = require(Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3') as typeof Database;

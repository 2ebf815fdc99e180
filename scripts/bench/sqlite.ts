// The server's SQLite driver for these ESM scripts, which have no `require` of their own to load
// src/server/db/sqliteDriver.ts: the same choice (13 from Node 22 on, 12 on Node 20; the reasons
// are there).
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';

const require = createRequire(import.meta.url);
export const Sqlite = require(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
) as typeof Database;

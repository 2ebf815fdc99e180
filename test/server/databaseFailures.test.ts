// What a SQLite error means for a request (src/server/db/failures.ts), on errors a real SQLite
// raises: a lock another connection holds and a database that may not grow are weather (503); a
// constraint is not. PostgreSQL's side: test/server/postgres/failures.test.ts.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { databaseFailure } from '../../src/server/db/failures';

const dir = mkdtempSync(join(tmpdir(), 'device-agent-failures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function raised(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('no error was raised');
}

describe('SQLite errors', () => {
  test('SQLITE_BUSY: another connection holds the write lock', () => {
    const path = join(dir, 'busy.db');
    const holder = new Database(path);
    const other = new Database(path, { timeout: 0 });
    try {
      holder.exec('CREATE TABLE t (x)');
      holder.exec('BEGIN IMMEDIATE');
      const error = raised(() => other.exec('INSERT INTO t VALUES (1)'));
      expect((error as { code: string }).code).toBe('SQLITE_BUSY');
      expect(databaseFailure(error)).toBe('unavailable');
    } finally {
      holder.close();
      other.close();
    }
  });

  test('SQLITE_FULL: the database may not grow', () => {
    const db = new Database(join(dir, 'full.db'));
    try {
      db.exec('CREATE TABLE t (x)');
      db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
      const error = raised(() => db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000)));
      expect((error as { code: string }).code).toBe('SQLITE_FULL');
      expect(databaseFailure(error)).toBe('unavailable');
    } finally {
      db.close();
    }
  });

  test('a constraint, or an error that is not a database error, is neither', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (x UNIQUE)');
      db.exec('INSERT INTO t VALUES (1)');
      const error = raised(() => db.exec('INSERT INTO t VALUES (1)'));
      expect((error as { code: string }).code).toBe('SQLITE_CONSTRAINT_UNIQUE');
      expect(databaseFailure(error)).toBeUndefined();
    } finally {
      db.close();
    }
    expect(databaseFailure(new TypeError('x is not a function'))).toBeUndefined();
    expect(databaseFailure('SQLITE_BUSY')).toBeUndefined();
  });
});

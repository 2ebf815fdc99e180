// What a SQLite error means for a request (src/server/db/failures.ts), on errors a real SQLite
// raises: a lock another connection holds and a database that may not grow are weather (503); a
// constraint is not. PostgreSQL's side: test/server/postgres/failures.test.ts. And the answer the
// error handlers give (src/server/databaseErrors.ts): 503 with Retry-After, warned once per 10 s.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import pino from 'pino';
import { databaseFailure } from '../../src/server/db/failures';
import { databaseErrorAnswers } from '../../src/server/databaseErrors';

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

/** A real SQLITE_BUSY: another connection holds the write lock. */
function busyError(): unknown {
  const path = join(dir, 'busy.db');
  const holder = new Database(path);
  const other = new Database(path, { timeout: 0 });
  try {
    holder.exec('CREATE TABLE IF NOT EXISTS t (x)');
    holder.exec('BEGIN IMMEDIATE');
    return raised(() => other.exec('INSERT INTO t VALUES (1)'));
  } finally {
    holder.close();
    other.close();
  }
}

describe('SQLite errors', () => {
  test('SQLITE_BUSY: another connection holds the write lock', () => {
    const error = busyError();
    expect((error as { code: string }).code).toBe('SQLITE_BUSY');
    expect(databaseFailure(error)).toBe('unavailable');
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
    for (const thrown of ['SQLITE_BUSY', null, undefined, { code: 'SQLITE_BUSY' }]) expect(databaseFailure(thrown)).toBeUndefined();
  });
});

describe('the answer to a request that a database error ended', () => {
  test('unavailable: 503 database_unavailable with Retry-After, one warning per 10 s with the count', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let now = 1_000_000;
    const answer = databaseErrorAnswers(logger, () => now);
    const error = busyError();
    const first = answer(error);
    expect({ status: first?.statusCode, code: first?.code, headers: first?.headers }).toEqual({
      status: 503,
      code: 'database_unavailable',
      headers: { 'retry-after': '5' },
    });
    now += 9_999;
    answer(error);
    answer(error);
    now += 1;
    answer(error);
    const warnings = lines.filter((line) => line.msg === 'the database is unavailable: answering 503');
    expect(warnings.map((line) => [line.level, line.code, line.requests])).toEqual([
      [40, 'SQLITE_BUSY', 1],
      [40, 'SQLITE_BUSY', 3],
    ]);
    expect(JSON.stringify(lines)).not.toContain('stack');
  });

  test('anything else is not a database answer', () => {
    const answer = databaseErrorAnswers(pino({ level: 'silent' }));
    expect(answer(new Error('a defect'))).toBeUndefined();
  });
});

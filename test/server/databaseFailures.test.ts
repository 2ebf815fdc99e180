// What a SQLite error means for a request (src/server/db/failures.ts), on errors a real SQLite
// raises: a lock another connection holds, a database that may not grow and a write the system
// refuses (I/O error) are weather (503); a constraint is not. PostgreSQL's and the network's errors replayed from their recordings (made and
// checked live by test/server/postgres/failures.test.ts). And the answer the
// error handlers give (src/server/databaseErrors.ts): 503 with Retry-After, warned once per 10 s.
import { Sqlite as Database, sqliteModuleFile } from '../../src/server/db/sqliteDriver';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import pino from 'pino';
import { DatabaseError } from 'pg';
import { databaseFailure, type DatabaseFailure } from '../../src/server/db/failures';
import { recordedErrors, type RecordedError } from '../support/databaseErrorRecordings';
import { databaseErrorAnswers } from '../../src/server/databaseErrors';
import { requireTools } from '../support/requireTools';

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

  const prlimit = requireTools(['prlimit'], 'SQLITE_IOERR from a write the system refuses (a file size limit)');
  test.skipIf(prlimit.skip)(`SQLITE_IOERR: a write the system refuses (${prlimit.title})`, () => {
    // A process whose files may not grow past 64 KiB (RLIMIT_FSIZE; Node ignores SIGXFSZ, so the
    // write fails with EFBIG, which SQLite reports as an I/O error, unlike ENOSPC's SQLITE_FULL).
    const child = spawnSync(
      'prlimit',
      [
        '--fsize=65536',
        process.execPath,
        '-e',
        `const Database = require(${JSON.stringify(sqliteModuleFile())});
         const db = new Database(${JSON.stringify(join(dir, 'ioerr.db'))});
         db.pragma('journal_mode = WAL');
         db.exec('CREATE TABLE t (x)');
         try { db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(200000)); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`,
      ],
      { encoding: 'utf8' },
    );
    expect(child.status, child.stderr).toBe(0);
    const seen = JSON.parse(child.stdout) as { code: string; message: string };
    expect(seen.code).toMatch(/^SQLITE_IOERR/);
    // The error as better-sqlite3 raised it in that process, rebuilt here.
    expect(databaseFailure(new Database.SqliteError(seen.message, seen.code))).toBe('unavailable');
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

/** What each recorded PostgreSQL or network error means (test/fixtures/server/databaseErrors.json). */
const MEANING: Record<string, DatabaseFailure | undefined> = {
  'statement timeout': 'unavailable',
  'connection terminated by the server': 'unavailable',
  'a query on the broken client': 'unavailable',
  'query timeout': 'unavailable',
  'role connection limit': 'unavailable',
  'lock timeout': 'unavailable',
  deadlock: 'unavailable',
  'refused connection': 'unavailable',
  'connection reset': 'unavailable',
  'broken pipe': 'unavailable',
  'no route to the host': 'unavailable',
  'connect timeout of a client': 'unavailable',
  'connect timeout of a pool': 'unavailable',
  'a full pool': 'unavailable',
  'a NUL character': 'refused_value',
  'a malformed number': 'refused_value',
  'a number out of range': 'refused_value',
  'a malformed time': 'refused_value',
  'an index entry too long': 'refused_value',
  'syntax error': undefined,
  'unique violation': undefined,
  'indeterminate collation': undefined,
};

/** The recorded error rebuilt as pg raised it: its class, code and message. */
function replayed(recording: RecordedError): Error {
  const error = recording.class === 'DatabaseError' ? new DatabaseError(recording.message, 0, 'error') : new Error(recording.message);
  if (recording.code !== null) Object.assign(error, { code: recording.code });
  return error;
}

describe('PostgreSQL and network errors, replayed from their recordings (live: postgres/failures.test.ts)', () => {
  test('every kind is recorded', () => {
    expect(new Set(recordedErrors().map((recording) => recording.label))).toEqual(new Set(Object.keys(MEANING)));
  });

  test.each(recordedErrors().map((recording) => [recording.label, recording] as const))('%s', (label, recording) => {
    expect(databaseFailure(replayed(recording))).toBe(MEANING[label]);
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
    expect({ status: first?.statusCode, code: first?.code, message: first?.message, headers: first?.headers }).toEqual({
      status: 503,
      code: 'database_unavailable',
      message: 'the database is unavailable for a moment; try again later',
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

  test('a value the database refuses: 400, logged at debug with its SQLSTATE only, no warning', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const nul = recordedErrors().find((recording) => recording.label === 'a NUL character')!;
    const refused = databaseErrorAnswers(logger)(replayed(nul));
    expect({ status: refused?.statusCode, code: refused?.code, message: refused?.message }).toEqual({
      status: 400,
      code: 'bad_request',
      message: 'a value in the request is not one the database can store (a NUL character, an over-long or malformed value)',
    });
    expect(lines.map(({ level, msg, sqlstate }) => ({ level, msg, sqlstate }))).toEqual([
      { level: 20, msg: 'the database refused a value of a request (400)', sqlstate: '22021' },
    ]);
    expect(JSON.stringify(lines)).not.toContain(nul.message);
  });

  test('anything else is not a database answer', () => {
    const answer = databaseErrorAnswers(pino({ level: 'silent' }));
    expect(answer(new Error('a defect'))).toBeUndefined();
  });
});

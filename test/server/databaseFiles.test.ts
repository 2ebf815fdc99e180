// The database files as an operator meets them: an existing database (and its -wal/-shm) left
// readable by others is made owner-only, one owned by someone else is refused, and servers
// starting together on a new database all come up.
import { chmodSync, chownSync, existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite from 'better-sqlite3';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { describe, expect, test } from 'vitest';
import { startServer, tryServerCli, type RunningServer } from '../support/server';
import { call, expectUsageError } from './client';

const scratch = () => mkdtempSync(join(tmpdir(), 'device-agent-dbfiles-test-'));
const modeOf = (path: string) => statSync(path).mode & 0o777;
const isRoot = process.getuid?.() === 0;

/** A migrated database whose -wal and -shm exist (a second connection stays open), all mode 0644. */
function worldReadableDatabase(dir: string): { path: string; holder: BetterSqlite.Database } {
  const path = join(dir, 'fleet.db');
  const holder = new Database(path);
  holder.pragma('journal_mode = WAL');
  holder.exec('CREATE TABLE IF NOT EXISTS probe (x)');
  holder.exec('INSERT INTO probe VALUES (1)');
  for (const file of [path, `${path}-wal`, `${path}-shm`]) chmodSync(file, 0o644);
  return { path, holder };
}

describe('database files', () => {
  test('an existing database and its -wal and -shm readable by others are made owner-only when serve opens them', async () => {
    const { path, holder } = worldReadableDatabase(scratch());
    try {
      const server = await startServer({ dbPath: path });
      try {
        for (const file of [path, `${path}-wal`, `${path}-shm`])
          expect({ file, mode: modeOf(file).toString(8) }).toEqual({ file, mode: '600' });
      } finally {
        await server.stop();
      }
    } finally {
      holder.close();
    }
  });

  test('the admin commands make it owner-only too', async () => {
    const { path, holder } = worldReadableDatabase(scratch());
    holder.close();
    chmodSync(path, 0o664);
    const outcome = await tryServerCli(['device', 'list', '--db', path]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(modeOf(path).toString(8)).toBe('600');
  });

  test.skipIf(!isRoot)('a database owned by another user is refused with exit 2 and a message, and left as it was', async () => {
    const { path, holder } = worldReadableDatabase(scratch());
    holder.close();
    chownSync(path, 65534, 65534);
    const outcome = await tryServerCli(['serve', '--db', path, '--port', '0']);
    expectUsageError(outcome, /fleet\.db belongs to uid 65534, not to this user \(uid 0\)/);
    expect(statSync(path).uid).toBe(65534);
    expect(modeOf(path).toString(8)).toBe('644');
  });

  test.skipIf(!isRoot)('a -wal owned by another user is refused the same way', async () => {
    const { path, holder } = worldReadableDatabase(scratch());
    chownSync(`${path}-wal`, 65534, 65534);
    try {
      const outcome = await tryServerCli(['device', 'list', '--db', path]);
      expectUsageError(outcome, /fleet\.db-wal belongs to uid 65534/);
    } finally {
      holder.close();
    }
  });

  test('four servers starting together on one new database all come up (no "database is locked")', async () => {
    for (let round = 0; round < 3; round += 1) {
      const path = join(scratch(), 'new.db');
      const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => startServer({ dbPath: path })));
      const started = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      try {
        expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String(o.reason))).toEqual([]);
        for (const server of started) expect((await call(server, '/healthz', { method: 'GET' })).status).toBe(200);
      } finally {
        await Promise.all(started.map((server: RunningServer) => server.stop()));
      }
      expect(existsSync(path)).toBe(true);
      expect(modeOf(path).toString(8)).toBe('600');
    }
  });
});

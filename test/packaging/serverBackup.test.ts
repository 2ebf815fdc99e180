// `device-agent-server backup`, the online SQLite backup of docs/server.md ("Backup and restore"):
// a consistent, owner-only, self-contained copy taken while a real server writes, and clear refusals
// that leave nothing behind. The restore procedure itself is run in a booted container
// (serverService.test.ts).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/agent';
import { startServer, tryServerCli, type RunningServer } from '../support/server';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Device ids in a database, through the admin CLI. */
async function deviceIds(db: string): Promise<string[]> {
  const listed = await tryServerCli(['device', 'list', '--db', db, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { device_id: string }[]).map((device) => device.device_id).sort();
}

describe('device-agent-server backup', () => {
  it('copies a database while the server writes to it: consistent, owner-only, one file, never in WAL', async () => {
    const before = await server.createDevice({ org: 'backup' });
    const out = tempDir('device-agent-backup-');
    const to = join(out, 'fleet-backup.db');
    // Devices created during the backup land in it or not, never halfway.
    const [backedUp, ...during] = await Promise.all([
      tryServerCli(['backup', '--db', server.dbPath, '--to', to]),
      ...Array.from({ length: 8 }, () => server.createDevice({ org: 'backup' })),
    ]);
    expect(backedUp.code, backedUp.stderr).toBe(0);
    expect(backedUp.stdout).toMatch(new RegExp(`^Backed up ${server.dbPath} into ${to} \\(\\d+ pages\\)\\.\\n$`));
    expect(statSync(to).mode & 0o777).toBe(0o600);
    // Rollback-journal mode (header bytes 18 and 19 are 1, WAL is 2): a file that stands alone.
    const header = readFileSync(to).subarray(0, 20);
    expect([header[18], header[19]]).toEqual([1, 1]);
    expect(readdirSync(out)).toEqual(['fleet-backup.db']);

    const copied = await deviceIds(to);
    expect(copied).toContain(before.device_id);
    const all = await deviceIds(server.dbPath);
    expect(all).toEqual(expect.arrayContaining(copied));
    expect(all.length - copied.length).toBeLessThanOrEqual(during.length);
  });

  it('never overwrites: an existing file is refused (exit 2) and left as it was', async () => {
    const out = tempDir('device-agent-backup-');
    const to = join(out, 'taken.db');
    writeFileSync(to, 'an older backup');
    const refused = await tryServerCli(['backup', '--db', server.dbPath, '--to', to]);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toBe(`device-agent-server: ${to} already exists; choose a new file\n`);
    expect(readFileSync(to, 'utf8')).toBe('an older backup');
    expect(readdirSync(out)).toEqual(['taken.db']);
  });

  it('refuses a missing database or a missing directory, leaving no partial file', async () => {
    const out = tempDir('device-agent-backup-');
    const missing = join(out, 'none.db');
    const noDatabase = await tryServerCli(['backup', '--db', missing, '--to', join(out, 'copy.db')]);
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toContain(`no database at ${missing}`);
    expect(readdirSync(out)).toEqual([]);

    const noDirectory = await tryServerCli(['backup', '--db', server.dbPath, '--to', join(out, 'gone', 'copy.db')]);
    expect(noDirectory.code).toBe(2);
    expect(noDirectory.stderr).toBe(`device-agent-server: cannot write into ${join(out, 'gone')}: ENOENT\n`);
    expect(existsSync(join(out, 'gone'))).toBe(false);
  });

  it('points a PostgreSQL database at pg_dump, naming it without its password', async () => {
    const refused = await tryServerCli(['backup', '--db', 'postgres://ops@127.0.0.1:9/fleet', '--to', join(tempDir(), 'x.db')], {
      env: { DEVICE_AGENT_SERVER_DB: undefined },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'device-agent-server: back up postgres://ops@127.0.0.1:9/fleet with pg_dump (docs/server.md, "Backup and restore")\n',
    );
  });
});

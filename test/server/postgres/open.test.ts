// Opening a PostgreSQL store: migrations under the advisory lock (several servers starting at once
// on a new database), refusals with clear messages, and the ways a password may arrive.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDatabaseLocation } from '../../../src/server/db/location';
import { openStore } from '../../../src/server/db/open';
import { POSTGRES_SCHEMA_VERSION } from '../../../src/server/db/postgresMigrations';
import { createDatabase, postgresEnv, queryDatabase } from '../../support/postgres';
import { SERVER_BIN, tryServerCli } from '../../support/server';

const dir = mkdtempSync(join(tmpdir(), 'device-agent-pg-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const password = () => postgresEnv().PGPASSWORD!;

/** Runs `work` with PGPASSWORD set to `value` (or unset), as a server started that way would see it. */
async function withPgPassword<T>(value: string | undefined, work: () => Promise<T>): Promise<T> {
  const saved = process.env.PGPASSWORD;
  if (value === undefined) delete process.env.PGPASSWORD;
  else process.env.PGPASSWORD = value;
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env.PGPASSWORD;
    else process.env.PGPASSWORD = saved;
  }
}

function open(url: string, options: { mustExist?: boolean; passwordFile?: string } = {}) {
  return openStore(parseDatabaseLocation(url), options);
}

describe('opening a PostgreSQL database', () => {
  it('applies each migration once when several servers start on a new database together', async () => {
    const url = await createDatabase();
    const stores = await withPgPassword(password(), () => Promise.all(Array.from({ length: 6 }, () => open(url))));
    await Promise.all(stores.map((store) => store.close()));
    const versions = await queryDatabase<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('refuses a schema newer than this program, naming the database without its password', async () => {
    const url = await createDatabase();
    await withPgPassword(password(), async () => (await open(url)).close());
    await queryDatabase(url, "INSERT INTO schema_migrations (version, description) VALUES (99, 'from the future')");
    await expect(withPgPassword(password(), () => open(url))).rejects.toThrow(
      `${url}: the database schema is version 99, newer than this program knows (${POSTGRES_SCHEMA_VERSION}); upgrade device-agent-server`,
    );
  });

  it('admin commands that read devices refuse a database that has no schema, and create none', async () => {
    const url = await createDatabase();
    const outcome = await tryServerCli(['device', 'list', '--db', url]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.stderr).toBe(`device-agent-server: no device-agent-server schema in ${url} (start \`serve --db ${url}\` first)\n`);
    expect(await queryDatabase(url, "SELECT 1 FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
  });

  it('takes the password from --db-password-file, PGPASSWORD or the environment URL, never from the command line', async () => {
    const url = await createDatabase();
    const file = join(dir, 'password');
    writeFileSync(file, `${password()}\n`, { mode: 0o600 });
    const fromFile = await withPgPassword(undefined, () => open(url, { passwordFile: file }));
    await fromFile.close();

    chmodSync(file, 0o640);
    await expect(withPgPassword(undefined, () => open(url, { passwordFile: file }))).rejects.toThrow(
      `--db-password-file ${file} is readable by others: make it owner-only (chmod 600)`,
    );

    const withSecret = url.replace('postgres@', `postgres:${password()}@`);
    const onCommandLine = await tryServerCli(['device', 'create', '--db', withSecret, '--org', 'acme']);
    expect(onCommandLine.code).toBe(2);
    expect(onCommandLine.stderr).toMatch(/a password in --db would show in the process list/);
    expect(onCommandLine.stderr).not.toContain(password());

    const inEnvironment = await tryServerCli(['device', 'create', '--org', 'acme', '--json'], {
      env: { PGPASSWORD: '', DEVICE_AGENT_SERVER_DB: withSecret },
    });
    expect(inEnvironment).toMatchObject({ code: 0, stderr: '' });
  });

  it('says why it cannot log in, without the password it tried', async () => {
    const url = await createDatabase();
    const wrong = 'not-the-password';
    const outcome = await tryServerCli(['device', 'list', '--db', url], { env: { PGPASSWORD: wrong } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe(
      `device-agent-server: cannot use ${url} as a device-agent-server database: password authentication failed for user "postgres" (28P01)\n`,
    );
  });

  it('a server given the password inside DEVICE_AGENT_SERVER_DB shows it neither in its logs nor in its process list', async () => {
    const url = await createDatabase();
    const withSecret = url.replace('postgres@', `postgres:${password()}@`);
    const child = spawn(process.execPath, [SERVER_BIN, 'serve', '--port', '0'], {
      env: { ...process.env, PGPASSWORD: '', DEVICE_AGENT_SERVER_DB: withSecret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for (const deadline = Date.now() + 15_000; !output.includes('"msg":"listening');) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const commandLine = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
      expect(commandLine).not.toContain(password());
      expect(output).toContain(`"db":"${url}"`);
      expect(output).toContain(`device create --db ${url} --org <organization>`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(output).not.toContain(password());
  });
});

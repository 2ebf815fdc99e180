// The test run's PostgreSQL cluster (started by postgresSetup.ts) as test files use it: a fresh
// database per call, its URL without the password (which reaches programs through PGPASSWORD, as it
// would in production, so that it never shows in a process list).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { PostgresCluster } from './postgresCluster';

/** True in the `postgres` vitest project, where the server tests run against PostgreSQL. */
export const ON_POSTGRES = process.env.DEVICE_AGENT_TEST_DB === 'postgres';

function cluster(): PostgresCluster {
  const reachable = inject('postgres');
  if (!reachable) throw new Error('no PostgreSQL cluster in this run: run the file in the `postgres` vitest project (--project postgres)');
  return reachable;
}

/** The environment that lets a program (server, admin CLI, psql) log in to the cluster. */
export function postgresEnv(): NodeJS.ProcessEnv {
  return { PGPASSWORD: cluster().password };
}

function databaseUrl(database: string): string {
  const { host, port, user } = cluster();
  return `postgres://${user}@${host}:${port}/${database}`;
}

/** Creates an empty database and returns its URL. */
export async function createDatabase(): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const { host, port, user, password } = cluster();
  const client = new pg.Client({ host, port, user, password, database: 'postgres' });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return databaseUrl(name);
}

/** A pool on the database of `url` as the superuser (test set-up and inspection only); the caller ends it. */
export function databasePool(url: string): pg.Pool {
  return new pg.Pool(superuserConnection(url));
}

function superuserConnection(url: string): pg.ClientConfig {
  const { host, port, user, password } = cluster();
  return { host, port, user, password, database: new URL(url).pathname.slice(1) };
}

/** Runs one query as the superuser on the database of `url` (test set-up and inspection only). */
export async function queryDatabase<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client(superuserConnection(url));
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

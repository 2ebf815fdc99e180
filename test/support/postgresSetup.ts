// vitest globalSetup of the `postgres` project: one throwaway PostgreSQL cluster for the whole run,
// handed to the test files through `provide('postgres')` (test/support/postgres.ts reads it).
import type { TestProject } from 'vitest/node';
import { startCluster, type PostgresCluster } from './postgresCluster';

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresCluster;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startCluster();
  const { host, port, user, password } = cluster;
  project.provide('postgres', { host, port, user, password });
  return () => cluster.stop();
}

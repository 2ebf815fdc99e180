import { defineConfig } from 'vitest/config';

const shared = {
  setupFiles: ['test/support/mutantEnv.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

// The server suite that must hold on every database engine: it runs a second time against a real
// PostgreSQL server (the `postgres` project; test/support/server.ts reads DEVICE_AGENT_TEST_DB).
// Files that inspect SQLite's own files stay SQLite-only; test/server/postgres/ is PostgreSQL-only.
const ON_EVERY_ENGINE = [
  'admin',
  'adminApi',
  'checkKeyCap',
  'enroll',
  'fuzz',
  'heartbeat',
  'heartbeatWrites',
  'http',
  'operations',
  'postures',
  'rateLimits',
  'remediation',
  'retention',
  'textFields',
  'unenroll',
  'workers',
]
  .map((name) => `test/server/${name}.test.ts`)
  .concat('test/console/security.test.ts');

// DEVICE_AGENT_TEST_FILES (comma-separated globs) narrows the run to those files on SQLite:
// scripts/mutation.mjs uses it.
const narrowed = process.env.DEVICE_AGENT_TEST_FILES?.split(',');

export default defineConfig({
  test: {
    // Tests drive the built programs: globalSetup rebuilds them once per run, for every project.
    globalSetup: ['test/support/globalSetup.ts'],
    // Tests start real servers and processes; two cores, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'sqlite',
          include: narrowed ?? ['test/**/*.test.ts'],
          exclude: ['test/server/postgres/**'],
        },
      },
      ...(narrowed
        ? []
        : [
            {
              test: {
                ...shared,
                name: 'postgres',
                include: [...ON_EVERY_ENGINE, 'test/server/postgres/**/*.test.ts'],
                env: { DEVICE_AGENT_TEST_DB: 'postgres' },
                globalSetup: ['test/support/postgresSetup.ts'],
              },
            },
          ]),
    ],
  },
});

import { defineConfig } from 'vitest/config';
// With an extension and nothing local imported in turn: what Vite's loader of this file wants.
import { postgresBinDirs, requireToolsIn } from './test/support/systemTools.js';

const shared = {
  setupFiles: ['test/support/mutantEnv.ts'],
  // Generous: tests wait on events, and on a loaded two-core machine (load average above 8) starting
  // a server or an agent takes seconds. These bounds only decide how long a hung test takes to fail.
  testTimeout: 120_000,
  hookTimeout: 180_000,
};

// The server suite that must hold on every database engine: it runs a second time against a real
// PostgreSQL server (the `postgres` project; test/support/server.ts reads DEVICE_AGENT_TEST_DB).
// Files that inspect SQLite's own files stay SQLite-only; test/server/postgres/ is PostgreSQL-only.
const ON_EVERY_ENGINE = [
  'admin',
  'devicePage',
  'deviceLabels',
  'adminApi',
  'audit',
  'checkKeyCap',
  'checkRequests',
  'complianceSeries',
  'enroll',
  'failingSince',
  'deviceList',
  'fuzz',
  'heartbeat',
  'heartbeatWrites',
  'http',
  'malformedInput',
  'operations',
  'policy',
  'postures',
  'rateLimits',
  'register',
  'registerLimits',
  'registerLoad',
  'remediation',
  'retention',
  'retentionSweep',
  'secretsAdminApi',
  'textFields',
  'unenroll',
  'webhooks',
  'workers',
]
  .map((name) => `test/server/${name}.test.ts`)
  .concat('test/agent/enrollSecretFleet.test.ts')
  .concat('test/console/security.test.ts', 'test/console/secretsForms.test.ts', 'test/console/signInThrottle.test.ts');

// DEVICE_AGENT_TEST_FILES (comma-separated globs) narrows the run to those files on SQLite:
// scripts/mutation.mjs uses it.
const narrowed = process.env.DEVICE_AGENT_TEST_FILES?.split(',');

// Without PostgreSQL's server binaries the `postgres` project is skipped as a whole, and says so.
const postgres =
  narrowed === undefined
    ? requireToolsIn('vitest.config.ts', ['initdb', 'pg_ctl'], 'the `postgres` project (the server suite on PostgreSQL)', postgresBinDirs())
    : undefined;

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
      ...(postgres === undefined
        ? []
        : [
            {
              test: {
                ...shared,
                name: 'postgres',
                // Skipped: no files, so vitest never starts its globalSetup (the project stays declared for knip).
                include: postgres.skip ? [] : [...ON_EVERY_ENGINE, 'test/server/postgres/**/*.test.ts'],
                env: { DEVICE_AGENT_TEST_DB: 'postgres' },
                globalSetup: ['test/support/postgresSetup.ts'],
              },
            },
          ]),
    ],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // DEVICE_AGENT_TEST_FILES (comma-separated globs) narrows the run: scripts/mutation.mjs uses it.
    include: process.env.DEVICE_AGENT_TEST_FILES?.split(',') ?? ['test/**/*.test.ts'],
    setupFiles: ['test/support/mutantEnv.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real servers and processes; two cores, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real servers and processes; two cores, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
  },
});

// Stryker's shared settings; `npm run test:mutation` (scripts/mutation.mjs) runs it once per
// module with that module's files to mutate, the tests that pin it and how coverage is measured,
// passed in the environment (STRYKER_MUTATE, STRYKER_COVERAGE, STRYKER_REPORT).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: process.env.STRYKER_MUTATE?.split(','),
  coverageAnalysis: process.env.STRYKER_COVERAGE ?? 'perTest',
  reporters: ['clear-text', 'json'],
  jsonReporter: { fileName: process.env.STRYKER_REPORT ?? 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  concurrency: 2,
  timeoutMS: 30_000,
  disableTypeChecks: true,
  thresholds: { high: 90, low: 80, break: null },
};

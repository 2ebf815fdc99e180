// Under Stryker (`npm run test:mutation`), the active mutant lives in this worker's global
// namespace; the real programs the tests spawn read it from their environment instead (Stryker's
// instrumented code looks at __STRYKER_ACTIVE_MUTANT__), so children run the same mutant.
// Registered after Stryker's own setup file, so its beforeAll has already chosen the mutant.
import { beforeAll } from 'vitest';

beforeAll(() => {
  const active = (globalThis as { __stryker__?: { activeMutant?: string } }).__stryker__?.activeMutant;
  if (active === undefined) delete process.env.__STRYKER_ACTIVE_MUTANT__;
  else process.env.__STRYKER_ACTIVE_MUTANT__ = active;
});

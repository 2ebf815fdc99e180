// What a test file calls before a suite or test that runs a system tool (test/support/systemTools.ts
// has the rules): `describe.skipIf(need.skip)(need.title, ...)`.
import { relative } from 'node:path';
import { expect } from 'vitest';
import { requireToolsIn, type Requirement, type Tool } from './systemTools';

/** Whether `what`, in the test file being collected, can run: every tool of `tools` installed. */
export function requireTools(tools: readonly Tool[], what: string): Requirement {
  return requireToolsIn(relative(process.cwd(), expect.getState().testPath ?? '(unknown test file)'), tools, what);
}

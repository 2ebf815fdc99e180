// Tests drive the built programs (dist/*.cjs) as real child processes: rebuild them first so a
// test never runs a stale bundle. The run ends with what was skipped for a missing system tool
// (test/support/systemTools.ts).
import { execFileSync } from 'node:child_process';
import { skipSummary, startSkipLog } from './systemTools';

export default function setup(): () => void {
  startSkipLog();
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  return () => console.log(`\n${skipSummary()}`);
}

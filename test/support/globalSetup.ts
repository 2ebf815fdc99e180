// Tests drive the built programs (dist/*.cjs) as real child processes: rebuild them first so a
// test never runs a stale bundle.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}

// Whether the system service's state exists, for the contract's rule that a non-root enroll,
// unenroll or status without --state-dir acts on the service's state instead of a per-user one.
// The system state directory is owner-only, so a non-root user can see that it exists but not
// what is inside: its existence is the signal (the installer creates it; so does a root enroll).
import { existsSync } from 'node:fs';
import { platformPaths } from './paths';

export function systemServiceStatePresent(env: NodeJS.ProcessEnv = process.env): boolean {
  return existsSync(platformPaths().systemStateDir(env));
}

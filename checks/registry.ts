// Maps a platform to its checks. Adding a platform is one module and one line here;
// adding a check is one module and one line in that platform's index.
import type { Platform } from '../src/protocol/schemas';
import type { Check } from './types';

// Each loader keeps its platform's tuple of checks, each with its own facts, words and key: no cast.
const loaders = {
  LINUX: async () => (await import('./linux/index')).checks,
  DARWIN: async () => (await import('./darwin/index')).checks,
  WINDOWS: async () => (await import('./windows/index')).checks,
  FREEBSD: async () => (await import('./freebsd/index')).checks,
} satisfies Record<Platform, () => Promise<readonly Check[]>>;

/**
 * The checks of one platform, loaded on demand so that only the running platform's code initialises,
 * as the engine runs them (checks/<os>/index.ts has each one's own type, which its catalogue reads).
 */
export function loadChecks(platform: Platform): Promise<readonly Check[]> {
  return loaders[platform]();
}

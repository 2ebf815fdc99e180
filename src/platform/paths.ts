// Where the agent keeps its state on each OS (contract: "State directory"). One small module per
// platform under ./paths/; the rest of the code asks this module, never which OS it runs on.
import type { Platform } from '../protocol/schemas';
import { currentPlatform } from './current';
import { darwinPaths } from './paths/darwin';
import { windowsPaths } from './paths/windows';
import type { PlatformPaths } from './paths/types';
import { xdgPaths } from './paths/xdg';

export type { PlatformPaths } from './paths/types';

const PATHS: Record<Platform, PlatformPaths> = {
  LINUX: xdgPaths,
  FREEBSD: xdgPaths,
  DARWIN: darwinPaths,
  WINDOWS: windowsPaths,
};

export function platformPaths(platform: Platform = currentPlatform()): PlatformPaths {
  return PATHS[platform];
}

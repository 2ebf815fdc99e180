// macOS: the system domain's and the user's Application Support.
import { posix } from 'node:path';
import type { PlatformPaths } from './types';

export const darwinPaths: PlatformPaths = {
  systemStateDir: () => '/Library/Application Support/device-agent',
  userStateDir: (_env, home) => posix.join(home, 'Library', 'Application Support', 'device-agent'),
};

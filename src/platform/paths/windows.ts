// Windows: %ProgramData% for the service, %LOCALAPPDATA% per user (not roaming: the key is per machine).
import { win32 } from 'node:path';
import type { PlatformPaths } from './types';

export const windowsPaths: PlatformPaths = {
  systemStateDir: (env) => win32.join(env.ProgramData ?? env.PROGRAMDATA ?? 'C:\\ProgramData', 'device-agent'),
  userStateDir: (env, home) => win32.join(env.LOCALAPPDATA ?? win32.join(home, 'AppData', 'Local'), 'device-agent'),
};

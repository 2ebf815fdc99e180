// Linux and FreeBSD: FHS system state, XDG per-user state.
import { posix } from 'node:path';
import type { PlatformPaths } from './types';

export const xdgPaths: PlatformPaths = {
  systemStateDir: () => '/var/lib/device-agent',
  userStateDir(env, home) {
    // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
    const base = env.XDG_STATE_HOME && posix.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : posix.join(home, '.local', 'state');
    return posix.join(base, 'device-agent');
  },
};

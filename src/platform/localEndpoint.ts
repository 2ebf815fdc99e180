// Where the daemon's local endpoint lives, and who the console user is: the person at this
// computer's screen, the only one besides root that the endpoint answers (src/agent/localEndpoint.ts).
// Node has no SO_PEERCRED nor getpeereid, and no dependency of ours offers them: the endpoint relies
// on the socket file's owner and mode instead, which the kernel checks at connect() (docs/agent.md,
// "My device").
import { lstat, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

/**
 * The root-owned runtime directory that holds the endpoint's socket, or null where the endpoint is
 * not implemented (Windows: no named pipe, docs/agent.md says why). DEVICE_AGENT_RUNTIME_DIR
 * overrides it (a second agent on one machine, tests).
 */
export function localEndpointDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | null {
  if (env.DEVICE_AGENT_RUNTIME_DIR) return resolve(env.DEVICE_AGENT_RUNTIME_DIR);
  if (platform === 'linux') return '/run/device-agent';
  if (platform === 'darwin' || platform === 'freebsd') return '/var/run/device-agent';
  return null;
}

/**
 * logind's record of a seat (what sd_seat_get_active reads): `ACTIVE_UID=` names the user of its
 * active session. DEVICE_AGENT_TEST_SEAT_FILE replaces its path in tests only: a container has no
 * logind (docs/testing.md).
 */
const logindSeat = (env: NodeJS.ProcessEnv) => env.DEVICE_AGENT_TEST_SEAT_FILE || '/run/systemd/seats/seat0';

/**
 * The uid of the user logged in at the screen, or null when there is none or it cannot be told.
 * Linux: logind's seat0 (no logind, as in a container or on a server: nobody). macOS: the owner of
 * /dev/console (root when nobody is logged in). FreeBSD and Windows: not implemented (nobody).
 */
export async function consoleUid(platform: NodeJS.Platform = process.platform, env = process.env): Promise<number | null> {
  try {
    if (platform === 'linux') return activeUid(await readFile(logindSeat(env), 'utf8'));
    if (platform === 'darwin') {
      const { uid } = await lstat('/dev/console');
      return uid === 0 ? null : uid;
    }
  } catch {
    return null;
  }
  return null;
}

/** `ACTIVE_UID=` of a logind seat file, when it names a user. */
export function activeUid(seatFile: string): number | null {
  const value = /^ACTIVE_UID=(\d+)$/m.exec(seatFile)?.[1];
  return value === undefined ? null : Number(value);
}

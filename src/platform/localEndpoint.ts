// Where the daemon's local endpoint lives, and who the console user is: the person at this
// computer's screen, the only one besides root that the endpoint answers (src/agent/localEndpoint.ts).
// Node has no SO_PEERCRED nor getpeereid, and no dependency of ours offers them: the Unix endpoint
// relies on the socket file's owner and mode instead, which the kernel checks at connect(). Windows:
// a named pipe, whose host finds the console user itself (src/agent/windowsPipeEndpoint.ts).
import { existsSync, readdirSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The Unix endpoint's socket, in localEndpointDir. */
export const ENDPOINT_SOCKET = 'agent.sock';
/** The Windows endpoint's pipe, in the pipe namespace. */
export const PIPE_NAME = 'device-agent';
const PIPES = '\\\\.\\pipe\\';
export const PIPE_PATH = `${PIPES}${PIPE_NAME}`;

/**
 * The root-owned runtime directory that holds the endpoint's socket, or null where there is none
 * (Windows: a named pipe). DEVICE_AGENT_RUNTIME_DIR overrides it (a second agent on one machine, tests).
 */
export function localEndpointDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | null {
  if (env.DEVICE_AGENT_RUNTIME_DIR) return resolve(env.DEVICE_AGENT_RUNTIME_DIR);
  if (platform === 'linux') return '/run/device-agent';
  if (platform === 'darwin' || platform === 'freebsd') return '/var/run/device-agent';
  return null;
}

/** Where a client reaches the service's endpoint: the socket's path, or the pipe's on Windows; null elsewhere. */
export function localEndpointAddress(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'win32') return PIPE_PATH;
  const dir = localEndpointDir(env, platform);
  return dir === null ? null : join(dir, ENDPOINT_SOCKET);
}

/**
 * Whether the service's endpoint is there. A pipe is looked for in the listing of the pipe namespace:
 * opening it to look would take the service's one pipe instance like a client does.
 */
export function localEndpointPresent(address: string, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'win32') return existsSync(address);
  try {
    return readdirSync(PIPES).includes(address.slice(PIPES.length));
  } catch {
    return false;
  }
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
 * /dev/console (root when nobody is logged in). FreeBSD: not implemented (nobody). Windows: the
 * pipe's host finds the console user itself (src/agent/windowsPipeEndpoint.ts).
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

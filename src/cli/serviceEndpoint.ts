// Whether a command asks the system service (its local endpoint) rather than reading a state
// directory: for a user without administrator rights, without --state-dir, where the service's
// endpoint exists. The answer is the endpoint's directory, or null.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_SOCKET } from '../agent/localEndpoint';
import { localEndpointDir } from '../platform/localEndpoint';
import { isPrivileged } from '../platform/privilege';

export function serviceEndpoint(options: { stateDir?: string }, privileged = isPrivileged()): string | null {
  if (options.stateDir !== undefined || privileged) return null;
  const dir = localEndpointDir();
  return dir !== null && existsSync(join(dir, ENDPOINT_SOCKET)) ? dir : null;
}

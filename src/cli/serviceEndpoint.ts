// Whether a command asks the system service (its local endpoint) rather than reading a state
// directory: for a user without administrator rights, without --state-dir, where the service's
// endpoint exists. The answer is the endpoint's address (a socket's path or a pipe's), or null.
import { localEndpointAddress, localEndpointPresent } from '../platform/localEndpoint';
import { isPrivileged } from '../platform/privilege';

export function serviceEndpoint(options: { stateDir?: string }, privileged = isPrivileged()): string | null {
  if (options.stateDir !== undefined || privileged) return null;
  const address = localEndpointAddress();
  return address !== null && localEndpointPresent(address) ? address : null;
}

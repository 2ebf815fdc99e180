// The heartbeat body from the host identity. Freshness is the identity reader's job (src/host):
// the hostname is read on every call, so a rename shows in the next heartbeat, while the probes
// that may spawn processes (hardware id, serial, OS version) are cached.
import type { HostIdentity } from '../host/identity';
import type { HeartbeatRequest } from '../protocol/schemas';
import { VERSION } from '../version';

export function heartbeatBody(identity: HostIdentity): HeartbeatRequest {
  return {
    hardware_uuid: identity.hardware_uuid,
    ...(identity.serial_number ? { serial_number: identity.serial_number } : {}),
    hostname: identity.hostname,
    platform: identity.platform,
    os_version: identity.os_version,
    agent_version: VERSION,
  };
}

// The heartbeat body from the device identity. Freshness is the identity reader's job (src/identity):
// the hostname is read on every call, so a rename shows in the next heartbeat, while the probes
// that may spawn processes (hardware id, serial, OS version) are cached.
import type { DeviceIdentity } from '../identity/identity';
import type { HeartbeatRequest } from '../protocol/schemas';
import { VERSION } from '../version';

export function heartbeatBody(identity: DeviceIdentity): HeartbeatRequest {
  return {
    hardware_uuid: identity.hardware_uuid,
    ...(identity.serial_number ? { serial_number: identity.serial_number } : {}),
    hostname: identity.hostname,
    platform: identity.platform,
    os_version: identity.os_version,
    agent_version: VERSION,
  };
}

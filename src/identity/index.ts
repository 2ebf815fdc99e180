// The heartbeat's device identity for the running platform. The platform's probe (src/identity/<os>.ts,
// loaded on demand) reads the sources; this module never sends a placeholder, omits the serial
// when there is none, and caches what does not change: hardware_uuid and serial_number for the
// process lifetime, os_version for a TTL (or until a caller asks for a refresh). The hostname is
// read on every call (one uname system call), so a rename shows in the next heartbeat.
import { hostname as kernelHostname } from 'node:os';
import type { Host } from '../../checks/types';
import { currentPlatform } from '../platform/current';
import type { Platform } from '../protocol/schemas';
import { isPlaceholderId, type DeviceIdentity, type IdentityFacts, type IdentityProbe } from './identity';

const probes: Record<Platform, () => Promise<IdentityProbe>> = {
  LINUX: async () => (await import('./linux')).identityProbe,
  DARWIN: async () => (await import('./darwin')).identityProbe,
  WINDOWS: async () => (await import('./windows')).identityProbe,
  FREEBSD: async () => (await import('./freebsd')).identityProbe,
};

export type DeviceIdentityErrorCode = 'no_hardware_id' | 'probe_failed' | 'no_hostname';

/** The device identity cannot be determined; nothing is invented in its place. */
export class DeviceIdentityError extends Error {
  override name = 'DeviceIdentityError';
  constructor(
    readonly code: DeviceIdentityErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const OS_VERSION_TTL_MS = 60 * 60_000;
const MAX_FIELD = 255;

export interface IdentityReaderOptions {
  platform?: Platform;
  /** How the probe touches the machine (default: the real checks Host). */
  host?: Host;
  /** Replaces the platform's probe (tests). */
  probe?: IdentityProbe;
  hostname?: () => string;
  now?: () => number;
  osVersionTtlMs?: number;
}

export interface ReadDeviceIdentityOptions {
  /** Re-read os_version now instead of within its TTL. */
  refresh?: boolean;
}

export type IdentityReader = (options?: ReadDeviceIdentityOptions) => Promise<DeviceIdentity>;

export function createIdentityReader(options: IdentityReaderOptions = {}): IdentityReader {
  const readHostname = options.hostname ?? kernelHostname;
  const now = options.now ?? Date.now;
  const ttl = options.osVersionTtlMs ?? OS_VERSION_TTL_MS;
  let stable: { hardwareUuid: string; source: string; serial: string | null } | undefined;
  let osVersion: { value: string; at: number } | undefined;
  let pending: Promise<void> | undefined;

  const probeOnce = async (): Promise<void> => {
    const platform = options.platform ?? currentPlatform();
    let facts: IdentityFacts;
    try {
      const probe = options.probe ?? (await probes[platform]());
      const host = options.host ?? (await import('../../checks/host')).createSystemHost();
      facts = await probe.collect(host);
    } catch (err) {
      throw new DeviceIdentityError(
        'probe_failed',
        `cannot read the device identity on ${platform}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!stable) {
      const id = facts.hardwareUuid;
      if (!id || isPlaceholderId(id.value)) {
        throw new DeviceIdentityError(
          'no_hardware_id',
          `no usable hardware identifier on this ${platform} machine (firmware UUID and OS machine id missing or placeholders)`,
        );
      }
      const serial = facts.serialNumber !== null && !isPlaceholderId(facts.serialNumber) ? facts.serialNumber.slice(0, MAX_FIELD) : null;
      stable = { hardwareUuid: id.value.slice(0, MAX_FIELD), source: id.source, serial };
    }
    const os = facts.osVersion.trim();
    osVersion = { value: (os || platform).slice(0, MAX_FIELD), at: now() };
  };

  return async (readOptions = {}) => {
    const stale = !stable || !osVersion || readOptions.refresh === true || now() - osVersion.at >= ttl;
    if (stale) {
      pending ??= probeOnce().finally(() => {
        pending = undefined;
      });
      await pending;
    }
    const hostname = readHostname().trim().slice(0, MAX_FIELD);
    if (!hostname) throw new DeviceIdentityError('no_hostname', 'the kernel reports an empty hostname');
    const identity: DeviceIdentity = {
      hardware_uuid: stable!.hardwareUuid,
      hardware_uuid_source: stable!.source,
      hostname,
      platform: options.platform ?? currentPlatform(),
      os_version: osVersion!.value,
    };
    if (stable!.serial) identity.serial_number = stable!.serial;
    return identity;
  };
}

let processReader: IdentityReader | undefined;

/** This machine's identity, cached for the process (see createIdentityReader). */
export function readDeviceIdentity(options?: ReadDeviceIdentityOptions): Promise<DeviceIdentity> {
  processReader ??= createIdentityReader();
  return processReader(options);
}

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

/**
 * TEST ONLY (docs/testing.md): many agents on one machine enrolling as different devices. Read from
 * the environment here and nowhere else. The hardware_uuid is sent with this prefix, so it can never
 * equal a real device's identifier (a firmware UUID or machine id): it cannot impersonate one, and
 * the admin sees it for what it is. Every process that uses it says so on standard error.
 */
export const TEST_IDENTITY_PREFIX = 'test-override:';
const TEST_IDENTITY_ENV = { hardwareUuid: 'DEVICE_AGENT_TEST_HARDWARE_UUID', hostname: 'DEVICE_AGENT_TEST_HOSTNAME' } as const;

interface TestIdentity {
  hardwareUuid: string;
  hostname?: string;
}

export interface IdentityReaderOptions {
  /** The test-only identity override (see TEST_IDENTITY_ENV). */
  testIdentity?: TestIdentity;
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
    return options.testIdentity ? withTestIdentity(identity, options.testIdentity) : identity;
  };
}

/** The override applied: prefixed hardware_uuid, no serial (the machine's is shared by every test agent). */
function withTestIdentity(identity: DeviceIdentity, test: TestIdentity): DeviceIdentity {
  const { serial_number: _machineSerial, ...rest } = identity;
  return {
    ...rest,
    hardware_uuid: `${TEST_IDENTITY_PREFIX}${test.hardwareUuid}`,
    hardware_uuid_source: 'test_override',
    ...(test.hostname ? { hostname: test.hostname } : {}),
  };
}

/** The override from the environment, announced on standard error; DeviceIdentityError when malformed. */
function testIdentityFromEnv(env: NodeJS.ProcessEnv): TestIdentity | undefined {
  const hardwareUuid = env[TEST_IDENTITY_ENV.hardwareUuid];
  const hostname = env[TEST_IDENTITY_ENV.hostname];
  if (hardwareUuid === undefined) {
    if (hostname !== undefined)
      throw new DeviceIdentityError('probe_failed', `${TEST_IDENTITY_ENV.hostname} is only used with ${TEST_IDENTITY_ENV.hardwareUuid}`);
    return undefined;
  }
  const shape = /^[\x21-\x7e]{1,128}$/;
  if (!shape.test(hardwareUuid) || (hostname !== undefined && !shape.test(hostname))) {
    throw new DeviceIdentityError('probe_failed', 'the test identity override must be 1 to 128 printable ASCII characters without blanks');
  }
  process.stderr.write(
    `device-agent: WARNING: ${TEST_IDENTITY_ENV.hardwareUuid} is set: this agent reports the TEST identity ` +
      `${TEST_IDENTITY_PREFIX}${hardwareUuid}${hostname ? ` (hostname ${hostname})` : ''}, not this machine's (for tests only)\n`,
  );
  return { hardwareUuid, ...(hostname !== undefined ? { hostname } : {}) };
}

let processReader: IdentityReader | undefined;

/** This machine's identity, cached for the process (see createIdentityReader). */
export async function readDeviceIdentity(options?: ReadDeviceIdentityOptions): Promise<DeviceIdentity> {
  processReader ??= createIdentityReader({ testIdentity: testIdentityFromEnv(process.env) });
  return await processReader(options);
}

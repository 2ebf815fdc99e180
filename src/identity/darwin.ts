// Device identity on macOS. hardware_uuid and serial_number: IOPlatformUUID and
// IOPlatformSerialNumber from the IORegistry (`ioreg -rd1 -c IOPlatformExpertDevice`, no root
// needed); the UUID is the SMBIOS system UUID, lower-cased as Linux reports the same firmware
// value. os_version: sw_vers ("macOS 15.1"), else SystemVersion.plist, which sw_vers itself reads.
import type { Host } from '../../checks/types';
import { parsePlist, plistDict, plistString } from '../../checks/darwin/plist';
import { describeMacRelease, parseSwVers, SW_VERS, toMacRelease, type MacRelease } from '../../checks/darwin/swVers';
import { canonicalUuid, firmwareSerial, type IdentityFacts, type IdentityProbe } from './identity';

export const IOREG = '/usr/sbin/ioreg';
export const IOREG_ARGS = ['-rd1', '-c', 'IOPlatformExpertDevice'] as const;
export const SYSTEM_VERSION_PLIST = '/System/Library/CoreServices/SystemVersion.plist';

export interface PlatformExpert {
  uuid: string | null;
  serial: string | null;
}

/** A property line of the IOPlatformExpertDevice entry: `    "Key" = "value"`. */
function stringProperty(stdout: string, key: string): string | undefined {
  return new RegExp(`^\\s*"${key}" = "([^"]*)"\\s*$`, 'm').exec(stdout)?.[1];
}

/**
 * IOPlatformUUID (canonical 8-4-4-4-12 hex, lower-cased) and IOPlatformSerialNumber (printable,
 * bounded) from ioreg; each null when absent, malformed or a vendor placeholder (all zeros, all F,
 * "To Be Filled By O.E.M.", …).
 */
export function parseIoregPlatformExpert(stdout: string): PlatformExpert {
  const rawUuid = stringProperty(stdout, 'IOPlatformUUID');
  const rawSerial = stringProperty(stdout, 'IOPlatformSerialNumber');
  return {
    uuid: rawUuid === undefined ? null : canonicalUuid(rawUuid),
    serial: rawSerial === undefined ? null : firmwareSerial(rawSerial),
  };
}

/** SystemVersion.plist (ProductName, ProductVersion, ProductBuildVersion). */
export function parseSystemVersionPlist(text: string): MacRelease | null {
  const parsed = parsePlist(text);
  const dict = parsed.ok ? plistDict(parsed.value) : undefined;
  if (!dict) return null;
  return toMacRelease({
    ProductName: plistString(dict.ProductName),
    ProductVersion: plistString(dict.ProductVersion),
    ProductBuildVersion: plistString(dict.ProductBuildVersion),
  });
}

async function readRelease(host: Host): Promise<MacRelease> {
  const swVers = await host.run(SW_VERS, []);
  const fromCommand = !swVers.error && swVers.exitCode === 0 ? parseSwVers(swVers.stdout) : null;
  if (fromCommand) return fromCommand;
  const file = await host.readFile(SYSTEM_VERSION_PLIST);
  const fromFile = file.ok ? parseSystemVersionPlist(file.text) : null;
  if (fromFile) return fromFile;
  throw new Error('neither sw_vers nor SystemVersion.plist names the macOS release');
}

export const identityProbe: IdentityProbe = {
  async collect(host: Host): Promise<IdentityFacts> {
    const [ioreg, release] = await Promise.all([host.run(IOREG, IOREG_ARGS), readRelease(host)]);
    const expert = !ioreg.error && ioreg.exitCode === 0 ? parseIoregPlatformExpert(ioreg.stdout) : { uuid: null, serial: null };
    return {
      hardwareUuid: expert.uuid ? { value: expert.uuid, source: 'ioplatform_uuid' } : null,
      serialNumber: expert.serial,
      osVersion: describeMacRelease(release),
    };
  },
};

// Device identity on FreeBSD. hardware_uuid: the SMBIOS system UUID the loader puts in the kernel
// environment (kenv smbios.system.uuid), else kern.hostuuid, which rc.d/hostid sets at boot from
// that UUID or, when it is missing or on its deny-list (which isPlaceholderId applies on every
// platform), from a UUID generated once and kept in /etc/hostid. serial_number: kenv smbios.system.serial. os_version: the userland release from
// freebsd-version ("FreeBSD 14.1-RELEASE-p5"): userland patch levels run ahead of the kernel's.
// kenv and sysctl reads need no privilege.
import type { CommandResult, Host } from '../../checks/types';
import { interpretVersions, readVersions } from '../../checks/freebsd/version';
import { canonicalUuid, firmwareSerial, type IdentityFacts, type IdentityProbe } from './identity';

export const KENV = '/bin/kenv';
export const SYSCTL = '/sbin/sysctl';

const valueOf = (result: CommandResult): string | null =>
  !result.error && result.exitCode === 0 ? result.stdout.replace(/\n$/, '') : null;

/** A canonical 8-4-4-4-12 UUID, lower-cased; null for anything else or a placeholder (rc.d/hostid's deny-list included). */
export function parseSystemUuid(result: CommandResult): string | null {
  const value = valueOf(result);
  return value === null ? null : canonicalUuid(value);
}

/** A firmware serial: printable, bounded, not filler text ("To Be Filled By O.E.M.", "System Serial Number"). */
export function parseSystemSerial(result: CommandResult): string | null {
  const value = valueOf(result);
  return value === null ? null : firmwareSerial(value);
}

/** "FreeBSD 14.1-RELEASE-p5" from the userland version, else the running kernel's release. */
export function describeFreebsd(userland: string | null, kernel: string | null): string {
  const release = userland ?? kernel;
  return release ? `FreeBSD ${release}` : 'FreeBSD';
}

export const identityProbe: IdentityProbe = {
  async collect(host: Host): Promise<IdentityFacts> {
    const [uuid, serial, versions] = await Promise.all([
      host.run(KENV, ['smbios.system.uuid']),
      host.run(KENV, ['smbios.system.serial']),
      readVersions(host),
    ]);
    let hardwareUuid: IdentityFacts['hardwareUuid'] = null;
    const smbios = parseSystemUuid(uuid);
    if (smbios) hardwareUuid = { value: smbios, source: 'smbios_system_uuid' };
    else {
      const hostuuid = parseSystemUuid(await host.run(SYSCTL, ['-n', 'kern.hostuuid']));
      if (hostuuid) hardwareUuid = { value: hostuuid, source: 'kern_hostuuid' };
    }
    const read = interpretVersions(versions);
    let osVersion: string;
    if (read.ok) osVersion = describeFreebsd(read.userland, read.runningKernel);
    else osVersion = describeFreebsd(null, valueOf(await host.run(SYSCTL, ['-n', 'kern.osrelease']))?.trim() || null);
    return { hardwareUuid, serialNumber: parseSystemSerial(serial), osVersion };
  },
};

// Host identity on FreeBSD. hardware_uuid: the SMBIOS system UUID the loader puts in the kernel
// environment (kenv smbios.system.uuid), else kern.hostuuid, which rc.d/hostid sets at boot from
// that UUID or, when it is missing or on its deny-list, from a UUID generated once and kept in
// /etc/hostid. serial_number: kenv smbios.system.serial. os_version: the userland release from
// freebsd-version ("FreeBSD 14.1-RELEASE-p5"): userland patch levels run ahead of the kernel's.
// kenv and sysctl reads need no privilege.
import type { CommandResult, Host } from '../../checks/types';
import { interpretVersions, readVersions } from '../../checks/freebsd/version';
import { isPlaceholderId, type IdentityFacts, type IdentityProbe } from './identity';

export const KENV = '/bin/kenv';
export const SYSCTL = '/sbin/sysctl';

/** UUIDs that rc.d/hostid refuses (firmware defaults shared by many boards and VM images). */
export const DENIED_UUIDS = new Set([
  '00000000-0000-0000-0000-000000000000',
  '00020003-0004-0005-0006-000700080009',
  '03000200-0400-0500-0006-000700080009',
  '07090201-0103-0301-0807-060504030201',
  '11111111-1111-1111-1111-111111111111',
  '11111111-2222-3333-4444-555555555555',
  '4c4c4544-0000-2010-8020-80c04f202020',
  '58585858-5858-5858-5858-585858585858',
  '890e2d14-cacd-45d1-ae66-bc80e8bfeb0f',
  '8e275844-178f-44a8-aceb-a7d7e5178c63',
  'dc698397-fa54-4cf2-82c8-b1b5307a6a7f',
  'fefefefe-fefe-fefe-fefe-fefefefefefe',
]);

const valueOf = (result: CommandResult): string | null =>
  !result.error && result.exitCode === 0 ? result.stdout.replace(/\n$/, '') : null;

/** A canonical 8-4-4-4-12 UUID, lower-cased; null for anything else, a placeholder or a denied one. */
export function parseSystemUuid(result: CommandResult): string | null {
  const value = valueOf(result)?.trim().toLowerCase();
  if (!value || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) return null;
  if (DENIED_UUIDS.has(value) || value.endsWith('-ffff-ffff-ffff-ffffffffffff')) return null;
  return isPlaceholderId(value) ? null : value;
}

/** A firmware serial: printable, bounded, not filler text ("To Be Filled By O.E.M.", "System Serial Number"). */
export function parseSystemSerial(result: CommandResult): string | null {
  const value = valueOf(result)?.trim();
  if (!value || value.length > 255 || /[^\x20-\x7e]/.test(value)) return null;
  return isPlaceholderId(value) ? null : value;
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

// Device identity on Linux. hardware_uuid: the SMBIOS product UUID (/sys/class/dmi/id/product_uuid,
// readable by root only), else the OS machine id (/etc/machine-id, world-readable, written once at
// install), else D-Bus's copy of it. serial_number: the SMBIOS product serial (root only), else a
// device-tree serial (ARM boards). os_version: os-release's PRETTY_NAME refined with the point
// release ("Debian GNU/Linux 12.11 (bookworm)"). Plain file reads: no process is spawned.
import type { Host } from '../../checks/types';
import { describeOs, readOsRelease } from '../../checks/linux/osRelease';
import { canonicalUuid, firmwareSerial, isPlaceholderId, type IdentityFacts, type IdentityProbe } from './identity';

export const HARDWARE_ID_SOURCES = [
  { file: '/sys/class/dmi/id/product_uuid', source: 'dmi_product_uuid', parse: parseProductUuid },
  { file: '/etc/machine-id', source: 'machine_id', parse: parseMachineId },
  { file: '/var/lib/dbus/machine-id', source: 'dbus_machine_id', parse: parseMachineId },
] as const;

export const SERIAL_SOURCES = ['/sys/class/dmi/id/product_serial', '/sys/firmware/devicetree/base/serial-number'] as const;

/** An SMBIOS UUID in its canonical 8-4-4-4-12 form, lower-cased; null for anything else or a placeholder. */
export function parseProductUuid(text: string): string | null {
  return canonicalUuid(text);
}

/** machine-id(5): 32 lower-case hex digits. "uninitialized" (first boot) and empty files are not ids. */
export function parseMachineId(text: string): string | null {
  const value = text.trim().toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(value)) return null;
  return isPlaceholderId(value) ? null : value;
}

/** A firmware serial: printable, bounded, not filler text. Device-tree strings end in NUL. */
export function parseSerial(text: string): string | null {
  return firmwareSerial(text.replace(/\0+$/, ''));
}

async function firstUsable<T>(
  host: Host,
  candidates: readonly { file: string; parse: (text: string) => T | null }[],
): Promise<{ value: T; index: number } | null> {
  for (const [index, candidate] of candidates.entries()) {
    const read = await host.readFile(candidate.file);
    const value = read.ok ? candidate.parse(read.text) : null;
    if (value !== null) return { value, index };
  }
  return null;
}

export const identityProbe: IdentityProbe = {
  async collect(host: Host): Promise<IdentityFacts> {
    const [hardware, serial, os] = await Promise.all([
      firstUsable(host, HARDWARE_ID_SOURCES),
      firstUsable(
        host,
        SERIAL_SOURCES.map((file) => ({ file, parse: parseSerial })),
      ),
      readOsRelease(host),
    ]);
    return {
      hardwareUuid: hardware ? { value: hardware.value, source: HARDWARE_ID_SOURCES[hardware.index]!.source } : null,
      serialNumber: serial?.value ?? null,
      osVersion: os.ok ? describeOs(os.release, os.kernel) : describeOs(undefined, await kernelRelease(host)),
    };
  },
};

async function kernelRelease(host: Host): Promise<string | undefined> {
  const read = await host.readFile('/proc/sys/kernel/osrelease');
  return read.ok && read.text.trim() ? read.text.trim() : undefined;
}

// Device identity on Windows, from one PowerShell process (structured values only, no translated
// text). hardware_uuid: the SMBIOS system UUID (Win32_ComputerSystemProduct.UUID), else the OS's
// MachineGuid (HKLM\SOFTWARE\Microsoft\Cryptography, written at install, readable without
// administrator rights, shared by clones of one image: the source tells). serial_number:
// Win32_BIOS.SerialNumber. os_version: "Windows 11 Pro 24H2 (26100.2314)" from CurrentVersion,
// Windows 11 from the build (>= 22000) whatever ProductName says.
import * as z from 'zod/mini';
import type { Host } from '../../checks/types';
import { CURRENT_VERSION_KEY, CURRENT_VERSION_VALUES, windowsRelease, windowsVersionString } from '../../checks/windows/osRelease';
import { PRELUDE, psStrings, runPowerShellJson } from '../../checks/windows/powershell';
import { RegistryValues } from '../../checks/windows/registry';
import { canonicalUuid, firmwareSerial, type IdentityFacts, type IdentityProbe } from './identity';

export const IDENTITY_TIMEOUT_MS = 15_000;

export const IDENTITY_SCRIPT = `${PRELUDE}
Write-Json ([ordered]@{
  product = Invoke-Section { [ordered]@{ UUID = @(Get-CimInstance -ClassName Win32_ComputerSystemProduct)[0].UUID } }
  bios = Invoke-Section { [ordered]@{ SerialNumber = @(Get-CimInstance -ClassName Win32_BIOS)[0].SerialNumber } }
  cryptography = Invoke-Section { Read-Key $HKLM 'SOFTWARE\\Microsoft\\Cryptography' @('MachineGuid') }
  os = Invoke-Section { Read-Key $HKLM '${CURRENT_VERSION_KEY}' ${psStrings(CURRENT_VERSION_VALUES)} }
})
`;

/** Win32_ComputerSystemProduct.UUID, lower-cased as Linux reports the same firmware value; null for placeholders. */
export function parseSystemUuid(raw: unknown): string | null {
  return typeof raw === 'string' ? canonicalUuid(raw) : null;
}

/** MachineGuid: a canonical GUID, lower-cased. */
export function parseMachineGuid(raw: unknown): string | null {
  return typeof raw === 'string' ? canonicalUuid(raw) : null;
}

/** Win32_BIOS.SerialNumber: printable, bounded, not firmware filler ("To be filled by O.E.M.", "Default string", "0", …). */
export function parseBiosSerial(raw: unknown): string | null {
  return typeof raw === 'string' ? firmwareSerial(raw) : null;
}

const envelope = <T extends z.ZodMiniType>(value: T) =>
  z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), value }), z.object({ ok: z.literal(false), error: z.string() })]);
const IdentityDocument = z.object({
  product: envelope(z.object({ UUID: z.nullable(z.string()) })),
  bios: envelope(z.object({ SerialNumber: z.nullable(z.string()) })),
  cryptography: envelope(z.nullable(RegistryValues)),
  os: envelope(z.nullable(RegistryValues)),
});

/** Identity facts from the script's JSON; throws when the document is not what the script prints. */
export function parseIdentityDocument(json: unknown): IdentityFacts {
  const parsed = IdentityDocument.safeParse(json);
  if (!parsed.success) throw new Error('the Windows identity probe printed an unexpected document');
  const { product, bios, cryptography, os } = parsed.data;
  const uuid = product.ok ? parseSystemUuid(product.value.UUID) : null;
  const machineGuid = cryptography.ok ? parseMachineGuid(cryptography.value?.MachineGuid) : null;
  const release = os.ok && os.value ? windowsRelease(os.value) : null;
  return {
    hardwareUuid: uuid ? { value: uuid, source: 'smbios_uuid' } : machineGuid ? { value: machineGuid, source: 'machine_guid' } : null,
    serialNumber: bios.ok ? parseBiosSerial(bios.value.SerialNumber) : null,
    osVersion: release ? windowsVersionString(release) : 'Windows',
  };
}

export const identityProbe: IdentityProbe = {
  async collect(host: Host): Promise<IdentityFacts> {
    const result = await runPowerShellJson(host, IDENTITY_SCRIPT, IDENTITY_TIMEOUT_MS);
    if (!result.ok) throw new Error(`the Windows identity probe failed (${result.reason})`);
    return parseIdentityDocument(result.json);
  },
};

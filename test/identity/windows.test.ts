// Windows device identity on recorded probe output: the exact PowerShell command, the SMBIOS UUID
// with placeholder filtering and the MachineGuid fallback, BIOS serial fillers, and os_version
// naming (Windows 11 from the build even when ProductName says Windows 10).
import { describe, expect, it } from 'vitest';
import { POWERSHELL } from '../../checks/windows/powershell';
import { createIdentityReader } from '../../src/identity/index';
import {
  IDENTITY_SCRIPT,
  IDENTITY_TIMEOUT_MS,
  identityProbe,
  parseBiosSerial,
  parseIdentityDocument,
  parseSystemUuid,
} from '../../src/identity/windows';
import { FakeHost } from '../support/fakeHost';

const IDENTITY_ARGV = [POWERSHELL, '-NoProfile', '-NonInteractive', '-Command', IDENTITY_SCRIPT];

/** A Dell laptop's values (UUID form as Dell firmware reports it, seen in public code); Windows 11 Pro 24H2. */
function document(change: Record<string, unknown> = {}) {
  return {
    product: { ok: true, value: { UUID: '4C4C4544-0042-3510-8052-B3C04F4B4E32' } },
    bios: { ok: true, value: { SerialNumber: 'B5QZF33' } },
    cryptography: { ok: true, value: { MachineGuid: '8f1c2a5e-3b7d-4e0a-9c61-2d4b7e9a0f13' } },
    os: {
      ok: true,
      value: {
        CurrentBuild: '26100',
        CurrentBuildNumber: '26100',
        UBR: 2314,
        DisplayVersion: '24H2',
        ReleaseId: '2009',
        EditionID: 'Professional',
        ProductName: 'Windows 10 Pro',
        InstallationType: 'Client',
      },
    },
    ...change,
  };
}

/** As the agent receives it: through JSON (absent values are simply not there). */
const parse = (doc: unknown) => parseIdentityDocument(JSON.parse(JSON.stringify(doc)));
const osValues = (values: Record<string, unknown>) => ({ os: { ok: true, value: { ...document().os.value, ...values } } });

describe('Windows identity probe', () => {
  it('runs one PowerShell process with the exact arguments and reads its JSON', async () => {
    const host = new FakeHost({ commands: [{ argv: IDENTITY_ARGV, stdout: `${JSON.stringify(document())}\r\n` }] });
    const facts = await identityProbe.collect(host);
    expect(host.calls).toEqual([
      { kind: 'run', target: POWERSHELL, args: IDENTITY_ARGV.slice(1), options: { timeoutMs: IDENTITY_TIMEOUT_MS } },
    ]);
    expect(facts).toEqual({
      hardwareUuid: { value: '4c4c4544-0042-3510-8052-b3c04f4b4e32', source: 'smbios_uuid' },
      serialNumber: 'B5QZF33',
      osVersion: 'Windows 11 Pro 24H2 (26100.2314)',
    });
  });

  it('reads the registry and CIM only: no translated tool output (ver, systeminfo, wmic)', () => {
    expect(IDENTITY_SCRIPT).toContain('Win32_ComputerSystemProduct');
    expect(IDENTITY_SCRIPT).toContain('Win32_BIOS');
    expect(IDENTITY_SCRIPT).toContain("'SOFTWARE\\Microsoft\\Cryptography' @('MachineGuid')");
    expect(IDENTITY_SCRIPT).toContain("'SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion' @('CurrentBuild'");
    expect(IDENTITY_SCRIPT).not.toMatch(/\bver\b|systeminfo|wmic/i);
    expect(IDENTITY_SCRIPT).not.toContain('"');
  });

  it.each([
    ['all zeros', '00000000-0000-0000-0000-000000000000'],
    ['all F', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'],
    ['the shared 03000200-… firmware filler', '03000200-0400-0500-0006-000700080009'],
    ['a byte-counting filler', '00010203-0405-0607-0809-0A0B0C0D0E0F'],
    ['not a UUID', 'Not Settable'],
    ['empty', ''],
  ])('falls back to MachineGuid when the SMBIOS UUID is %s', (_name, uuid) => {
    const facts = parse(document({ product: { ok: true, value: { UUID: uuid } } }));
    expect(facts.hardwareUuid).toEqual({ value: '8f1c2a5e-3b7d-4e0a-9c61-2d4b7e9a0f13', source: 'machine_guid' });
  });

  it('falls back to MachineGuid when CIM refuses the UUID, and has no identifier when both are missing', () => {
    const denied = { product: { ok: false, error: 'cim_AccessDenied' } };
    expect(parse(document(denied)).hardwareUuid?.source).toBe('machine_guid');
    expect(parse(document({ ...denied, cryptography: { ok: true, value: null } })).hardwareUuid).toBeNull();
    expect(parse(document({ ...denied, cryptography: { ok: true, value: { MachineGuid: 'not-a-guid' } } })).hardwareUuid).toBeNull();
  });

  it('accepts a braced UUID and lower-cases it', () => {
    expect(parseSystemUuid('{4C4C4544-0042-3510-8052-B3C04F4B4E32}')).toBe('4c4c4544-0042-3510-8052-b3c04f4b4e32');
    expect(parseSystemUuid(null)).toBeNull();
  });

  it.each([
    'To be filled by O.E.M.',
    'Default string',
    'System Serial Number',
    '0',
    '  ',
    'None',
    'N/A',
    'x'.repeat(256),
    'bad\u0001serial',
  ])('omits the placeholder serial %j', (serial) => {
    expect(parseBiosSerial(serial)).toBeNull();
    expect(parse(document({ bios: { ok: true, value: { SerialNumber: serial } } })).serialNumber).toBeNull();
  });

  it('keeps real serials (a Hyper-V VM serial too)', () => {
    expect(parseBiosSerial(' 5CG1234XYZ ')).toBe('5CG1234XYZ');
    expect(parseBiosSerial('0916-9406-5462-6315-0421-2346-47')).toBe('0916-9406-5462-6315-0421-2346-47');
  });

  it.each([
    [
      'Windows 11 named Windows 10 by ProductName',
      { CurrentBuild: '22631', UBR: 4460, DisplayVersion: '23H2' },
      'Windows 11 Pro 23H2 (22631.4460)',
    ],
    ['Windows 10 22H2', { CurrentBuild: '19045', UBR: 6456, DisplayVersion: '22H2' }, 'Windows 10 Pro 22H2 (19045.6456)'],
    [
      'Windows 10 before DisplayVersion (ReleaseId)',
      { CurrentBuild: '19041', UBR: 508, DisplayVersion: undefined, ReleaseId: '2004' },
      'Windows 10 Pro 2004 (19041.508)',
    ],
    [
      'Windows 11 LTSC',
      { CurrentBuild: '26100', UBR: 1742, EditionID: 'EnterpriseS', ProductName: 'Windows 10 Enterprise LTSC 2024' },
      'Windows 11 Enterprise LTSC 2024 24H2 (26100.1742)',
    ],
    [
      'Windows Server 2022 (a server build above 22000 is never renamed)',
      {
        CurrentBuild: '20348',
        UBR: 2849,
        DisplayVersion: '21H2',
        EditionID: 'ServerDatacenter',
        ProductName: 'Windows Server 2022 Datacenter',
        InstallationType: 'Server',
      },
      'Windows Server 2022 Datacenter 21H2 (20348.2849)',
    ],
    [
      'Windows Server 2025',
      {
        CurrentBuild: '26100',
        UBR: 2314,
        DisplayVersion: '24H2',
        EditionID: 'ServerStandard',
        ProductName: 'Windows Server 2025 Standard',
        InstallationType: 'Server Core',
      },
      'Windows Server 2025 Standard 24H2 (26100.2314)',
    ],
    ['no UBR', { UBR: undefined }, 'Windows 11 Pro 24H2 (26100)'],
  ])('os_version: %s', (_name, values, expected) => {
    expect(parse(document(osValues(values))).osVersion).toBe(expected);
  });

  it('says only "Windows" when CurrentVersion is unreadable or has no build', () => {
    expect(parse(document({ os: { ok: false, error: 'access_denied' } })).osVersion).toBe('Windows');
    expect(parse(document(osValues({ CurrentBuild: 'x', CurrentBuildNumber: undefined }))).osVersion).toBe('Windows');
  });

  it('throws (so the reader reports probe_failed) when PowerShell cannot run or prints something else', async () => {
    await expect(identityProbe.collect(new FakeHost())).rejects.toThrow(/identity probe failed \(command_not_found\)/);
    const garbage = new FakeHost({ commands: [{ argv: IDENTITY_ARGV, stdout: 'Zugriff verweigert\r\n' }] });
    await expect(identityProbe.collect(garbage)).rejects.toThrow(/parse_error/);
    const odd = new FakeHost({ commands: [{ argv: IDENTITY_ARGV, stdout: '{"product":1}' }] });
    await expect(identityProbe.collect(odd)).rejects.toThrow(/unexpected document/);
    const died = new FakeHost({ commands: [{ argv: IDENTITY_ARGV, exitCode: 1, stderr: 'Der Begriff ... wurde nicht erkannt' }] });
    await expect(identityProbe.collect(died)).rejects.toThrow(/check_error/);
  });

  it('gives the heartbeat identity through the shared reader', async () => {
    const host = new FakeHost({ commands: [{ argv: IDENTITY_ARGV, stdout: JSON.stringify(document()) }] });
    const read = createIdentityReader({ platform: 'WINDOWS', host, hostname: () => 'LAPTOP-7Q2' });
    expect(await read()).toEqual({
      hardware_uuid: '4c4c4544-0042-3510-8052-b3c04f4b4e32',
      hardware_uuid_source: 'smbios_uuid',
      serial_number: 'B5QZF33',
      hostname: 'LAPTOP-7Q2',
      platform: 'WINDOWS',
      os_version: 'Windows 11 Pro 24H2 (26100.2314)',
    });
  });
});

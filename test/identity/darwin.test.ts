// Device identity on macOS, from recorded ioreg / sw_vers / SystemVersion.plist output.
import { describe, expect, it } from 'vitest';
import { identityProbe, IOREG, parseIoregPlatformExpert, parseSystemVersionPlist, SYSTEM_VERSION_PLIST } from '../../src/identity/darwin';
import { FakeHost } from '../support/fakeHost';

// Layout of `ioreg -rd1 -c IOPlatformExpertDevice` on an Intel Mac (a public hardware-overview note,
// seen in public code) and on Apple silicon (compatible/target-type as printed there); values replaced.
const INTEL = [
  '+-o Root  <class IORegistryEntry, id 0x100000100, retain 17>',
  '+-o MacBookPro16,1  <class IOPlatformExpertDevice, id 0x10000020f, registered, matched, active, busy 0 (13368 ms), retain 44>',
  '    {',
  '      "IOInterruptSpecifiers" = (<0900000005000000>)',
  '      "IOPolledInterface" = "SMCPolledInterface is not serializable"',
  '      "IOPlatformUUID" = "5F3C2A1B-9D8E-4C7B-A6F5-0E1D2C3B4A59"',
  '      "serial-number" = <43303258583132333441424300000000000000000000000000000000000000000000>',
  '      "IOBusyInterest" = "IOCommand is not serializable"',
  '      "target-type" = <"Mac">',
  '      "manufacturer" = <"Apple Inc.">',
  '      "product-name" = <"MacBookPro16,1">',
  '      "IOPlatformSerialNumber" = "C02XX1234ABC"',
  '      "IOConsoleSecurityInterest" = "IOCommand is not serializable"',
  '      "model" = <"MacBookPro16,1">',
  '    }',
  '',
].join('\n');
const APPLE_SILICON = [
  '+-o J314sAP  <class IOPlatformExpertDevice, id 0x100000235, registered, matched, active, busy 0 (2170 ms), retain 39>',
  '    {',
  '      "IOPolledInterface" = "AppleARMWatchdogTimerHibernateHandler is not serializable"',
  '      "#address-cells" = <02000000>',
  '      "compatible" = <"J314sAP","MacBookPro18,3","AppleARM">',
  '      "IOPlatformSerialNumber" = "FVFXXAB12CDE"',
  '      "model" = <"MacBookPro18,3">',
  '      "IOPlatformUUID" = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"',
  '    }',
  '',
].join('\n');
const SW_VERS_15 = 'ProductName:\t\tmacOS\nProductVersion:\t\t15.1\nBuildVersion:\t\t24B83\n';
const SYSTEM_VERSION = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>BuildID</key>
	<string>6A9C4E2E-1111-11EF-9C2B-000000000000</string>
	<key>ProductBuildVersion</key>
	<string>23F79</string>
	<key>ProductCopyright</key>
	<string>1983-2024 Apple Inc.</string>
	<key>ProductName</key>
	<string>macOS</string>
	<key>ProductUserVisibleVersion</key>
	<string>14.5</string>
	<key>ProductVersion</key>
	<string>14.5</string>
	<key>iOSSupportVersion</key>
	<string>17.5</string>
</dict>
</plist>
`;
const withUuid = (uuid: string) => INTEL.replace('5F3C2A1B-9D8E-4C7B-A6F5-0E1D2C3B4A59', uuid);
const withSerial = (serial: string) => INTEL.replace('C02XX1234ABC', serial);

describe('parseIoregPlatformExpert', () => {
  it('reads the UUID (lower-cased) and the serial from an Intel Mac', () => {
    expect(parseIoregPlatformExpert(INTEL)).toEqual({ uuid: '5f3c2a1b-9d8e-4c7b-a6f5-0e1d2c3b4a59', serial: 'C02XX1234ABC' });
  });

  it('reads Apple silicon output, where the UUID comes last', () => {
    expect(parseIoregPlatformExpert(APPLE_SILICON)).toEqual({ uuid: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', serial: 'FVFXXAB12CDE' });
  });

  it.each(['00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '11111111-1111-1111-1111-111111111111'])(
    'drops the placeholder UUID %s',
    (uuid) => {
      expect(parseIoregPlatformExpert(withUuid(uuid)).uuid).toBeNull();
    },
  );

  it.each(['', 'not-a-uuid', '5F3C2A1B9D8E4C7BA6F50E1D2C3B4A59', '5F3C2A1B-9D8E-4C7B-A6F5-0E1D2C3B4A5'])(
    'drops the malformed UUID "%s"',
    (uuid) => {
      expect(parseIoregPlatformExpert(withUuid(uuid)).uuid).toBeNull();
    },
  );

  it.each(['', '0', 'To Be Filled By O.E.M.', 'Not Specified', 'System Serial Number'])('drops the placeholder serial "%s"', (serial) => {
    expect(parseIoregPlatformExpert(withSerial(serial)).serial).toBeNull();
  });

  it('keeps a virtual machine serial with spaces but no control characters', () => {
    expect(parseIoregPlatformExpert(withSerial('VMware-56 4d 12 34')).serial).toBe('VMware-56 4d 12 34');
    expect(parseIoregPlatformExpert(withSerial('bad\tserial')).serial).toBeNull();
  });

  it('reads only whole property lines, not look-alike keys', () => {
    const lookAlike = '      "IOPlatformUUIDCache" = "5F3C2A1B-9D8E-4C7B-A6F5-0E1D2C3B4A59"\n';
    expect(parseIoregPlatformExpert(lookAlike)).toEqual({ uuid: null, serial: null });
  });
});

describe('parseSystemVersionPlist', () => {
  it('reads ProductName, ProductVersion and ProductBuildVersion', () => {
    expect(parseSystemVersionPlist(SYSTEM_VERSION)).toMatchObject({
      productName: 'macOS',
      productVersion: '14.5',
      buildVersion: '23F79',
      cycle: '14',
    });
  });

  it('refuses a plist that is not a macOS version file', () => {
    expect(parseSystemVersionPlist(SYSTEM_VERSION.replace('<string>macOS</string>', '<string>iPhone OS</string>'))).toBeNull();
    expect(parseSystemVersionPlist('garbage')).toBeNull();
  });
});

describe('identityProbe (DARWIN)', () => {
  it('asks ioreg and sw_vers by absolute path and reports "macOS 15.1"', async () => {
    const host = new FakeHost({
      commands: [
        { argv: [IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], stdout: APPLE_SILICON },
        { argv: ['/usr/bin/sw_vers'], stdout: SW_VERS_15 },
      ],
    });
    await expect(identityProbe.collect(host)).resolves.toEqual({
      hardwareUuid: { value: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', source: 'ioplatform_uuid' },
      serialNumber: 'FVFXXAB12CDE',
      osVersion: 'macOS 15.1',
    });
    expect(host.commandsRun()).toEqual([[IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], ['/usr/bin/sw_vers']]);
  });

  it('names a Rapid Security Response in os_version', async () => {
    const host = new FakeHost({
      commands: [
        { argv: [IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], stdout: INTEL },
        {
          argv: ['/usr/bin/sw_vers'],
          stdout: 'ProductName:\t\tmacOS\nProductVersion:\t\t13.3.1\nProductVersionExtra:\t(a)\nBuildVersion:\t\t22E772610a\n',
        },
      ],
    });
    expect((await identityProbe.collect(host)).osVersion).toBe('macOS 13.3.1 (a)');
  });

  it('falls back to SystemVersion.plist when sw_vers cannot run', async () => {
    const host = new FakeHost({
      commands: [{ argv: [IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], stdout: INTEL }],
      files: { [SYSTEM_VERSION_PLIST]: SYSTEM_VERSION },
    });
    expect((await identityProbe.collect(host)).osVersion).toBe('macOS 14.5');
  });

  it('reports no hardware id (never an invented one) when ioreg fails or prints a placeholder', async () => {
    const failing = new FakeHost({ commands: [{ argv: ['/usr/bin/sw_vers'], stdout: SW_VERS_15 }] });
    expect(await identityProbe.collect(failing)).toEqual({ hardwareUuid: null, serialNumber: null, osVersion: 'macOS 15.1' });
    const placeholder = new FakeHost({
      commands: [
        { argv: [IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], stdout: withUuid('00000000-0000-0000-0000-000000000000') },
        { argv: ['/usr/bin/sw_vers'], stdout: SW_VERS_15 },
      ],
    });
    expect((await identityProbe.collect(placeholder)).hardwareUuid).toBeNull();
  });

  it('refuses when no source names the release', async () => {
    const host = new FakeHost({ commands: [{ argv: [IOREG, '-rd1', '-c', 'IOPlatformExpertDevice'], stdout: INTEL }] });
    await expect(identityProbe.collect(host)).rejects.toThrow(/sw_vers nor SystemVersion\.plist/);
  });
});

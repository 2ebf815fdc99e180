// Device identity on FreeBSD, from recorded kenv / sysctl / freebsd-version output. kenv prints
// the value alone ("kenv smbios.system.uuid") or "kenv: unable to get <name>" with exit 1;
// the UUID deny-list is the one libexec/rc/rc.d/hostid applies before trusting SMBIOS.
import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../checks/types';
import { describeFreebsd, identityProbe, KENV, parseSystemSerial, parseSystemUuid, SYSCTL } from '../../src/identity/freebsd';
import { FakeHost, type RecordedCommand } from '../support/fakeHost';

const ok = (stdout: string): CommandResult => ({ exitCode: 0, stdout, stderr: '' });
const missing = (name: string): RecordedCommand => ({ argv: [KENV, name], stderr: `kenv: unable to get ${name}\n`, exitCode: 1 });
const VERSIONS: RecordedCommand = {
  argv: ['/bin/freebsd-version', '-kru'],
  stdout: ['14.1-RELEASE-p4', '14.1-RELEASE-p4', '14.1-RELEASE-p5'],
};

describe('parseSystemUuid', () => {
  it('accepts a canonical UUID and lower-cases it', () => {
    expect(parseSystemUuid(ok('4C4C4544-0042-3510-8052-B4C04F4E4D32\n'))).toBe('4c4c4544-0042-3510-8052-b4c04f4e4d32');
  });

  it.each([
    ['all zeros', '00000000-0000-0000-0000-000000000000'],
    ['all F', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'],
    ['firmware sequence 03000200-…', '03000200-0400-0500-0006-000700080009'],
    ['Dell-style filler 4c4c4544-0000-2010-8020-80c04f202020', '4c4c4544-0000-2010-8020-80c04f202020'],
    ['any "-ffff-ffff-ffff-ffffffffffff" tail', '12345678-ffff-ffff-ffff-ffffffffffff'],
    ['repeated 58', '58585858-5858-5858-5858-585858585858'],
  ])('refuses the placeholder %s', (_name, uuid) => {
    expect(parseSystemUuid(ok(`${uuid}\n`))).toBeNull();
  });

  it('refuses text, errors and empty answers', () => {
    expect(parseSystemUuid(ok('Not Settable\n'))).toBeNull();
    expect(parseSystemUuid(ok('\n'))).toBeNull();
    expect(parseSystemUuid({ exitCode: 1, stdout: '', stderr: 'kenv: unable to get smbios.system.uuid\n' })).toBeNull();
  });

  it('refuses every UUID on the deny-list of rc.d/hostid (FreeBSD 14 libexec/rc/rc.d/hostid, valid_hostid)', () => {
    const denied = [
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
      '56f49712-ffff-ffff-ffff-ffffffffffff',
    ];
    for (const uuid of denied) expect(parseSystemUuid(ok(uuid.toUpperCase())), uuid).toBeNull();
  });
});

describe('parseSystemSerial', () => {
  it('keeps a real serial and drops firmware filler', () => {
    expect(parseSystemSerial(ok('PF2ABCDE\n'))).toBe('PF2ABCDE');
    expect(parseSystemSerial(ok('To Be Filled By O.E.M.\n'))).toBeNull();
    expect(parseSystemSerial(ok('System Serial Number\n'))).toBeNull();
    expect(parseSystemSerial(ok('0\n'))).toBeNull();
    expect(parseSystemSerial(ok('bad\u0001serial\n'))).toBeNull();
  });
});

describe('describeFreebsd', () => {
  it('names the userland release, else the kernel release', () => {
    expect(describeFreebsd('14.1-RELEASE-p5', '14.1-RELEASE-p4')).toBe('FreeBSD 14.1-RELEASE-p5');
    expect(describeFreebsd(null, '14.1-RELEASE-p4')).toBe('FreeBSD 14.1-RELEASE-p4');
    expect(describeFreebsd(null, null)).toBe('FreeBSD');
  });
});

describe('identityProbe', () => {
  it('uses the SMBIOS UUID and serial from kenv and the userland version', async () => {
    const host = new FakeHost({
      commands: [
        { argv: [KENV, 'smbios.system.uuid'], stdout: '4c4c4544-0042-3510-8052-b4c04f4e4d32\n' },
        { argv: [KENV, 'smbios.system.serial'], stdout: '5CG1234XYZ\n' },
        VERSIONS,
      ],
    });
    expect(await identityProbe.collect(host)).toEqual({
      hardwareUuid: { value: '4c4c4544-0042-3510-8052-b4c04f4e4d32', source: 'smbios_system_uuid' },
      serialNumber: '5CG1234XYZ',
      osVersion: 'FreeBSD 14.1-RELEASE-p5',
    });
    expect(host.commandsRun()).toEqual([
      [KENV, 'smbios.system.uuid'],
      [KENV, 'smbios.system.serial'],
      ['/bin/freebsd-version', '-kru'],
    ]);
  });

  it('falls back to kern.hostuuid when the SMBIOS UUID is a placeholder, and omits a placeholder serial', async () => {
    const host = new FakeHost({
      commands: [
        { argv: [KENV, 'smbios.system.uuid'], stdout: '03000200-0400-0500-0006-000700080009\n' },
        { argv: [KENV, 'smbios.system.serial'], stdout: 'To Be Filled By O.E.M.\n' },
        { argv: [SYSCTL, '-n', 'kern.hostuuid'], stdout: '8f0e0b1c-5d2a-11ef-9c3b-0cc47a8b2e10\n' },
        VERSIONS,
      ],
    });
    expect(await identityProbe.collect(host)).toEqual({
      hardwareUuid: { value: '8f0e0b1c-5d2a-11ef-9c3b-0cc47a8b2e10', source: 'kern_hostuuid' },
      serialNumber: null,
      osVersion: 'FreeBSD 14.1-RELEASE-p5',
    });
  });

  it('in a jail (no SMBIOS, no kernel file) uses kern.hostuuid and freebsd-version -ru', async () => {
    const host = new FakeHost({
      commands: [
        missing('smbios.system.uuid'),
        missing('smbios.system.serial'),
        { argv: [SYSCTL, '-n', 'kern.hostuuid'], stdout: '2b7e1516-28ae-4d2a-abf7-158809cf4f3c\n' },
        { argv: ['/bin/freebsd-version', '-kru'], stderr: 'freebsd-version: unable to locate kernel\n', exitCode: 1 },
        { argv: ['/bin/freebsd-version', '-ru'], stdout: ['14.1-RELEASE-p4', '14.1-RELEASE-p5'] },
      ],
    });
    expect(await identityProbe.collect(host)).toEqual({
      hardwareUuid: { value: '2b7e1516-28ae-4d2a-abf7-158809cf4f3c', source: 'kern_hostuuid' },
      serialNumber: null,
      osVersion: 'FreeBSD 14.1-RELEASE-p5',
    });
  });

  it('reports no hardware UUID rather than inventing one, and falls back to kern.osrelease', async () => {
    const host = new FakeHost({
      commands: [
        missing('smbios.system.uuid'),
        missing('smbios.system.serial'),
        { argv: [SYSCTL, '-n', 'kern.hostuuid'], stdout: '00000000-0000-0000-0000-000000000000\n' },
        { argv: [SYSCTL, '-n', 'kern.osrelease'], stdout: '15.0-RELEASE-p1\n' },
      ],
    });
    expect(await identityProbe.collect(host)).toEqual({ hardwareUuid: null, serialNumber: null, osVersion: 'FreeBSD 15.0-RELEASE-p1' });
  });
});

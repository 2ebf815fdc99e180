// The Linux identity probe: pure parsers, the source order on recorded hosts (root, non-root,
// placeholders, nothing usable), and a real run on this machine compared with the raw files.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSystemHost } from '../../checks/host';
import { identityProbe, parseMachineId, parseProductUuid, parseSerial } from '../../src/identity/linux';
import { FakeHost } from '../support/fakeHost';

const OS_RELEASE = [
  'PRETTY_NAME="Ubuntu 24.04.1 LTS"',
  'NAME="Ubuntu"',
  'VERSION_ID="24.04"',
  'VERSION="24.04.1 LTS (Noble Numbat)"',
  'ID=ubuntu',
];
const MACHINE_ID = 'b08dfa6083e7567a1921a715000001fb\n';

describe('identity parsers', () => {
  it('accepts a canonical SMBIOS UUID and refuses placeholders and junk', () => {
    expect(parseProductUuid('4C4C4544-0042-3510-8052-B4C04F384B32\n')).toBe('4c4c4544-0042-3510-8052-b4c04f384b32');
    expect(parseProductUuid('00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(parseProductUuid('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF')).toBeNull();
    expect(parseProductUuid('03000200-0400-0500-0006-000700080009')).toBeNull();
    expect(parseProductUuid('Not Settable')).toBeNull();
  });

  it('accepts a machine-id(5) and refuses an uninitialized or empty one', () => {
    expect(parseMachineId(MACHINE_ID)).toBe('b08dfa6083e7567a1921a715000001fb');
    expect(parseMachineId('uninitialized\n')).toBeNull();
    expect(parseMachineId('')).toBeNull();
    expect(parseMachineId('0'.repeat(32))).toBeNull();
  });

  it('accepts a printable serial, trims device-tree NULs, and refuses vendor filler', () => {
    expect(parseSerial('PF2X7QKL\n')).toBe('PF2X7QKL');
    expect(parseSerial('10000000a1b2c3d4\0')).toBe('10000000a1b2c3d4');
    expect(parseSerial('To Be Filled By O.E.M.')).toBeNull();
    expect(parseSerial('System Serial Number')).toBeNull();
    expect(parseSerial('0')).toBeNull();
    expect(parseSerial('   ')).toBeNull();
  });
});

describe('identityProbe on recorded hosts', () => {
  it('prefers the DMI product UUID and serial when root can read them', async () => {
    const host = new FakeHost({
      files: {
        '/sys/class/dmi/id/product_uuid': '4C4C4544-0042-3510-8052-B4C04F384B32\n',
        '/sys/class/dmi/id/product_serial': 'PF2X7QKL\n',
        '/etc/machine-id': MACHINE_ID,
        '/etc/os-release': OS_RELEASE,
      },
    });
    expect(await identityProbe.collect(host)).toEqual({
      hardwareUuid: { value: '4c4c4544-0042-3510-8052-b4c04f384b32', source: 'dmi_product_uuid' },
      serialNumber: 'PF2X7QKL',
      osVersion: 'Ubuntu 24.04.1 LTS',
    });
  });

  it('falls back to /etc/machine-id without root (product_uuid and product_serial are 0400)', async () => {
    const host = new FakeHost({
      files: {
        '/sys/class/dmi/id/product_uuid': { error: 'permission_denied' },
        '/sys/class/dmi/id/product_serial': { error: 'permission_denied' },
        '/etc/machine-id': MACHINE_ID,
        '/etc/os-release': ['PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"', 'VERSION_ID="12"', 'ID=debian'],
        '/etc/debian_version': '12.11\n',
      },
    });
    expect(await identityProbe.collect(host)).toEqual({
      hardwareUuid: { value: 'b08dfa6083e7567a1921a715000001fb', source: 'machine_id' },
      serialNumber: null,
      osVersion: 'Debian GNU/Linux 12.11 (bookworm)',
    });
  });

  it('skips a placeholder DMI UUID, then an uninitialized machine-id, for the D-Bus copy', async () => {
    const host = new FakeHost({
      files: {
        '/sys/class/dmi/id/product_uuid': '00000000-0000-0000-0000-000000000000\n',
        '/sys/class/dmi/id/product_serial': 'Default string\n',
        '/etc/machine-id': 'uninitialized\n',
        '/var/lib/dbus/machine-id': MACHINE_ID,
        '/sys/firmware/devicetree/base/serial-number': '10000000a1b2c3d4\0',
      },
    });
    const facts = await identityProbe.collect(host);
    expect(facts.hardwareUuid).toEqual({ value: 'b08dfa6083e7567a1921a715000001fb', source: 'dbus_machine_id' });
    expect(facts.serialNumber).toBe('10000000a1b2c3d4');
  });

  it('reports no hardware id at all rather than inventing one, and names the kernel when os-release is missing', async () => {
    const host = new FakeHost({ files: { '/proc/sys/kernel/osrelease': '6.1.0-26-amd64\n' } });
    expect(await identityProbe.collect(host)).toEqual({ hardwareUuid: null, serialNumber: null, osVersion: 'Linux 6.1.0-26-amd64' });
    expect(host.commandsRun()).toEqual([]);
  });
});

describe.skipIf(process.platform !== 'linux')('identityProbe on this machine', () => {
  it('reads the same identifiers the files hold, without spawning anything', async () => {
    const facts = await identityProbe.collect(createSystemHost());
    const dmi = '/sys/class/dmi/id/product_uuid';
    let expected: { value: string; source: string } | null = null;
    try {
      const uuid = parseProductUuid(readFileSync(dmi, 'utf8'));
      if (uuid) expected = { value: uuid, source: 'dmi_product_uuid' };
    } catch {
      // Not readable here (no DMI, or not root): the machine id decides.
    }
    if (!expected && existsSync('/etc/machine-id')) {
      const id = parseMachineId(readFileSync('/etc/machine-id', 'utf8'));
      if (id) expected = { value: id, source: 'machine_id' };
    }
    expect(facts.hardwareUuid).toEqual(expected);
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (pretty?.startsWith('Debian') && existsSync('/etc/debian_version')) {
      const point = readFileSync('/etc/debian_version', 'utf8').trim();
      if (/^\d+\.\d+$/.test(point)) expect(facts.osVersion).toBe(pretty.replace(/\b\d+\b/, point));
    } else if (pretty) {
      expect(facts.osVersion.startsWith(pretty.split(' ')[0]!)).toBe(true);
    }
  });
});

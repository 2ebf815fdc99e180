// The platform-independent identity reader: caching, placeholders, omitted serial, typed errors,
// and a real read of this machine's identity.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createIdentityReader, DeviceIdentityError, readDeviceIdentity } from '../../src/identity';
import { parseIoregPlatformExpert } from '../../src/identity/darwin';
import { parseSystemUuid as parseKenvUuid } from '../../src/identity/freebsd';
import {
  canonicalUuid,
  firmwareSerial,
  isPlaceholderId,
  SHARED_FIRMWARE_UUIDS,
  type IdentityFacts,
  type IdentityProbe,
} from '../../src/identity/identity';
import { parseProductUuid } from '../../src/identity/linux';
import { parseMachineGuid, parseSystemUuid as parseWmiUuid } from '../../src/identity/windows';
import { HeartbeatRequest } from '../../src/protocol/schemas';

function countingProbe(answers: Array<IdentityFacts | Error>): IdentityProbe & { calls: number } {
  const probe = {
    calls: 0,
    collect(): Promise<IdentityFacts> {
      const answer = answers[Math.min(probe.calls, answers.length - 1)]!;
      probe.calls += 1;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  return probe;
}

const facts = (over: Partial<IdentityFacts> = {}): IdentityFacts => ({
  hardwareUuid: { value: '4c4c4544-0042-3510-8052-b4c04f384b32', source: 'dmi_product_uuid' },
  serialNumber: 'PF2X7QKL',
  osVersion: 'Ubuntu 24.04.1 LTS',
  ...over,
});

describe('createIdentityReader', () => {
  it('builds the heartbeat identity and records where hardware_uuid came from', async () => {
    const read = createIdentityReader({ platform: 'LINUX', probe: countingProbe([facts()]), hostname: () => 'laptop-42' });
    expect(await read()).toEqual({
      hardware_uuid: '4c4c4544-0042-3510-8052-b4c04f384b32',
      hardware_uuid_source: 'dmi_product_uuid',
      serial_number: 'PF2X7QKL',
      hostname: 'laptop-42',
      platform: 'LINUX',
      os_version: 'Ubuntu 24.04.1 LTS',
    });
  });

  it('omits the serial when there is none or it is a placeholder', async () => {
    for (const serialNumber of [null, 'To Be Filled By O.E.M.', '0']) {
      const identity = await createIdentityReader({
        platform: 'LINUX',
        probe: countingProbe([facts({ serialNumber })]),
        hostname: () => 'h',
      })();
      expect(identity).not.toHaveProperty('serial_number');
    }
  });

  it('caches hardware id and serial for the process, os_version for its TTL, and reads the hostname every time', async () => {
    let clock = 0;
    let name = 'before';
    const probe = countingProbe([
      facts(),
      facts({ hardwareUuid: { value: 'changed', source: 'machine_id' }, serialNumber: null, osVersion: 'Ubuntu 24.04.2 LTS' }),
    ]);
    const read = createIdentityReader({ platform: 'LINUX', probe, hostname: () => name, now: () => clock, osVersionTtlMs: 1_000 });
    await read();
    name = 'after-rename';
    clock = 999;
    const cached = await read();
    expect(probe.calls).toBe(1);
    expect(cached.hostname).toBe('after-rename');
    clock = 1_000;
    const refreshed = await read();
    expect(probe.calls).toBe(2);
    expect(refreshed).toMatchObject({
      os_version: 'Ubuntu 24.04.2 LTS',
      hardware_uuid: '4c4c4544-0042-3510-8052-b4c04f384b32',
      serial_number: 'PF2X7QKL',
    });
    await read({ refresh: true });
    expect(probe.calls).toBe(3);
  });

  it('probes once for concurrent callers', async () => {
    const probe = countingProbe([facts()]);
    const read = createIdentityReader({ platform: 'LINUX', probe, hostname: () => 'h' });
    await Promise.all([read(), read(), read()]);
    expect(probe.calls).toBe(1);
  });

  it('refuses to invent an identity: no id, a placeholder, a failing probe or an empty hostname are typed errors', async () => {
    const none = createIdentityReader({ platform: 'LINUX', probe: countingProbe([facts({ hardwareUuid: null })]), hostname: () => 'h' });
    await expect(none()).rejects.toMatchObject({ name: 'DeviceIdentityError', code: 'no_hardware_id' });
    const zeros = createIdentityReader({
      platform: 'LINUX',
      probe: countingProbe([facts({ hardwareUuid: { value: '00000000-0000-0000-0000-000000000000', source: 'x' } })]),
      hostname: () => 'h',
    });
    await expect(zeros()).rejects.toBeInstanceOf(DeviceIdentityError);
    const broken = createIdentityReader({ platform: 'DARWIN', probe: countingProbe([new Error('ioreg failed')]), hostname: () => 'h' });
    await expect(broken()).rejects.toMatchObject({
      code: 'probe_failed',
      message: 'cannot read the device identity on DARWIN: ioreg failed',
    });
    const nameless = createIdentityReader({ platform: 'LINUX', probe: countingProbe([facts()]), hostname: () => '  ' });
    await expect(nameless()).rejects.toMatchObject({ code: 'no_hostname' });
  });

  it('retries the probe after a failure instead of caching it', async () => {
    const probe = countingProbe([new Error('transient'), facts()]);
    const read = createIdentityReader({ platform: 'LINUX', probe, hostname: () => 'h' });
    await expect(read()).rejects.toBeInstanceOf(DeviceIdentityError);
    expect((await read()).hardware_uuid).toBe('4c4c4544-0042-3510-8052-b4c04f384b32');
  });
});

describe('placeholders, the same on every platform', () => {
  const ioregUuid = (uuid: string) => parseIoregPlatformExpert(`  "IOPlatformUUID" = "${uuid}"\n`).uuid;
  const parsers: [string, (uuid: string) => string | null][] = [
    ['LINUX product_uuid', parseProductUuid],
    ['DARWIN IOPlatformUUID', ioregUuid],
    ['WINDOWS Win32_ComputerSystemProduct.UUID', (uuid) => parseWmiUuid(`{${uuid.toUpperCase()}}`)],
    ['WINDOWS MachineGuid', parseMachineGuid],
    ['FREEBSD kenv smbios.system.uuid', (uuid) => parseKenvUuid({ exitCode: 0, stdout: `${uuid}\n`, stderr: '' })],
  ];
  const shared = [
    ...SHARED_FIRMWARE_UUIDS,
    '00000000-0000-0000-0000-000000000000',
    'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    '93309712-ffff-ffff-ffff-ffffffffffff',
  ];

  it.each(parsers)('%s refuses every shared firmware UUID', (_name, parse) => {
    for (const uuid of shared) expect(parse(uuid), uuid).toBeNull();
    expect(parse('4C4C4544-0042-3510-8052-B4C04F384B32')).toBe('4c4c4544-0042-3510-8052-b4c04f384b32');
  });

  it('knows the lists by their hex digits, whatever the punctuation, and leaves real ids alone', () => {
    expect(isPlaceholderId('{00010203-0405-0607-0809-0A0B0C0D0E0F}')).toBe(true);
    expect(isPlaceholderId('4c4c45440000201080208' + '0c04f202020')).toBe(true);
    expect(isPlaceholderId('12345678-ffff-ffff-ffff-fffffffffffe')).toBe(false);
    expect(isPlaceholderId('2b7f3c1e9d8a4b6c8f0e1d2c3b4a5f6e')).toBe(false);
  });

  it('canonicalUuid and firmwareSerial keep only well-formed, real values', () => {
    expect(canonicalUuid(' {2B7F3C1E-9D8A-4B6C-8F0E-1D2C3B4A5F6E} ')).toBe('2b7f3c1e-9d8a-4b6c-8f0e-1d2c3b4a5f6e');
    expect(canonicalUuid('2b7f3c1e9d8a4b6c8f0e1d2c3b4a5f6e')).toBeNull();
    expect(firmwareSerial(' C02ZK1ABMD6R ')).toBe('C02ZK1ABMD6R');
    expect([firmwareSerial('Default string'), firmwareSerial('x'.repeat(256)), firmwareSerial('caf\u00e9')]).toEqual([null, null, null]);
  });
});

describe.skipIf(process.platform !== 'linux')('readDeviceIdentity on this machine', () => {
  it('returns a heartbeat-valid identity of this machine', async () => {
    const identity = await readDeviceIdentity();
    expect(identity.platform).toBe('LINUX');
    expect(identity.hostname).toBe(hostname());
    expect(['dmi_product_uuid', 'machine_id', 'dbus_machine_id']).toContain(identity.hardware_uuid_source);
    const { hardware_uuid_source: _source, ...wire } = identity;
    expect(HeartbeatRequest.parse({ ...wire, agent_version: '0.0.0' })).toBeTruthy();
    expect(await readDeviceIdentity()).toEqual(identity);
  });
});

// Text the server stores is refused with 400 when it holds U+0000 (NUL), which PostgreSQL's text
// type cannot store: before, PostgreSQL answered 500 where SQLite stored it. Evidence (JSON) may hold
// it and reads back unchanged on either engine. Every other character is stored as the device sent
// it, and shown with its controls made visible: the admin CLI's tables and --json, and the console.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DeviceDetails, DeviceSummary } from '../../src/server/admin';
import type { FleetFailure } from '../../src/server/remediation';
import { addAccount, ConsoleClient } from '../support/admin';
import { parseJson } from '../support/json';
import { runServerCli, startServer, type RunningServer } from '../support/server';
import { enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result, type EnrolledDevice } from './client';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server.stop();
});

describe('U+0000 (NUL) in what the server stores', () => {
  test.each(['hardware_uuid', 'serial_number', 'hostname', 'os_version', 'agent_version'] as const)(
    'in the heartbeat field %s: 400 naming it, the device unchanged',
    async (field) => {
      const device = await enrolledDevice(server);
      const answer = await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid, [field]: 'a\u0000b' }));
      expectError(answer, 400, 'bad_request');
      expect(answer.body?.message).toBe(`invalid request body: ${field}: must not contain the character U+0000 (NUL)`);
      expect((await server.showDevice(device.deviceId)).hardware_uuid).toBe(device.hardwareUuid);
    },
  );

  test('in a check_key: 400 naming the result, nothing of the batch stored', async () => {
    const device = await enrolledDevice(server);
    const answer = await postures(server, device.apiKey, { results: [result(), result({ check_key: 'X\u0000Y' })] });
    expectError(answer, 400, 'bad_request');
    expect(answer.body?.message).toBe('invalid request body: results[1].check_key: must not contain the character U+0000 (NUL)');
    expect((await server.showDevice(device.deviceId)).postures).toEqual([]);
  });

  test('in evidence: stored and read back unchanged', async () => {
    const device = await enrolledDevice(server);
    const evidence = { output: 'before\u0000after' };
    expect((await postures(server, device.apiKey, { results: [result({ evidence })] })).status).toBe(204);
    expect((await server.showDevice(device.deviceId)).postures.map((p) => p.evidence)).toEqual([evidence]);
  });
});

describe('control characters in device-reported text: stored as sent, shown visibly', () => {
  // An OSC 52 clipboard write and a forged table row; CSI as one C1 character; a right-to-left
  // override; a carriage return and NEL; a line separator; DEL and a left-to-right mark.
  const IDENTITY = {
    hostname: 'laptop\u001b]52;c;aGk=\u0007\nFORGED-ROW',
    os_version: 'Debian\u009b2J 12\u202e',
    serial_number: 'SN\r\u0085',
    agent_version: '0.1.0\u2028x',
  };
  const SHOWN = {
    hostname: 'laptop\\x1b]52;c;aGk=\\x07\\x0aFORGED-ROW',
    os_version: 'Debian\\x9b2J 12\\u{202e}',
    serial_number: 'SN\\x0d\\x85',
    agent_version: '0.1.0\\u{2028}x',
  };
  const CHECK_KEY = 'CUSTOM\u001b[2J';
  const RULE = 'rule\u009d8;;http://evil\u009c';
  const EMAIL = 'texts@hostile.test';
  const PASSWORD = 'hostile console password';
  // Every control character, DEL, C1, bidirectional formatting and line separators; line feeds apart.
  // eslint-disable-next-line no-control-regex -- what a terminal must never receive
  const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
  // Tab, line feed and carriage return are white space in HTML.
  // eslint-disable-next-line no-control-regex -- see UNSAFE
  const UNSAFE_IN_HTML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
  let device: EnrolledDevice;
  let hardwareUuid: string;
  const admin = (...args: string[]) => runServerCli([...args, '--db', server.dbPath]);

  beforeAll(async () => {
    device = await enrolledDevice(server, { org: 'hostile', activate: false });
    hardwareUuid = `${heartbeatBody().hardware_uuid}\u007f\u200e`;
    const beat = await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: hardwareUuid, ...IDENTITY }));
    expect(beat.status, beat.text).toBe(200);
    const upload = await postures(server, device.apiKey, {
      results: [
        result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: RULE } }),
        result({ check_key: CHECK_KEY, status: 'FAIL' }),
      ],
    });
    expect(upload.status, upload.text).toBe(204);
    expect((await addAccount(server, EMAIL, { org: 'hostile' }, PASSWORD)).code).toBe(0);
  });

  test('the heartbeat is accepted and every field is stored exactly as sent', async () => {
    const shown = parseJson<DeviceDetails>((await admin('device', 'show', device.deviceId, '--json')).stdout);
    expect(shown).toMatchObject({ ...IDENTITY, hardware_uuid: hardwareUuid, state: 'ACTIVE' });
    expect(shown.postures.map((p) => p.check_key).sort()).toEqual([CHECK_KEY, 'FIREWALL_ENABLED'].sort());
  });

  test('device list: one row for the device, its text escaped; --json parses to the exact text', async () => {
    const table = (await admin('device', 'list', '--org', 'hostile')).stdout;
    expect(table).not.toMatch(UNSAFE);
    expect(table.trimEnd().split('\n')).toHaveLength(2);
    expect(table).toContain(SHOWN.hostname);
    const json = (await admin('device', 'list', '--org', 'hostile', '--json')).stdout;
    expect(json).not.toMatch(UNSAFE);
    expect(parseJson<DeviceSummary[]>(json).map((d) => d.hostname)).toEqual([IDENTITY.hostname]);
  });

  test('device show: every identity field, the check key and the evidence word escaped, in the table and in --json', async () => {
    const table = (await admin('device', 'show', device.deviceId)).stdout;
    expect(table).not.toMatch(UNSAFE);
    for (const text of Object.values(SHOWN)) expect(table).toContain(text);
    expect(table).toMatch(/^Hardware UUID +hw-/m);
    expect(table).toContain('\\x7f\\u{200e}\n');
    expect(table).toContain('CUSTOM\\x1b[2J');
    expect(table).toContain('rule\\x9d8;;http://evil\\x9c');
    const json = (await admin('device', 'show', device.deviceId, '--json')).stdout;
    expect(json).not.toMatch(UNSAFE);
    expect(json).toContain('"os_version": "Debian\\u009b2J 12\\u202e"');
    expect(parseJson<DeviceDetails>(json)).toMatchObject(IDENTITY);
  });

  test('device failing: the check key and the rule escaped, in the text and in --json', async () => {
    const text = (await admin('device', 'failing', '--org', 'hostile')).stdout;
    expect(text).not.toMatch(UNSAFE);
    expect(text).toContain('1 device fails CUSTOM\\x1b[2J (LINUX');
    expect(text).toContain('1 device fails FIREWALL_ENABLED (LINUX, rule\\x9d8;;http://evil\\x9c)');
    const json = (await admin('device', 'failing', '--org', 'hostile', '--json')).stdout;
    expect(json).not.toMatch(UNSAFE);
    expect(
      parseJson<FleetFailure[]>(json)
        .map((f) => [f.check_key, f.word])
        .sort(),
    ).toEqual([
      [CHECK_KEY, null],
      ['FIREWALL_ENABLED', RULE],
    ]);
  });

  test('the console shows the same escapes, as HTML text', async () => {
    const client = new ConsoleClient(server);
    expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
    for (const path of ['/console/devices', `/console/devices/${device.deviceId}`, '/console/overview']) {
      const page = await client.get(path);
      expect(page.status).toBe(200);
      expect(page.text, path).not.toMatch(UNSAFE_IN_HTML);
    }
    const page = (await client.get(`/console/devices/${device.deviceId}`)).text;
    for (const text of ['laptop\\x1b]52;c;aGk=\\x07\nFORGED-ROW', SHOWN.os_version, 'SN\r\\x85', SHOWN.agent_version, 'CUSTOM\\x1b[2J'])
      expect(page).toContain(text);
    expect(page).toContain(`href="?check=${encodeURIComponent(CHECK_KEY)}#history"`);
  });
});

// Text the server stores is refused with 400 when it holds U+0000 (NUL), which PostgreSQL's text
// type cannot store: before, PostgreSQL answered 500 where SQLite stored it. Evidence (JSON) may hold
// it and reads back unchanged on either engine.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../support/server';
import { enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result } from './client';

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

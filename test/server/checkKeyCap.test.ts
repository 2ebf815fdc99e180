// The cap on distinct check keys per device (--max-check-keys) against the real server and its
// real database (SQLite, or PostgreSQL in the `postgres` project): a new key beyond it refuses the
// batch with 400 and stores nothing of it, the official keys always pass, /metrics counts the
// refusals, and two servers on one database racing one device's uploads past the cap store
// exactly as many keys as it allows.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiClient } from '../../src/agent/client';
import { PostureQueue } from '../../src/agent/state/postureQueue';
import { uploadNextBatch } from '../../src/agent/uploader';
import { CHECK_KEYS } from '../../src/protocol/constants';
import { startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, expectError, postures, result } from './client';

/** The nine official keys and two others. */
const CAP = 11;
const CAP_MESSAGE = "is a new check key beyond this device's cap of 11 distinct check keys (the nine official ones and 2 others)";

let server: RunningServer;
let twin: RunningServer;
beforeAll(async () => {
  const args = ['--max-check-keys', String(CAP), '--rate-limit-postures', '0'];
  server = await startServer({ args });
  // A second server on the same database: a deployment of several processes or machines.
  twin = await startServer({ args, dbPath: server.dbPath });
});
afterAll(async () => {
  await twin?.stop();
  await server?.stop();
});

const keys = (...names: string[]) => names.map((check_key) => result({ check_key }));

/** The distinct check keys of the device's stored results. */
async function storedKeys(deviceId: string): Promise<string[]> {
  const details = await server.showDevice(deviceId);
  return [...new Set(details.postures.map((posture) => posture.check_key))].sort();
}

async function refusals(): Promise<number> {
  const text = (await call(server, '/metrics', { method: 'GET' })).text;
  return Number(/^device_agent_server_check_key_cap_refusals_total (\d+)$/m.exec(text)?.[1]);
}

describe('--max-check-keys', () => {
  test('a batch bringing a new key beyond the cap is refused whole with 400 naming the cap; the official keys always pass', async () => {
    const device = await enrolledDevice(server);
    const before = await refusals();
    expect((await postures(server, device.apiKey, { results: keys('CUSTOM_A', 'CUSTOM_B') })).status).toBe(204);

    const refused = await postures(server, device.apiKey, { results: keys('DISK_ENCRYPTION', 'CUSTOM_A', 'CUSTOM_C', 'CUSTOM_D') });
    expectError(refused, 400, 'bad_request');
    expect(refused.body?.message).toBe(`results[2].check_key ${CAP_MESSAGE}`);
    expect(await storedKeys(device.deviceId)).toEqual(['CUSTOM_A', 'CUSTOM_B']);
    expect(await refusals()).toBe(before + 1);

    // Split as the agent splits it: what does not add a key beyond the cap is stored.
    expect((await postures(server, device.apiKey, { results: keys('DISK_ENCRYPTION', 'CUSTOM_A') })).status).toBe(204);
    expectError(await postures(server, device.apiKey, { results: keys('CUSTOM_C') }), 400, 'bad_request');
    // Every official key still, and the keys it holds, again and again.
    const all = keys(...CHECK_KEYS, 'CUSTOM_B', 'CUSTOM_A');
    expect((await postures(server, device.apiKey, { results: all })).status).toBe(204);
    expect((await postures(server, device.apiKey, { results: all })).status).toBe(204);
    expect(await storedKeys(device.deviceId)).toEqual([...CHECK_KEYS, 'CUSTOM_A', 'CUSTOM_B'].sort());
    expect(await refusals()).toBe(before + 2);
  });

  test('the cap is per device: another device has its own', async () => {
    const first = await enrolledDevice(server);
    const second = await enrolledDevice(server, { org: 'other' });
    expect((await postures(server, first.apiKey, { results: keys('X', 'Y') })).status).toBe(204);
    expect((await postures(server, second.apiKey, { results: keys('Z', 'Y') })).status).toBe(204);
    expect(await storedKeys(second.deviceId)).toEqual(['Y', 'Z']);
  });

  test('uploads of one device racing past the cap through two servers: exactly the allowed number of keys is stored', async () => {
    const device = await enrolledDevice(server);
    const racers = 12;
    const answers = await Promise.all(
      Array.from({ length: racers }, (_, i) =>
        postures(i % 2 === 0 ? server : twin, device.apiKey, { results: keys('DISK_ENCRYPTION', `RACE_${i}`) }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 204)).toHaveLength(CAP - CHECK_KEYS.length);
    expect(statuses.filter((status) => status === 400)).toHaveLength(racers - (CAP - CHECK_KEYS.length));
    const stored = await storedKeys(device.deviceId);
    expect(stored.filter((key) => key.startsWith('RACE_'))).toHaveLength(CAP - CHECK_KEYS.length);
    // The refused uploads stored nothing, not even their official result: one per accepted upload.
    const history = (await server.showDevice(device.deviceId)).postures;
    expect(history.filter((posture) => posture.check_key === 'DISK_ENCRYPTION')).toHaveLength(CAP - CHECK_KEYS.length);
  });

  test("the agent's uploader keeps every official result and drops only the keys beyond the cap", async () => {
    const device = await enrolledDevice(server);
    const dir = await mkdtemp(join(tmpdir(), 'check-key-cap-'));
    const client = createApiClient({ serverUrl: server.url });
    try {
      const queue = await PostureQueue.open(dir);
      // One cycle, custom keys among the official ones: room for two of the four.
      const cycle = [...CHECK_KEYS.slice(0, 4).flatMap((key, i) => [key, `CUSTOM_${i}`]), ...CHECK_KEYS.slice(4)];
      await queue.append(keys(...cycle));
      const outcome = await uploadNextBatch({ api: client, apiKey: device.apiKey, queue, log: pino({ level: 'silent' }) });
      expect(outcome).toMatchObject({ sent: CHECK_KEYS.length + 2, rejected: 2 });
      expect(await storedKeys(device.deviceId)).toEqual([...CHECK_KEYS, 'CUSTOM_0', 'CUSTOM_1'].sort());
      expect(await queue.count()).toBe(0);
    } finally {
      await client.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a value below the nine official keys is refused at start with exit 2', async () => {
    await expect(startServer({ args: ['--max-check-keys', '8'] })).rejects.toThrow(
      /option '--max-check-keys <n>' argument '8' is invalid\. expected a whole number from 9 to 10000/,
    );
  });
});

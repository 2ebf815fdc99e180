// Several server processes on one PostgreSQL database behave as one server: a token enrolls once,
// a revocation made through one instance is refused by the others on the next request, a
// hardware_uuid raced through two instances activates one device, a label change made through one
// instance reaches the device through the others, and killing an instance (kill -9)
// in the middle of a posture flood loses no acknowledged result while the others keep serving.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXTENSION_ROUTES, POSTURE_REPORT_HEADER } from '../../../src/protocol/schemas';
import { createAdminToken } from '../../support/admin';
import { until } from '../../support/agent';
import { queryDatabase } from '../../support/postgres';
import { NO_RATE_LIMITS, runServerCli, startServer, type RunningServer } from '../../support/server';
import { call, enroll, enrolledDevice, heartbeat, heartbeatBody, postures, result, unenroll, type Answer } from '../client';

let servers: RunningServer[] = [];

beforeAll(async () => {
  const first = await startServer({ args: NO_RATE_LIMITS });
  const others = await Promise.all([1, 2].map(() => startServer({ dbPath: first.dbPath, args: NO_RATE_LIMITS })));
  servers = [first, ...others];
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort((a, b) => a - b);

describe('three server processes on one PostgreSQL database', () => {
  test('one token raced from all three enrolls exactly once, and its key works on each', async () => {
    const [a, b, c] = servers as [RunningServer, RunningServer, RunningServer];
    const device = await a.createDevice();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => enroll(servers[i % 3]!, device.enrollment_token)));
    expect(statuses(answers)).toEqual([200, ...Array<number>(29).fill(401)]);
    const apiKey = String(answers.find((answer) => answer.status === 200)?.body?.api_key);
    const body = heartbeatBody();
    for (const server of [a, b, c]) expect((await heartbeat(server, apiKey, body)).status).toBe(200);
  });

  test('a revocation through one instance is refused by the others on their next request', async () => {
    const [a, b, c] = servers as [RunningServer, RunningServer, RunningServer];
    const device = await enrolledDevice(a);
    expect((await heartbeat(b, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid }))).status).toBe(200);
    expect((await postures(c, device.apiKey, { results: [result()] })).status).toBe(204);

    expect((await unenroll(a, device.apiKey)).status).toBe(204);
    expect((await heartbeat(b, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid }))).status).toBe(401);
    expect((await postures(c, device.apiKey, { results: [result()] })).status).toBe(401);

    // The same through the admin CLI: no instance keeps serving a device revoked behind its back.
    const other = await enrolledDevice(b);
    await c.revokeDevice(other.deviceId);
    for (const server of [a, b, c]) expect((await postures(server, other.apiKey, { results: [result()] })).status).toBe(401);
  });

  test('one hardware_uuid raced through two instances by two devices activates one of them', async () => {
    const [a, b] = servers as [RunningServer, RunningServer];
    for (let round = 0; round < 5; round += 1) {
      const [first, second] = await Promise.all([enrolledDevice(a, { activate: false }), enrolledDevice(b, { activate: false })]);
      const body = heartbeatBody();
      const answers = await Promise.all([heartbeat(a, first.apiKey, body), heartbeat(b, second.apiKey, body)]);
      expect(statuses(answers)).toEqual([200, 409]);
      const active = await queryDatabase<{ id: string }>(a.dbPath, "SELECT id FROM devices WHERE hardware_uuid = $1 AND state = 'ACTIVE'", [
        body.hardware_uuid,
      ]);
      const winner = answers[0].status === 200 ? first : second;
      expect(active.map((row) => row.id)).toEqual([winner.deviceId]);
    }
  });

  test('a label change through one instance reaches the device through the others: a new policy_version, then the refined policy', async () => {
    const [a, b, c] = servers as [RunningServer, RunningServer, RunningServer];
    const device = await enrolledDevice(a, { org: 'labelled' });
    const file = join(a.dir, 'lab.json');
    writeFileSync(file, JSON.stringify({ password: { minLength: 14 } }));
    await runServerCli(['policy', 'set', '--db', a.dbPath, '--org', 'labelled', '--label', 'team=lab', '--file', file]);
    const version = async (server: RunningServer) =>
      String((await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid }))).body?.policy_version);
    const policy = async (server: RunningServer) =>
      (await call(server, EXTENSION_ROUTES.policy, { apiKey: device.apiKey, json: { platform: 'LINUX' } })).body?.policy;
    // Each instance has served (and kept) the device's policy (the refinement is the organization's version 1) and labels.
    for (const server of [b, c]) {
      await until(
        () => version(server),
        (v) => v === '1.0',
        60_000,
        'the refinement seen by every instance',
      );
      expect(await policy(server)).toEqual({});
    }

    const token = (await createAdminToken(a, { org: 'labelled' })).admin_token;
    const put = await call(a, `/api/admin/v1/devices/${device.deviceId}/labels`, {
      method: 'PUT',
      json: { labels: { team: 'lab' } },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(put.status, put.text).toBe(200);
    // The others learn of it by notification: milliseconds after the commit, at most the fallback period.
    for (const server of [b, c]) {
      await until(
        () => version(server),
        (v) => v === '2.0',
        60_000,
        'the new policy_version',
      );
      expect(await policy(server)).toEqual({ password: { minLength: 14 } });
    }
  });

  test('kill -9 of one instance during a posture flood loses no acknowledged result; the others keep serving', async () => {
    const devices = await Promise.all(Array.from({ length: 6 }, (_, i) => enrolledDevice(servers[i % 3]!)));
    const victim = servers[1]!;
    const acknowledged: string[] = [];
    let servedAfterKill = 0;
    let unanswered = 0;
    let killed = false;
    const batch = { results: ['DISK_ENCRYPTION', 'FIREWALL_ENABLED', 'SCREEN_LOCK'].map((check_key) => result({ check_key })) };

    async function flood(device: (typeof devices)[number], lane: number): Promise<void> {
      for (let i = 0; i < 40; i += 1) {
        const server = servers[(lane + i) % 3]!;
        let answer: Answer;
        try {
          answer = await postures(server, device.apiKey, batch);
        } catch {
          unanswered += 1; // the killed instance: no answer, nothing acknowledged
          continue;
        }
        expect(answer.status, answer.text).toBe(204);
        acknowledged.push(String(answer.headers[POSTURE_REPORT_HEADER]));
        if (killed && server !== victim) servedAfterKill += 1;
      }
    }

    const flooding = Promise.all(devices.map((device, lane) => flood(device, lane)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    victim.kill('SIGKILL');
    killed = true;
    await flooding;

    // The kill fell inside the flood: the victim left requests unanswered, the others answered after it.
    expect(unanswered).toBeGreaterThan(0);
    expect(servedAfterKill).toBeGreaterThan(0);
    const stored = await queryDatabase<{ report_id: string; results: number }>(
      victim.dbPath,
      'SELECT report_id, count(*)::int AS results FROM posture_results WHERE report_id = ANY($1) GROUP BY report_id',
      [acknowledged],
    );
    expect(stored).toHaveLength(acknowledged.length);
    expect(stored.every((row) => row.results === batch.results.length)).toBe(true);
    servers = servers.filter((server) => server !== victim);
  });
});

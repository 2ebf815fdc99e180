// Registration under load (issue 28), on every engine: a secret's cap holds exactly under 200
// concurrent registrations, and a server killed (kill -9) and restarted in the middle of a rollout
// of 500 machines loses no registration it answered and creates none twice.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../support/server';
import { createSecret, enroll, heartbeatBody, listSecrets, register, type Answer } from './client';
import { OPEN_LIMITS, devicesOf, raceTheCap } from './registrations';

describe('registrations under load', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: OPEN_LIMITS });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('200 concurrent registrations against a secret capped at 150: exactly 150 devices and 50 identical 401s, no 5xx', async () => {
    await raceTheCap([server], 'capped');
  });
});

describe('a server killed and restarted during a rollout of 500 machines', () => {
  test('every registration answered 200 is stored and enrolls; none is created twice; the cap of 500 is met exactly', async () => {
    let server = await startServer({ args: OPEN_LIMITS });
    const port = new URL(server.url).port;
    const secret = await createSecret(server, ['--max-uses', '500'], 'rollout');
    const identities = Array.from({ length: 500 }, () => heartbeatBody());
    let restarted: Promise<void> | undefined;
    let answered = 0;
    let retried = 0;
    /** Registers like an agent: a network failure or a 5xx is retried (the same identity), anything else is final. */
    async function agent(identity: (typeof identities)[number]): Promise<Answer> {
      for (;;) {
        try {
          const answer = await register(server, secret.enroll_secret, identity);
          if (answer.status < 500) {
            answered += 1;
            return answer;
          }
        } catch {
          // The server is down: wait for its restart, as an agent's backoff would.
        }
        retried += 1;
        await (restarted ?? new Promise((resolve) => setTimeout(resolve, 50)));
      }
    }
    // 25 machines at a time, as an MDM pushing to a fleet; the server is killed once 150 were answered.
    const queue = [...identities.entries()];
    const answers = new Array<Answer>(identities.length);
    const workers = Array.from({ length: 25 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [index, identity] = next;
        answers[index] = await agent(identity);
        if (answered >= 150 && restarted === undefined) {
          restarted = (async () => {
            await server.crash();
            server = await startServer({ dbPath: server.dbPath, args: [...OPEN_LIMITS, '--port', port] });
          })();
        }
      }
    });
    await Promise.all(workers);
    await restarted;
    try {
      // Registrations were in flight when the server died.
      expect(retried).toBeGreaterThan(0);
      expect(answers.map((a) => a.status)).toEqual(Array<number>(500).fill(200));
      const devices = await devicesOf(server, 'rollout');
      // One record per machine, none superseded: a retry of a registration stored before the crash kept its device.
      expect(devices).toHaveLength(500);
      expect(devices.filter((d) => d.state !== 'PENDING')).toEqual([]);
      expect(new Set(devices.map((d) => d.hardware_uuid))).toEqual(new Set(identities.map((i) => i.hardware_uuid)));
      expect(new Set(answers.map((a) => a.body?.device_id))).toEqual(new Set(devices.map((d) => d.device_id)));
      expect((await listSecrets(server)).find((s) => s.secret_id === secret.secret_id)).toMatchObject({ uses: 500, status: 'used_up' });
      // Every token answered is stored: each enrolls its device.
      const enrolled = await Promise.all(answers.map((a) => enroll(server, a.body?.enrollment_token)));
      expect(enrolled.filter((e) => e.status !== 200).map((e) => e.text)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

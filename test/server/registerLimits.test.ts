// The rate limits of /register over real HTTP: per client address before the body is read, and per
// enrollment secret (any secret presented, valid or not, so a 429 tells nothing about it). Over
// budget: 429 too_many_requests with Retry-After, and nothing registered.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../support/server';
import { createSecret, expectError, listSecrets, register } from './client';

let byAddress: RunningServer;
let bySecret: RunningServer;
beforeAll(async () => {
  [byAddress, bySecret] = await Promise.all([
    startServer({ args: ['--rate-limit-registrations', '2'] }),
    startServer({ args: ['--rate-limit-registrations', '0', '--rate-limit-registrations-per-secret', '2'] }),
  ]);
});
afterAll(async () => {
  await Promise.all([byAddress?.stop(), bySecret?.stop()]);
});

describe.concurrent('registration rate limits', () => {
  test('per address: the third registration in a minute gets 429 with Retry-After, even with a malformed body', async () => {
    const secret = await createSecret(byAddress);
    const answers = [];
    for (let i = 0; i < 2; i += 1) answers.push(await register(byAddress, secret.enroll_secret));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const over = await register(byAddress, secret.enroll_secret);
    expectError(over, 429, 'too_many_requests');
    expect(over.body?.message).toMatch(/^this address sent registrations faster than this server allows; retry after \d+ s$/);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectError(await register(byAddress, 42), 429, 'too_many_requests');
    expect((await listSecrets(byAddress)).find((s) => s.secret_id === secret.secret_id)?.uses).toBe(2);
  });

  test('per secret: the third registration with one secret gets 429; another secret is not affected; an unknown one is limited alike', async () => {
    const [limited, other] = await Promise.all([createSecret(bySecret), createSecret(bySecret)]);
    expect((await register(bySecret, limited.enroll_secret)).status).toBe(200);
    expect((await register(bySecret, limited.enroll_secret)).status).toBe(200);
    const over = await register(bySecret, limited.enroll_secret);
    expectError(over, 429, 'too_many_requests');
    expect(over.body?.message).toMatch(/^this enrollment secret sent registrations faster/);
    expect((await register(bySecret, other.enroll_secret)).status).toBe(200);
    const unknown = `das_${'cd'.repeat(32)}`;
    const unknownAnswers = [];
    for (let i = 0; i < 3; i += 1) unknownAnswers.push((await register(bySecret, unknown)).status);
    expect(unknownAnswers).toEqual([401, 401, 429]);
    expect((await listSecrets(bySecret)).find((s) => s.secret_id === limited.secret_id)?.uses).toBe(2);
  });
});

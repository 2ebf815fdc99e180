// Enrolling again after a 401 (the admin's opt-in, docs/agent.md), as the daemon decides it, in process
// with a fake clock (test/daemon/inProcess.ts): which answers end the attempts, which are retried and
// when, and what the log and status.json say. The whole path against the real server and a real secret
// is test/daemon/reenroll.test.ts.
import { afterEach, expect, it } from 'vitest';
import { CredentialsRejectedError, InvalidRequestError, RetryableError } from '../../src/agent/api';
import { AlreadyEnrolledError } from '../../src/agent/errors';
import { openAgentState, type EnrollmentRecord } from '../../src/agent/state';
import { runtimeStatus } from '../support/agent';
import { enrollState, FakeClock, makeStateDir, ScriptedApi, startInProcess, type Harness } from './inProcess';

const OLD_KEY = 'a'.repeat(96);
const NEW_KEY = 'b'.repeat(96);
const SECRET_FILE = '/etc/device-agent/enroll-secret';
const RETRY = { baseMs: 1000, maxMs: 60_000, attempts: 3 };

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** A daemon opted in to enroll again, whose first heartbeat gets a 401; `answers` are the re-enrollment's, in order (then success). */
async function revokedWithOptIn(answers: Error[], enrolledMeanwhile?: string) {
  const clock = new FakeClock();
  const api = new ScriptedApi(clock);
  api.heartbeats.push(new CredentialsRejectedError('heartbeat', 'server answered 401', 401));
  const attempts: { at: number; revoked: EnrollmentRecord }[] = [];
  const stateDir = await makeStateDir();
  harness = await startInProcess({
    clock,
    api,
    stateDir,
    retry: RETRY,
    reenroll: {
      secretFile: SECRET_FILE,
      enrollAgain: async (revoked) => {
        attempts.push({ at: clock.monotonicMs(), revoked });
        const answer = answers.shift();
        // Someone else's enrollment, made before this attempt's answer.
        if (enrolledMeanwhile) await enrollState(await openAgentState(stateDir), enrolledMeanwhile, revoked.server_url);
        if (answer) throw answer;
        await enrollState(await openAgentState(stateDir), NEW_KEY, revoked.server_url);
      },
    },
  });
  return { api, attempts, h: harness };
}

const keysSent = (api: ScriptedApi) => api.seen('heartbeat').map((c) => c.apiKey);

it('enrolls again with the secret file right after the wipe, then heartbeats with the new key', async () => {
  const { api, attempts, h } = await revokedWithOptIn([]);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]!.revoked).toMatchObject({ reenroll_secret_file: SECRET_FILE, server_url: 'https://scripted.invalid' });
  expect(h.events('reenrolling')).toEqual([
    expect.objectContaining({
      attempt: 1,
      server_url: 'https://scripted.invalid',
      msg: 'enrolling again with the enrollment secret file (the admin opted in to re-enrollment after a 401)',
    }),
  ]);
  expect(h.events('reenrolled')).toEqual([
    expect.objectContaining({ level: 30, msg: 'enrolled again with the enrollment secret', server_url: 'https://scripted.invalid' }),
  ]);
  await h.advance(0); // the loop starts the new session at once
  expect(keysSent(api)).toEqual([OLD_KEY, NEW_KEY]);
  expect(h.daemon.state).toBe('active');
});

it.each([
  ['a refused secret (401)', new CredentialsRejectedError('register', 'server answered 401', 401), 401],
  ['a server without /register (404)', new InvalidRequestError('register', 'server answered 404', 404), 404],
  ['a server without /register (405)', new InvalidRequestError('register', 'server answered 405', 405), 405],
])('ends the attempts on %s: revoked, saying why, waiting for a new enrollment', async (_what, refusal, status) => {
  const { api, attempts, h } = await revokedWithOptIn([refusal]);
  expect(h.events('reenroll_refused')).toEqual([
    expect.objectContaining({
      level: 50,
      http_status: status,
      msg: 'the server refused to enroll this device again: waiting for a new enrollment',
    }),
  ]);
  expect(h.daemon.state).toBe('revoked');
  const reason = (await runtimeStatus(h.stateDir)).reason;
  expect(reason).toMatch(/401 on \/heartbeat/);
  expect(reason).toContain(
    `; enrolling again with the enrollment secret was refused (server answered ${status}): enroll with a current secret or a new token`,
  );
  await h.advance(24 * 3600_000);
  expect(attempts).toHaveLength(1);
  expect(keysSent(api)).toEqual([OLD_KEY]);
});

it('stops trying when someone else enrolled the device meanwhile, and takes that enrollment', async () => {
  const { api, attempts, h } = await revokedWithOptIn([new AlreadyEnrolledError('already enrolled')], NEW_KEY);
  expect(h.events('reenroll_refused')).toEqual([]);
  expect(h.events('reenroll_failed')).toEqual([]);
  await h.advance(0);
  expect(keysSent(api)).toEqual([OLD_KEY, NEW_KEY]);
  expect(h.daemon.state).toBe('active');
  await h.advance(24 * 3600_000);
  expect(attempts).toHaveLength(1);
});

it('retries anything else with backoff (Retry-After honoured), counting attempts, until it enrolls', async () => {
  const { api, attempts, h } = await revokedWithOptIn([
    new RetryableError('register', 'server answered 503', 503, undefined, 30_000),
    new InvalidRequestError('register', 'server answered 400', 400),
  ]);
  const first = attempts[0]!.at;
  // The server's Retry-After, plus the backoff's jitter (mid-range here: 500 ms).
  expect(h.events('reenroll_failed')).toEqual([
    expect.objectContaining({
      level: 40,
      retry_in_ms: 30_500,
      error: 'server answered 503',
      msg: 'could not enroll again: retrying later',
    }),
  ]);
  expect(h.daemon.state).toBe('revoked');
  h.enrollmentChanged(); // a watch event that is no new enrollment does not bring the attempt forward
  await h.advance(30_500 - 1);
  expect(attempts).toHaveLength(1);
  await h.advance(1);
  expect(attempts.map((a) => a.at - first)).toEqual([0, 30_500]);
  // The second failure: the backoff's second step (base 1 s doubled, jitter at mid-range).
  const second = h.events('reenroll_failed')[1]!;
  expect(second).toMatchObject({ error: 'server answered 400' });
  const delay = Number(second.retry_in_ms);
  expect(delay).toBeGreaterThan(1000);
  await h.advance(delay);
  expect(attempts.map((a) => a.at - first)).toEqual([0, 30_500, 30_500 + delay]);
  expect(h.events('reenrolling').map((l) => l.attempt)).toEqual([1, 2, 3]);
  expect(keysSent(api)).toEqual([OLD_KEY, NEW_KEY]);
  expect(h.daemon.state).toBe('active');
});

// The daemon's transitions, in process with a fake clock (test/daemon/inProcess.ts): each test runs
// in milliseconds and asserts exact due times. Requests go to a scripted API; the state directory
// (queue, status.json) is real. The end-to-end tests beside this file cover the same paths against
// the real server with the spawned bundle.
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, CredentialsRejectedError, RetryableError } from '../../src/agent/api';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import type { PostureResult, PosturesRequest } from '../../src/protocol/schemas';
import { runtimeStatus as readRuntimeStatus } from '../support/agent';
import { FakeClock, results, ScriptedApi, startInProcess, type Harness } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 60_000;
const POSTURE_MS = 600_000;

async function enrolled(options: { api?: ScriptedApi; clock?: FakeClock; collect?: () => Promise<PostureResult[]> } = {}) {
  const clock = options.clock ?? new FakeClock();
  const api = options.api ?? new ScriptedApi(clock);
  harness = await startInProcess({ clock, api, ...(options.collect ? { collect: options.collect } : {}) });
  return { api, clock, h: harness };
}

describe('daemon transitions (in process, fake clock)', () => {
  it('bring-up: idles without an enrollment, then heartbeats, collects and uploads in that order', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, apiKey: null });
    expect(harness.daemon.state).toBe('waiting_for_enrollment');
    await harness.advance(24 * 3600_000);
    expect(api.calls).toEqual([]);
    expect(clock.nextTimer()).toBeUndefined(); // nothing to wait for but the enrollment

    await harness.enroll('a'.repeat(96));
    await harness.settled();
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'postures']);
    expect(harness.daemon.state).toBe('active');
    expect(harness.events('state').map((l) => l.state)).toEqual(['waiting_for_enrollment', 'starting', 'active']);
    expect(await countQueuedResults(harness.stateDir)).toBe(0);
    const status = await readRuntimeStatus(harness.stateDir);
    expect(status).toMatchObject({ daemon_state: 'active', device_id: 'dev_scripted', heartbeat_interval_seconds: 60 });
  });

  it('heartbeats at the interval the server sets, and collects at the posture interval', async () => {
    const { api, h } = await enrolled();
    const start = api.calls[0]!.at;
    await h.advance(HEARTBEAT_MS - 1);
    expect(api.seen('heartbeat')).toHaveLength(1);
    await h.advance(1);
    expect(api.seen('heartbeat').map((c) => c.at - start)).toEqual([0, HEARTBEAT_MS]);
    await h.advance(POSTURE_MS - HEARTBEAT_MS);
    expect(api.seen('heartbeat')).toHaveLength(11);
    expect(api.seen('postures').map((c) => c.at - start)).toEqual([0, POSTURE_MS]);
  });

  it('keeps its timers on the monotonic clock: a wall-clock step back of an hour does not pause heartbeats', async () => {
    const { api, clock, h } = await enrolled();
    const start = api.calls[0]!.at;
    clock.stepWall(-3600_000);
    await h.advance(3 * HEARTBEAT_MS);
    expect(api.seen('heartbeat').map((c) => c.at - start)).toEqual([0, 1, 2, 3].map((n) => n * HEARTBEAT_MS));
    clock.stepWall(+7200_000); // and a step forward does not make them fire early
    await h.advance(HEARTBEAT_MS - 1);
    expect(api.seen('heartbeat')).toHaveLength(4);
    // Reports still use the wall clock.
    const status = await readRuntimeStatus(h.stateDir);
    expect(Date.parse(status.last_heartbeat_at!)).toBe(clock.wallMs() - (HEARTBEAT_MS - 1) - 7200_000);
  });

  it('backs off after a transient heartbeat failure, never beyond the heartbeat interval, and recovers', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, retry: { baseMs: 1000, maxMs: 300_000, attempts: 3 } });
    const h = harness;
    api.heartbeats.push(...Array.from({ length: 9 }, () => new RetryableError('heartbeat', 'server answered 503', 503)));
    await h.advance(HEARTBEAT_MS);
    expect(h.daemon.state).toBe('backing_off');
    // random 0.5: each delay is base + half of (3 × previous − base); the ninth (75.9 s) is capped by the interval.
    const expected = [2000, 3500, 5750, 9125, 14_188, 21_782, 33_173, 50_260, HEARTBEAT_MS];
    await h.advance(expected.reduce((a, b) => a + b, 0));
    const times = api.seen('heartbeat').map((c) => c.at);
    expect(times.slice(2).map((t, i) => t - times[i + 1]!)).toEqual(expected);
    expect(h.daemon.state).toBe('active');
    expect((await readRuntimeStatus(h.stateDir)).daemon_state).toBe('active');
  });

  it("retries a heartbeat after the server's Retry-After, plus jitter", async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new RetryableError('heartbeat', 'server answered 503', 503, undefined, 30_000));
    const { h } = await enrolled({ api, clock });
    const start = api.calls[0]!.at;
    await h.advance(30_000 + 500 - 1); // Retry-After 30 s + jitter (0.5 × base)
    expect(api.seen('heartbeat')).toHaveLength(1);
    await h.advance(1);
    expect(api.seen('heartbeat').map((c) => c.at - start)).toEqual([0, 30_500]);
    expect(h.daemon.state).toBe('active');
  });

  it('never sends results collected under one enrollment with another', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const collections: ((value: PostureResult[]) => void)[] = [];
    const { h } = await enrolled({ api, clock, collect: () => new Promise((resolve) => collections.push(resolve)) });
    expect(collections).toHaveLength(1); // the first cycle's checks are running
    await h.enroll('b'.repeat(96)); // a new enrollment meanwhile
    await h.settled();
    collections[0]!(results('OLD_ENROLLMENT', 2));
    await h.settled();
    expect(collections).toHaveLength(2); // the new enrollment's own first cycle
    collections[1]!(results('NEW_ENROLLMENT', 1));
    await h.settled();
    const sent = api.seen('postures').flatMap((c) => (c.body as PosturesRequest).results.map((r) => `${c.apiKey[0]} ${r.check_key}`));
    expect(sent).toEqual(['b NEW_ENROLLMENT_0']);
  });

  it("starts a new enrollment's first cycle as soon as it can, even when the posture interval changed meanwhile", async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const collections: ((value: PostureResult[]) => void)[] = [];
    const { h } = await enrolled({ api, clock, collect: () => new Promise((resolve) => collections.push(resolve)) });
    await h.enroll('b'.repeat(96)); // while the old enrollment's checks still run
    await h.settled();
    const answer = api.heartbeatAnswer;
    api.heartbeatAnswer = (body) => ({ ...answer(body), posture_interval_seconds: 90 });
    await h.advance(HEARTBEAT_MS); // the new enrollment's second heartbeat changes the interval
    expect(collections).toHaveLength(1);
    collections[0]!(results('OLD_ENROLLMENT', 1)); // the old checks end: the new enrollment's first cycle is overdue
    await h.settled();
    expect(collections).toHaveLength(2);
  });

  it('on a 409: wipes nothing, uploads nothing, retries at the heartbeat interval, resumes', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(
      new ConflictError('heartbeat', 'hardware_uuid in use', 409),
      new ConflictError('heartbeat', 'hardware_uuid in use', 409),
    );
    const { h } = await enrolled({ api, clock });
    expect(h.daemon.state).toBe('conflict');
    expect(api.seen('postures')).toEqual([]);
    expect((await readRuntimeStatus(h.stateDir)).conflict?.message).toMatch(/device revoke/);
    // No answer has set an interval yet: the spec's default (300 s) paces the retries.
    await h.advance(300_000 - 1);
    expect(api.seen('heartbeat')).toHaveLength(1);
    await h.advance(1);
    expect(api.seen('heartbeat')).toHaveLength(2);
    expect(h.daemon.state).toBe('conflict');
    await h.advance(300_000);
    expect(h.daemon.state).toBe('active');
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'heartbeat', 'heartbeat', 'postures']);
  });

  it('stays in conflict through a transient failure: only an accepted heartbeat ends it', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(
      new ConflictError('heartbeat', 'hardware_uuid in use', 409),
      new RetryableError('heartbeat', 'server answered 503', 503),
    );
    const { h } = await enrolled({ api, clock });
    expect(h.daemon.state).toBe('conflict');
    await h.advance(300_000);
    expect(api.seen('heartbeat')).toHaveLength(2);
    expect(h.daemon.state).toBe('conflict');
    expect((await readRuntimeStatus(h.stateDir)).daemon_state).toBe('conflict');
    await h.settled();
    expect(api.seen('postures')).toEqual([]);
  });

  it('a new enrollment does not inherit the conflict of the one it replaced', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new ConflictError('heartbeat', 'hardware_uuid in use', 409));
    const { h } = await enrolled({ api, clock });
    expect(h.daemon.state).toBe('conflict');
    api.heartbeats.push(new RetryableError('heartbeat', 'server answered 503', 503));
    await h.enroll('b'.repeat(96));
    await h.settled();
    expect(api.calls.at(-1)).toMatchObject({ route: 'heartbeat', apiKey: 'b'.repeat(96) });
    expect(h.daemon.state).toBe('backing_off');
  });

  it('after a 401 whose wipe fails (disk full): never sends that key again, retries the wipe, takes a new enrollment', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const wipes: string[] = [];
    let diskFull = true;
    harness = await startInProcess({
      clock,
      api,
      // The wipe never removes the record or the key.
      wipe: (note) => {
        wipes.push(note!.reason);
        return diskFull
          ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
          : Promise.resolve();
      },
    });
    const h = harness;
    api.heartbeats.push(new CredentialsRejectedError('heartbeat', 'server answered 401', 401));
    await h.advance(HEARTBEAT_MS);
    expect(h.daemon.state).toBe('revoked');
    h.enrollmentChanged(); // whatever the watch reports, the same key stays refused
    await h.advance(10 * HEARTBEAT_MS);
    expect(api.seen('heartbeat').filter((c) => c.apiKey === 'a'.repeat(96))).toHaveLength(2); // the accepted one and the 401
    expect(wipes).toHaveLength(11); // at the 401, then once per heartbeat interval: never in a loop
    expect(h.events('wipe_incomplete')).toHaveLength(1);
    expect(h.events('wipe_incomplete')[0]!.msg).toBe(
      'cannot finish wiping the rejected credentials: ENOSPC: no space left on device, write',
    );
    expect(h.daemon.state).toBe('revoked');

    diskFull = false;
    await h.advance(HEARTBEAT_MS);
    const wiped = wipes.length;
    await h.advance(10 * HEARTBEAT_MS);
    expect(wipes).toHaveLength(wiped); // finished: no more attempts
    expect(h.events('wipe_incomplete_resolved').map((l) => l.msg)).toEqual(['can finish wiping the rejected credentials again']);

    await h.enroll('b'.repeat(96));
    await h.settled();
    expect(h.daemon.state).toBe('active');
    expect(api.calls.at(-2)).toMatchObject({ route: 'heartbeat', apiKey: 'b'.repeat(96) });
  });

  it('after a 401 on an upload: wipes through the state owner and sends nothing more', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new CredentialsRejectedError('postures', 'server answered 401', 401));
    harness = await startInProcess({ clock, api });
    expect(harness.daemon.state).toBe('revoked');
    await harness.advance(10 * HEARTBEAT_MS);
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'postures']);
    expect(await readRuntimeStatus(harness.stateDir)).toMatchObject({
      daemon_state: 'revoked',
      reason: expect.stringMatching(/401 on \/postures/) as unknown,
    });
    expect(await countQueuedResults(harness.stateDir)).toBe(0);
  });

  it('retries a failed upload with backoff while heartbeats go on, then delivers', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new RetryableError('postures', 'server answered 503', 503, undefined, 30_000));
    const { h } = await enrolled({ api, clock });
    expect(h.daemon.state).toBe('backing_off');
    expect(await countQueuedResults(h.stateDir)).toBe(3);
    await h.advance(30_000 + 500 - 1); // Retry-After 30 s + jitter (0.5 × base)
    expect(api.seen('postures')).toHaveLength(1);
    await h.advance(1);
    expect(api.seen('postures')).toHaveLength(2);
    expect(await countQueuedResults(h.stateDir)).toBe(0);
    expect(h.daemon.state).toBe('active');
  });

  it('stops on request: the state becomes stopped and the queue stays on disk', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new RetryableError('postures', 'down', undefined));
    const { h } = await enrolled({ api, clock });
    harness = undefined;
    await h.stop({ keepStateDir: true });
    expect(h.daemon.state).toBe('stopped');
    expect(
      h
        .events('state')
        .map((l) => l.state)
        .slice(-2),
    ).toEqual(['stopping', 'stopped']);
    expect(await countQueuedResults(h.stateDir)).toBe(3);
    expect((await readRuntimeStatus(h.stateDir)).daemon_state).toBe('stopped');
    await h.stop();
  });

  it('does not lose a collection that finishes while the loop is busy', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let finish: (value: PostureResult[]) => void = () => undefined;
    const { h } = await enrolled({ api, clock, collect: () => new Promise((resolve) => (finish = resolve)) });
    expect(api.seen('postures')).toHaveLength(0);
    finish(results('LATE', 2));
    await h.settled();
    expect(api.seen('postures').map((c) => (c.body as PosturesRequest).results.length)).toEqual([2]);
  });
});

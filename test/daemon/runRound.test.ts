// `run --once` is the daemon's loop run for one round (test/daemon/inProcess.ts, fake clock, real
// state directory, scripted API): each way a round ends, with what it leaves on disk. The spawned
// command's exit codes for the same outcomes are in runOnce.test.ts.
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, CredentialsRejectedError, InvalidRequestError, RetryableError } from '../../src/agent/api';
import type { RunOutcome } from '../../src/agent/daemon';
import { KeyMissingError } from '../../src/agent/errors';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import type { PosturesRequest } from '../../src/protocol/schemas';
import { runtimeStatus } from '../support/agent';
import { openAgentState } from '../../src/agent/state';
import { FakeClock, makeStateDir, results, ScriptedApi, startInProcess, type Harness, type HarnessOptions } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Runs one round to its end, advancing the fake clock through its retry delays. */
async function round(
  options: Omit<HarnessOptions, 'api'> & { api?: ScriptedApi } = {},
): Promise<{ outcome: RunOutcome; api: ScriptedApi; h: Harness }> {
  const clock = options.clock ?? new FakeClock();
  const api = options.api ?? new ScriptedApi(clock);
  harness = await startInProcess({ ...options, clock, api, once: true });
  for (let i = 0; i < 100 && !harness.outcome(); i += 1) await harness.advance(10_000);
  return { outcome: harness.outcome()!, api, h: harness };
}

const postedKeys = (api: ScriptedApi) => api.seen('postures').flatMap((c) => (c.body as PosturesRequest).results.map((r) => r.check_key));

describe('run --once (the loop, one round)', () => {
  it('sends one heartbeat, stores the cycle, then delivers the queue oldest first, and says how much it sent', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock, { heartbeat: 1, posture: 1 }); // intervals that would repeat both within the round
    const { outcome, h } = await round({ clock, api, collect: () => Promise.resolve(results('NOW', 3)) });
    expect(outcome).toEqual({ kind: 'delivered', sent: 3, queued: 0 });
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'postures']);
    const cycles = h.events('posture_cycle');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatchObject({ outcome: 'delivered', results: 3, sent: 3, queued: 0 });
    const status = await runtimeStatus(h.stateDir);
    expect(status).toMatchObject({ device_id: 'dev_scripted', queued_results: 0, last_upload_at: expect.any(String) as unknown });
    expect(status.daemon_state).toBeUndefined(); // a round is not a daemon: no daemon state recorded
    expect(h.events('state')).toEqual([]);
  });

  it('uploads what was queued before only once its own cycle is stored, so the cycle line counts both', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let finish: () => void = () => undefined;
    const collected = new Promise<void>((resolve) => (finish = resolve));
    const collect = async () => {
      await collected;
      return results('NOW', 2);
    };
    const stateDir = await makeStateDir();
    await (await (await openAgentState(stateDir)).queue()).append(results('EARLIER', 4));
    harness = await startInProcess({ clock, api, stateDir, once: true, collect });
    expect(api.seen('postures')).toEqual([]); // the earlier results wait for the round's cycle
    finish();
    for (let i = 0; i < 10 && !harness.outcome(); i += 1) await harness.advance(1000);
    expect(harness.outcome()).toEqual({ kind: 'delivered', sent: 6, queued: 0 });
    expect(postedKeys(api)).toEqual([...results('EARLIER', 4), ...results('NOW', 2)].map((r) => r.check_key));
    expect(harness.events('posture_cycle')[0]).toMatchObject({ results: 2, sent: 6 });
  });

  it('ends not enrolled without a request', async () => {
    const { outcome, api } = await round({ apiKey: null });
    expect(outcome).toEqual({ kind: 'not_enrolled' });
    expect(api.calls).toEqual([]);
  });

  it('ends unreachable after retry.attempts transient heartbeat failures, keeping the queue', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(...Array.from({ length: 5 }, () => new RetryableError('heartbeat', 'server answered 503', 503, undefined, 0)));
    const { outcome } = await round({ clock, api, retry: { baseMs: 1000, maxMs: 60_000, attempts: 3 } });
    expect(outcome).toEqual({ kind: 'unreachable', message: 'server answered 503', queued: 0 });
    expect(api.seen('heartbeat')).toHaveLength(3);
    expect(api.seen('postures')).toEqual([]);
  });

  it('recovers from fewer transient heartbeat failures than attempts', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new RetryableError('heartbeat', 'server answered 503', 503), new RetryableError('heartbeat', 'reset', undefined));
    const { outcome } = await round({ clock, api, retry: { baseMs: 1000, maxMs: 60_000, attempts: 3 } });
    expect(outcome).toMatchObject({ kind: 'delivered', sent: 3 });
    expect(api.seen('heartbeat')).toHaveLength(3);
  });

  it('ends unreachable after retry.attempts failed uploads, with the cycle still queued', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(...Array.from({ length: 5 }, () => new RetryableError('postures', 'connection reset', undefined)));
    const { outcome, h } = await round({ clock, api, retry: { baseMs: 1000, maxMs: 60_000, attempts: 3 } });
    expect(outcome).toEqual({ kind: 'unreachable', message: 'connection reset', queued: 3 });
    expect(api.seen('postures')).toHaveLength(3);
    expect(await countQueuedResults(h.stateDir)).toBe(3);
    expect(h.events('posture_cycle')[0]).toMatchObject({ outcome: 'deferred', sent: 0 });
  });

  it('ends revoked after a 401 on the heartbeat, with the state wiped through its owner and why recorded', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new CredentialsRejectedError('heartbeat', 'the server answered heartbeat with 401', 401));
    const { outcome, h } = await round({ clock, api });
    expect(outcome).toEqual({
      kind: 'revoked',
      message: 'the server answered heartbeat with 401; local credentials and queued results were wiped',
    });
    expect(await h.state.enrollment()).toBeNull();
    expect(await runtimeStatus(h.stateDir)).toMatchObject({ reason: expect.stringMatching(/401 on \/heartbeat/) as unknown });
  });

  it('ends revoked after a 401 on an upload', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new CredentialsRejectedError('postures', 'the server answered postures with 401', 401));
    const { outcome, h } = await round({ clock, api });
    expect(outcome).toMatchObject({ kind: 'revoked' });
    expect(await countQueuedResults(h.stateDir)).toBe(0);
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'postures']);
  });

  it('ends refused on a 409, a refused heartbeat, an unreadable identity or failing checks, sending no posture', async () => {
    const conflict = new ScriptedApi(new FakeClock());
    conflict.heartbeats.push(new ConflictError('heartbeat', 'hardware_uuid in use', 409));
    expect((await round({ api: conflict })).outcome).toMatchObject({ kind: 'refused', message: expect.stringMatching(/409/) as unknown });
    await harness!.stop();

    const refused = new ScriptedApi(new FakeClock());
    refused.heartbeats.push(new InvalidRequestError('heartbeat', 'the server answered heartbeat with 400', 400));
    expect((await round({ api: refused })).outcome).toEqual({ kind: 'refused', message: 'the server answered heartbeat with 400' });
    await harness!.stop();

    const identity = () => Promise.reject(new Error('no machine id'));
    expect((await round({ identity })).outcome).toEqual({ kind: 'refused', message: 'cannot read the device identity: no machine id' });
    await harness!.stop();

    const checks = await round({ collect: () => Promise.reject(new Error('checks crashed')) });
    expect(checks.outcome).toEqual({ kind: 'refused', message: 'posture checks failed: checks crashed' });
    expect(checks.api.seen('postures')).toEqual([]);
  });

  it('ends refused when the queue fails locally: the upload, or storing the cycle', async () => {
    const local = new ScriptedApi(new FakeClock());
    local.postureAnswers.push(new Error('EIO: i/o error, read'));
    expect((await round({ api: local })).outcome).toEqual({
      kind: 'refused',
      message: 'posture upload failed locally: EIO: i/o error, read',
    });
    await harness!.stop();

    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const clock = new FakeClock();
    harness = await startInProcess({
      clock,
      api: new ScriptedApi(clock),
      once: true,
      collect: async () => {
        await gate;
        return results('NOW', 1);
      },
    });
    const queueDir = join(harness.stateDir, 'queue');
    await rm(queueDir, { recursive: true });
    writeFileSync(queueDir, 'in the way'); // the queue directory cannot be created
    release();
    await harness.settled();
    expect(harness.outcome()).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/^cannot store the posture results in the queue: E[A-Z]+/) as unknown,
    });
  });

  it('fails the round, rather than waiting, when the key store cannot give the key', async () => {
    const clock = new FakeClock();
    const stateDir = await makeStateDir();
    const first = await startInProcess({ clock, api: new ScriptedApi(clock), stateDir });
    await first.stop({ keepStateDir: true });
    writeFileSync(join(stateDir, 'api-key'), 'not a key\n');
    await expect(startInProcess({ clock, api: new ScriptedApi(clock), stateDir, apiKey: null, once: true })).rejects.toBeInstanceOf(
      KeyMissingError,
    );
    await rm(join(stateDir, '..'), { recursive: true, force: true });
  });
});

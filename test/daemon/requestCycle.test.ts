// A posture cycle asked for by the device's user (`check --report` through the local endpoint, which
// calls the daemon's requestCycle), in process with a fake clock (test/daemon/inProcess.ts): collected
// at once, uploaded as soon as it is stored, and the caller told how it ended. localEndpoint tests
// drive the same through the socket with the real daemon.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConflictError, RetryableError, type PosturesAccepted, type RequestOptions } from '../../src/agent/api';
import type { AskedCycleOutcome } from '../../src/agent/daemon';
import type { PostureResult } from '../../src/protocol/schemas';
import { FakeClock, results, ScriptedApi, startInProcess, type Harness, type HarnessOptions } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 60_000;
const POSTURE_MS = 600_000;
/** Generous: a loaded machine runs the daemon's steps slowly in real time. */
const WAIT = { timeout: 30_000 };

/** Collections that finish when the test says (`release`), or at once while none is held. */
function heldCollections() {
  const pending: { resolve: (r: PostureResult[]) => void; reject: (err: Error) => void }[] = [];
  let hold = false;
  return {
    collect: () =>
      hold ? new Promise<PostureResult[]>((resolve, reject) => pending.push({ resolve, reject })) : Promise.resolve(results('CHECK', 2)),
    holdNext: () => (hold = true),
    started: () => pending.length,
    release: (outcome: PostureResult[] | Error = results('CHECK', 2)) => {
      hold = false;
      const next = pending.shift()!;
      if (outcome instanceof Error) next.reject(outcome);
      else next.resolve(outcome);
    },
  };
}

async function active(options: Partial<HarnessOptions> = {}) {
  const clock = options.clock ?? new FakeClock();
  const api = new ScriptedApi(clock);
  const collections = heldCollections();
  harness = await startInProcess({ clock, api, collect: collections.collect, ...options });
  expect(harness.daemon.state).toBe('active');
  return { api, clock, collections, h: harness };
}

/** How an asked cycle ended, once it has (null while it has not). */
function watch(asked: Promise<AskedCycleOutcome>): () => AskedCycleOutcome | null {
  let outcome: AskedCycleOutcome | null = null;
  void asked.then((o) => (outcome = o));
  return () => outcome;
}

describe('a cycle asked for', () => {
  it('is not_ready without an enrollment, or before a heartbeat succeeded', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, apiKey: null });
    expect(await harness.daemon.requestCycle()).toBe('not_ready');
    await harness.stop();

    api.heartbeats.push(new RetryableError('heartbeat', 'server answered 503', 503));
    harness = await startInProcess({ clock, api });
    expect(harness.daemon.state).toBe('backing_off');
    expect(await harness.daemon.requestCycle()).toBe('not_ready');
    expect(api.seen('postures')).toEqual([]);
  });

  it('is collected at once and delivered once uploaded; the schedule then counts from it', async () => {
    const { api, h } = await active();
    const start = api.calls[0]!.at;
    await h.advance(100_000);
    const asked = h.daemon.requestCycle();
    await h.settled();
    expect(await asked).toBe('delivered');
    expect(api.seen('postures').map((c) => c.at - start)).toEqual([0, 100_000]);
    await h.advance(POSTURE_MS - 1);
    expect(api.seen('postures')).toHaveLength(2);
    await h.advance(1);
    expect(api.seen('postures').map((c) => c.at - start)).toEqual([0, 100_000, 100_000 + POSTURE_MS]);
    expect(h.events('posture_cycle').map((l) => l.outcome)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('joins a collection in progress: everyone who asked gets that cycle, collected once', async () => {
    const { api, collections, h } = await active();
    collections.holdNext();
    const first = watch(h.daemon.requestCycle());
    await vi.waitFor(() => expect(collections.started()).toBe(1), WAIT);
    const second = watch(h.daemon.requestCycle());
    await h.settled();
    expect([first(), second()]).toEqual([null, null]);
    collections.release();
    await vi.waitFor(() => expect([first(), second()]).toEqual(['delivered', 'delivered']), WAIT);
    expect(api.seen('postures')).toHaveLength(2);
    expect(h.events('posture_cycle')).toHaveLength(2);
  });

  it('is deferred when its upload fails, and the results stay queued', async () => {
    const { api, h } = await active();
    api.postureAnswers.push(new RetryableError('postures', 'server answered 503', 503));
    const asked = h.daemon.requestCycle();
    await h.settled();
    expect(await asked).toBe('deferred');
    expect(await h.state.queuedResults()).toBe(2);
  });

  it('is held, stored but not uploaded, while the server refuses the device with 409', async () => {
    const { api, h } = await active();
    api.heartbeats.push(new ConflictError('heartbeat', 'server answered 409', 409));
    await h.advance(HEARTBEAT_MS);
    expect(h.daemon.state).toBe('conflict');
    const asked = h.daemon.requestCycle();
    await h.settled();
    expect(await asked).toBe('held');
    expect(api.seen('postures')).toHaveLength(1);
    expect(await h.state.queuedResults()).toBe(2);
  });

  it('fails when the checks fail, and the next one is asked for anew', async () => {
    const { collections, h } = await active();
    collections.holdNext();
    const asked = watch(h.daemon.requestCycle());
    await vi.waitFor(() => expect(collections.started()).toBe(1), WAIT);
    collections.release(new Error('the checks crashed'));
    await vi.waitFor(() => expect(asked()).toBe('failed'), WAIT);
    expect(h.events('collect_failed')).toEqual([expect.objectContaining({ error: 'the checks crashed' })]);
    const again = h.daemon.requestCycle();
    await h.settled();
    expect(await again).toBe('delivered');
  });

  it('is superseded when the enrollment changes while it is collected: its results are not sent with the new key', async () => {
    const { api, collections, h } = await active();
    collections.holdNext();
    const asked = watch(h.daemon.requestCycle());
    await vi.waitFor(() => expect(collections.started()).toBe(1), WAIT);
    await h.enroll('b'.repeat(96));
    await h.settled();
    collections.release();
    await vi.waitFor(() => expect(asked()).toBe('superseded'), WAIT);
    await h.settled();
    expect(api.seen('postures').map((c) => c.apiKey[0])).toEqual(['a', 'b']); // the new session's own first cycle
  });

  it('is told the daemon stopped when the stop comes before its upload', async () => {
    const { api, h } = await active();
    let inFlight = false;
    api.postures = (_apiKey: string, _body: unknown, options?: RequestOptions) =>
      new Promise<PosturesAccepted>((_resolve, reject) => {
        inFlight = true;
        options?.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error));
      });
    const asked = watch(h.daemon.requestCycle());
    await vi.waitFor(() => expect(inFlight).toBe(true), WAIT);
    const stopping = h.stop({ keepStateDir: true });
    await vi.waitFor(() => expect(h.events('stop_requested')).toHaveLength(1), WAIT);
    h.clock.fireNext(h.clock.monotonicMs() + 3000);
    await stopping;
    expect(asked()).toBe('stopped');
    harness = undefined;
  });
});

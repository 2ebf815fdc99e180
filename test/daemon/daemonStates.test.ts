// The daemon's other transitions, in process with a fake clock (test/daemon/inProcess.ts): what it
// does when the state directory cannot give it an enrollment, when the server's answers change the
// schedule or the clock, and when the queue or its own disk misbehaves.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CredentialsRejectedError,
  InvalidRequestError,
  type HeartbeatAnswer,
  RetryableError,
  type PosturesAccepted,
  type RequestOptions,
} from '../../src/agent/api';
import { InvalidInputError } from '../../src/agent/errors';
import { openAgentState, type AgentState } from '../../src/agent/state';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import type { PosturesRequest } from '../../src/protocol/schemas';
import { runtimeStatus } from '../support/agent';
import { DEFAULT_RETRY_POLICY } from '../../src/agent/backoff';
import { Daemon } from '../../src/agent/daemon';
import {
  enrollState,
  FakeClock,
  IDENTITY,
  makeStateDir,
  memoryLogger,
  results,
  ScriptedApi,
  startInProcess,
  type Harness,
} from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 60_000;
const POSTURE_MS = 600_000;
const KEY = 'a'.repeat(96);

/** A state directory enrolled with KEY, for a daemon started on it with `apiKey: null`. */
async function enrolledDir(): Promise<string> {
  const stateDir = await makeStateDir();
  await enrollState(await openAgentState(stateDir), KEY);
  return stateDir;
}

describe('without a usable enrollment', () => {
  it('waits in keystore_unavailable while the key cannot be read, retrying with backoff, then starts', async () => {
    const stateDir = await enrolledDir();
    writeFileSync(join(stateDir, 'api-key'), 'not a key\n');
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, stateDir, apiKey: null });
    expect(harness.daemon.state).toBe('keystore_unavailable');
    expect((await runtimeStatus(stateDir)).daemon_message).toMatch(/malformed.*; retrying in 2 s$/);
    writeFileSync(join(stateDir, 'api-key'), `${KEY}\n`);
    await harness.advance(2000 - 1);
    expect(api.calls).toEqual([]);
    await harness.advance(1);
    expect(harness.daemon.state).toBe('active');
    expect(api.calls[0]).toMatchObject({ route: 'heartbeat', apiKey: KEY });
  });

  it('waits for a new enrollment, sending nothing, when the record is unreadable', async () => {
    const stateDir = await makeStateDir();
    mkdirSync(stateDir, { mode: 0o700 });
    writeFileSync(join(stateDir, 'enrollment.json'), '{not json', { mode: 0o600 });
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, stateDir, apiKey: null });
    expect(harness.daemon.state).toBe('waiting_for_enrollment');
    expect((await runtimeStatus(stateDir)).daemon_message).toMatch(/not a valid enrollment record/);
    await harness.advance(24 * 3600_000);
    expect(api.calls).toEqual([]);
    expect(clock.nextTimer()).toBeUndefined();
  });

  it('shows the queue left from before in status.json while it cannot start', async () => {
    const stateDir = await enrolledDir();
    await (await (await openAgentState(stateDir)).queue()).append(results('LEFT', 2));
    writeFileSync(join(stateDir, 'api-key'), 'not a key\n');
    const clock = new FakeClock();
    harness = await startInProcess({ clock, api: new ScriptedApi(clock), stateDir, apiKey: null });
    expect(await runtimeStatus(stateDir)).toMatchObject({ daemon_state: 'keystore_unavailable', queued_results: 2 });
  });

  it('says when it retries in whole seconds, never sooner than it will', async () => {
    const stateDir = await enrolledDir();
    writeFileSync(join(stateDir, 'api-key'), 'not a key\n');
    const clock = new FakeClock();
    // random 0.5: the first delay is base + half of (3 × base − base) = 1.4 s
    harness = await startInProcess({
      clock,
      api: new ScriptedApi(clock),
      stateDir,
      apiKey: null,
      retry: { baseMs: 700, maxMs: 60_000, attempts: 3 },
    });
    expect((await runtimeStatus(stateDir)).daemon_message).toMatch(/; retrying in 2 s$/);
  });

  it('retries a configuration the operator can fix (an unreadable CA file) instead of exiting', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let caReadable = false;
    const connect = () => {
      if (!caReadable) throw new InvalidInputError('cannot read the CA file /etc/ca.pem: ENOENT');
      return Object.assign(Object.create(api) as ScriptedApi, { close: () => Promise.resolve() });
    };
    harness = await startInProcess({ clock, api, connect });
    expect(harness.daemon.state).toBe('starting');
    expect((await runtimeStatus(harness.stateDir)).daemon_message).toBe('cannot read the CA file /etc/ca.pem: ENOENT; retrying in 2 s');
    expect(harness.events('configuration_error')).toEqual([expect.objectContaining({ retry_in_ms: 2000 })]);
    caReadable = true;
    await harness.advance(2000);
    expect(harness.daemon.state).toBe('active');
  });

  it('says how to enroll while not enrolled, sending nothing', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, apiKey: null });
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({
      daemon_state: 'waiting_for_enrollment',
      daemon_message: 'not enrolled: run `device-agent enroll`',
    });
    expect(api.calls).toEqual([]);
  });

  it('says revoked with a general reason when status.json recorded only when', async () => {
    const stateDir = await makeStateDir();
    mkdirSync(stateDir, { mode: 0o700 });
    writeFileSync(join(stateDir, 'status.json'), JSON.stringify({ revoked_at: '2026-01-01T00:00:00.000Z' }), { mode: 0o600 });
    const clock = new FakeClock();
    harness = await startInProcess({ clock, api: new ScriptedApi(clock), stateDir, apiKey: null });
    expect(harness.daemon.state).toBe('revoked');
    expect((await runtimeStatus(stateDir)).daemon_message).toBe('the API key was rejected (401)');
  });

  it('says revoked, not merely unenrolled, after a wipe that recorded why', async () => {
    const stateDir = await enrolledDir();
    await (
      await openAgentState(stateDir)
    ).wipe({ reason: 'the server rejected the API key (401 on /heartbeat)', revoked_at: '2026-01-01T00:00:00.000Z' });
    const clock = new FakeClock();
    harness = await startInProcess({ clock, api: new ScriptedApi(clock), stateDir, apiKey: null });
    expect(harness.daemon.state).toBe('revoked');
    expect((await runtimeStatus(stateDir)).daemon_message).toBe('the server rejected the API key (401 on /heartbeat)');
  });
});

describe("the server's answers", () => {
  it('moves the next cycle when a heartbeat changes the posture interval, counting from the last cycle', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api });
    const start = api.calls[0]!.at;
    const answer = api.heartbeatAnswer;
    api.heartbeatAnswer = (body) => ({ ...answer(body), posture_interval_seconds: 90 });
    await harness.advance(HEARTBEAT_MS); // the second heartbeat sets 90 s: the next cycle is due at 90 s, not 600 s
    await harness.advance(90_000 - HEARTBEAT_MS);
    expect(api.seen('postures').map((c) => c.at - start)).toEqual([0, 90_000]);
    expect(harness.events('heartbeat_accepted').at(-1)).toMatchObject({ posture_interval_seconds: 90, heartbeat_interval_seconds: 60 });
  });

  it('warns once about a skewed clock and says when it agrees again', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const answer = api.heartbeatAnswer;
    let offsetMs = 5 * 60_000;
    api.heartbeatAnswer = (body) => ({ ...answer(body), server_time: new Date(clock.wallMs() + offsetMs).toISOString() });
    harness = await startInProcess({ clock, api });
    expect(harness.events('clock_skew')).toEqual([expect.objectContaining({ clock_skew_ms: 300_000 })]);
    expect(harness.events('clock_skew')[0]!.msg).toBe('the local clock is 300 s behind the server: check time synchronisation');
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('clock_skew')).toHaveLength(2); // still skewed: warned at each heartbeat
    offsetMs = -200_000;
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('clock_skew').at(-1)!.msg).toBe('the local clock is 200 s ahead of the server: check time synchronisation');
    offsetMs = 1000;
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('clock_skew_resolved')).toEqual([
      expect.objectContaining({ clock_skew_ms: 1000, msg: 'the local clock agrees with the server again' }),
    ]);
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('clock_skew_resolved')).toHaveLength(1);
    expect((await runtimeStatus(harness.stateDir)).clock_skew_ms).toBe(1000);
  });

  it('reports a skew only beyond 2 minutes', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const answer = api.heartbeatAnswer;
    api.heartbeatAnswer = (body) => ({ ...answer(body), server_time: new Date(clock.wallMs() - 120_000).toISOString() });
    harness = await startInProcess({ clock, api });
    expect(harness.events('heartbeat_accepted')).toEqual([expect.objectContaining({ clock_skew_ms: -120_000 })]);
    expect(harness.events('clock_skew')).toEqual([]);
    expect(harness.events('clock_skew_resolved')).toEqual([]); // nothing was skewed before
  });

  it('after a refused heartbeat (400) waits a full interval, and uploads only once one is accepted', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new InvalidRequestError('heartbeat', 'the server answered heartbeat with 400: bad hostname', 400, 'bad hostname'));
    harness = await startInProcess({ clock, api });
    expect(harness.daemon.state).toBe('starting');
    expect(harness.events('heartbeat_refused')).toEqual([expect.objectContaining({ http_status: 400, server_message: 'bad hostname' })]);
    expect((await runtimeStatus(harness.stateDir)).daemon_message).toBe(
      'heartbeat refused: the server answered heartbeat with 400: bad hostname',
    );
    await harness.advance(300_000 - 1); // the spec's default interval: no answer has set one
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat']);
    await harness.advance(1);
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'heartbeat', 'postures']);
  });

  it('retries reading the device identity with backoff, sending nothing meanwhile', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let readable = false;
    const identity = () => (readable ? Promise.resolve(IDENTITY) : Promise.reject(new Error('no machine id')));
    harness = await startInProcess({ clock, api, identity });
    expect(harness.events('identity_failed')).toEqual([expect.objectContaining({ error: 'no machine id', retry_in_ms: 2000 })]);
    readable = true;
    await harness.advance(2000 - 1);
    expect(api.calls).toEqual([]);
    await harness.advance(1);
    expect(api.calls.map((c) => c.route)).toEqual(['heartbeat', 'postures']);
  });

  it('marks uploads failing transiently as backing off, then active again once one succeeds', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new RetryableError('postures', 'the server answered postures with 503', 503));
    harness = await startInProcess({ clock, api });
    expect(harness.daemon.state).toBe('backing_off');
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({
      daemon_message: 'posture upload failed: the server answered postures with 503',
      last_error: 'the server answered postures with 503',
      queued_results: 3,
    });
    expect(harness.events('posture_cycle')).toEqual([expect.objectContaining({ outcome: 'deferred', sent: 0 })]);
    await harness.advance(2000);
    expect(harness.daemon.state).toBe('active');
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({ queued_results: 0, last_upload_at: expect.any(String) as unknown });
  });
});

describe('the queue', () => {
  it('drops the oldest results beyond its bound, says so, and counts them', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(...Array.from({ length: 20 }, () => new RetryableError('postures', 'down', 503)));
    harness = await startInProcess({ clock, api, maxQueuedResults: 4, retry: { baseMs: 1000, maxMs: 1000_000, attempts: 3 } });
    await harness.advance(POSTURE_MS);
    expect(harness.events('queue_full')).toEqual([expect.objectContaining({ dropped_results: 2 })]);
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({ dropped_results: 2, queued_results: 4 });
  });

  it('moves a damaged entry aside, logs it and counts it in status.json', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const stateDir = await enrolledDir();
    await (await (await openAgentState(stateDir)).queue()).append(results('OLD', 2));
    writeFileSync(join(stateDir, 'queue', '0000000000000001-2.json'), '{"v":1,"results":[', { mode: 0o600 });
    harness = await startInProcess({ clock, api, stateDir, apiKey: null });
    expect(harness.events('queue_entry_quarantined')).toEqual([
      expect.objectContaining({ level: 40, file: '0000000000000001-2.json', msg: 'damaged queue entry moved to queue/quarantine' }),
    ]);
    await harness.settled();
    expect((await runtimeStatus(stateDir)).quarantined_results).toBe(1);
    expect(api.seen('postures').map((c) => (c.body as PosturesRequest).results.length)).toEqual([3]);
  });

  it('keeps a cycle it cannot store, retries at the heartbeat interval, and logs the episode once', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api });
    const queueDir = join(harness.stateDir, 'queue');
    rmSync(queueDir, { recursive: true });
    writeFileSync(queueDir, 'in the way'); // the queue directory cannot be created
    await harness.advance(POSTURE_MS);
    expect(harness.events('queue_write_failed')).toEqual([expect.objectContaining({ results: 3, retry_in_ms: HEARTBEAT_MS })]);
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('queue_write_failed')).toHaveLength(1);
    rmSync(queueDir);
    await harness.advance(HEARTBEAT_MS);
    expect(harness.events('queue_write_failed_resolved')).toHaveLength(1);
    expect(harness.events('queue_write_failed')[0]!.msg).toMatch(/^cannot store posture results in the queue: E[A-Z]+/);
    expect(harness.events('queue_write_failed_resolved')[0]!.msg).toBe('can store posture results in the queue again');
    expect(api.seen('postures')).toHaveLength(2);
    expect(await countQueuedResults(harness.stateDir)).toBe(0);
  });
});

/** A request that stays in flight until its signal aborts, then rejects with the abort's reason. */
function heldRequest<T>(): { request: (apiKey: string, body: unknown, options?: RequestOptions) => Promise<T>; inFlight: () => boolean } {
  let inFlight = false;
  const request = (_apiKey: string, _body: unknown, options?: RequestOptions) =>
    new Promise<T>((_resolve, reject) => {
      inFlight = true;
      options?.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error), { once: true });
    });
  return { request, inFlight: () => inFlight };
}

describe('stopping', () => {
  it('lets the request in flight finish for 3 s, then cuts it: its batch stays queued', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const held = heldRequest<PosturesAccepted>();
    api.postures = held.request;
    const h = await startInProcess({ clock, api, settle: false });
    await vi.waitFor(() => expect(held.inFlight()).toBe(true));
    const stopping = h.stop({ keepStateDir: true });
    await vi.waitFor(() => expect(h.events('stop_requested')).toHaveLength(1));
    expect(clock.fireNext(clock.monotonicMs() + 3000 - 1)).toBe(false); // the grace is not over
    expect(clock.fireNext(clock.monotonicMs() + 3000)).toBe(true);
    await stopping;
    expect(h.daemon.state).toBe('stopped');
    expect(h.events('posture_cycle')).toEqual([expect.objectContaining({ outcome: 'stopped', sent: 0 })]);
    expect(await countQueuedResults(h.stateDir)).toBe(3);
    expect((await runtimeStatus(h.stateDir)).daemon_state).toBe('stopped');
    await h.stop();
  });

  it('cuts a heartbeat after the grace without counting it as a failure', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const held = heldRequest<HeartbeatAnswer>();
    api.heartbeat = held.request;
    const h = await startInProcess({ clock, api, settle: false });
    await vi.waitFor(() => expect(held.inFlight()).toBe(true));
    const stopping = h.stop();
    await vi.waitFor(() => expect(h.events('stop_requested')).toHaveLength(1));
    expect(clock.fireNext(clock.monotonicMs() + 3000)).toBe(true);
    await stopping;
    expect(h.daemon.state).toBe('stopped');
    expect(h.events('heartbeat_failed')).toEqual([]);
    expect(h.events('state').map((l) => l.state)).toEqual(['starting', 'stopping', 'stopped']);
  });

  it('does not hide an unexpected error that comes during the grace', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let fail: (err: Error) => void = () => undefined;
    // The heartbeat in flight: its rejection is in hand only once the daemon has sent it.
    const sent = new Promise<void>((heartbeatSent) => {
      api.heartbeat = () =>
        new Promise<HeartbeatAnswer>((_resolve, reject) => {
          fail = reject;
          heartbeatSent();
        });
    });
    const h = await startInProcess({ clock, api, settle: false });
    await sent;
    expect(h.daemon.state).toBe('starting');
    const stopping = h.stop({ keepStateDir: true });
    await vi.waitFor(() => expect(h.events('stop_requested')).toHaveLength(1));
    fail(new TypeError('a defect'));
    await expect(stopping).rejects.toThrow('a defect');
    expect(h.daemon.state).toBe('stopped');
    rmSync(join(h.stateDir, '..'), { recursive: true, force: true });
  });
});

describe('a 401 whose wipe cannot finish', () => {
  const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

  it('stays revoked, not keystore_unavailable, once the key is gone but the record is not', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({
      clock,
      api,
      wipe: () => {
        rmSync(join(harness!.stateDir, 'api-key'));
        return Promise.reject(diskFull());
      },
    });
    api.heartbeats.push(new CredentialsRejectedError('heartbeat', '401', 401));
    await harness.advance(HEARTBEAT_MS);
    harness.enrollmentChanged();
    await harness.advance(HEARTBEAT_MS);
    expect(harness.daemon.state).toBe('revoked');
    expect(harness.events('state').map((l) => l.state)).not.toContain('keystore_unavailable');
  });

  it('stays revoked, not waiting for an enrollment, once the record is gone but why is not written', async () => {
    let wipes = 0;
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({
      clock,
      api,
      wipe: async () => {
        wipes += 1;
        await (Object.getPrototypeOf(harness!.state) as AgentState).wipe(); // everything but the reason
        throw diskFull();
      },
    });
    api.heartbeats.push(new CredentialsRejectedError('heartbeat', '401', 401));
    await harness.advance(HEARTBEAT_MS);
    harness.enrollmentChanged();
    await harness.advance(HEARTBEAT_MS);
    expect(harness.daemon.state).toBe('revoked');
    expect(wipes).toBe(2); // and it goes on trying to record why, at the heartbeat interval
    expect((await runtimeStatus(harness.stateDir)).reason).toMatch(/401 on \/heartbeat/);
  });
});

describe('an error the daemon has no answer for', () => {
  it('ends `run` with it, once the daemon has recorded that it stopped (the service manager restarts it)', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new TypeError('a defect'));
    const h = await startInProcess({ clock, api, settle: false });
    await expect(h.settled()).rejects.toThrow('a defect');
    expect(h.daemon.state).toBe('stopped');
    expect((await runtimeStatus(h.stateDir)).daemon_state).toBe('stopped');
    expect(h.events('stopped')).toHaveLength(1);
    rmSync(join(h.stateDir, '..'), { recursive: true, force: true });
  });
});

describe('before `run`', () => {
  it('has no state, waits for nothing and has no cycle to give', async () => {
    const daemon = new Daemon({
      state: await openAgentState(await makeStateDir()),
      connect: () => {
        throw new Error('nothing connects before run');
      },
      log: memoryLogger().log,
      retry: DEFAULT_RETRY_POLICY,
      clock: new FakeClock(),
      identity: () => Promise.resolve(IDENTITY),
      collect: () => Promise.resolve({ results: [] }),
    });
    expect(daemon.state).toBeNull();
    expect(daemon.waiting).toBe(false);
    expect(await daemon.requestCycle()).toBe('not_ready');
  });
});

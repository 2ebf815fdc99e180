// What the daemon tells operators, line by line (test/daemon/inProcess.ts, fake clock): each event
// with its level, fields and message, the posture cycle's one line with its counts, and the status
// fields each transition records. docs/agent.md lists the events.
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, CredentialsRejectedError, InvalidRequestError, RetryableError } from '../../src/agent/api';
import type { PosturesRequest } from '../../src/protocol/schemas';
import { runtimeStatus } from '../support/agent';
import type { LastCycle } from '../../src/agent/lastCycle';
import type { PolicySource } from '../../src/agent/policySource';
import { openAgentState } from '../../src/agent/state';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import { FakeClock, makeStateDir, results, ScriptedApi, startInProcess, type Harness, type LogLine } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 60_000;
const POSTURE_MS = 600_000;
const INFO = 30;
const WARN = 40;
const ERROR = 50;
const DEBUG = 20;

/** A line's level, event, message and the named fields. */
const line = (l: LogLine | undefined, ...fields: string[]) =>
  l && { level: l.level, event: l.event, msg: l.msg, ...Object.fromEntries(fields.map((f) => [f, l[f]])) };

describe('the log', () => {
  it('bring-up: the enrollment found, the first heartbeat at info and later ones at debug, one line per cycle with its counts', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api, collect: () => Promise.resolve(results('C', 7)) });
    const h = harness;
    expect(line(h.events('enrollment_loaded')[0], 'server_url', 'keystore')).toEqual({
      level: INFO,
      event: 'enrollment_loaded',
      msg: 'enrollment found',
      server_url: 'https://scripted.invalid',
      keystore: 'file',
    });
    await h.advance(HEARTBEAT_MS);
    expect(h.events('heartbeat_accepted').map((l) => [l.level, l.msg])).toEqual([
      [INFO, 'heartbeat accepted: device active'],
      [DEBUG, 'heartbeat accepted'],
    ]);
    // results(): PASS, FAIL, UNKNOWN, NOT_APPLICABLE in turn.
    expect(
      line(
        h.events('posture_cycle')[0],
        'outcome',
        'results',
        'pass',
        'fail',
        'unknown',
        'not_applicable',
        'sent',
        'rejected',
        'dropped',
        'queued',
      ),
    ).toEqual({
      level: INFO,
      event: 'posture_cycle',
      msg: 'posture cycle',
      outcome: 'delivered',
      results: 7,
      pass: 2,
      fail: 2,
      unknown: 2,
      not_applicable: 1,
      sent: 7,
      rejected: 0,
      dropped: 0,
      queued: 0,
    });
    expect(await runtimeStatus(h.stateDir)).toMatchObject({ queued_results: 0, last_upload_at: expect.any(String) as unknown });
  });

  it('measures a cycle from its start: the checks, and the whole cycle up to its delivery, in ms', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const post = api.postures.bind(api);
    api.postures = (apiKey, body) => {
      clock.moveTo(clock.monotonicMs() + 200); // the upload takes 0.2 s
      return post(apiKey, body);
    };
    const collect = () => {
      clock.moveTo(clock.monotonicMs() + 1500); // the checks take 1.5 s
      return Promise.resolve(results('C', 1));
    };
    harness = await startInProcess({ clock, api, collect });
    expect(harness.events('posture_cycle')).toEqual([
      expect.objectContaining({ outcome: 'delivered', checks_ms: 1500, duration_ms: 1700 }),
    ]);
  });

  it('closes a cycle whose upload a newer cycle overtook as superseded', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const stateDir = await makeStateDir();
    await (await (await openAgentState(stateDir)).queue()).append(results('BACKLOG', 250)); // three batches
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let cycles = 0;
    const collect = async () => {
      cycles += 1;
      if (cycles > 1) await gate;
      return results(`CYCLE${cycles}`, 3);
    };
    const post = api.postures.bind(api);
    api.postures = (apiKey, body) => {
      const call = api.seen('postures').length;
      if (call === 0) clock.moveTo(clock.monotonicMs() + POSTURE_MS); // the next cycle falls due during the flush
      if (call === 1) release(); // and its checks finish before the flush is over
      return post(apiKey, body);
    };
    harness = await startInProcess({ clock, api, stateDir, apiKey: 'a'.repeat(96), collect });
    expect(harness.events('posture_cycle').map((l) => [l.outcome, l.results])).toEqual([
      ['superseded', 3],
      ['delivered', 3],
    ]);
    expect(await countQueuedResults(stateDir)).toBe(0);
  });

  it('records the summary of each stored cycle in status.json, for `status`', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new RetryableError('postures', 'down', 503));
    const lastCycle: LastCycle = {
      at: '2026-01-01T00:00:00.000Z',
      results: 2,
      failing: [{ check_key: 'C_1', status: 'FAIL', word: 'disk_not_encrypted', summary: 'The disk is not encrypted.' }],
    };
    const policy: PolicySource = { source: 'local', file: '/etc/device-agent/policy.json' };
    harness = await startInProcess({ clock, api, collectCycle: () => Promise.resolve({ results: results('C', 2), lastCycle, policy }) });
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({ queued_results: 2, last_cycle: lastCycle, policy });
  });

  it('after a 409: the conflict line with its retry, the cycle held, and the state with the whole explanation', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    harness = await startInProcess({ clock, api });
    api.heartbeats.push(...Array.from({ length: 10 }, () => new ConflictError('heartbeat', 'hardware_uuid in use', 409)));
    await harness.advance(HEARTBEAT_MS);
    const conflict = harness.events('heartbeat_conflict')[0]!;
    expect(conflict).toMatchObject({ level: WARN, http_status: 409, retry_in_ms: HEARTBEAT_MS });
    expect(conflict.msg).toBe(
      "the server refused this device's heartbeat (409): its hardware_uuid is already used by another device of the organization " +
        '(a cloned disk image or VM, or an earlier enrollment of this machine). Nothing was wiped. To recover, an administrator ' +
        'revokes the other device record (device-agent-server device revoke <device_id>), or this machine is enrolled into ' +
        'another organization. Retrying every 60 s.',
    );
    expect(harness.daemon.state).toBe('conflict');
    await harness.advance(POSTURE_MS - HEARTBEAT_MS); // a cycle falls due while in conflict: stored, not uploaded
    expect(harness.events('posture_cycle').map((l) => l.outcome)).toEqual(['delivered', 'held']);
  });

  it('a transient heartbeat failure: warned with its status and retry, recorded as the last error', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new RetryableError('heartbeat', 'the server answered heartbeat with 503', 503));
    harness = await startInProcess({ clock, api });
    expect(line(harness.events('heartbeat_failed')[0], 'http_status', 'retry_in_ms')).toEqual({
      level: WARN,
      event: 'heartbeat_failed',
      msg: 'the server answered heartbeat with 503',
      http_status: 503,
      retry_in_ms: 2000,
    });
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({
      daemon_state: 'backing_off',
      daemon_message: 'heartbeat failed: the server answered heartbeat with 503',
      last_error: 'the server answered heartbeat with 503',
    });
  });

  it('a refused heartbeat records its last error', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new InvalidRequestError('heartbeat', 'the server answered heartbeat with 422', 422));
    harness = await startInProcess({ clock, api });
    expect(await runtimeStatus(harness.stateDir)).toMatchObject({ last_error: 'the server answered heartbeat with 422' });
  });

  it('upload failures: transient ones warned with their status, local ones as errors', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new RetryableError('postures', 'the server answered postures with 502', 502));
    harness = await startInProcess({ clock, api });
    expect(line(harness.events('upload_failed')[0], 'http_status', 'retry_in_ms')).toEqual({
      level: WARN,
      event: 'upload_failed',
      msg: 'the server answered postures with 502',
      http_status: 502,
      retry_in_ms: 2000,
    });
    api.postureAnswers.push(new Error('EIO: i/o error, read'));
    await harness.advance(2000);
    expect(line(harness.events('upload_failed')[1], 'http_status')).toEqual({
      level: ERROR,
      event: 'upload_failed',
      msg: 'posture upload failed locally: EIO: i/o error, read',
      http_status: undefined,
    });
  });

  it('a refused result is counted in rejected_results and in the cycle line', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(new InvalidRequestError('postures', '400', 400), new InvalidRequestError('postures', '400', 400));
    harness = await startInProcess({ clock, api, collect: () => Promise.resolve(results('ONE', 1)) });
    expect(harness.events('posture_cycle')[0]).toMatchObject({ outcome: 'delivered', sent: 0, rejected: 1 });
    expect((await runtimeStatus(harness.stateDir)).rejected_results).toBe(1);
    expect((await runtimeStatus(harness.stateDir)).last_upload_at).toBeUndefined(); // nothing was delivered
  });

  it('a 401: the revocation line, and the revoked state with why and nothing queued', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.heartbeats.push(new CredentialsRejectedError('heartbeat', '401', 401));
    harness = await startInProcess({ clock, api });
    const revoked = harness.events('credentials_revoked')[0]!;
    expect(line(revoked, 'route', 'http_status', 'revoked_at')).toEqual({
      level: ERROR,
      event: 'credentials_revoked',
      msg: 'API key rejected (401): wiping the local key and queued results; waiting for a new enrollment',
      route: 'heartbeat',
      http_status: 401,
      revoked_at: new Date(clock.wallMs()).toISOString(),
    });
    expect(await runtimeStatus(harness.stateDir)).toEqual({
      daemon_state: 'revoked',
      daemon_message: 'the server rejected the API key (401 on /heartbeat): the device was revoked or unenrolled',
      queued_results: 0,
      revoked_at: new Date(clock.wallMs()).toISOString(),
      reason: 'the server rejected the API key (401 on /heartbeat): the device was revoked or unenrolled',
    });
  });

  it('failing checks: an error line, and the next cycle on time', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let fail = true;
    harness = await startInProcess({
      clock,
      api,
      collect: () => (fail ? Promise.reject(new Error('checks crashed')) : Promise.resolve(results('C', 1))),
    });
    expect(line(harness.events('collect_failed')[0], 'error')).toEqual({
      level: ERROR,
      event: 'collect_failed',
      msg: 'posture checks failed',
      error: 'checks crashed',
    });
    fail = false;
    await harness.advance(POSTURE_MS);
    expect(api.seen('postures')).toHaveLength(1);
  });

  it('a stop: requested and done, each at info, and `run` says it stopped', async () => {
    const clock = new FakeClock();
    const h = await startInProcess({ clock, api: new ScriptedApi(clock) });
    await h.stop({ keepStateDir: true });
    expect(line(h.events('stop_requested')[0])).toEqual({
      level: INFO,
      event: 'stop_requested',
      msg: 'stopping: finishing the request in flight',
    });
    expect(line(h.events('stopped')[0])).toEqual({ level: INFO, event: 'stopped', msg: 'stopped' });
    expect(h.lines.at(-1)?.event).toBe('stopped'); // the last line
    expect(h.outcome()).toEqual({ kind: 'stopped' });
    // Nothing left behind that would keep a process alive or call back: no timer (the stop's grace), no watch.
    expect(clock.nextTimer()).toBeUndefined();
    expect(h.watching()).toBe(false);
    await h.stop();
  });

  it('an unreadable identity: an error line with the retry', async () => {
    const clock = new FakeClock();
    harness = await startInProcess({ clock, api: new ScriptedApi(clock), identity: () => Promise.reject(new Error('no machine id')) });
    expect(harness.events('identity_failed')[0]!.msg).toBe('cannot read the device identity');
  });

  it('the queue bound: a warning that says how many were dropped', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.postureAnswers.push(...Array.from({ length: 20 }, () => new RetryableError('postures', 'down', 503)));
    harness = await startInProcess({ clock, api, maxQueuedResults: 4, retry: { baseMs: 1000, maxMs: 1000_000, attempts: 3 } });
    await harness.advance(POSTURE_MS);
    expect(harness.events('queue_full')[0]!.msg).toBe('posture queue full: dropped the 2 oldest results');
  });

  it('a queue that was not empty at start is uploaded right after the first heartbeat, before any cycle', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const collect = async () => {
      await gate;
      return results('LATER', 1);
    };
    api.postureAnswers.push(new RetryableError('postures', 'down', 503));
    const first = await startInProcess({ clock, api, collect: () => Promise.resolve(results('EARLIER', 2)) });
    await first.stop({ keepStateDir: true });
    harness = await startInProcess({ clock, api, stateDir: first.stateDir, apiKey: null, collect });
    expect(api.calls.slice(-2).map((c) => c.route)).toEqual(['heartbeat', 'postures']); // while the checks still run
    release();
    await harness.settled();
    expect(
      api
        .seen('postures')
        .slice(-2)
        .map((c) => (c.body as PosturesRequest).results.length),
    ).toEqual([2, 1]);
  });
});

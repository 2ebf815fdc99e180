// The server policy extension as the daemon follows it (docs/agent.md, "Policy"), in process with a
// fake clock (test/daemon/inProcess.ts): a heartbeat's policy_version is fetched before the next
// posture cycle, kept through the state owner, applied to every cycle until another is announced,
// refused with one line when it cannot be applied, retried with backoff when the fetch fails, and
// forgotten when the server stops serving one. policy.test.ts runs the same against the real server.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CredentialsRejectedError,
  InvalidRequestError,
  PayloadTooLargeError,
  RetryableError,
  type RequestOptions,
} from '../../src/agent/api';
import type { StoredServerPolicy } from '../../src/agent/state';
import { linuxLifecycle } from '../../checks/linux/lifecycle';
import type { PolicyResponse } from '../../src/protocol/schemas';
import { runtimeStatus } from '../support/agent';
import { FakeClock, IDENTITY, results, ScriptedApi, startInProcess, type Answer, type Harness, type HarnessOptions } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 60_000;
const POSTURE_MS = 600_000;
const KEY = 'a'.repeat(96);
/** A Retry-After beyond the heartbeat interval is honoured. */
const LONG_RETRY = { baseMs: 1000, maxMs: 300_000, attempts: 3 };

/** A policy as the server serves it: the organization's policy and the platform's lifecycle data set. */
function served(version: number, policy: Record<string, unknown> = { screenLock: { maxIdleSeconds: 300 } }): PolicyResponse {
  return { version, policy, lifecycle: { version: 7, ...linuxLifecycle } };
}

/**
 * A daemon on a server that serves `policy` (its route answering `policyAnswers` first); every
 * cycle's policy argument is kept in `applied`.
 */
async function withPolicy(
  policy: PolicyResponse | null,
  options: Partial<HarnessOptions> = {},
  policyAnswers: Answer<PolicyResponse>[] = [],
) {
  const clock = options.clock ?? new FakeClock();
  const api = new ScriptedApi(clock);
  api.servedPolicy = policy;
  api.policyAnswers.push(...policyAnswers);
  const applied: (StoredServerPolicy | null)[] = [];
  harness = await startInProcess({
    clock,
    api,
    collectCycle: (current) => {
      applied.push(current);
      return Promise.resolve({ results: results('CHECK', 2) });
    },
    ...options,
  });
  return { api, clock, applied, h: harness };
}

const routes = (api: ScriptedApi) => api.calls.map((c) => c.route);
const appliedVersions = (applied: (StoredServerPolicy | null)[]) => applied.map((p) => p?.policy_version ?? null);

describe('a served policy', () => {
  it('is fetched before the first cycle, kept, and applied to every cycle until the server announces another', async () => {
    const { api, clock, applied, h } = await withPolicy(served(3), {
      identity: () => Promise.resolve({ ...IDENTITY, platform: 'DARWIN' }),
    });
    const fetchedAt = new Date(clock.wallMs()).toISOString();
    expect(routes(api)).toEqual(['heartbeat', 'policy', 'postures']);
    expect(api.seen('policy')[0]).toMatchObject({ apiKey: KEY, body: { platform: 'DARWIN' } });
    const kept = { policy_version: '3.7', fetched_at: fetchedAt, response: served(3) };
    expect(applied).toEqual([kept]);
    expect(await h.state.serverPolicy()).toEqual(kept);
    expect(h.events('policy_fetched')).toEqual([
      expect.objectContaining({
        level: 30,
        policy_version: '3.7',
        version: 3,
        lifecycle_version: 7,
        msg: 'server policy version 3 fetched: applied from the next posture cycle',
      }),
    ]);

    await h.advance(POSTURE_MS); // ten heartbeats announce the same version: nothing fetched again
    expect(api.seen('policy')).toHaveLength(1);
    expect(appliedVersions(applied)).toEqual(['3.7', '3.7']);

    api.servedPolicy = served(4);
    await h.advance(HEARTBEAT_MS);
    expect(routes(api).slice(-2)).toEqual(['heartbeat', 'policy']);
    await h.advance(POSTURE_MS - HEARTBEAT_MS);
    expect(appliedVersions(applied)).toEqual(['3.7', '3.7', '4.7']);
    expect((await h.state.serverPolicy())?.policy_version).toBe('4.7');
  });

  it('is applied at the next start from the state directory, without fetching it again', async () => {
    const first = await withPolicy(served(3));
    await first.h.stop({ keepStateDir: true });
    harness = undefined;
    const { api, applied } = await withPolicy(served(3), { stateDir: first.h.stateDir, apiKey: null });
    expect(routes(api)).toEqual(['heartbeat', 'postures']);
    expect(appliedVersions(applied)).toEqual(['3.7']);
  });

  it('is forgotten when the server no longer announces one: the local policy applies, and the file goes', async () => {
    const { api, applied, h } = await withPolicy(served(3));
    api.servedPolicy = null;
    await h.advance(HEARTBEAT_MS);
    expect(h.events('policy_dropped')).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'the server no longer serves a policy: the local policy applies from the next posture cycle',
      }),
    ]);
    expect(await h.state.serverPolicy()).toBeNull();
    expect(existsSync(join(h.stateDir, 'server-policy.json'))).toBe(false);
    await h.advance(POSTURE_MS - HEARTBEAT_MS);
    expect(appliedVersions(applied)).toEqual(['3.7', null]);
    expect(h.events('policy_dropped')).toHaveLength(1); // said once, not at every heartbeat
  });

  it('is applied even when the disk refuses to keep it, with one warning; so is forgetting it', async () => {
    const { api, applied, h } = await withPolicy(served(3));
    // server-policy.json replaced by a directory: neither written nor removed.
    await h.state.storeServerPolicy(null);
    mkdirSync(join(h.stateDir, 'server-policy.json', 'inside'), { recursive: true, mode: 0o700 });
    api.servedPolicy = served(4);
    await h.advance(POSTURE_MS);
    expect(appliedVersions(applied)).toEqual(['3.7', '4.7']);
    const [failed] = h.events('policy_store_failed');
    expect(failed).toMatchObject({ level: 40 });
    expect(failed?.msg).toMatch(/server-policy\.json/);
    expect(h.events('policy_store_failed')).toHaveLength(1);

    api.servedPolicy = null;
    await h.advance(HEARTBEAT_MS);
    expect(h.events('policy_dropped')).toHaveLength(1);
    expect(h.events('policy_store_failed')).toHaveLength(2);
  });
});

describe('a policy that cannot be applied', () => {
  it('is refused with one line when it does not validate: the current policy stays, and that version is not fetched again', async () => {
    const { api, applied, h } = await withPolicy(served(3));
    api.servedPolicy = served(4, { screenLock: 'always' });
    await h.advance(HEARTBEAT_MS);
    expect(h.events('policy_refused')).toEqual([
      expect.objectContaining({
        level: 50,
        policy_version: '4.7',
        msg: 'server policy version 4 refused, the current policy stays: invalid policy at screenLock: Invalid input: expected object, received string',
      }),
    ]);
    await h.advance(POSTURE_MS - HEARTBEAT_MS);
    expect(api.seen('policy')).toHaveLength(2); // ten heartbeats later, still the one refusal
    expect(appliedVersions(applied)).toEqual(['3.7', '3.7']);
    expect((await h.state.serverPolicy())?.policy_version).toBe('3.7');

    api.servedPolicy = served(5);
    await h.advance(HEARTBEAT_MS);
    expect(api.seen('policy')).toHaveLength(3);
    expect((await h.state.serverPolicy())?.policy_version).toBe('5.7');
  });

  it('is refused when its lifecycle data does not validate', async () => {
    const { h } = await withPolicy({ version: 3, policy: {}, lifecycle: { version: 7 } });
    expect(h.events('policy_refused')).toEqual([
      expect.objectContaining({ msg: 'server policy version 3 refused, the current policy stays: invalid lifecycle data at dataset' }),
    ]);
    expect(await h.state.serverPolicy()).toBeNull();
  });

  it('is not asked for again when the server refuses the request itself (400, 413), until it announces another version', async () => {
    const refused = new InvalidRequestError('policy', 'server answered 400: invalid platform', 400);
    const { api, applied, h } = await withPolicy(served(3), {}, [refused]);
    expect(routes(api)).toEqual(['heartbeat', 'policy', 'postures']);
    expect(applied).toEqual([null]);
    expect(h.events('policy_refused')).toEqual([
      expect.objectContaining({
        level: 50,
        policy_version: '3.7',
        msg: 'the server refused the policy request: server answered 400: invalid platform',
      }),
    ]);
    await h.advance(POSTURE_MS);
    expect(api.seen('policy')).toHaveLength(1);

    api.servedPolicy = served(4);
    api.policyAnswers.push(new PayloadTooLargeError('policy', 'server answered 413', 413));
    await h.advance(HEARTBEAT_MS);
    expect(h.events('policy_refused').map((l) => l.policy_version)).toEqual(['3.7', '4.7']);
    await h.advance(HEARTBEAT_MS);
    expect(api.seen('policy')).toHaveLength(2);
    expect(h.daemon.state).toBe('active');
  });
});

describe('a policy fetch that fails', () => {
  it('is retried with backoff, Retry-After honoured, while cycles go on with the current policy', async () => {
    const busy = new RetryableError('policy', 'server answered 503', 503, undefined, 90_000);
    const dropped = new RetryableError('policy', 'connection reset');
    const { api, applied, h } = await withPolicy(served(3), { retry: LONG_RETRY }, [busy, dropped]);
    const start = api.calls[0]!.at;
    expect(routes(api)).toEqual(['heartbeat', 'policy', 'postures']);
    expect(applied).toEqual([null]);
    expect(h.events('policy_fetch_failed')).toEqual([
      expect.objectContaining({ level: 40, http_status: 503, retry_in_ms: 90_500, msg: 'server answered 503; the current policy stays' }),
    ]);
    // The heartbeat at 60 s announces the same version: the retry stays where the backoff put it.
    await h.advance(90_499);
    expect(api.seen('policy')).toHaveLength(1);
    await h.advance(1);
    expect(api.seen('policy').map((c) => c.at - start)).toEqual([0, 90_500]);
    // Retry-After does not feed the exponential backoff: the next delay is the first one (base 1 s, jitter 0.5).
    const [, second] = h.events('policy_fetch_failed');
    expect(second).toMatchObject({ retry_in_ms: 2000, msg: 'connection reset; the current policy stays' });
    expect(second).not.toHaveProperty('http_status'); // no answer, no status
    await h.advance(2000);
    expect(api.seen('policy').map((c) => c.at - start)).toEqual([0, 90_500, 92_500]);
    expect((await h.state.serverPolicy())?.policy_version).toBe('3.7');
    await h.advance(POSTURE_MS);
    expect(appliedVersions(applied)).toEqual([null, '3.7']);
    expect(h.daemon.state).toBe('active'); // the policy's failures are not the heartbeat's
  });

  it('starts its backoff anew for a newly announced version, and a heartbeat without one cancels the retry', async () => {
    const unavailable = (retryAfterMs?: number) => new RetryableError('policy', 'server answered 503', 503, undefined, retryAfterMs);
    const { api, h } = await withPolicy(served(3), { retry: LONG_RETRY }, [unavailable(), unavailable(70_000)]);
    const start = api.calls[0]!.at;
    await h.advance(2000); // first delay 2 s; then told to come back at 72 s
    api.servedPolicy = served(4);
    api.policyAnswers.push(unavailable());
    await h.advance(HEARTBEAT_MS - 2000); // the heartbeat at 60 s announces 4.7: fetched at once
    expect(api.seen('policy').map((c) => c.at - start)).toEqual([0, 2000, HEARTBEAT_MS]);
    // 2 s again, not the 3.5 s that would follow 3.7's first delay.
    expect(h.events('policy_fetch_failed').map((l) => l.retry_in_ms)).toEqual([2000, 70_500, 2000]);

    api.servedPolicy = null;
    api.policyAnswers.push(unavailable(100_000));
    await h.advance(2000); // retried at 62 s, told to come back at 162.5 s
    expect(api.seen('policy')).toHaveLength(4);
    await h.advance(3 * HEARTBEAT_MS); // the heartbeat at 120 s announced none
    expect(api.seen('policy')).toHaveLength(4);
    expect(await h.state.serverPolicy()).toBeNull();
  });

  it('gives up a pending retry when the server announces the policy it already has again', async () => {
    const unavailable = new RetryableError('policy', 'server answered 503', 503, undefined, 90_000);
    const { api, h } = await withPolicy(served(3), { retry: LONG_RETRY });
    api.servedPolicy = served(4);
    api.policyAnswers.push(unavailable);
    await h.advance(HEARTBEAT_MS); // 4.7 announced, its fetch told to come back at 150.5 s
    api.servedPolicy = served(3);
    await h.advance(2 * HEARTBEAT_MS); // the heartbeat at 120 s announces 3.7 again
    expect(api.seen('policy')).toHaveLength(2);
    expect((await h.state.serverPolicy())?.policy_version).toBe('3.7');
  });

  it('wipes the enrollment on a 401, like any other route', async () => {
    const rejected = new CredentialsRejectedError('policy', 'server answered 401', 401);
    const { api, h } = await withPolicy(served(3), {}, [rejected]);
    expect(routes(api)).toEqual(['heartbeat', 'policy']);
    expect(h.daemon.state).toBe('revoked');
    expect(await runtimeStatus(h.stateDir)).toMatchObject({
      daemon_state: 'revoked',
      reason: 'the server rejected the API key (401 on /policy): the device was revoked or unenrolled',
    });
    expect(await h.state.enrollment()).toBeNull();
  });
});

describe('stopping during a policy fetch', () => {
  it('cuts the request after the grace: nothing refused, nothing retried, the daemon stopped', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.servedPolicy = served(3);
    let inFlight = false;
    api.policy = (_apiKey: string, _body: unknown, options?: RequestOptions) =>
      new Promise<PolicyResponse>((_resolve, reject) => {
        inFlight = true;
        options?.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error));
      });
    const h = await startInProcess({ clock, api, settle: false });
    await vi.waitFor(() => expect(inFlight).toBe(true), { timeout: 30_000 });
    const stopping = h.stop();
    await vi.waitFor(() => expect(h.events('stop_requested')).toHaveLength(1), { timeout: 30_000 });
    expect(clock.fireNext(clock.monotonicMs() + 3000)).toBe(true);
    await stopping;
    expect(h.daemon.state).toBe('stopped');
    expect([...h.events('policy_fetch_failed'), ...h.events('policy_refused')]).toEqual([]);
  });
});

describe('a policy answer the daemon has no rule for', () => {
  it('ends `run` with it (a defect), once the daemon has recorded that it stopped', async () => {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    api.servedPolicy = served(3);
    api.policyAnswers.push(new TypeError('a defect'));
    const h = await startInProcess({ clock, api, settle: false });
    await expect(h.settled()).rejects.toThrow('a defect');
    expect(h.daemon.state).toBe('stopped');
    expect(h.events('policy_refused')).toEqual([]);
    rmSync(join(h.stateDir, '..'), { recursive: true, force: true });
  });
});

// Runs the daemon in this process with a fake clock, so that its transitions are tested in
// milliseconds: time moves only when a test advances it, and every timer the daemon sets fires in
// order. The state directory and its owner are real (a temp dir, enrolled with the file key store);
// the API is the caller's (a scripted one below, or the real client against the real server). Only
// the state's file watch is replaced, by a notification the test sends, so that nothing happens
// in real time behind the fake clock.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { AgentApi, HeartbeatAnswer, PosturesAccepted } from '../../src/agent/api';
import type { Clock } from '../../src/agent/daemonClock';
import { Daemon, type DaemonDeps, type RunOutcome } from '../../src/agent/daemon';
import { openAgentState, type AgentState } from '../../src/agent/state';
import {
  policyToken,
  type HeartbeatRequest,
  type PolicyRequest,
  type PolicyResponse,
  type PosturesRequest,
  type PostureResult,
} from '../../src/protocol/schemas';

export class FakeClock implements Clock {
  private mono = 1_000;
  private wall: number;
  private timers: { at: number; fire: () => void }[] = [];

  constructor(wallStartMs = Date.UTC(2026, 0, 1)) {
    this.wall = wallStartMs;
  }

  monotonicMs(): number {
    return this.mono;
  }

  wallMs(): number {
    return this.wall;
  }

  schedule(fire: () => void, ms: number): () => void {
    if (!Number.isFinite(ms)) return () => undefined;
    const timer = { at: this.mono + Math.max(0, ms), fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** A step of the wall clock alone (NTP correction, a user changing the date). */
  stepWall(ms: number): void {
    this.wall += ms;
  }

  /** The earliest pending timer, or undefined. */
  nextTimer(): number | undefined {
    return this.timers.reduce<number | undefined>((min, t) => (min === undefined || t.at < min ? t.at : min), undefined);
  }

  /** Moves time to `at` (both clocks) and fires the timers due by then; false when none was. */
  fireNext(limit: number): boolean {
    const next = this.nextTimer();
    if (next === undefined || next > limit) return false;
    this.moveTo(next);
    const due = this.timers.filter((t) => t.at <= next);
    this.timers = this.timers.filter((t) => t.at > next);
    for (const timer of due) timer.fire();
    return true;
  }

  moveTo(at: number): void {
    this.wall += at - this.mono;
    this.mono = at;
  }
}

export interface LogLine {
  event?: string;
  level: number;
  [field: string]: unknown;
}

export function memoryLogger(): { log: DaemonDeps['log']; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

export type Answer<T> = T | Error | ((body: unknown) => T | Error);

export interface SeenCall {
  route: 'heartbeat' | 'postures' | 'policy';
  apiKey: string;
  body: HeartbeatRequest | PosturesRequest | PolicyRequest;
  /** Monotonic ms of the fake clock. */
  at: number;
}

/** An AgentApi whose answers the test scripts; it records every call. Default: success. */
export class ScriptedApi implements AgentApi {
  readonly serverUrl = 'https://scripted.invalid';
  readonly calls: SeenCall[] = [];
  heartbeats: Answer<HeartbeatAnswer>[] = [];
  postureAnswers: Answer<PosturesAccepted>[] = [];
  /** Answers of the policy extension's route, in order; when none is left it answers `policy`. */
  policyAnswers: Answer<PolicyResponse>[] = [];
  /** The policy served; null (the default): a server without the extension (no policy_version, no route). */
  servedPolicy: PolicyResponse | null = null;
  heartbeatAnswer: (body: HeartbeatRequest) => HeartbeatAnswer;

  constructor(
    private readonly clock: FakeClock,
    intervals = { heartbeat: 60, posture: 600 },
  ) {
    this.heartbeatAnswer = () => ({
      device_id: 'dev_scripted',
      state: 'ACTIVE',
      server_time: new Date(clock.wallMs()).toISOString(),
      heartbeat_interval_seconds: intervals.heartbeat,
      posture_interval_seconds: intervals.posture,
      ...(this.servedPolicy ? { policy_version: policyToken(this.servedPolicy.version, this.servedPolicy.lifecycle.version) } : {}),
    });
  }

  seen(route: SeenCall['route']): SeenCall[] {
    return this.calls.filter((c) => c.route === route);
  }

  enroll(): Promise<never> {
    return Promise.reject(new Error('not used by the daemon'));
  }

  unenroll(): Promise<never> {
    return Promise.reject(new Error('not used by the daemon'));
  }

  policy(apiKey: string, body: PolicyRequest): Promise<PolicyResponse> {
    this.calls.push({ route: 'policy', apiKey, body, at: this.clock.monotonicMs() });
    return this.answer(
      this.policyAnswers.shift(),
      body,
      () => this.servedPolicy ?? new Error('the scripted server has no policy extension'),
    );
  }

  heartbeat(apiKey: string, body: HeartbeatRequest): Promise<HeartbeatAnswer> {
    this.calls.push({ route: 'heartbeat', apiKey, body, at: this.clock.monotonicMs() });
    return this.answer(this.heartbeats.shift(), body, () => this.heartbeatAnswer(body));
  }

  postures(apiKey: string, body: PosturesRequest): Promise<PosturesAccepted> {
    this.calls.push({ route: 'postures', apiKey, body, at: this.clock.monotonicMs() });
    return this.answer(this.postureAnswers.shift(), body, () => ({ reportId: 'prr_scripted' }));
  }

  /** The scripted answer (or the fallback) as the promise a real client returns: an Error rejects it. */
  private answer<T>(scripted: Answer<T> | undefined, body: unknown, fallback: () => T | Error): Promise<T> {
    const value = typeof scripted === 'function' ? (scripted as (b: unknown) => T | Error)(body) : (scripted ?? fallback());
    return value instanceof Error ? Promise.reject(value) : Promise.resolve(value);
  }
}

export const IDENTITY: HeartbeatRequest = {
  hardware_uuid: '4C4C4544-0042-3510-8052-B7C04F4E3332',
  hostname: 'in-process',
  platform: 'LINUX',
  os_version: 'Debian GNU/Linux 12 (bookworm)',
  agent_version: '0.1.0',
};

export function results(prefix: string, n: number): PostureResult[] {
  return Array.from({ length: n }, (_, i) => ({
    check_key: `${prefix}_${i}`,
    status: (['PASS', 'FAIL', 'UNKNOWN', 'NOT_APPLICABLE'] as const)[i % 4]!,
    evidence: { index: i },
    observed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  }));
}

export interface Harness {
  daemon: Daemon;
  state: AgentState;
  /** How `run` ended, once it has. */
  outcome: () => RunOutcome | undefined;
  /** Enrolls the state directory with `apiKey` (replacing any enrollment) and tells the daemon. */
  enroll(apiKey: string): Promise<void>;
  clock: FakeClock;
  stateDir: string;
  lines: LogLine[];
  events(name: string): LogLine[];
  /** Tells the daemon the enrollment record changed (as its file watch would). */
  enrollmentChanged(): void;
  /** Whether the daemon's watch of the enrollment is open. */
  watching(): boolean;
  /** Waits (in real time) until the daemon has nothing to do but wait for its clock. */
  settled(): Promise<void>;
  /** Advances the fake clock by `ms`, letting the daemon run every timer that falls due on the way. */
  advance(ms: number): Promise<void>;
  /** Stops the daemon (again: no-op) and removes the state directory unless asked to keep it. */
  stop(options?: { keepStateDir?: boolean }): Promise<void>;
}

export interface HarnessOptions {
  clock?: FakeClock;
  stateDir?: string;
  /** The server every enrollment talks to. */
  api: AgentApi;
  /** The key the state directory is enrolled with before the daemon starts (default 'a' × 96); null: not enrolled. */
  apiKey?: string | null;
  /** Replaces the state owner's wipe (e.g. one that fails as on a full disk). */
  wipe?: AgentState['wipe'];
  collect?: () => Promise<PostureResult[]>;
  /** The whole cycle, with its summary for `status` (in place of `collect`). */
  collectCycle?: DaemonDeps['collect'];
  identity?: DaemonDeps['identity'];
  /** Replaces the connection to `api` (e.g. one that refuses a CA file). */
  connect?: DaemonDeps['connect'];
  retry?: DaemonDeps['retry'];
  maxQueuedResults?: number;
  /** The admin's opt-in to enroll again after a 401: the record names this secret file, and `reenroll` is the daemon's. */
  reenroll?: { secretFile: string; enrollAgain: NonNullable<DaemonDeps['reenroll']> };
  /** `run --once`: one round. */
  once?: boolean;
  /** False: return at once, without waiting for the daemon to settle (a request the test holds in flight). */
  settle?: boolean;
}

export async function makeStateDir(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'daemon-inprocess-')), 'state');
}

/** Enrolls `state` with the file key store, as `device-agent enroll` would with a server that answered `apiKey`. */
export async function enrollState(
  state: AgentState,
  apiKey: string,
  serverUrl = 'https://scripted.invalid',
  reenrollSecretFile?: string,
): Promise<void> {
  await state.enroll(
    { serverUrl, keystore: 'file', force: true, logger: pino({ level: 'silent' }), ...(reenrollSecretFile ? { reenrollSecretFile } : {}) },
    {
      exchange: () => Promise.resolve({ apiKey, enrolledWith: { method: 'token' as const } }),
      discard: () => Promise.resolve(),
      revoke: () => Promise.resolve(null),
    },
  );
}

export async function startInProcess(options: HarnessOptions): Promise<Harness> {
  const clock = options.clock ?? new FakeClock();
  const stateDir = options.stateDir ?? (await makeStateDir());
  const { log, lines } = memoryLogger();
  let notify: (() => void) | null = null;
  const real = await openAgentState(stateDir);
  if (options.apiKey !== null) await enrollState(real, options.apiKey ?? 'a'.repeat(96), undefined, options.reenroll?.secretFile);
  // The real owner, with the test's enrollment notification (and wipe, when given) in place of its own.
  const state: AgentState = Object.assign(Object.create(real) as AgentState, {
    watchEnrollment: (onChange: () => void) => {
      notify = onChange;
      return { close: () => (notify = null) };
    },
    ...(options.wipe ? { wipe: options.wipe } : {}),
  });
  const collect = options.collect ?? (() => Promise.resolve(results('CHECK', 3)));
  const daemon = new Daemon({
    state,
    connect: options.connect ?? (() => Object.assign(Object.create(options.api) as AgentApi, { close: () => Promise.resolve() })),
    log,
    clock,
    retry: options.retry ?? { baseMs: 1000, maxMs: 60_000, attempts: 3 },
    random: () => 0.5, // no splay and mid-range jitter: due times are exact
    identity: options.identity ?? (() => Promise.resolve(IDENTITY)),
    collect: options.collectCycle ?? (async () => ({ results: await collect() })),
    ...(options.maxQueuedResults ? { maxQueuedResults: options.maxQueuedResults } : {}),
    ...(options.reenroll ? { reenroll: options.reenroll.enrollAgain } : {}),
  });
  const stop = new AbortController();
  const running = daemon.run(stop.signal, { once: options.once === true });
  let failure: Error | undefined;
  let outcome: RunOutcome | undefined;
  running.then(
    (ended) => (outcome = ended),
    (err: unknown) => {
      failure = err instanceof Error ? err : new Error(`the daemon's run failed: ${String(err)}`);
    },
  );

  const settled = async () => {
    const deadline = Date.now() + 5_000;
    let quiet = 0;
    while (quiet < 3) {
      if (failure) throw failure;
      if (Date.now() > deadline) throw new Error(`the daemon did not settle (state ${daemon.state})`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      quiet = daemon.waiting || outcome ? quiet + 1 : 0;
    }
  };
  if (options.settle !== false) await settled();
  return {
    daemon,
    state,
    outcome: () => outcome,
    async enroll(apiKey) {
      await enrollState(real, apiKey);
      notify?.();
    },
    clock,
    stateDir,
    lines,
    events: (name) => lines.filter((l) => l.event === name),
    enrollmentChanged: () => notify?.(),
    watching: () => notify !== null,
    settled,
    async advance(ms) {
      await settled(); // what the test just did (an enrollment change) may set new timers first
      const target = clock.monotonicMs() + ms;
      while (clock.fireNext(target)) await settled();
      clock.moveTo(target);
      await settled();
    },
    async stop(options = {}) {
      stop.abort();
      await running;
      if (!options.keepStateDir) await rm(join(stateDir, '..'), { recursive: true, force: true });
    },
  };
}

// `device-agent run`: the long-lived agent. One loop, one step at a time, so heartbeats, queue writes
// and uploads never race each other; only the posture checks run in the background (they are local
// work and may take seconds). Each step is bounded by a request timeout, so a heartbeat that falls
// due during a long backlog flush waits for one batch at most.
//
// States (status.json `daemon_state`, and a log line on each change):
//   waiting_for_enrollment  no credentials; no request; watching the enrollment record
//   keystore_unavailable    enrolled, but the key store cannot be read now (locked keyring): retrying
//   starting                credentials loaded; the first heartbeat has not succeeded yet
//   active                  heartbeats succeed; posture cycles and uploads run
//   backing_off             the last heartbeat or upload failed transiently; retrying with backoff
//   conflict                the server refused the heartbeat with 409 (hardware_uuid in use): nothing wiped
//   revoked                 a 401 ended the enrollment: key and queue wiped (or, when the wipe could not
//                           finish, the key is never sent again); waiting for a new enrollment
//   stopping, stopped       SIGINT/SIGTERM received; finished
// `run --once` is this loop run for one round: one heartbeat, one posture cycle, the queue flushed,
// each failure retried at most `retry.attempts` times; the round's outcome is the command's exit code.
// Time comes from an injected Clock (daemonClock.ts): monotonic for every due time, wall time for
// reports; status.json and the state log lines from DaemonStatus (daemonStatus.ts). Everything on
// disk goes through the state owner (state/index.ts): credentials, queue, status, the 401 wipe.
import type { Logger } from 'pino';
import { policyToken, type HeartbeatRequest, type Platform, type PolicyResponse, type PostureResult } from '../protocol/schemas';
import { ConflictError, CredentialsRejectedError, InvalidRequestError, PayloadTooLargeError, type AgentApi, type Route } from './api';
import { Backoff, isTransient, retryAfterMs, type RandomSource, type RetryPolicy } from './backoff';
import { systemClock, type Clock } from './daemonClock';
import { DaemonStatus, LocalFault, type DaemonState } from './daemonStatus';
import { firstLine, InvalidInputError, KeyStoreUnavailableError, StateCorruptError } from './errors';
import type { LastCycle } from './lastCycle';
import { CLOCK_SKEW_WARNING_MS, clockSkewMs, INITIAL_INTERVALS, intervalsFrom, withSplay, type Intervals } from './scheduler';
import type { PolicySource } from './policySource';
import { servedPolicyProblem } from './postureCycle';
import type { AgentState, EnrollmentRecord, PostureQueue, StoredServerPolicy } from './state';
import { uploadNextBatch, type BatchOutcome } from './uploader';

export type { DaemonState } from './daemonStatus';

/** An API client for one enrollment; closed when the enrollment ends. */
interface Connection extends AgentApi {
  close(): Promise<void>;
}

/** What one posture cycle gives the daemon: the results to queue and, for `status`, its summary. */
interface CollectedCycle {
  results: PostureResult[];
  lastCycle?: LastCycle;
  /** Which policy judged it (postureCycle.ts), for `status`. */
  policy?: PolicySource;
  /** False when the applied policy turns desktop notifications off (postureCycle.ts). */
  notifications?: boolean;
}

export interface DaemonDeps {
  /** The state directory's owner: credentials, queue, status.json, the wipe after a 401. */
  state: AgentState;
  /** An API client for an enrollment; throws InvalidInputError for a configuration the operator can fix (CA file). */
  connect(enrollment: EnrollmentRecord): Connection;
  log: Logger;
  retry: RetryPolicy;
  random?: RandomSource;
  /** Monotonic time, wall time and timers; the system's by default. */
  clock?: Clock;
  /** The heartbeat body, kept fresh by its provider. */
  identity(): Promise<HeartbeatRequest>;
  /** One posture cycle (postureCycle.ts), with the server's policy when the daemon holds one. */
  collect(served: StoredServerPolicy | null): Promise<CollectedCycle>;
  /** Why a served policy cannot be applied, or null (default: postureCycle.ts's servedPolicyProblem). */
  policyProblem?(response: PolicyResponse): Promise<string | null>;
  maxQueuedResults?: number;
  /** Told of each cycle once it is stored (desktop notifications: notifications.ts); never delays the loop. */
  onCycle?(cycle: CollectedCycle): void;
}

/** An enrollment the daemon acts on. */
interface Session {
  enrollment: EnrollmentRecord;
  apiKey: string;
  api: Connection;
}

const HEARTBEAT_TIMEOUT_MS = 30_000;
const UPLOAD_TIMEOUT_MS = 60_000;
/** Cycles a server asks for ("check again" on the device page) start at most this often. */
const SERVER_ASKED_CYCLE_GAP_MS = 60_000;
/** After SIGTERM, an in-flight request may finish for this long before it is cut (the queue keeps its batch). */
const STOP_GRACE_MS = 3_000;

/** Why `run` ended, mapped to the contract's exit codes by the command: `stopped` by a signal, the others end a round. */
export type RunOutcome =
  | { kind: 'stopped' }
  | { kind: 'delivered'; sent: number; queued: number }
  | { kind: 'not_enrolled' }
  | { kind: 'revoked'; message: string }
  | { kind: 'unreachable'; message: string; queued: number }
  | { kind: 'refused'; message: string };

interface Collected extends CollectedCycle {
  /** Monotonic ms. */
  startedAt: number;
  durationMs: number;
  /** Who asked for this cycle (requestCycle), told how it ended. */
  askedBy: CycleWaiter[];
}

/** How a cycle asked for with requestCycle ended: its results delivered, or not now, or not stored. */
export type AskedCycleOutcome = 'delivered' | 'deferred' | 'held' | 'stopped' | 'superseded' | 'failed' | 'not_ready';
type CycleWaiter = (outcome: AskedCycleOutcome) => void;

interface CycleReport {
  startedAt: number;
  durationMs: number;
  counts: Record<'pass' | 'fail' | 'unknown' | 'not_applicable', number>;
  results: number;
  dropped: number;
  sent: number;
  rejected: number;
  askedBy: CycleWaiter[];
}

/** `run --once`: the one round's progress. */
interface Round {
  /** Its posture cycle is in the queue. */
  stored: boolean;
  /** Results the server accepted during the round. */
  sent: number;
  /** Set when the round is over. */
  outcome: RunOutcome | null;
}

/** A key the server rejected (401): never sent again, whatever the disk still holds, until another enrollment. */
interface Revocation {
  apiKey: string;
  reason: string;
  revokedAt: string;
  /** Key, queue and record removed and the reason written. */
  wiped: boolean;
  /** Monotonic ms of the next attempt to finish the wipe. */
  wipeDue: number;
}

export class Daemon {
  private readonly log: Logger;
  private readonly random: RandomSource;
  private readonly clock: Clock;
  private queue!: PostureQueue;
  private status!: DaemonStatus;
  private session: Session | null = null;
  private revocation: Revocation | null = null;
  /** `run --once`; null for the daemon. */
  private round: Round | null = null;

  // Per session. Due times are monotonic ms.
  private intervals: Intervals = INITIAL_INTERVALS;
  private heartbeatOk = false;
  private inConflict = false;
  private heartbeatDue = 0;
  private postureDue = Number.POSITIVE_INFINITY;
  private lastCycleAt: number | null = null;
  private uploadRetryAt = 0;
  private storeRetryAt = 0;
  private queueHasWork = false;
  private readonly heartbeatBackoff: Backoff;
  private readonly uploadBackoff: Backoff;
  private readonly sessionBackoff: Backoff;
  private readonly policyBackoff: Backoff;
  private skewed = false;
  /** The last "check again" value a heartbeat carried, and when the cycle it asked for was due (monotonic ms). */
  private checkRequestSeen: string | undefined;
  private serverAskedCycleAt = Number.NEGATIVE_INFINITY;

  // The server policy extension (docs/agent.md, "Policy"). `served`: the policy applied from the next
  // cycle; `policyWanted`: a heartbeat's policy_version not yet fetched; `policyRefused`: one whose
  // policy could not be applied, not fetched again until the server announces another.
  private served: StoredServerPolicy | null = null;
  private policyWanted: string | null = null;
  private policyRefused: string | null = null;
  private policyDue = 0;
  private platform: Platform | null = null;
  private readonly queueWrite: LocalFault;
  private readonly wipeFault: LocalFault;

  // Background collection, a cycle not yet stored, and the cycle whose upload is in progress.
  private collecting = false;
  /** Asked for a cycle (requestCycle): the one being collected, or else the next. */
  private askedForCycle: CycleWaiter[] = [];
  private collected: Collected | null = null;
  private cycle: CycleReport | null = null;

  // Loop control.
  private enrollmentChanged = false;
  private wake: (() => void) | null = null;
  private wakePending = false;
  private readonly requests = new AbortController();

  constructor(private readonly deps: DaemonDeps) {
    this.log = deps.log;
    this.random = deps.random ?? Math.random;
    this.clock = deps.clock ?? systemClock;
    this.heartbeatBackoff = new Backoff(deps.retry, this.random);
    this.uploadBackoff = new Backoff(deps.retry, this.random);
    this.sessionBackoff = new Backoff(deps.retry, this.random);
    this.policyBackoff = new Backoff(deps.retry, this.random);
    this.queueWrite = new LocalFault(deps.log, 'queue_write_failed', 'store posture results in the queue');
    this.wipeFault = new LocalFault(deps.log, 'wipe_incomplete', 'finish wiping the rejected credentials');
  }

  /** The current state (null before `run` began). */
  get state(): DaemonState | null {
    return this.status?.state ?? null;
  }

  /**
   * A posture cycle now, asked for by the device's user (`check --report` through the local
   * endpoint): due at once, and uploaded as soon as it is stored. Resolves with how that cycle
   * ended; 'not_ready' at once when there is no session with a successful heartbeat (nothing could
   * be uploaded). A cycle already being collected is the one the caller gets.
   */
  requestCycle(): Promise<AskedCycleOutcome> {
    if (!this.session || !this.heartbeatOk) return Promise.resolve('not_ready');
    return new Promise((resolve) => {
      this.askedForCycle.push(resolve);
      if (this.collecting) return;
      this.postureDue = Math.min(this.postureDue, this.clock.monotonicMs());
      this.wakeUp();
    });
  }

  /** True while the loop waits for a timer, a signal, an enrollment change or a collection in progress. */
  get waiting(): boolean {
    return this.wake !== null;
  }

  /**
   * Runs until `stop` aborts (resolves `stopped` once the daemon has stopped cleanly), or with
   * `once` for one round: a heartbeat, a posture cycle and the queue flushed, or the failure that
   * ended the round after the bounded retries.
   */
  async run(stop: AbortSignal, options: { once?: boolean } = {}): Promise<RunOutcome> {
    this.round = options.once ? { stored: false, sent: 0, outcome: null } : null;
    // `run --once` is not a daemon: it records the status fields but no daemon state.
    this.status = new DaemonStatus(this.deps.state.status, this.log, !options.once);
    this.queue = await this.deps.state.queue({
      maxResults: this.deps.maxQueuedResults,
      onQuarantine: (file) => {
        this.log.warn({ event: 'queue_entry_quarantined', file }, 'damaged queue entry moved to queue/quarantine');
        void this.status.write({}, { quarantined_results: 1 });
      },
    });
    const watcher = this.deps.state.watchEnrollment(() => {
      this.enrollmentChanged = true;
      this.wakeUp();
    });
    let cancelGrace = () => undefined as void;
    const onStop = () => {
      this.log.info({ event: 'stop_requested' }, 'stopping: finishing the request in flight');
      void this.status.set('stopping');
      cancelGrace = this.clock.schedule(() => this.requests.abort(), STOP_GRACE_MS);
      this.wakeUp();
    };
    stop.addEventListener('abort', onStop); // an AbortSignal aborts once
    // While idle the daemon waits on a file watch and signals only, which do not keep Node alive.
    const keepAlive = setInterval(() => undefined, 2 ** 30);
    await this.status.write({ queued_results: await this.queue.count() });
    try {
      while (!stop.aborted && !this.round?.outcome) {
        if (this.enrollmentChanged) {
          this.enrollmentChanged = false;
          await this.endSession();
        }
        if (!this.session) {
          const retryInMs = await this.startSession();
          if (!this.session) {
            if (!this.round?.outcome) await this.idle(retryInMs);
            continue;
          }
        }
        const worked = await this.step();
        if (!worked && !this.round?.outcome) await this.idle(this.nextDue() - this.clock.monotonicMs());
      }
    } catch (err) {
      if (!(stop.aborted && this.requests.signal.aborted)) throw err;
    } finally {
      stop.removeEventListener('abort', onStop);
      cancelGrace();
      clearInterval(keepAlive);
      watcher.close();
      await this.finishCycle('stopped');
      await this.endSession();
      await this.status.set('stopped', null);
      this.log.info({ event: 'stopped' }, 'stopped');
    }
    return this.round?.outcome ?? { kind: 'stopped' };
  }

  /** Ends the round of `run --once`; the daemon goes on (its state and log said what happened). */
  private endRound(outcome: RunOutcome): void {
    if (this.round) this.round.outcome = outcome;
  }

  // ---- the loop -------------------------------------------------------------------------------

  /** Does the most urgent due work; false when nothing is due. */
  private async step(): Promise<boolean> {
    const session = this.session!;
    const now = this.clock.monotonicMs();
    if (this.collected && now >= this.storeRetryAt) {
      await this.enqueue(this.collected);
      return true;
    }
    if (now >= this.heartbeatDue) {
      await this.heartbeat(session);
      return true;
    }
    // Before a collection: a cycle due with the heartbeat that announced a new policy runs with it.
    if (this.policyWanted !== null && now >= this.policyDue) {
      await this.fetchPolicy(session, this.policyWanted);
      return true;
    }
    if (this.collectionAllowed() && now >= this.postureDue) {
      this.startCollection(now);
      return true;
    }
    if (this.uploadsAllowed() && this.queueHasWork && now >= this.uploadRetryAt) {
      await this.uploadBatch(session);
      return true;
    }
    return false;
  }

  private nextDue(): number {
    const dues = [this.heartbeatDue];
    if (this.policyWanted !== null) dues.push(this.policyDue);
    if (this.collected) dues.push(this.storeRetryAt);
    if (this.collectionAllowed()) dues.push(this.postureDue);
    if (this.uploadsAllowed() && this.queueHasWork) dues.push(this.uploadRetryAt);
    return Math.min(...dues);
  }

  private collectionAllowed(): boolean {
    // A cycle that could not be stored yet (disk full) is kept until it is: no newer one replaces it.
    return this.heartbeatOk && !this.collecting && !this.collected;
  }

  private uploadsAllowed(): boolean {
    // The bring-up rule: no upload before a heartbeat succeeded; after a 409 the device may be
    // PENDING again, where an upload would draw a 401 that wipes a valid key. A round uploads once
    // its cycle is stored, so that the cycle's one log line counts all it sent.
    return this.heartbeatOk && !this.inConflict && (this.round?.stored ?? true);
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.schedule(() => this.wakeUp(), Math.max(0, ms));
      this.wake = () => {
        cancel();
        this.wake = null;
        resolve();
      };
      // A wake-up that came while the loop was busy (a collection finishing, a signal, an enrollment
      // change: each calls wakeUp) is not lost.
      if (this.wakePending) this.wakeUp();
    });
  }

  private wakeUp(): void {
    if (this.wake) {
      this.wakePending = false;
      this.wake();
    } else {
      this.wakePending = true;
    }
  }

  // ---- sessions -------------------------------------------------------------------------------

  /** Loads credentials; returns how long to wait before trying again when there are none usable. */
  private async startSession(): Promise<number> {
    let session: Session | null;
    try {
      session = await this.connect();
    } catch (err) {
      // A round reports what stops it; the daemon waits for what may change.
      if (this.round) throw err;
      if (err instanceof KeyStoreUnavailableError) {
        if (this.revocation) return this.stayRevoked();
        const retryInMs = this.sessionBackoff.fail();
        await this.status.set('keystore_unavailable', `${err.message}; retrying in ${Math.ceil(retryInMs / 1000)} s`);
        return retryInMs;
      }
      if (err instanceof StateCorruptError) {
        await this.status.set('waiting_for_enrollment', err.message);
        return Number.POSITIVE_INFINITY;
      }
      if (err instanceof InvalidInputError) {
        // A configuration the operator can fix (CA file): retry rather than exit into a restart loop.
        const retryInMs = this.sessionBackoff.fail();
        this.log.error({ event: 'configuration_error', retry_in_ms: retryInMs }, err.message);
        await this.status.set('starting', `${err.message}; retrying in ${Math.ceil(retryInMs / 1000)} s`);
        return retryInMs;
      }
      throw err;
    }
    this.sessionBackoff.reset();
    if (session && this.revocation?.apiKey === session.apiKey) {
      await session.api.close().catch(() => undefined);
      return this.stayRevoked();
    }
    if (!session) {
      this.endRound({ kind: 'not_enrolled' });
      if (this.revocation) return this.stayRevoked();
      const status = await this.deps.state.status.read();
      if (status.revoked_at) await this.status.set('revoked', status.reason ?? 'the API key was rejected (401)');
      else await this.status.set('waiting_for_enrollment', 'not enrolled: run `device-agent enroll`');
      return Number.POSITIVE_INFINITY;
    }
    this.revocation = null; // a new enrollment
    this.session = session;
    this.intervals = INITIAL_INTERVALS;
    this.heartbeatOk = false;
    this.inConflict = false;
    this.heartbeatDue = this.clock.monotonicMs();
    this.postureDue = Number.POSITIVE_INFINITY;
    this.lastCycleAt = null;
    this.uploadRetryAt = 0;
    this.heartbeatBackoff.reset();
    this.uploadBackoff.reset();
    this.policyWanted = null; // the next announced version starts its own backoff (notePolicyVersion)
    this.policyRefused = null;
    this.served = await this.deps.state.serverPolicy();
    this.queueHasWork = (await this.queue.count()) > 0;
    const { server_url: serverUrl, keystore } = session.enrollment;
    this.log.info({ event: 'enrollment_loaded', server_url: serverUrl, keystore }, 'enrollment found');
    await this.status.set('starting', null);
    return 0;
  }

  /** The enrollment's credentials and a client for its server; null when not enrolled. */
  private async connect(): Promise<Session | null> {
    const credentials = await this.deps.state.credentials();
    if (!credentials) return null;
    return { enrollment: credentials.enrollment, apiKey: credentials.apiKey, api: this.deps.connect(credentials.enrollment) };
  }

  /**
   * The rejected key is still on disk or its reason unrecorded (the wipe could not finish, e.g. a full
   * disk): finish the wipe now, and try again at the heartbeat interval; never send the key.
   */
  private async stayRevoked(): Promise<number> {
    const revocation = this.revocation!;
    if (!revocation.wiped && this.clock.monotonicMs() >= revocation.wipeDue) await this.wipe(revocation);
    await this.status.set('revoked', revocation.reason, { queued_results: 0, revoked_at: revocation.revokedAt, reason: revocation.reason });
    return revocation.wiped ? Number.POSITIVE_INFINITY : revocation.wipeDue - this.clock.monotonicMs();
  }

  private async endSession(): Promise<void> {
    const session = this.session;
    this.session = null;
    this.collected = null;
    await session?.api.close().catch(() => undefined);
  }

  // ---- heartbeat ------------------------------------------------------------------------------

  private async heartbeat(session: Session): Promise<void> {
    let body: HeartbeatRequest;
    try {
      body = await this.deps.identity();
    } catch (err) {
      const retryInMs = this.heartbeatBackoff.fail();
      this.heartbeatDue = this.clock.monotonicMs() + retryInMs;
      this.log.error({ event: 'identity_failed', error: firstLine(err), retry_in_ms: retryInMs }, 'cannot read the device identity');
      this.endRound({ kind: 'refused', message: `cannot read the device identity: ${firstLine(err)}` });
      return;
    }
    this.platform = body.platform;
    const sentAt = this.clock.wallMs();
    try {
      const answer = await session.api.heartbeat(session.apiKey, body, { timeoutMs: HEARTBEAT_TIMEOUT_MS, signal: this.requests.signal });
      await this.onHeartbeat(answer, sentAt, this.clock.wallMs());
    } catch (err) {
      await this.onHeartbeatFailure(err);
    }
  }

  /** `sentAt` and `receivedAt` are wall-clock ms: they are compared with the server's clock. */
  private async onHeartbeat(answer: Awaited<ReturnType<AgentApi['heartbeat']>>, sentAt: number, receivedAt: number): Promise<void> {
    const now = this.clock.monotonicMs();
    const first = !this.heartbeatOk;
    const previous = this.intervals;
    this.intervals = intervalsFrom(previous, answer);
    this.heartbeatOk = true;
    this.inConflict = false;
    this.heartbeatBackoff.reset();
    // A round sends one heartbeat.
    this.heartbeatDue = this.round ? Number.POSITIVE_INFINITY : now + withSplay(this.intervals.heartbeatSeconds * 1000, this.random);
    if (first) {
      this.postureDue = now; // the first cycle follows the first heartbeat at once
    } else if (this.intervals.postureSeconds !== previous.postureSeconds && this.lastCycleAt !== null) {
      this.postureDue = this.lastCycleAt + withSplay(this.intervals.postureSeconds * 1000, this.random);
    }
    await this.notePolicyVersion(answer.policy_version);
    this.noteCheckRequest(answer.check_requested_at, now);
    const skewMs = clockSkewMs(answer.server_time, sentAt, receivedAt);
    this.reportSkew(skewMs);
    const fields = {
      event: 'heartbeat_accepted',
      device_id: answer.device_id,
      heartbeat_interval_seconds: this.intervals.heartbeatSeconds,
      posture_interval_seconds: this.intervals.postureSeconds,
      clock_skew_ms: skewMs,
    };
    if (first) this.log.info(fields, 'heartbeat accepted: device active');
    else this.log.debug(fields, 'heartbeat accepted');
    await this.status.set(this.activeState(), undefined, {
      device_id: answer.device_id,
      last_heartbeat_at: this.wallIso(),
      clock_skew_ms: skewMs,
      conflict: null,
      heartbeat_interval_seconds: this.intervals.heartbeatSeconds,
      posture_interval_seconds: this.intervals.postureSeconds,
    });
  }

  /**
   * A heartbeat's check_requested_at (the device page's "check again", docs/agent.md, "My device"):
   * a value not seen before makes a posture cycle due now (a cycle in progress started before the
   * ask, so another follows it), uploaded as soon as it is stored. At most one such cycle per
   * SERVER_ASKED_CYCLE_GAP_MS, whatever the server sends; a round has its own cycle.
   */
  private noteCheckRequest(requestedAt: string | undefined, now: number): void {
    if (requestedAt === undefined || requestedAt === this.checkRequestSeen || this.round) return;
    this.checkRequestSeen = requestedAt;
    const due = Math.max(now, this.serverAskedCycleAt + SERVER_ASKED_CYCLE_GAP_MS);
    this.serverAskedCycleAt = due;
    this.postureDue = Math.min(this.postureDue, due);
    this.log.info({ event: 'check_requested', requested_at: requestedAt }, "a new check asked for on the device's page");
  }

  // ---- server policy --------------------------------------------------------------------------

  /** A heartbeat's policy_version: fetch a policy the daemon does not have; none at all, the local policy applies. */
  private async notePolicyVersion(version: string | undefined): Promise<void> {
    if (version === undefined) {
      this.policyWanted = null;
      if (this.served) {
        // A server without the extension (or with it turned off): exactly as an agent that never had one.
        this.served = null;
        this.log.info(
          { event: 'policy_dropped' },
          'the server no longer serves a policy: the local policy applies from the next posture cycle',
        );
        await this.deps.state
          .storeServerPolicy(null)
          .catch((err: unknown) => this.log.warn({ event: 'policy_store_failed' }, firstLine(err)));
      }
      return;
    }
    if (version === this.served?.policy_version || version === this.policyRefused) {
      this.policyWanted = null;
    } else if (version !== this.policyWanted) {
      this.policyWanted = version;
      this.policyDue = this.clock.monotonicMs();
      this.policyBackoff.reset();
    }
  }

  /**
   * Fetches the policy a heartbeat announced and keeps it (through the state owner) once it
   * validates; a policy that does not is refused with one line and the previous one stays. A
   * transient failure is retried with backoff; a 401 is a dead key like on any other route.
   */
  private async fetchPolicy(session: Session, wanted: string): Promise<void> {
    let response: PolicyResponse;
    try {
      response = await session.api.policy(
        session.apiKey,
        { platform: this.platform! }, // set by the heartbeat that announced the policy
        { timeoutMs: HEARTBEAT_TIMEOUT_MS, signal: this.requests.signal },
      );
    } catch (err) {
      // The stop cutting the request is not transient nor refused: thrown below, it ends the loop.
      if (err instanceof CredentialsRejectedError) return this.revoke('policy', err);
      if (isTransient(err)) {
        const retryInMs = this.policyBackoff.fail(retryAfterMs(err));
        this.policyDue = this.clock.monotonicMs() + retryInMs;
        this.log.warn(
          { event: 'policy_fetch_failed', http_status: err.status, retry_in_ms: retryInMs },
          `${firstLine(err)}; the current policy stays`,
        );
        return;
      }
      if (!(err instanceof InvalidRequestError || err instanceof PayloadTooLargeError)) throw err;
      // The server refuses the request itself: asking again would not help before it announces another version.
      this.refusePolicy(wanted, `the server refused the policy request: ${firstLine(err)}`);
      return;
    }
    const version = policyToken(response.version, response.lifecycle.version);
    const problem = await (this.deps.policyProblem ?? servedPolicyProblem)(response);
    if (problem !== null) {
      this.refusePolicy(wanted, `server policy version ${response.version} refused, the current policy stays: ${problem}`);
      return;
    }
    const served: StoredServerPolicy = { policy_version: version, fetched_at: this.wallIso(), response };
    this.served = served;
    this.policyWanted = null;
    this.log.info(
      { event: 'policy_fetched', policy_version: version, version: response.version, lifecycle_version: response.lifecycle.version },
      `server policy version ${response.version} fetched: applied from the next posture cycle`,
    );
    // Kept for the next start; applied now even when the disk refuses it.
    await this.deps.state
      .storeServerPolicy(served)
      .catch((err: unknown) => this.log.warn({ event: 'policy_store_failed' }, firstLine(err)));
  }

  private refusePolicy(wanted: string, message: string): void {
    this.policyRefused = wanted;
    this.policyWanted = null;
    this.log.error({ event: 'policy_refused', policy_version: wanted }, message);
  }

  private reportSkew(skewMs: number | null): void {
    const skew = skewMs ?? 0; // no readable server time: nothing to report
    const skewed = Math.abs(skew) > CLOCK_SKEW_WARNING_MS;
    if (skewed) {
      this.log.warn(
        { event: 'clock_skew', clock_skew_ms: skewMs },
        `the local clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'behind' : 'ahead of'} the server: check time synchronisation`,
      );
    } else if (this.skewed) {
      this.log.info({ event: 'clock_skew_resolved', clock_skew_ms: skewMs }, 'the local clock agrees with the server again');
    }
    this.skewed = skewed;
  }

  private async onHeartbeatFailure(err: unknown): Promise<void> {
    const now = this.clock.monotonicMs();
    const intervalMs = this.intervals.heartbeatSeconds * 1000;
    if (err instanceof CredentialsRejectedError) return this.revoke('heartbeat', err);
    if (err instanceof ConflictError) {
      this.inConflict = true;
      this.heartbeatDue = now + withSplay(intervalMs, this.random);
      const message =
        `the server refused this device's heartbeat (409): its hardware_uuid is already used by another device of the organization ` +
        `(a cloned disk image or VM, or an earlier enrollment of this machine). Nothing was wiped. To recover, an administrator ` +
        `revokes the other device record (device-agent-server device revoke <device_id>), or this machine is enrolled into ` +
        `another organization. Retrying every ${this.intervals.heartbeatSeconds} s.`;
      this.log.warn({ event: 'heartbeat_conflict', http_status: 409, retry_in_ms: this.heartbeatDue - now }, message);
      await this.status.set('conflict', message, { conflict: { message, at: this.wallIso() } });
      this.endRound({ kind: 'refused', message });
      return;
    }
    if (isTransient(err)) {
      const retryInMs = Math.min(intervalMs, this.heartbeatBackoff.fail(retryAfterMs(err)));
      this.heartbeatDue = now + retryInMs;
      this.log.warn({ event: 'heartbeat_failed', http_status: err.status, retry_in_ms: retryInMs }, firstLine(err));
      await this.status.set(this.activeState(), `heartbeat failed: ${firstLine(err)}`, { last_error: firstLine(err) });
      if (this.heartbeatBackoff.failures >= this.deps.retry.attempts) await this.endRoundUnreachable(err);
      return;
    }
    if (err instanceof InvalidRequestError || err instanceof PayloadTooLargeError) {
      // The server refuses what this host reports: resending it sooner would not help.
      this.heartbeatDue = now + withSplay(intervalMs, this.random);
      this.log.error({ event: 'heartbeat_refused', http_status: err.status, server_message: err.serverMessage }, firstLine(err));
      await this.status.set(this.activeState(), `heartbeat refused: ${firstLine(err)}`, { last_error: firstLine(err) });
      this.endRound({ kind: 'refused', message: firstLine(err) });
      return;
    }
    throw err; // a defect, or the stop cutting the request (the abort's reason): either ends the loop
  }

  /** A round's request failed transiently `retry.attempts` times in a row. */
  private async endRoundUnreachable(err: Error): Promise<void> {
    if (this.round) this.endRound({ kind: 'unreachable', message: firstLine(err), queued: await this.queue.count() });
  }

  // ---- posture cycles and uploads -------------------------------------------------------------

  private startCollection(now: number): void {
    this.collecting = true;
    this.lastCycleAt = now;
    // A round collects one cycle.
    this.postureDue = this.round ? Number.POSITIVE_INFINITY : now + withSplay(this.intervals.postureSeconds * 1000, this.random);
    const session = this.session;
    this.deps
      .collect(this.served)
      .then(
        (cycle) => {
          const askedBy = this.takeAskedBy();
          if (this.session === session) this.collected = { ...cycle, startedAt: now, durationMs: this.clock.monotonicMs() - now, askedBy };
          else for (const tell of askedBy) tell('superseded');
        },
        (err) => {
          for (const tell of this.takeAskedBy()) tell('failed');
          this.log.error({ event: 'collect_failed', error: firstLine(err) }, 'posture checks failed');
          this.endRound({ kind: 'refused', message: `posture checks failed: ${firstLine(err)}` });
        },
      )
      .finally(() => {
        this.collecting = false;
        this.wakeUp();
      });
  }

  /** Who asked for the cycle whose collection just ended: those who asked while it ran get it too. */
  private takeAskedBy(): CycleWaiter[] {
    const askedBy = this.askedForCycle;
    this.askedForCycle = [];
    return askedBy;
  }

  /**
   * Stores a cycle in the queue. When it cannot be written (disk full), it is kept in memory and the
   * write retried at the heartbeat interval; only the queue's own bound ever drops results.
   */
  private async enqueue(collected: Collected): Promise<void> {
    let dropped: number;
    try {
      ({ dropped } = await this.queue.append(collected.results));
    } catch (err) {
      this.collected = collected;
      this.storeRetryAt = this.clock.monotonicMs() + this.intervals.heartbeatSeconds * 1000;
      this.queueWrite.failed(err, { results: collected.results.length, retry_in_ms: this.intervals.heartbeatSeconds * 1000 });
      this.endRound({ kind: 'refused', message: `cannot store the posture results in the queue: ${firstLine(err)}` });
      return;
    }
    this.collected = null;
    this.queueWrite.succeeded();
    const counts = { pass: 0, fail: 0, unknown: 0, not_applicable: 0 };
    for (const r of collected.results) counts[r.status.toLowerCase() as keyof typeof counts] += 1;
    await this.finishCycle('superseded');
    this.cycle = {
      startedAt: collected.startedAt,
      durationMs: collected.durationMs,
      counts,
      results: collected.results.length,
      dropped,
      sent: 0,
      rejected: 0,
      askedBy: collected.askedBy,
    };
    this.queueHasWork = true;
    if (this.round) this.round.stored = true;
    this.deps.onCycle?.(collected);
    if (dropped > 0) {
      this.log.warn({ event: 'queue_full', dropped_results: dropped }, `posture queue full: dropped the ${dropped} oldest results`);
    }
    // For `status`; informative only, so a failure to record it never loses the cycle.
    await this.status.write(
      {
        queued_results: await this.queue.count(),
        ...(collected.lastCycle ? { last_cycle: collected.lastCycle } : {}),
        ...(collected.policy ? { policy: collected.policy } : {}),
      },
      { dropped_results: dropped },
    );
    if (!this.uploadsAllowed()) await this.finishCycle('held');
  }

  private async uploadBatch(session: Session): Promise<void> {
    let outcome: BatchOutcome | null;
    try {
      outcome = await uploadNextBatch({
        api: session.api,
        apiKey: session.apiKey,
        queue: this.queue,
        log: this.log,
        timeoutMs: UPLOAD_TIMEOUT_MS,
        signal: this.requests.signal,
      });
    } catch (err) {
      if (this.requests.signal.aborted) throw err;
      if (err instanceof CredentialsRejectedError) {
        await this.revoke('postures', err);
        return;
      }
      // Transient answers, and local failures (queue I/O): both wait and retry; nothing is dropped.
      const retryInMs = this.uploadBackoff.fail(retryAfterMs(err));
      this.uploadRetryAt = this.clock.monotonicMs() + retryInMs;
      if (isTransient(err)) this.log.warn({ event: 'upload_failed', http_status: err.status, retry_in_ms: retryInMs }, firstLine(err));
      else this.log.error({ event: 'upload_failed', retry_in_ms: retryInMs }, `posture upload failed locally: ${firstLine(err)}`);
      await this.finishCycle('deferred');
      await this.status.set(this.activeState(), `posture upload failed: ${firstLine(err)}`, {
        last_error: firstLine(err),
        queued_results: await this.queue.count(),
      });
      if (!isTransient(err)) this.endRound({ kind: 'refused', message: `posture upload failed locally: ${firstLine(err)}` });
      else if (this.uploadBackoff.failures >= this.deps.retry.attempts) await this.endRoundUnreachable(err);
      return;
    }
    this.uploadBackoff.reset();
    if (!outcome) {
      this.queueHasWork = false;
      await this.finishCycle('delivered');
      if (this.round) this.endRound({ kind: 'delivered', sent: this.round.sent, queued: await this.queue.count() });
      return;
    }
    if (this.round) this.round.sent += outcome.sent;
    if (this.cycle) {
      this.cycle.sent += outcome.sent;
      this.cycle.rejected += outcome.rejected;
    }
    const patch: Record<string, unknown> = { queued_results: await this.queue.count() };
    if (outcome.sent > 0) patch.last_upload_at = this.wallIso();
    await this.status.set(this.activeState(), undefined, patch, { rejected_results: outcome.rejected });
  }

  /** One line per cycle, once its upload is over (delivered, deferred by a failure, or held). */
  private async finishCycle(outcome: 'delivered' | 'deferred' | 'held' | 'superseded' | 'stopped'): Promise<void> {
    const cycle = this.cycle;
    if (!cycle) return;
    this.cycle = null;
    for (const tell of cycle.askedBy) tell(outcome);
    this.log.info(
      {
        event: 'posture_cycle',
        outcome,
        results: cycle.results,
        ...cycle.counts,
        sent: cycle.sent,
        rejected: cycle.rejected,
        dropped: cycle.dropped,
        queued: await this.queue.count().catch(() => null),
        duration_ms: Math.round(this.clock.monotonicMs() - cycle.startedAt),
        checks_ms: Math.round(cycle.durationMs),
      },
      'posture cycle',
    );
  }

  // ---- revocation -----------------------------------------------------------------------------

  private async revoke(route: Route, err: CredentialsRejectedError): Promise<void> {
    const revokedAt = this.wallIso();
    const reason = `the server rejected the API key (401 on /${route}): the device was revoked or unenrolled`;
    this.log.error(
      { event: 'credentials_revoked', route, http_status: 401, revoked_at: revokedAt },
      'API key rejected (401): wiping the local key and queued results; waiting for a new enrollment',
    );
    const revocation: Revocation = { apiKey: this.session!.apiKey, reason, revokedAt, wiped: false, wipeDue: 0 };
    this.revocation = revocation;
    this.cycle = null;
    await this.endSession();
    await this.wipe(revocation);
    await this.status.set('revoked', reason, { queued_results: 0, revoked_at: revokedAt, reason });
    this.endRound({ kind: 'revoked', message: `${firstLine(err)}; local credentials and queued results were wiped` });
  }

  /** Wipes what the rejected key left (one transaction of the state owner); when it cannot finish, sets when to try again. */
  private async wipe(revocation: Revocation): Promise<void> {
    try {
      await this.deps.state.wipe({ reason: revocation.reason, revoked_at: revocation.revokedAt });
      this.wipeFault.succeeded();
      revocation.wiped = true;
    } catch (err) {
      // E.g. the keyring refused the delete, or the reason cannot be written (disk full): the key is
      // never sent again (this.revocation), and the wipe is retried at the heartbeat interval.
      this.wipeFault.failed(err);
      revocation.wipeDue = this.clock.monotonicMs() + this.intervals.heartbeatSeconds * 1000;
    }
  }

  // ---- status ---------------------------------------------------------------------------------

  /** The state of a live session, from what its last requests met. */
  private activeState(): DaemonState {
    if (this.inConflict) return 'conflict';
    if (this.heartbeatBackoff.failures > 0 || this.uploadBackoff.failures > 0) return 'backing_off';
    return this.heartbeatOk ? 'active' : 'starting';
  }

  private wallIso(): string {
    return new Date(this.clock.wallMs()).toISOString();
  }
}

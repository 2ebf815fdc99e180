// The one owner of the agent's state directory, in the manner of Tailscale's ipn/store: callers ask
// it for transactions (enroll, unenroll, wipe) and for the objects that live there (the status file,
// the posture queue, the daemon's lock), never for paths. Every multi-step change runs under the
// enrollment lock and marks the enrollment record first (`enrolling`, `wiping`), so that a crash at
// any step leaves a record that says what to finish: an unfinished enrollment is rolled back, an
// unfinished wipe is completed with the note it recorded. docs/agent.md describes the layout.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { CREDENTIAL_PATTERN } from '../../protocol/constants';
import {
  AlreadyEnrolledError,
  InvalidInputError,
  KeyMissingError,
  KeyStoreUnavailableError,
  LockHeldError,
  NotEnrolledError,
  UntrustedStateError,
  firstLine,
} from '../errors';
import type { Logger } from '../logger';
import { ensurePrivateDirectory, TEMP_SUFFIX } from './atomicFile';
import {
  readEnrollmentRecord,
  removeEnrollmentRecord,
  writeEnrollmentRecord,
  type EnrolledWith,
  type EnrollmentRecord,
  type WipeNote,
} from './enrollmentRecord';
import { keyringEntryFor, openRecordedKeyStore, probeEntry, selectKeyStore } from './keystore';
import {
  readPendingRegistration,
  removePendingRegistration,
  writePendingRegistration,
  type PendingRegistration,
} from './pendingRegistration';
import { fileKeyStore } from './keystore/file';
import { openKeyringStore } from './keystore/keyring';
import type { KeyStoreBackend, KeyStoreChoice } from './keystore/types';
import { stateLayout, verifyStateDir, type StateLayout } from './layout';
import { acquireLock, lockHolder, type Lock } from './lock';
import type { PostureQueue, QueueOptions } from './postureQueue';
import type { StoredServerPolicy } from './serverPolicy';
import { StatusFile } from './statusFile';
import { watchFileChanges, type FileWatch } from './watch';

/**
 * The points between the steps of a transaction. A crash (kill -9, power loss) can fall at any of
 * them; test/agent/stateCrash.test.ts kills a process at each and checks what the next start makes of it.
 */
export const STATE_STEPS = [
  'enroll:recorded',
  'enroll:exchanged',
  'enroll:key-stored',
  'enroll:status-cleared',
  'unenroll:revoked',
  'wipe:marked',
  'wipe:key-deleted',
  'wipe:queue-deleted',
  'wipe:status-written',
] as const;
export type StateStep = (typeof STATE_STEPS)[number];

export interface OpenOptions {
  /** `status`, `doctor`: read only; an interrupted operation is reported, never finished. */
  readOnly?: boolean;
  /** False: open without verifying (`doctor` reports an untrusted directory as a finding, through verify()). */
  verify?: boolean;
  /** Leave an interrupted operation to the caller's transaction (unenroll revokes the key it left first). */
  deferRecovery?: boolean;
  /** Called as each step of a transaction is done (tests inject crashes here). */
  afterStep?: (step: StateStep) => void | Promise<void>;
}

interface Credentials {
  enrollment: EnrollmentRecord;
  apiKey: string;
}

interface EnrollPlan {
  /** Validated origin. */
  serverUrl: string;
  keystore: KeyStoreChoice;
  /** --ca-file: recorded (absolute) for later commands. */
  caFile?: string;
  /** Replace an existing enrollment (revoking it through `protocol.revoke` first). */
  force: boolean;
  logger: Logger;
}

/**
 * An enrollment secret's registration, kept from /register until the enrollment completes
 * (pendingRegistration.ts), for the enrollment's server.
 */
export interface Registrations {
  /** The registration kept for the secret with this SHA-256 (hex), or null. */
  kept(secretSha256: string): Promise<PendingRegistration | null>;
  keep(registration: Omit<PendingRegistration, 'server_url'>): Promise<void>;
}

/** The server's part of an enrollment (src/agent/enrollment.ts). */
interface EnrollProtocol<Revocation> {
  /**
   * Spends the one-time token (registering first with an enrollment secret, or spending the
   * registration kept from an earlier attempt); returns the API key and how the device enrolled.
   * Called once the key store proved it can store a key.
   */
  exchange(registrations: Registrations): Promise<{ apiKey: string; enrolledWith: EnrolledWith }>;
  /** Revokes a key that could not be stored (best effort: the token is spent). */
  discard(apiKey: string): Promise<void>;
  /** With --force: revokes the enrollment being replaced (its key, when the store still holds it). */
  revoke(record: EnrollmentRecord, apiKey: string | null): Promise<Revocation>;
}

interface EnrollOutcome<Revocation> {
  keystore: KeyStoreBackend;
  /** Why `auto` chose the file store. */
  keystoreFallbackReason?: string;
  /** The enrollment that --force replaced. */
  replaced?: { serverUrl: string; revocation: Revocation };
}

interface UnenrollOutcome<Revocation> {
  /** Null when the record was unreadable (then the server was not contacted). */
  serverUrl: string | null;
  revocation: Revocation | null;
}

export interface AgentState {
  readonly dir: string;
  /** UntrustedStateError when the directory or anything in it could be changed by another user (layout.ts). */
  verify(): Promise<void>;
  /** status.json; its only writer. */
  readonly status: StatusFile;
  /** The enrollment record, or null; StateCorruptError when it cannot be read. */
  enrollment(): Promise<EnrollmentRecord | null>;
  /**
   * The enrollment and its API key, or null when not enrolled (also while an enrollment is in progress,
   * or after one was cut short: that one is finished here when nobody holds the lock). Throws
   * KeyStoreUnavailableError when the store cannot answer now (never "not enrolled": retry later).
   */
  credentials(): Promise<Credentials | null>;
  /** The key the record points to: KeyStoreUnavailableError, or KeyMissingError when the store answers without it. */
  apiKey(record: EnrollmentRecord): Promise<string>;
  /** The key store an enrollment would use now (`status` before any enrollment). */
  prospectiveKeyStore(choice: KeyStoreChoice): Promise<KeyStoreBackend>;
  /** Enrolls: `enrolling`, then the key stored, then `enrolled`, under the enrollment lock. */
  enroll<R>(plan: EnrollPlan, protocol: EnrollProtocol<R>): Promise<EnrollOutcome<R>>;
  /** Revokes (through `revoke`) and wipes the enrollment under the lock; NotEnrolledError without one. */
  unenroll<R>(revoke: (record: EnrollmentRecord, apiKey: string | null) => Promise<R>): Promise<UnenrollOutcome<R>>;
  /**
   * Removes key, queued results, enrollment record and status as one transaction a crash can resume.
   * With a note (a 401), status.json keeps why; otherwise it is removed. Idempotent. Throws
   * KeyStoreUnavailableError when the key cannot be removed now (the record then stays `wiping`).
   */
  wipe(note?: WipeNote): Promise<void>;
  /** The posture queue (opened, created and repaired). Only the daemon holding its lock writes to it. */
  queue(options?: QueueOptions): Promise<PostureQueue>;
  /** Results queued, from a listing only. */
  queuedResults(): Promise<number>;
  /** The daemon's lock (creating the directory): LockHeldError when another daemon holds it. */
  holdDaemonLock(): Promise<Lock>;
  /** The live daemon holding this state directory, or null. */
  daemonPid(): Promise<number | null>;
  /** Calls back when the enrollment may have changed (enroll, unenroll, wipe by another process). */
  watchEnrollment(onChange: () => void): FileWatch;
  /** The policy the server last served (already validated when stored), or null. */
  serverPolicy(): Promise<StoredServerPolicy | null>;
  /** Keeps a served policy (the daemon, after validating it); null forgets it (the server no longer serves one). */
  storeServerPolicy(policy: StoredServerPolicy | null): Promise<void>;
}

/** Verifies the directory (UntrustedStateError) and, unless told otherwise, finishes what a crash cut short. */
export async function openAgentState(dir: string, options: OpenOptions = {}): Promise<AgentState> {
  const state = new LocalState(stateLayout(dir), options);
  if (options.verify !== false || !options.readOnly) await state.verify();
  if (!options.readOnly && !options.deferRecovery) await state.finishInterrupted();
  return state;
}

class LocalState implements AgentState {
  readonly status: StatusFile;

  constructor(
    private readonly layout: StateLayout,
    private readonly options: OpenOptions,
  ) {
    this.status = new StatusFile(layout);
  }

  get dir(): string {
    return this.layout.dir;
  }

  verify(): Promise<void> {
    return verifyStateDir(this.layout.dir);
  }

  enrollment(): Promise<EnrollmentRecord | null> {
    return readEnrollmentRecord(this.layout);
  }

  async credentials(): Promise<Credentials | null> {
    const record = await this.enrollment();
    if (record === null) return null;
    if (record.state !== 'enrolled') {
      if (!this.options.readOnly) await this.finishInterrupted();
      return null;
    }
    return { enrollment: record, apiKey: await this.apiKey(record) };
  }

  async apiKey(record: EnrollmentRecord): Promise<string> {
    const store = await openRecordedKeyStore(record.keystore, record.keyring_entry, this.layout);
    const apiKey = await store.get();
    const fix = 'run `device-agent unenroll`, then enroll again with a new token';
    if (apiKey === null) throw new KeyMissingError(record.keystore, `it no longer holds this enrollment's API key; ${fix}`);
    if (!CREDENTIAL_PATTERN.test(apiKey)) throw new KeyMissingError(record.keystore, `the API key it holds is malformed; ${fix}`);
    return apiKey;
  }

  async prospectiveKeyStore(choice: KeyStoreChoice): Promise<KeyStoreBackend> {
    if (choice !== 'auto') return choice;
    return (await selectKeyStore('auto', this.layout, probeEntry())).store.backend;
  }

  async enroll<R>(plan: EnrollPlan, protocol: EnrollProtocol<R>): Promise<EnrollOutcome<R>> {
    const { layout } = this;
    const caFile = plan.caFile === undefined ? undefined : resolve(plan.caFile);
    try {
      await verifyStateDir(layout.dir);
      await ensurePrivateDirectory(layout.dir);
    } catch (err) {
      if (err instanceof UntrustedStateError) throw err;
      throw new InvalidInputError(`cannot use the state directory ${layout.dir}: ${firstLine(err)}`);
    }
    const lock = await acquireLock(layout.enrollmentLock, {
      wait: true,
      onWait: (holderPid) =>
        plan.logger.info({ holder_pid: holderPid }, 'another enrollment of this state directory is in progress: waiting for it'),
    });
    try {
      const replaced = await this.clearExisting(plan, protocol);
      const { store, keyringEntry, fallbackReason } = await selectKeyStore(plan.keystore, layout);
      plan.logger.debug({ keystore: store.backend, state_dir: layout.dir, fallback_reason: fallbackReason }, 'key store selected');
      const record: EnrollmentRecord = {
        version: 1,
        state: 'enrolling',
        server_url: plan.serverUrl,
        keystore: store.backend,
        ...(keyringEntry ? { keyring_entry: keyringEntry } : {}),
        ...(caFile ? { ca_file: caFile } : {}),
      };
      await writeEnrollmentRecord(layout, record);
      await this.reached('enroll:recorded');
      // Nothing is left behind on failure: the key store's entry and the record go.
      const discard = async () => {
        await store.delete().catch(() => undefined);
        await removeEnrollmentRecord(layout);
      };
      let apiKey: string;
      let enrolledWith: EnrolledWith;
      try {
        // Before the one-time token is spent: a store that cannot take the key must fail now.
        await store.prepare();
        ({ apiKey, enrolledWith } = await protocol.exchange({
          kept: (secretSha256) => readPendingRegistration(layout, plan.serverUrl, secretSha256),
          keep: (registration) => writePendingRegistration(layout, { server_url: plan.serverUrl, ...registration }),
        }));
      } catch (err) {
        await discard();
        throw err;
      }
      await this.reached('enroll:exchanged');
      try {
        await store.set(apiKey);
      } catch (err) {
        // The token is spent; revoke the key nobody will hold rather than leave it valid.
        await protocol.discard(apiKey).catch(() => undefined);
        await discard();
        const reason = err instanceof KeyStoreUnavailableError ? err.reason : String(err);
        throw new KeyStoreUnavailableError(store.backend, `${reason} (the enrollment token was used up: ask for a new one)`);
      }
      await this.reached('enroll:key-stored');
      // Its token is spent and the key stored: a registration kept for a retry has served.
      await removePendingRegistration(layout);
      await this.status.replace(null); // a previous revocation notice no longer applies
      await this.reached('enroll:status-cleared');
      await writeEnrollmentRecord(layout, {
        ...record,
        state: 'enrolled',
        enrolled_at: new Date().toISOString(),
        enrolled_with: enrolledWith,
      });
      plan.logger.debug({ server_url: plan.serverUrl, keystore: store.backend }, 'enrolled');
      return {
        keystore: store.backend,
        ...(fallbackReason ? { keystoreFallbackReason: fallbackReason } : {}),
        ...(replaced ? { replaced } : {}),
      };
    } finally {
      await lock.release();
    }
  }

  /** Refuses an existing enrollment, or with --force revokes and wipes it; finishes interrupted operations. */
  private async clearExisting<R>(plan: EnrollPlan, protocol: EnrollProtocol<R>): Promise<EnrollOutcome<R>['replaced']> {
    let existing: EnrollmentRecord | null;
    try {
      existing = await this.enrollment();
    } catch (err) {
      // Reading fails only with StateCorruptError (enrollmentRecord.ts).
      if (!plan.force) throw err;
      plan.logger.info('the enrollment record is unreadable: --force replaces it');
      await this.wipeLocked();
      return undefined;
    }
    if (existing === null) return undefined;
    if (existing.state !== 'enrolled') {
      plan.logger.info({ state: existing.state }, 'finishing an enrollment or unenrollment that was cut short');
      await this.wipeLocked();
      return undefined;
    }
    if (!plan.force) {
      throw new AlreadyEnrolledError(
        `this device is already enrolled with ${existing.server_url} (state directory ${this.layout.dir}): ` +
          'run `device-agent unenroll` first, or pass --force to unenroll and enroll again',
      );
    }
    plan.logger.info({ server_url: existing.server_url }, 'already enrolled: --force unenrolls the current enrollment first');
    const revocation = await protocol.revoke(existing, await this.keyForRevocation(existing));
    await this.wipeLocked();
    return { serverUrl: existing.server_url, revocation };
  }

  async unenroll<R>(revoke: (record: EnrollmentRecord, apiKey: string | null) => Promise<R>): Promise<UnenrollOutcome<R>> {
    const notEnrolled = () => new NotEnrolledError(`this device is not enrolled (state directory ${this.layout.dir})`);
    if (!existsSync(this.layout.enrollment)) throw notEnrolled();
    const lock = await acquireLock(this.layout.enrollmentLock, { wait: true });
    try {
      let record: EnrollmentRecord | null;
      try {
        record = await this.enrollment();
      } catch {
        // Unreadable (StateCorruptError, the only way reading fails): nothing to revoke with.
        await this.wipeLocked();
        return { serverUrl: null, revocation: null };
      }
      if (record === null) throw notEnrolled();
      // An enrollment or wipe cut short may have left a key behind: revoke it like any other.
      const revocation = await revoke(record, await this.keyForRevocation(record));
      await this.reached('unenroll:revoked');
      await this.wipeLocked();
      return { serverUrl: record.server_url, revocation };
    } finally {
      await lock.release();
    }
  }

  /**
   * The key to revoke, or null when the store no longer holds it (the wipe proceeds without the
   * server). A store that cannot answer (locked) throws KeyStoreUnavailableError before anything
   * changed: it could not delete the key either.
   */
  private async keyForRevocation(record: EnrollmentRecord): Promise<string | null> {
    try {
      return await this.apiKey(record);
    } catch (err) {
      if (err instanceof KeyMissingError) return null;
      throw err;
    }
  }

  async wipe(note?: WipeNote): Promise<void> {
    if (!existsSync(this.layout.dir)) return; // never enrolled here: nothing to wipe
    const lock = await acquireLock(this.layout.enrollmentLock, { wait: true });
    try {
      await this.wipeLocked(note);
    } finally {
      await lock.release();
    }
  }

  /**
   * The wipe, for a caller holding the enrollment lock. Deleting needs no free space, writing does:
   * the `wiping` mark (with the note, so that a crash does not lose why) is best effort, the deletions
   * come first, and the record goes last, once status.json says why: a full disk can delay the record
   * of why but never keep a dead key. A wipe found cut short resumes with the note it recorded.
   */
  private async wipeLocked(given?: WipeNote): Promise<void> {
    const { layout } = this;
    let record: EnrollmentRecord | null = null;
    let unreadable = false;
    try {
      record = await this.enrollment();
    } catch {
      unreadable = true; // StateCorruptError, the only way reading fails
    }
    const note = given ?? record?.wipe_note;
    let keyError: Error | null = null;
    if (record !== null) {
      if (record.state !== 'wiping' || (note !== undefined && record.wipe_note === undefined)) {
        await writeEnrollmentRecord(layout, { ...record, state: 'wiping', ...(note ? { wipe_note: note } : {}) }).catch(() => undefined);
      }
      await this.reached('wipe:marked');
      try {
        await (await openRecordedKeyStore(record.keystore, record.keyring_entry, layout)).delete();
      } catch (err) {
        keyError = err instanceof Error ? err : new Error(String(err));
      }
    } else if (unreadable) {
      // The record cannot say where the key is: try the keyring entry too, best effort.
      await openKeyringStore(keyringEntryFor(layout.dir))
        .then((store) => store.delete())
        .catch(() => undefined);
    }
    await fileKeyStore(layout.apiKey)
      .delete()
      .catch((err: Error) => (keyError ??= err));
    await this.removeKeyTempFiles();
    await this.reached('wipe:key-deleted');
    // The results collected under a rejected key go even when its store refused to delete it.
    await rm(layout.queueDir, { recursive: true, force: true });
    // The rejected enrollment's server policy goes with it: the next enrollment may be another server's.
    await rm(layout.serverPolicy, { force: true });
    await this.reached('wipe:queue-deleted');
    if (keyError !== null) throw keyError;
    await this.status.replace(note ? { revoked_at: new Date(note.revoked_at).toISOString(), reason: note.reason } : null);
    await this.reached('wipe:status-written');
    await removeEnrollmentRecord(layout);
  }

  /** Finishes an enrollment or wipe that was cut short, unless another process is working on it. */
  async finishInterrupted(): Promise<void> {
    if (!existsSync(this.layout.enrollment)) return;
    let lock;
    try {
      lock = await acquireLock(this.layout.enrollmentLock);
    } catch (err) {
      if (err instanceof LockHeldError) return;
      throw err;
    }
    try {
      const record = await this.enrollment();
      if (record !== null && record.state !== 'enrolled') await this.wipeLocked();
    } catch {
      // Unreadable, or the key store cannot delete now: the next start retries.
    } finally {
      await lock.release();
    }
  }

  /** Temp files a crash during an atomic write of the key file can leave. */
  private async removeKeyTempFiles(): Promise<void> {
    const prefix = `.${basename(this.layout.apiKey)}.`;
    const names = await readdir(this.layout.dir);
    await Promise.all(
      names
        .filter((name) => name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX))
        .map((name) => rm(join(this.layout.dir, name), { force: true })),
    );
  }

  async queue(options: QueueOptions = {}): Promise<PostureQueue> {
    // Loaded here: the queue validates results with the wire schemas, which `status` never loads.
    // Stryker disable next-line StringLiteral: the bundler resolves the specifier at build time.
    const { PostureQueue } = await import('./postureQueue');
    return PostureQueue.open(this.layout.dir, options);
  }

  async queuedResults(): Promise<number> {
    // Stryker disable next-line StringLiteral: the bundler resolves the specifier at build time.
    const { countQueuedResults } = await import('./postureQueue');
    return countQueuedResults(this.layout.dir);
  }

  async holdDaemonLock(): Promise<Lock> {
    await ensurePrivateDirectory(this.layout.dir);
    return acquireLock(this.layout.daemonLock);
  }

  daemonPid(): Promise<number | null> {
    return lockHolder(this.layout.daemonLock);
  }

  watchEnrollment(onChange: () => void): FileWatch {
    return watchFileChanges(this.layout.enrollment, onChange);
  }

  async serverPolicy(): Promise<StoredServerPolicy | null> {
    // Loaded here: it validates with the wire schemas, which `status` never loads.
    // Stryker disable next-line StringLiteral: the bundler resolves the specifier at build time.
    const { readServerPolicy } = await import('./serverPolicy');
    return readServerPolicy(this.layout);
  }

  async storeServerPolicy(policy: StoredServerPolicy | null): Promise<void> {
    if (policy === null) return rm(this.layout.serverPolicy, { force: true });
    // Stryker disable next-line StringLiteral: the bundler resolves the specifier at build time.
    const { writeServerPolicy } = await import('./serverPolicy');
    return writeServerPolicy(this.layout, policy);
  }

  private async reached(step: StateStep): Promise<void> {
    await this.options.afterStep?.(step);
  }
}

// Loading and wiping the enrollment's credentials: the API key (in its key store), the enrollment
// record, and what was collected under it (queued results). Shared by the CLI and the daemon.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CREDENTIAL_PATTERN } from '../protocol/constants';
import { TEMP_SUFFIX } from './atomicFile';
import { readEnrollmentRecord, removeEnrollmentRecord, writeEnrollmentRecord, type EnrollmentRecord } from './enrollmentRecord';
import { KeyMissingError, LockHeldError, StateCorruptError } from './errors';
import { fileKeyStore } from './keystore/file';
import { keyringEntryFor, openRecordedKeyStore } from './keystore';
import { openKeyringStore } from './keystore/keyring';
import { acquireLock } from './lock';
import { writeRuntimeStatus } from './runtimeStatus';
import { stateLayout, type StateLayout } from './stateDir';

export interface Credentials {
  enrollment: EnrollmentRecord;
  apiKey: string;
}

/**
 * The enrollment and its API key, or null when not enrolled (also while an enrollment is in progress,
 * or after one was cut short: that leftover is cleaned up here when nobody holds the lock).
 * Throws KeyStoreUnavailableError when the store cannot be read right now: locked, unreachable, or
 * no longer holding the key. That is never "not enrolled" nor "revoked": retry later.
 * Throws StateCorruptError when enrollment.json is unreadable.
 */
export async function loadCredentials(stateDir: string): Promise<Credentials | null> {
  const layout = stateLayout(stateDir);
  const record = await readEnrollmentRecord(layout);
  if (record === null) return null;
  if (record.state !== 'enrolled') {
    await repairInterrupted(layout);
    return null;
  }
  return { enrollment: record, apiKey: await readApiKey(layout, record) };
}

/**
 * The key the record points to. KeyStoreUnavailableError when the store cannot answer now;
 * KeyMissingError (a subclass) when it answers without a usable key.
 */
export async function readApiKey(layout: StateLayout, record: EnrollmentRecord): Promise<string> {
  const store = await openRecordedKeyStore(record.keystore, record.keyring_entry, layout);
  const apiKey = await store.get();
  const fix = 'run `device-agent unenroll`, then enroll again with a new token';
  if (apiKey === null) throw new KeyMissingError(record.keystore, `it no longer holds this enrollment's API key; ${fix}`);
  if (!CREDENTIAL_PATTERN.test(apiKey)) throw new KeyMissingError(record.keystore, `the API key it holds is malformed; ${fix}`);
  return apiKey;
}

export interface WipeOptions {
  /** Why the credentials are gone (e.g. "API key rejected by the server (401) on heartbeat"), for `status`. */
  reason?: string;
  /** When the server rejected the key; recorded with `reason`. Default: now. */
  revokedAt?: Date | string;
}

/**
 * Removes the API key from the store that holds it, the queued results and the enrollment record,
 * under the enrollment lock. With a reason, status.json keeps `revoked_at` and `reason`; otherwise
 * it is removed. Idempotent. A crash half-way leaves the record in state `wiping`, which the next
 * command finishes. Throws KeyStoreUnavailableError when the key cannot be removed now (the record
 * then stays `wiping`, and loadCredentials answers "not enrolled").
 */
export async function wipeCredentials(stateDir: string, options: WipeOptions = {}): Promise<void> {
  const layout = stateLayout(stateDir);
  if (!existsSync(layout.dir)) return; // never enrolled here: nothing to wipe
  const lock = await acquireLock(layout.enrollmentLock, { wait: true });
  try {
    await wipeLocked(layout, options);
  } finally {
    await lock.release();
  }
}

/**
 * wipeCredentials for a caller that already holds the enrollment lock. Deleting needs no free space,
 * writing does: the `wiping` mark is best effort, the deletions come first, and the reason is
 * written last, so that a full disk can delay the record of why but never keep a dead key.
 */
export async function wipeLocked(layout: StateLayout, options: WipeOptions = {}): Promise<void> {
  let record: EnrollmentRecord | null = null;
  let unreadable = false;
  try {
    record = await readEnrollmentRecord(layout);
  } catch (err) {
    if (!(err instanceof StateCorruptError)) throw err;
    unreadable = true;
  }
  if (record !== null) {
    if (record.state !== 'wiping') {
      // Crash safety only; without it a crash before the record is removed leaves a record whose key
      // is gone, which loadCredentials reports as a missing key (unenroll clears it).
      await writeEnrollmentRecord(layout, { ...record, state: 'wiping' }).catch(() => undefined);
    }
    const store = await openRecordedKeyStore(record.keystore, record.keyring_entry, layout);
    await store.delete();
  } else if (unreadable) {
    // The record cannot say where the key is: try the keyring entry too, best effort.
    await openKeyringStore(keyringEntryFor(layout.dir))
      .then((store) => store.delete())
      .catch(() => undefined);
  }
  await fileKeyStore(layout.apiKey).delete();
  await removeKeyTempFiles(layout);
  await rm(layout.queueDir, { recursive: true, force: true });
  await removeEnrollmentRecord(layout);
  if (options.reason !== undefined) {
    const revokedAt = options.revokedAt === undefined ? new Date() : new Date(options.revokedAt);
    await writeRuntimeStatus(layout.dir, { revoked_at: revokedAt.toISOString(), reason: options.reason });
  } else {
    await rm(layout.status, { force: true });
  }
}

/** Finishes an enrollment or wipe that was cut short, unless another process is working on it. */
async function repairInterrupted(layout: StateLayout): Promise<void> {
  let lock;
  try {
    lock = await acquireLock(layout.enrollmentLock, { wait: false });
  } catch (err) {
    if (err instanceof LockHeldError) return;
    throw err;
  }
  try {
    const record = await readEnrollmentRecord(layout);
    if (record !== null && record.state !== 'enrolled') await wipeLocked(layout);
  } catch {
    // The key of an unfinished enrollment is dead anyway; the next wipe retries.
  } finally {
    await lock.release();
  }
}

/** Temp files a crash during an atomic write of the key file can leave. */
async function removeKeyTempFiles(layout: StateLayout): Promise<void> {
  const prefix = `.${basename(layout.apiKey)}.`;
  const names = await readdir(layout.dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX))
      .map((name) => rm(join(layout.dir, name), { force: true })),
  );
}

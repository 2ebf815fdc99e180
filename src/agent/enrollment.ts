// Enrollment: exchange a one-time token for the device API key and keep the key in a key store.
// Inputs are validated by the caller (serverUrl.ts, enrollmentToken.ts, enrollmentLink.ts). Runs
// under the enrollment lock, so concurrent enrollments of one state directory are serialised.
// Nothing is left behind on failure; a crash is repaired by the next command (enrollmentRecord.ts).
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CredentialsRejectedError } from './api';
import { ensurePrivateDirectory } from './atomicFile';
import { createApiClient, type ApiClient } from './client';
import { wipeLocked } from './credentials';
import { readEnrollmentRecord, removeEnrollmentRecord, writeEnrollmentRecord, type EnrollmentRecord } from './enrollmentRecord';
import {
  AlreadyEnrolledError,
  InvalidInputError,
  KeyStoreUnavailableError,
  StateCorruptError,
  UntrustedStateError,
  firstLine,
} from './errors';
import { selectKeyStore, type KeyStoreBackend, type KeyStoreChoice } from './keystore';
import type { KeyStore } from './keystore/types';
import { acquireLock } from './lock';
import type { Logger } from './logger';
import { stateLayout, verifyStateDir, type StateLayout } from './stateDir';
import { readKeyForRevocation, revokeAtServer, type ServerRevocation } from './unenrollment';

export interface EnrollOptions {
  stateDir: string;
  /** Validated origin. */
  serverUrl: string;
  /** Validated enrollment token. */
  token: string;
  keystore: KeyStoreChoice;
  /** Replace an existing enrollment (unenrolling it best-effort first). */
  force: boolean;
  caFile?: string;
  logger: Logger;
  /** Deadline of the /enroll request. */
  timeoutMs?: number;
}

export interface EnrollResult {
  serverUrl: string;
  stateDir: string;
  keystore: KeyStoreBackend;
  /** Why `auto` chose the file store. */
  keystoreFallbackReason?: string;
  /** The enrollment that --force replaced. */
  replaced?: { serverUrl: string; revocation: ServerRevocation };
}

export async function enroll(options: EnrollOptions): Promise<EnrollResult> {
  const { logger } = options;
  const layout = stateLayout(options.stateDir);
  const caFile = options.caFile === undefined ? undefined : resolve(options.caFile);
  // Built first: a bad CA file is an input error, found before anything is written or sent.
  const api = createApiClient({ serverUrl: options.serverUrl, caFile });
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
      logger.info({ holder_pid: holderPid }, 'another enrollment of this state directory is in progress: waiting for it'),
  });
  try {
    const replaced = await clearExisting(layout, options);
    const { store, keyringEntry, fallbackReason } = await selectKeyStore(options.keystore, layout);
    logger.debug({ keystore: store.backend, state_dir: layout.dir, fallback_reason: fallbackReason }, 'key store selected');

    const record: EnrollmentRecord = {
      version: 1,
      state: 'enrolling',
      server_url: options.serverUrl,
      keystore: store.backend,
      ...(keyringEntry ? { keyring_entry: keyringEntry } : {}),
      ...(caFile ? { ca_file: caFile } : {}),
    };
    await writeEnrollmentRecord(layout, record);
    await exchangeToken(layout, store, options, api);

    await rm(layout.status, { force: true }); // a previous revocation notice no longer applies
    await writeEnrollmentRecord(layout, { ...record, state: 'enrolled', enrolled_at: new Date().toISOString() });
    logger.debug({ server_url: options.serverUrl, keystore: store.backend }, 'enrolled');
    return {
      serverUrl: options.serverUrl,
      stateDir: layout.dir,
      keystore: store.backend,
      ...(fallbackReason ? { keystoreFallbackReason: fallbackReason } : {}),
      ...(replaced ? { replaced } : {}),
    };
  } finally {
    await lock.release();
    await api.close();
  }
}

/** Refuses an existing enrollment, or with --force unenrolls it; finishes interrupted operations. */
async function clearExisting(layout: StateLayout, options: EnrollOptions): Promise<EnrollResult['replaced']> {
  let existing: EnrollmentRecord | null;
  try {
    existing = await readEnrollmentRecord(layout);
  } catch (err) {
    if (!(err instanceof StateCorruptError) || !options.force) throw err;
    options.logger.warn('unreadable enrollment record: --force resets the state directory');
    await wipeLocked(layout);
    return undefined;
  }
  if (existing === null) return undefined;
  if (existing.state !== 'enrolled') {
    options.logger.info('cleaning up an enrollment or unenrollment that was cut short');
    await wipeLocked(layout);
    return undefined;
  }
  if (!options.force) {
    throw new AlreadyEnrolledError(
      `this device is already enrolled with ${existing.server_url} (state directory ${layout.dir}): ` +
        'run `device-agent unenroll` first, or pass --force to unenroll and enroll again',
    );
  }
  options.logger.info({ server_url: existing.server_url }, 'already enrolled: --force unenrolls the current enrollment first');
  const apiKey = await readKeyForRevocation(layout, existing);
  const revocation = await revokeAtServer(existing, apiKey, { caFile: options.caFile, logger: options.logger });
  await wipeLocked(layout);
  return { serverUrl: existing.server_url, revocation };
}

/** Spends the token and stores the key; on failure removes what this attempt wrote. */
async function exchangeToken(layout: StateLayout, store: KeyStore, options: EnrollOptions, api: ApiClient): Promise<void> {
  const discard = async () => {
    await store.delete().catch(() => undefined);
    await removeEnrollmentRecord(layout);
  };
  let apiKey: string;
  try {
    // Before the one-time token is spent: a store that cannot take the key must fail now.
    await store.prepare();
    options.logger.debug({ server_url: options.serverUrl }, 'exchanging the enrollment token');
    apiKey = (await api.enroll(options.token, { timeoutMs: options.timeoutMs ?? 30_000 })).api_key;
  } catch (err) {
    await discard();
    if (err instanceof CredentialsRejectedError) options.logger.debug({ status: err.status }, 'enrollment token refused');
    throw err;
  }
  try {
    await store.set(apiKey);
  } catch (err) {
    // The token is spent; revoke the key nobody will hold rather than leave it valid.
    await api.unenroll(apiKey, { timeoutMs: 5_000 }).catch(() => undefined);
    await discard();
    const reason = err instanceof KeyStoreUnavailableError ? err.reason : String(err);
    throw new KeyStoreUnavailableError(store.backend, `${reason} (the enrollment token was used up: ask for a new one)`);
  }
}

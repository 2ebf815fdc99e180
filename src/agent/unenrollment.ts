// Unenrollment: ask the server to revoke the key (best effort, short deadline), then always wipe
// the key, the enrollment record and the queued results.
import { existsSync } from 'node:fs';
import { CredentialsRejectedError, RetryableError } from './api';
import { createApiClient } from './client';
import { readApiKey, wipeLocked } from './credentials';
import { readEnrollmentRecord, type EnrollmentRecord } from './enrollmentRecord';
import { KeyMissingError, NotEnrolledError, StateCorruptError, firstLine } from './errors';
import { acquireLock } from './lock';
import type { Logger } from './logger';
import { stateLayout, type StateLayout } from './stateDir';

/** What the server said to /unenroll. */
export interface ServerRevocation {
  outcome: 'revoked' | 'already_revoked' | 'unreachable' | 'refused' | 'not_contacted';
  /** Human explanation (no credentials). */
  detail: string;
}

export interface UnenrollOptions {
  stateDir: string;
  caFile?: string;
  logger: Logger;
  /** Deadline of the /unenroll request (default 5 s). */
  timeoutMs?: number;
}

export interface UnenrollResult {
  serverUrl: string | null;
  revocation: ServerRevocation;
}

export async function unenroll(options: UnenrollOptions): Promise<UnenrollResult> {
  const layout = stateLayout(options.stateDir);
  if (!existsSync(layout.enrollment)) throw new NotEnrolledError(`this device is not enrolled (state directory ${layout.dir})`);
  const lock = await acquireLock(layout.enrollmentLock, { wait: true });
  try {
    let record: EnrollmentRecord | null;
    try {
      record = await readEnrollmentRecord(layout);
    } catch (err) {
      if (!(err instanceof StateCorruptError)) throw err;
      await wipeLocked(layout);
      return { serverUrl: null, revocation: { outcome: 'not_contacted', detail: 'the enrollment record was unreadable' } };
    }
    if (record === null) throw new NotEnrolledError(`this device is not enrolled (state directory ${layout.dir})`);
    // An enrollment or wipe cut short may have left a key behind: revoke it like any other.
    const revocation = await revokeAtServer(record, await readKeyForRevocation(layout, record), options);
    await wipeLocked(layout);
    options.logger.debug({ server_url: record.server_url, outcome: revocation.outcome }, 'unenrolled');
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
export async function readKeyForRevocation(layout: StateLayout, record: EnrollmentRecord): Promise<string | null> {
  try {
    return await readApiKey(layout, record);
  } catch (err) {
    if (err instanceof KeyMissingError) return null;
    throw err;
  }
}

/** Calls /unenroll with the enrollment's key. Never throws: the local wipe happens regardless. */
export async function revokeAtServer(
  record: EnrollmentRecord,
  apiKey: string | null,
  options: Pick<UnenrollOptions, 'caFile' | 'logger' | 'timeoutMs'>,
): Promise<ServerRevocation> {
  if (apiKey === null) return { outcome: 'not_contacted', detail: 'no API key was found in its key store' };
  let api;
  try {
    api = createApiClient({
      serverUrl: record.server_url,
      caFile: options.caFile ?? record.ca_file,
      timeouts: { connectMs: options.timeoutMs ?? 5_000 },
    });
  } catch (err) {
    return { outcome: 'not_contacted', detail: firstLine(err) };
  }
  try {
    await api.unenroll(apiKey, { timeoutMs: options.timeoutMs ?? 5_000 });
    return { outcome: 'revoked', detail: 'the server revoked the API key' };
  } catch (err) {
    options.logger.debug(
      { err_kind: (err as { kind?: string }).kind, status: (err as { status?: number }).status },
      'unenroll request failed',
    );
    if (err instanceof CredentialsRejectedError) {
      return { outcome: 'already_revoked', detail: 'the server no longer accepted the API key (already revoked)' };
    }
    if (err instanceof RetryableError) return { outcome: 'unreachable', detail: firstLine(err) };
    return { outcome: 'refused', detail: firstLine(err) };
  } finally {
    await api.close();
  }
}

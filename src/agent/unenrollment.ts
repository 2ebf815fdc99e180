// Unenrollment: ask the server to revoke the key (best effort, short deadline), then always wipe
// the key, the enrollment record and the queued results.
import { existsSync } from 'node:fs';
import { CredentialsRejectedError, RetryableError } from './api';
import { createApiClient } from './client';
import { readApiKey, wipeLocked } from './credentials';
import { readEnrollmentRecord, type EnrollmentRecord } from './enrollmentRecord';
import { NotEnrolledError, StateCorruptError, firstLine } from './errors';
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
    if (record.state !== 'enrolled') {
      await wipeLocked(layout);
      throw new NotEnrolledError('this device is not enrolled (an interrupted enrollment was cleaned up)');
    }
    const revocation = await revokeAtServer(layout, record, options);
    await wipeLocked(layout);
    options.logger.info({ server_url: record.server_url, outcome: revocation.outcome }, 'unenrolled');
    return { serverUrl: record.server_url, revocation };
  } finally {
    await lock.release();
  }
}

/** Calls /unenroll with the enrollment's key. Never throws: the local wipe happens regardless. */
export async function revokeAtServer(
  layout: StateLayout,
  record: EnrollmentRecord,
  options: Pick<UnenrollOptions, 'caFile' | 'logger' | 'timeoutMs'>,
): Promise<ServerRevocation> {
  let apiKey: string;
  try {
    apiKey = await readApiKey(layout, record);
  } catch (err) {
    return { outcome: 'not_contacted', detail: `the API key could not be read: ${firstLine(err)}` };
  }
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
    options.logger.debug({ err_kind: (err as { kind?: string }).kind, status: (err as { status?: number }).status }, 'unenroll request failed');
    if (err instanceof CredentialsRejectedError) {
      return { outcome: 'already_revoked', detail: 'the server no longer accepted the API key (already revoked)' };
    }
    if (err instanceof RetryableError) return { outcome: 'unreachable', detail: firstLine(err) };
    return { outcome: 'refused', detail: firstLine(err) };
  } finally {
    await api.close();
  }
}

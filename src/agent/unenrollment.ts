// Unenrollment: the server's part. Ask the server to revoke the key (best effort, short deadline)
// inside the state owner's unenroll transaction, which then always wipes the key, the enrollment
// record and the queued results (state/agentState.ts).
import { CredentialsRejectedError, RetryableError } from './api';
import { createApiClient } from './client';
import { firstLine } from './errors';
import type { Logger } from './logger';
import type { AgentState, EnrollmentRecord } from './state';

/** What the server said to /unenroll. */
export interface ServerRevocation {
  outcome: 'revoked' | 'already_revoked' | 'unreachable' | 'refused' | 'not_contacted';
  /** Human explanation (no credentials). */
  detail: string;
}

export interface UnenrollOptions {
  caFile?: string;
  logger: Logger;
  /** Deadline of the /unenroll request (default 5 s). */
  timeoutMs?: number;
}

export interface UnenrollResult {
  serverUrl: string | null;
  revocation: ServerRevocation;
}

/** NotEnrolledError when there is no enrollment record; KeyStoreUnavailableError when the key cannot be read or deleted now. */
export async function unenroll(state: AgentState, options: UnenrollOptions): Promise<UnenrollResult> {
  const { serverUrl, revocation } = await state.unenroll((record, apiKey) => revokeAtServer(record, apiKey, options));
  if (revocation === null) {
    return { serverUrl: null, revocation: { outcome: 'not_contacted', detail: 'the enrollment record was unreadable' } };
  }
  options.logger.debug({ server_url: serverUrl, outcome: revocation.outcome }, 'unenrolled');
  return { serverUrl, revocation };
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

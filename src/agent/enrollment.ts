// Enrollment: the server's part. The one-time token is exchanged for the device API key inside the
// state owner's enroll transaction (state/agentState.ts), which stores the key, serialises
// concurrent enrollments under its lock, leaves nothing behind on failure and rolls a crash back.
// Inputs are validated by the caller (serverUrl.ts, enrollmentToken.ts, enrollmentLink.ts).
import { CredentialsRejectedError } from './api';
import { createApiClient } from './client';
import type { Logger } from './logger';
import type { AgentState, KeyStoreBackend, KeyStoreChoice } from './state';
import { revokeAtServer, type ServerRevocation } from './unenrollment';

export interface EnrollOptions {
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

export async function enroll(state: AgentState, options: EnrollOptions): Promise<EnrollResult> {
  const { logger } = options;
  // Built first: a bad CA file is an input error, found before anything is written or sent.
  const api = createApiClient({ serverUrl: options.serverUrl, caFile: options.caFile });
  try {
    const outcome = await state.enroll(
      { serverUrl: options.serverUrl, keystore: options.keystore, force: options.force, caFile: options.caFile, logger },
      {
        async exchange() {
          logger.debug({ server_url: options.serverUrl }, 'exchanging the enrollment token');
          try {
            return (await api.enroll(options.token, { timeoutMs: options.timeoutMs ?? 30_000 })).api_key;
          } catch (err) {
            if (err instanceof CredentialsRejectedError) logger.debug({ status: err.status }, 'enrollment token refused');
            throw err;
          }
        },
        discard: (apiKey) => api.unenroll(apiKey, { timeoutMs: 5_000 }),
        revoke: (record, apiKey) => revokeAtServer(record, apiKey, { caFile: options.caFile, logger }),
      },
    );
    return { serverUrl: options.serverUrl, stateDir: state.dir, ...outcome };
  } finally {
    await api.close();
  }
}

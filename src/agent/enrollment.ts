// Enrollment: the server's part. The one-time token is exchanged for the device API key inside the
// state owner's enroll transaction (state/agentState.ts), which stores the key, serialises
// concurrent enrollments under its lock, leaves nothing behind on failure and rolls a crash back.
// With an enrollment secret, the token comes from the extension route /register, called in the same
// transaction: a crash between /register and /enroll leaves an `enrolling` record that the next
// start rolls back, and the next attempt registers again (the server supersedes the device record
// of the same hardware_uuid). Inputs are validated by the caller (serverUrl.ts, enrollmentToken.ts,
// enrollSecret.ts, enrollmentLink.ts).
import { readDeviceIdentity } from '../identity';
import type { HeartbeatRequest } from '../protocol/schemas';
import { CredentialsRejectedError } from './api';
import { createApiClient, type ApiClient } from './client';
import { heartbeatBody } from './daemonIdentity';
import type { Logger } from './logger';
import type { AgentState, EnrolledWith, KeyStoreBackend, KeyStoreChoice } from './state';
import { revokeAtServer, type ServerRevocation } from './unenrollment';

/** A validated one-time token, or a validated enrollment secret (exchanged through /register). */
type EnrollCredential = { token: string } | { enrollSecret: string };

export interface EnrollOptions {
  /** Validated origin. */
  serverUrl: string;
  credential: EnrollCredential;
  keystore: KeyStoreChoice;
  /** Replace an existing enrollment (unenrolling it best-effort first). */
  force: boolean;
  caFile?: string;
  logger: Logger;
  /** Deadline of the /register and /enroll requests. */
  timeoutMs?: number;
  /** This device's identity for /register (default: the heartbeat's, src/identity). */
  identity?: () => Promise<HeartbeatRequest>;
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
          const timeoutMs = options.timeoutMs ?? 30_000;
          const { token, enrolledWith } = await oneTimeToken(api, options, timeoutMs);
          logger.debug({ server_url: options.serverUrl }, 'exchanging the enrollment token');
          try {
            return { apiKey: (await api.enroll(token, { timeoutMs })).api_key, enrolledWith };
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

/** The token to spend: the one given, or one the server issues for the enrollment secret. */
async function oneTimeToken(
  api: ApiClient,
  options: EnrollOptions,
  timeoutMs: number,
): Promise<{ token: string; enrolledWith: EnrolledWith }> {
  const { credential, logger } = options;
  if ('token' in credential) return { token: credential.token, enrolledWith: { method: 'token' } };
  const identity = await (options.identity ?? defaultIdentity)();
  logger.debug({ server_url: api.serverUrl, hardware_uuid: identity.hardware_uuid }, 'registering with the enrollment secret');
  const registered = await api.register({ ...identity, enroll_secret: credential.enrollSecret }, { timeoutMs });
  logger.info({ device_id: registered.device_id, secret_id: registered.secret_id }, 'registered with the enrollment secret');
  return { token: registered.enrollment_token, enrolledWith: { method: 'enroll_secret', secret_id: registered.secret_id } };
}

async function defaultIdentity(): Promise<HeartbeatRequest> {
  return heartbeatBody(await readDeviceIdentity());
}

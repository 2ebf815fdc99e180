// Enrollment: the server's part. The one-time token is exchanged for the device API key inside the
// state owner's enroll transaction (state/agentState.ts), which stores the key, serialises
// concurrent enrollments under its lock, leaves nothing behind on failure and rolls a crash back.
// With an enrollment secret, the token comes from the extension route /register, called in the same
// transaction; the state owner keeps the registration (registration.json) until its token is spent,
// so that an /enroll retried after a lost answer, a crash or a timeout reuses it, and a registration
// done again (its token spent by an answer that never arrived) costs the server no second record and
// no second use. Inputs are validated by the caller (serverUrl.ts, enrollmentToken.ts,
// enrollSecret.ts, enrollmentLink.ts).
import { createHash } from 'node:crypto';
import { readDeviceIdentity } from '../identity';
import type { HeartbeatRequest } from '../protocol/schemas';
import { CredentialsRejectedError } from './api';
import { createApiClient, type ApiClient } from './client';
import { heartbeatBody } from './daemonIdentity';
import type { Logger } from './logger';
import { retryPolicyFromEnv, withRetries, type RetryPolicy } from './backoff';
import type { AgentState, EnrolledWith, KeyStoreBackend, KeyStoreChoice, PendingRegistration, Registrations } from './state';
import { revokeAtServer, type ServerRevocation } from './unenrollment';

/**
 * Retries of /register and /enroll: fewer and shorter than the daemon's, as someone (or an
 * installer) waits for the answer; a Retry-After beyond 30 s is cut to 30 s. DEVICE_AGENT_RETRY_*
 * override each value.
 */
const ENROLL_RETRY_POLICY: RetryPolicy = { baseMs: 1_000, maxMs: 30_000, attempts: 3 };

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
  /** Retries of /register and /enroll (default: ENROLL_RETRY_POLICY with DEVICE_AGENT_RETRY_* over it). */
  retry?: RetryPolicy;
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
  const retry = options.retry ?? retryPolicyFromEnv(process.env, ENROLL_RETRY_POLICY);
  try {
    const outcome = await state.enroll(
      { serverUrl: options.serverUrl, keystore: options.keystore, force: options.force, caFile: options.caFile, logger },
      {
        exchange: (registrations) => exchange(api, options, retry, registrations),
        discard: (apiKey) => api.unenroll(apiKey, { timeoutMs: 5_000 }),
        revoke: (record, apiKey) => revokeAtServer(record, apiKey, { caFile: options.caFile, logger }),
      },
    );
    return { serverUrl: options.serverUrl, stateDir: state.dir, ...outcome };
  } finally {
    await api.close();
  }
}

/**
 * The server's part: the token given, or with an enrollment secret the token of a registration
 * (the one kept from an earlier attempt, else a new one, kept before its token is sent). Each
 * request is retried on transient failures (503 with Retry-After, timeouts) with the daemon's
 * bounded backoff. A registration's token refused at /enroll was spent by an attempt whose answer
 * never arrived (or has expired): this host registers once more, which before the device's first
 * heartbeat gives the same record a new token and spends no second use of the secret (docs/server.md).
 */
async function exchange(
  api: ApiClient,
  options: EnrollOptions,
  retry: RetryPolicy,
  registrations: Registrations,
): Promise<{ apiKey: string; enrolledWith: EnrolledWith }> {
  const { credential, logger } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retrying = <T>(operation: () => Promise<T>) =>
    withRetries(operation, {
      policy: retry,
      onRetry: (err, attempt, delayMs) =>
        logger.info({ route: err.route, status: err.status, attempt, delay_ms: delayMs }, 'enrollment request failed: retrying'),
    });
  const spend = async (token: string) => {
    logger.debug({ server_url: options.serverUrl }, 'exchanging the enrollment token');
    try {
      return (await retrying(() => api.enroll(token, { timeoutMs }))).api_key;
    } catch (err) {
      if (err instanceof CredentialsRejectedError) logger.debug({ status: err.status }, 'enrollment token refused');
      throw err;
    }
  };
  if ('token' in credential) return { apiKey: await spend(credential.token), enrolledWith: { method: 'token' } };

  const secretSha256 = createHash('sha256').update(credential.enrollSecret).digest('hex');
  const register = async () => {
    const identity = await (options.identity ?? defaultIdentity)();
    logger.debug({ server_url: api.serverUrl, hardware_uuid: identity.hardware_uuid }, 'registering with the enrollment secret');
    const registered = await retrying(() => api.register({ ...identity, enroll_secret: credential.enrollSecret }, { timeoutMs }));
    logger.info({ device_id: registered.device_id, secret_id: registered.secret_id }, 'registered with the enrollment secret');
    const kept = {
      secret_sha256: secretSha256,
      secret_id: registered.secret_id,
      device_id: registered.device_id,
      enrollment_token: registered.enrollment_token,
    };
    await registrations.keep(kept);
    return kept;
  };
  const kept = await registrations.kept(secretSha256);
  let registration: Omit<PendingRegistration, 'server_url'>;
  if (kept === null) registration = await register();
  else {
    registration = kept;
    logger.info({ device_id: registration.device_id }, 'enrolling with the registration kept from an earlier attempt');
  }
  let apiKey: string;
  try {
    apiKey = await spend(registration.enrollment_token);
  } catch (err) {
    if (!(err instanceof CredentialsRejectedError)) throw err;
    logger.info({ device_id: registration.device_id }, 'the registration’s token was already spent or expired: registering again');
    registration = await register();
    apiKey = await spend(registration.enrollment_token);
  }
  return { apiKey, enrolledWith: { method: 'enroll_secret', secret_id: registration.secret_id } };
}

async function defaultIdentity(): Promise<HeartbeatRequest> {
  return heartbeatBody(await readDeviceIdentity());
}

// What the agent needs from the Device Agent API, and its errors typed by what the caller must
// do. The HTTP implementation is src/agent/client.ts; retry policy lives with the daemon.
import type {
  EnrollResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  PolicyRequest,
  PolicyResponse,
  PosturesRequest,
} from '../protocol/schemas';

/**
 * A successful heartbeat as the agent reads it: a schedule field the server left out or sent
 * malformed is absent here, and the daemon keeps its previous interval (contract).
 */
export type HeartbeatAnswer = Omit<HeartbeatResponse, 'heartbeat_interval_seconds' | 'posture_interval_seconds'> &
  Partial<Pick<HeartbeatResponse, 'heartbeat_interval_seconds' | 'posture_interval_seconds'>> & {
    /** The server policy extension's version (docs/agent.md, "Policy"); absent from a server without it. */
    policy_version?: string;
    /** A "check again" the device's user asked for on its page (docs/agent.md, "My device"); absent from a server without it. */
    check_requested_at?: string;
  };

export interface PosturesAccepted {
  /** Posture-report id the server assigned (POSTURE_REPORT_HEADER), when it sends one. */
  reportId?: string;
}

export interface RequestOptions {
  /** Overall deadline for this request. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface AgentApi {
  readonly serverUrl: string;
  enroll(token: string, options?: RequestOptions): Promise<EnrollResponse>;
  heartbeat(apiKey: string, body: HeartbeatRequest, options?: RequestOptions): Promise<HeartbeatAnswer>;
  postures(apiKey: string, body: PosturesRequest, options?: RequestOptions): Promise<PosturesAccepted>;
  unenroll(apiKey: string, options?: RequestOptions): Promise<void>;
  /** The server policy extension's route: asked only of a server whose heartbeat carries `policy_version`. */
  policy(apiKey: string, body: PolicyRequest, options?: RequestOptions): Promise<PolicyResponse>;
}

export type Route = 'enroll' | 'heartbeat' | 'postures' | 'unenroll' | ExtensionRoute;
/** Routes beside the spec's four (contract, "Extensions beside the spec"): a server may not offer them. */
type ExtensionRoute = 'register' | 'policy' | 'devicePage';

export abstract class ApiError extends Error {
  abstract readonly kind: 'invalid_request' | 'credentials_rejected' | 'conflict' | 'payload_too_large' | 'retryable' | 'invalid_response';
  constructor(
    readonly route: Route,
    message: string,
    /** HTTP status, when the server answered. */
    readonly status?: number,
    /** The server's `message` field (never contains credentials; may be shown to operators). */
    readonly serverMessage?: string,
  ) {
    super(message);
  }
}

/** 400 and other 4xx not listed below: the same request must never be resent unchanged. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
  readonly kind = 'invalid_request' as const;
}

/** 401: the enrollment token or API key was refused. */
export class CredentialsRejectedError extends ApiError {
  override name = 'CredentialsRejectedError';
  readonly kind = 'credentials_rejected' as const;
}

/** 409: the hardware_uuid is used by another device of the organization. Not a revoked key. */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
  readonly kind = 'conflict' as const;
}

/** 413: the body exceeds the route's limit. */
export class PayloadTooLargeError extends ApiError {
  override name = 'PayloadTooLargeError';
  readonly kind = 'payload_too_large' as const;
}

/** Network errors, timeouts, 408, 429 and 5xx: worth retrying later, after `retryAfterMs` when the server said so. */
export class RetryableError extends ApiError {
  override name = 'RetryableError';
  readonly kind = 'retryable' as const;
  constructor(
    route: Route,
    message: string,
    status?: number,
    serverMessage?: string,
    readonly retryAfterMs?: number,
  ) {
    super(route, message, status, serverMessage);
  }
}

/** A success status with a body that does not match the protocol (e.g. no 96-hex api_key). */
export class InvalidResponseError extends ApiError {
  override name = 'InvalidResponseError';
  readonly kind = 'invalid_response' as const;
}

// The HTTP client of the Device Agent API (undici 7). One request per call, no retries (the daemon
// owns retry policy), no redirects followed, TLS always verified (NODE_TLS_REJECT_UNAUTHORIZED=0
// does not switch it off), loopback never proxied (a proxy would see the Authorization header). Responses are validated with the
// wire schemas and every failure becomes one of the typed errors of ./api.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { Dispatcher, buildConnector as BuildConnector } from 'undici';
import * as z from 'zod/mini';
import {
  Credential,
  DevicePageResponse,
  EnrollResponse,
  ErrorBody,
  EXTENSION_ROUTES,
  HeartbeatResponse,
  POSTURE_REPORT_HEADER,
  PolicyResponse,
  PolicyVersion,
  RegisterResponse,
  ROUTES,
  type HeartbeatRequest,
  type PolicyRequest,
  type PosturesRequest,
  type RegisterRequest,
} from '../protocol/schemas';
import { Rfc3339 } from '../protocol/rfc3339';
import { USER_AGENT } from '../version';
import {
  ConflictError,
  CredentialsRejectedError,
  InvalidRequestError,
  InvalidResponseError,
  PayloadTooLargeError,
  RetryableError,
  type AgentApi,
  type ApiError,
  type RequestOptions,
  type Route,
} from './api';
import { InvalidInputError, firstLine } from './errors';
import { MAX_INTERVAL_SECONDS } from './scheduler';
import { isLoopbackHost } from './serverUrl';
import { Agent, EnvHttpProxyAgent, buildConnector } from './undiciParts';

interface ClientTimeouts {
  /** TCP + TLS handshake. */
  connectMs: number;
  /** From request sent to response headers received. */
  headersMs: number;
  /** Idle time between body chunks. */
  bodyMs: number;
}

const DEFAULT_TIMEOUTS: ClientTimeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 };

export interface ClientOptions {
  /** A validated origin (see serverUrl.ts). */
  serverUrl: string;
  /** PEM bundle trusted in addition to the default roots (--ca-file / DEVICE_AGENT_CA_FILE). */
  caFile?: string;
  timeouts?: Partial<ClientTimeouts>;
}

export interface ApiClient extends AgentApi {
  /** Extension beside the spec's four (enrollment secrets): a device record and its one-time token. */
  register(body: RegisterRequest, options?: RequestOptions): Promise<RegisterResponse>;
  /** The device page extension: a one-time URL of this device's page (InvalidRequestError 404/405 from a server without it). */
  devicePage(apiKey: string, options?: RequestOptions): Promise<DevicePageResponse>;
  /** Closes idle connections. */
  close(): Promise<void>;
}

/**
 * The schedule a heartbeat sets, validated here and nowhere else: a whole number of seconds, at most
 * a day (a longer one is clamped). Absent, malformed or non-positive intervals do not fail a
 * heartbeat: the field reads as absent, and the daemon keeps its previous interval.
 */
const IntervalSeconds = z.catch(
  z.optional(
    z.pipe(
      z.int().check(z.positive()),
      z.transform((seconds: number) => Math.min(seconds, MAX_INTERVAL_SECONDS)),
    ),
  ),
  undefined,
);
const HeartbeatAnswer = z.extend(HeartbeatResponse, {
  heartbeat_interval_seconds: IntervalSeconds,
  posture_interval_seconds: IntervalSeconds,
  // The policy extension's field: a malformed one reads as absent (the local policy stays), like the intervals.
  policy_version: z.catch(z.optional(PolicyVersion), undefined),
  // The "check again" extension's field (docs/agent.md, "My device"): malformed reads as absent.
  check_requested_at: z.catch(z.optional(Rfc3339), undefined),
});

const PATHS: Record<Route, string> = { ...ROUTES, ...EXTENSION_ROUTES };

/** Largest response body read; the API's answers are a few hundred bytes. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** The policy route's answer carries this platform's lifecycle table (tens of kB). */
const MAX_POLICY_RESPONSE_BYTES = 2 * 1024 * 1024;

export function createApiClient(options: ClientOptions): ApiClient {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const tls = {
    ca: options.caFile ? [...rootCertificates, ...readCaBundle(options.caFile)] : undefined,
    timeout: timeouts.connectMs,
    // Explicit: left undefined, Node reads NODE_TLS_REJECT_UNAUTHORIZED from the environment.
    rejectUnauthorized: true,
  };
  const serverUrl = options.serverUrl;
  const { origin, hostname } = new URL(serverUrl);
  const timing = { headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.bodyMs };
  // Direct connections use `connect`; through a proxy the target's TLS uses `requestTls` and an
  // https proxy's own TLS `proxyTls`: the extra CA applies to all three. Loopback goes direct
  // whatever HTTP(S)_PROXY and NO_PROXY say.
  const connect = resumingConnector(tls);
  const dispatcher: Dispatcher = isLoopbackHost(hostname)
    ? new Agent({ connect, ...timing })
    : new EnvHttpProxyAgent({ connect, requestTls: tls, proxyTls: tls, ...timing });

  async function post(route: Route, body: unknown, apiKey: string | undefined, requestOptions: RequestOptions = {}) {
    if (apiKey !== undefined && !Credential.safeParse(apiKey).success) {
      throw new InvalidRequestError(route, 'the stored API key is malformed; the request was not sent');
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    };
    if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
    const { signal, release } = requestSignal(requestOptions);

    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await dispatcher.request({
        origin,
        path: PATHS[route],
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal,
      });
      text = await readCapped(response.body, route === 'policy' ? MAX_POLICY_RESPONSE_BYTES : MAX_RESPONSE_BYTES);
    } catch (err) {
      if (requestOptions.signal?.aborted) throw requestOptions.signal.reason ?? err;
      throw networkError(route, serverUrl, err);
    } finally {
      release();
    }
    return { status: response.statusCode, headers: response.headers, text };
  }

  async function call<T extends z.ZodMiniType>(route: Route, schema: T, body: unknown, apiKey: string | undefined, o?: RequestOptions) {
    const res = await post(route, body, apiKey, o);
    if (res.status < 200 || res.status >= 300) throw statusError(route, res.status, res.headers, res.text);
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw new InvalidResponseError(route, `the server answered ${route} with ${res.status} but no JSON body`, res.status);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      // Name the fields only: values may be credentials.
      const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(body)'))].join(', ');
      throw new InvalidResponseError(route, `the server's ${route} answer does not match the protocol (${fields})`, res.status);
    }
    return { value: parsed.data, headers: res.headers };
  }

  async function callNoContent(route: Route, body: unknown, apiKey: string, o?: RequestOptions) {
    const res = await post(route, body, apiKey, o);
    if (res.status < 200 || res.status >= 300) throw statusError(route, res.status, res.headers, res.text);
    return res.headers;
  }

  return {
    serverUrl,
    async enroll(token, o) {
      return (await call('enroll', EnrollResponse, { token }, undefined, o)).value;
    },
    async heartbeat(apiKey, body: HeartbeatRequest, o) {
      return (await call('heartbeat', HeartbeatAnswer, body, apiKey, o)).value;
    },
    async postures(apiKey, body: PosturesRequest, o) {
      const headers = await callNoContent('postures', body, apiKey, o);
      const reportId = headers[POSTURE_REPORT_HEADER];
      return typeof reportId === 'string' && reportId !== '' ? { reportId } : {};
    },
    async unenroll(apiKey, o) {
      await callNoContent('unenroll', {}, apiKey, o);
    },
    async register(body, o) {
      return (await call('register', RegisterResponse, body, undefined, o)).value;
    },
    async policy(apiKey, body: PolicyRequest, o) {
      return (await call('policy', PolicyResponse, body, apiKey, o)).value;
    },
    async devicePage(apiKey, o) {
      return (await call('devicePage', DevicePageResponse, {}, apiKey, o)).value;
    },
    close: () => dispatcher.close(),
  };
}

/**
 * One request's signal: aborted by the caller's (the daemon's, which lives as long as the process)
 * or by the timeout, with that one's reason. Not AbortSignal.any: on Node 20 it leaves a reference
 * in the caller's signal for every request, never freed (about 60 bytes a request for months);
 * these listeners are removed when the request ends.
 */
function requestSignal({ signal: caller, timeoutMs }: RequestOptions): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const sources = [caller, timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => s !== undefined);
  const listeners = sources.map((source) => {
    const onAbort = () => controller.abort(source.reason);
    if (source.aborted) onAbort();
    else source.addEventListener('abort', onAbort, { once: true });
    return () => source.removeEventListener('abort', onAbort);
  });
  return { signal: controller.signal, release: () => listeners.forEach((remove) => remove()) };
}

/**
 * Direct connections that resume the server's last TLS session, so that a heartbeat on a new
 * connection costs the server no full handshake. undici's own session cache cannot do it at the
 * heartbeat cadence: it lives in the per-origin pool, which is dropped with its last connection (the
 * server closes idle ones after seconds), and holds sessions through weak references. This one
 * keeps the newest session as long as the client, keyed by scheme, host, port and server name, and
 * offers it to that origin only. (Through an HTTP proxy, undici's cache applies.)
 */
function resumingConnector(tls: BuildConnector.BuildOptions): BuildConnector.connector {
  let kept: { origin: string; session: Buffer } | undefined;
  return (options, callback) => {
    const origin = `${options.protocol}//${options.hostname}:${options.port}|${options.servername ?? ''}`;
    const session = kept?.origin === origin ? kept.session : undefined;
    const connect = buildConnector({ ...tls, maxCachedSessions: 0, ...(session ? { session } : {}) });
    // At run time undici's connector returns the socket it opens (typed as void).
    const socket = connect(options, callback) as unknown as Socket;
    socket.on('session', (next: Buffer) => {
      kept = { origin, session: next };
    });
  };
}

function readCaBundle(file: string): string[] {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidInputError(`cannot read the CA file ${file}: ${firstLine(err)}`);
  }
  const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (certificates.length === 0) throw new InvalidInputError(`the CA file ${file} contains no PEM certificate`);
  for (const certificate of certificates) {
    try {
      new X509Certificate(certificate);
    } catch (err) {
      throw new InvalidInputError(`the CA file ${file} contains an invalid certificate: ${firstLine(err)}`);
    }
  }
  return certificates;
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      break; // the schema check reports the truncated body
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const TLS_TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

function networkError(route: Route, serverUrl: string, err: unknown): RetryableError {
  const rawCode = (err as { code?: unknown } | null)?.code;
  const code = typeof rawCode === 'string' ? rawCode : undefined; // DOMException codes are numbers
  let why = firstLine(err);
  if (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError')) why = 'the request timed out';
  if (code !== undefined && !why.includes(code)) why = `${why} (${code})`;
  if (code !== undefined && TLS_TRUST_CODES.has(code)) {
    why += '; if the server uses a private CA, pass it with --ca-file or DEVICE_AGENT_CA_FILE';
  }
  return new RetryableError(route, `cannot reach ${serverUrl}: ${why}`);
}

function statusError(route: Route, status: number, headers: Dispatcher.ResponseData['headers'], text: string): ApiError {
  const serverMessage = parseServerMessage(text);
  const said = serverMessage ? `: ${serverMessage}` : '';
  const message = `the server answered ${route} with ${status}${said}`;
  if (status === 401) return new CredentialsRejectedError(route, message, status, serverMessage);
  if (status === 409) return new ConflictError(route, message, status, serverMessage);
  if (status === 413) return new PayloadTooLargeError(route, message, status, serverMessage);
  // 408: the server gave up waiting for the request before handling it (RFC 9110: it may be repeated).
  if (status === 408 || status === 429 || status >= 500) {
    return new RetryableError(route, message, status, serverMessage, parseRetryAfter(headers['retry-after']));
  }
  if (status >= 400) return new InvalidRequestError(route, message, status, serverMessage);
  // 1xx/3xx: redirects are never followed, so this is not the API answering (captive portal, wrong URL).
  return new InvalidResponseError(route, `${message} (redirects are not followed: check the server URL)`, status, serverMessage);
}

function parseServerMessage(text: string): string | undefined {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms from now; undefined when absent or invalid. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, date - now);
}

// A small HTTP client for the black-box server tests: raw control over method, headers and body.
import { request as httpRequest } from 'node:http';
import type { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { expect } from 'vitest';
import {
  EXTENSION_ROUTES,
  ROUTES,
  type EnrollResponse,
  type ErrorBody,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type PostureResult,
} from '../../src/protocol/schemas';
import { runServerCli, type CliOutcome, type CreatedDevice, type RunningServer } from '../support/server';

/** A JSON answer's fields: any of the protocol's (each optional: tests assert which are there), or others. */
type AnswerBody = Partial<EnrollResponse & HeartbeatResponse & ErrorBody> & { [field: string]: unknown };

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  body: AnswerBody | undefined;
}

export interface CallOptions {
  method?: string;
  /** Serialized as JSON with Content-Type: application/json. */
  json?: unknown;
  /** Sent as is (set content-type yourself); a stream without content-length goes chunked. */
  raw?: string | Buffer | Readable;
  apiKey?: string;
  headers?: Record<string, string>;
  dispatcher?: Dispatcher;
}

export async function call(server: Pick<RunningServer, 'url'>, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'device-agent-tests/1', ...options.headers };
  let body: string | Buffer | Readable | undefined = options.raw;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  const answer = await request(`${server.url}${path}`, {
    method: options.method ?? 'POST',
    headers,
    body,
    dispatcher: options.dispatcher,
  });
  return answerOf(answer.statusCode, answer.headers, await answer.body.text());
}

function answerOf(status: number, headers: Answer['headers'], text: string): Answer {
  let parsed: AnswerBody | undefined;
  try {
    parsed = text === '' ? undefined : (JSON.parse(text) as AnswerBody);
  } catch {
    parsed = undefined;
  }
  return { status, headers, text, body: parsed };
}

export function expectError(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body?.error }, answer.text).toEqual({ status, error: code });
  expect(typeof answer.body?.message).toBe('string');
  expect(Object.keys(answer.body ?? {}).sort()).toEqual(['error', 'message']);
}

/**
 * Sends a request's headers at once and its JSON body only on `release()`: the server
 * authenticates on the headers, then waits for the body, so a test can change the device's state
 * in between.
 */
export function heldBody(server: RunningServer, path: string, apiKey: string, json: unknown): { release(): void; answer: Promise<Answer> } {
  const body = Buffer.from(JSON.stringify(json));
  const sent = httpRequest(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: `Bearer ${apiKey}` },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    sent.on('error', reject);
    sent.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(answerOf(response.statusCode ?? 0, response.headers, Buffer.concat(chunks).toString())));
      response.on('error', reject);
    });
  });
  sent.flushHeaders();
  return { release: () => sent.end(body), answer };
}

export const enroll = (server: RunningServer, token: unknown) => call(server, ROUTES.enroll, { json: { token } });
export const heartbeat = (server: RunningServer, apiKey: string, body: unknown = heartbeatBody()) =>
  call(server, ROUTES.heartbeat, { apiKey, json: body });
export const postures = (server: RunningServer, apiKey: string, body: unknown) => call(server, ROUTES.postures, { apiKey, json: body });
export const unenroll = (server: RunningServer, apiKey: string) => call(server, ROUTES.unenroll, { apiKey });

let hardwareCounter = 0;
/** A valid heartbeat body with a fresh hardware_uuid unless given. */
export function heartbeatBody(overrides: Partial<HeartbeatRequest> = {}): HeartbeatRequest {
  hardwareCounter += 1;
  return {
    hardware_uuid: `hw-${process.pid}-${hardwareCounter}-${Math.random().toString(16).slice(2)}`,
    serial_number: 'C02TEST',
    hostname: 'test-host',
    platform: 'LINUX',
    os_version: 'Debian GNU/Linux 12 (bookworm)',
    agent_version: '0.1.0',
    ...overrides,
  };
}

export function result(overrides: Partial<PostureResult> = {}): PostureResult {
  return {
    check_key: 'DISK_ENCRYPTION',
    status: 'PASS',
    evidence: { encrypted: true },
    observed_at: new Date().toISOString(),
    ...overrides,
  };
}

export interface EnrolledDevice {
  created: CreatedDevice;
  deviceId: string;
  apiKey: string;
  hardwareUuid: string;
}

/** Creates a device through the admin CLI, enrolls it, and (unless told otherwise) activates it. */
export async function enrolledDevice(
  server: RunningServer,
  options: { org?: string; activate?: boolean; hardwareUuid?: string } = {},
): Promise<EnrolledDevice> {
  const created = await server.createDevice({ org: options.org ?? 'acme' });
  const enrolled = await enroll(server, created.enrollment_token);
  expect(enrolled.status, enrolled.text).toBe(200);
  const hardwareUuid = options.hardwareUuid ?? heartbeatBody().hardware_uuid;
  if (options.activate !== false) {
    const beat = await heartbeat(server, String(enrolled.body?.api_key), heartbeatBody({ hardware_uuid: hardwareUuid }));
    expect(beat.status, beat.text).toBe(200);
  }
  return { created, deviceId: created.device_id, apiKey: String(enrolled.body?.api_key), hardwareUuid };
}

/** Exit 2, a message matching `message` on stderr, no stack trace, nothing on stdout. */
export function expectUsageError(outcome: CliOutcome, message: RegExp): void {
  expect(outcome.code, outcome.stderr).toBe(2);
  expect(outcome.stderr).toMatch(message);
  expect(outcome.stderr).not.toMatch(/^\s+at /m);
  expect(outcome.stdout).toBe('');
}

/** What `secret create --json` prints. */
export interface CreatedSecret {
  secret_id: string;
  enroll_secret: string;
  expires_at: string | null;
  max_uses: number | null;
}

/** A secret in `org` through the real admin CLI (`secret create --json`), with its flags. */
export async function createSecret(server: Pick<RunningServer, 'dbPath'>, flags: string[] = [], org = 'acme'): Promise<CreatedSecret> {
  const { stdout } = await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', org, '--json', ...flags]);
  return JSON.parse(stdout) as CreatedSecret;
}

/** `secret list --json`, parsed: a secret's fields as the admin sees them (never the secret). */
export async function listSecrets(
  server: Pick<RunningServer, 'dbPath'>,
): Promise<{ secret_id: string; uses: number; status: string; labels: Record<string, string>; note: string | null }[]> {
  return JSON.parse((await runServerCli(['secret', 'list', '--db', server.dbPath, '--json'])).stdout) as never;
}

/** POST /register with the secret and a device identity (a fresh one unless given). */
export const register = (server: Pick<RunningServer, 'url'>, secret: unknown, identity: object = heartbeatBody()) =>
  call(server, EXTENSION_ROUTES.register, { json: { enroll_secret: secret, ...identity } });

// The daemon's local endpoint: how a user who cannot read the service's state (its API key) gets
// this device's page URL (`my-device`) or asks for a posture cycle now (`check --report`): the user
// at the screen and root (SYSTEM on Windows), nobody else. One module per platform decides who is
// let in, with the operating system's word for who connected: a Unix socket whose owner and mode the
// kernel checks at connect() (unixSocketEndpoint.ts), a Windows named pipe whose ACL Windows checks
// at open and whose client's account the service reads from its token (windowsPipeEndpoint.ts).
// Both speak what is here: one request per connection, a line of JSON, answered by a line of JSON.
// Nothing secret is logged.
import { createConnection } from 'node:net';
import type { DevicePageAnswer } from './devicePage';
import { firstLine } from './errors';
import type { Logger } from './logger';

/** Longest request line; the requests are a few bytes. */
export const MAX_REQUEST_BYTES = 1024;
/** A client that has not sent its request by then is dropped. */
export const REQUEST_TIMEOUT_MS = 5_000;

export type EndpointRequest = { op: 'device-page' } | { op: 'check' };

export type EndpointAnswer =
  | { ok: true; url: string; expires_at: string }
  | { ok: true; cycle: string }
  | { ok: false; error: 'not_offered' | 'refused' | 'bad_request' | 'failed' | 'rate_limited'; message: string };

export interface EndpointHandlers {
  devicePage(): Promise<DevicePageAnswer>;
  /** A posture cycle now; its outcome (the daemon's requestCycle), or 'rate_limited'. */
  check(): Promise<string>;
}

export interface LocalEndpoint {
  /** Where clients connect: the socket's path, or the pipe's. */
  readonly path: string;
  close(): Promise<void>;
}

/** What the platform module answers a client it let in: `line` is the request, null when it sent no line. */
export async function answerRequest(line: string | null, handlers: EndpointHandlers, log: Logger): Promise<EndpointAnswer> {
  let request: EndpointRequest;
  try {
    request = parseRequest(line);
  } catch (err) {
    return { ok: false, error: 'bad_request', message: firstLine(err) };
  }
  try {
    if (request.op === 'device-page') {
      const page = await handlers.devicePage();
      log.info({ event: 'local_endpoint_request', op: request.op, offered: page.offered }, 'device page asked for');
      return page.offered
        ? { ok: true, url: page.url, expires_at: page.expiresAt }
        : { ok: false, error: 'not_offered', message: 'the server does not offer a device page' };
    }
    const cycle = await handlers.check();
    log.info({ event: 'local_endpoint_request', op: request.op, outcome: cycle }, 'posture cycle asked for');
    if (cycle === 'rate_limited')
      return { ok: false, error: 'rate_limited', message: 'a cycle was asked for moments ago; try again in a minute' };
    return { ok: true, cycle };
  } catch (err) {
    log.warn({ event: 'local_endpoint_failed', op: request.op, error: firstLine(err) }, 'local endpoint request failed');
    return { ok: false, error: 'failed', message: firstLine(err) };
  }
}

function parseRequest(line: string | null): EndpointRequest {
  if (line === null) throw new Error('the request is not one line of JSON');
  const value = JSON.parse(line) as unknown;
  const op = (value as { op?: unknown } | null)?.op;
  if (op === 'device-page' || op === 'check') return { op };
  throw new Error('unknown request');
}

/** The endpoint refused this user (the operating system: not the console user nor root/SYSTEM). */
export class EndpointRefusedError extends Error {
  override name = 'EndpointRefusedError';
}

/** No daemon listens there. */
export class EndpointAbsentError extends Error {
  override name = 'EndpointAbsentError';
}

/** Sends one request to the daemon's endpoint at `address` (a socket's path or a pipe's) and returns its answer. */
export function askLocalEndpoint(
  address: string,
  request: EndpointRequest,
  timeoutMs = 150_000,
  platform: NodeJS.Platform = process.platform,
): Promise<EndpointAnswer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(address);
    let text = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('the device-agent service did not answer in time')));
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('end', () => {
      try {
        resolve(JSON.parse(text) as EndpointAnswer);
      } catch {
        reject(new Error('the device-agent service gave no answer'));
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EACCES' || err.code === 'EPERM') reject(new EndpointRefusedError(refusal(platform)));
      else if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
        reject(new EndpointAbsentError('the device-agent service is not running (no local endpoint)'));
      else reject(err);
    });
  });
}

/** What a user the endpoint does not answer is told. */
export function refusal(platform: NodeJS.Platform = process.platform): string {
  return `the device-agent service answers only the user logged in at this computer's screen, and ${platform === 'win32' ? 'SYSTEM' : 'root'}`;
}

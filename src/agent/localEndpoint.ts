// The daemon's local endpoint: a Unix socket through which a user who cannot read the service's
// state (its API key) gets this device's page URL (`my-device`) or asks for a posture cycle now
// (`check --report`). Who may connect is decided by the kernel at connect(): the socket is mode
// 0600 and owned by the console user (the one at the screen: src/platform/localEndpoint.ts), or by
// root when there is none; root passes any mode. The daemon re-checks the owner and mode before
// answering each connection and every few seconds, so a change of console user, or a mode the owner
// widened, is put right, and a connection made while it was wrong is refused. One request per
// connection: a line of JSON, answered by a line of JSON. Nothing secret is logged.
import { mkdir, chmod, chown, lstat, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { DevicePageAnswer } from './devicePage';
import { firstLine } from './errors';
import type { Logger } from './logger';

export const ENDPOINT_SOCKET = 'agent.sock';
const SOCKET_MODE = 0o600;
/** Longest request line; the requests are a few bytes. */
const MAX_REQUEST_BYTES = 1024;
/** A client that has not sent its request by then is dropped. */
const REQUEST_TIMEOUT_MS = 5_000;
/** How often the socket's owner is brought in line with the console user. */
const ADMIT_INTERVAL_MS = 5_000;

export type EndpointRequest = { op: 'device-page' } | { op: 'check' };

export type EndpointAnswer =
  | { ok: true; url: string; expires_at: string }
  | { ok: true; cycle: string }
  | { ok: false; error: 'not_offered' | 'refused' | 'bad_request' | 'failed' | 'rate_limited'; message: string };

interface EndpointHandlers {
  devicePage(): Promise<DevicePageAnswer>;
  /** A posture cycle now; its outcome (the daemon's requestCycle), or 'rate_limited'. */
  check(): Promise<string>;
}

export interface EndpointOptions {
  dir: string;
  consoleUid: () => Promise<number | null>;
  handlers: EndpointHandlers;
  log: Logger;
  /** How often the owner is brought in line besides at each connection (default ADMIT_INTERVAL_MS). */
  admitEveryMs?: number;
}

export interface LocalEndpoint {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Listens on `<dir>/agent.sock`. The directory is created root-only-writable (0755) when missing
 * and refused when it is a link, not ours, or writable by others.
 */
export async function startLocalEndpoint(options: EndpointOptions): Promise<LocalEndpoint> {
  const { dir, log } = options;
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const stats = await lstat(dir);
  if (!stats.isDirectory() || stats.uid !== process.getuid?.() || (stats.mode & 0o022) !== 0)
    throw new Error(`${dir} is not a directory of this user's that only it can write to`);
  const path = join(dir, ENDPOINT_SOCKET);
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });

  /** Brings the socket's owner and mode in line; true when they already were. */
  const admit = async (): Promise<boolean> => {
    const owner = (await options.consoleUid()) ?? 0;
    const now = await lstat(path);
    if (now.uid === owner && (now.mode & 0o777) === SOCKET_MODE) return true;
    await chmod(path, SOCKET_MODE);
    await chown(path, owner, now.gid);
    log.info({ event: 'local_endpoint_owner', uid: owner }, 'local endpoint handed to the console user');
    return false;
  };

  const server: Server = createServer((socket) => serve(socket));
  const serve = (socket: Socket) => {
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end === -1 && buffered.length <= MAX_REQUEST_BYTES) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      void answer(end === -1 ? null : buffered.slice(0, end)).then(
        (reply) => socket.end(`${JSON.stringify(reply)}\n`),
        () => socket.destroy(),
      );
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  };

  const answer = async (line: string | null): Promise<EndpointAnswer> => {
    // Owner or mode changed since the last check: the peer may be anyone the old ones let in.
    if (!(await admit().catch(() => false))) return { ok: false, error: 'refused', message: 'the console user changed; try again' };
    let request: EndpointRequest;
    try {
      request = parseRequest(line);
    } catch (err) {
      return { ok: false, error: 'bad_request', message: firstLine(err) };
    }
    try {
      if (request.op === 'device-page') {
        const page = await options.handlers.devicePage();
        log.info({ event: 'local_endpoint_request', op: request.op, offered: page.offered }, 'device page asked for');
        return page.offered
          ? { ok: true, url: page.url, expires_at: page.expiresAt }
          : { ok: false, error: 'not_offered', message: 'the server does not offer a device page' };
      }
      const cycle = await options.handlers.check();
      log.info({ event: 'local_endpoint_request', op: request.op, outcome: cycle }, 'posture cycle asked for');
      if (cycle === 'rate_limited')
        return { ok: false, error: 'rate_limited', message: 'a cycle was asked for moments ago; try again in a minute' };
      return { ok: true, cycle };
    } catch (err) {
      log.warn({ event: 'local_endpoint_failed', op: request.op, error: firstLine(err) }, 'local endpoint request failed');
      return { ok: false, error: 'failed', message: firstLine(err) };
    }
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await admit();
  const timer = setInterval(() => {
    admit().catch((err: unknown) =>
      log.warn({ event: 'local_endpoint_owner_failed', error: firstLine(err) }, 'cannot set the local endpoint owner'),
    );
  }, options.admitEveryMs ?? ADMIT_INTERVAL_MS);
  timer.unref();
  log.info({ event: 'local_endpoint', path }, 'local endpoint listening');
  return {
    path,
    close: async () => {
      clearInterval(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await unlink(path).catch(() => undefined);
    },
  };
}

function parseRequest(line: string | null): EndpointRequest {
  if (line === null) throw new Error('the request is not one line of JSON');
  const value = JSON.parse(line) as unknown;
  const op = (value as { op?: unknown } | null)?.op;
  if (op === 'device-page' || op === 'check') return { op };
  throw new Error('unknown request');
}

/** The endpoint refused this user (the kernel: not the console user nor root). */
export class EndpointRefusedError extends Error {
  override name = 'EndpointRefusedError';
}

/** No daemon listens there. */
export class EndpointAbsentError extends Error {
  override name = 'EndpointAbsentError';
}

/** Sends one request to the daemon's endpoint in `dir` and returns its answer. */
export function askLocalEndpoint(dir: string, request: EndpointRequest, timeoutMs = 150_000): Promise<EndpointAnswer> {
  const path = join(dir, ENDPOINT_SOCKET);
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
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
      if (err.code === 'EACCES' || err.code === 'EPERM')
        reject(new EndpointRefusedError("the device-agent service answers only the user logged in at this computer's screen, and root"));
      else if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
        reject(new EndpointAbsentError('the device-agent service is not running (no local endpoint)'));
      else reject(err);
    });
  });
}

// The local endpoint on Linux, macOS and FreeBSD (src/agent/localEndpoint.ts): a Unix socket. Who
// may connect is decided by the kernel at connect(): the socket is mode 0600 and owned by the
// console user (the one at the screen: src/platform/localEndpoint.ts), or by root when there is none;
// root passes any mode. The daemon re-checks the owner and mode before answering each connection and
// every few seconds, so a change of console user, or a mode the owner widened, is put right, and a
// connection made while it was wrong is refused.
import { mkdir, chmod, chown, lstat, unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { firstLine } from './errors';
import {
  answerRequest,
  MAX_REQUEST_BYTES,
  REQUEST_TIMEOUT_MS,
  type EndpointAnswer,
  type EndpointHandlers,
  type LocalEndpoint,
} from './localEndpoint';
import type { Logger } from './logger';
import { ENDPOINT_SOCKET } from '../platform/localEndpoint';

const SOCKET_MODE = 0o600;
/** How often the socket's owner is brought in line with the console user. */
const ADMIT_INTERVAL_MS = 5_000;

export interface EndpointOptions {
  dir: string;
  consoleUid: () => Promise<number | null>;
  handlers: EndpointHandlers;
  log: Logger;
  /** How often the owner is brought in line besides at each connection (default ADMIT_INTERVAL_MS). */
  admitEveryMs?: number;
}

/**
 * Listens on `<dir>/agent.sock`. The directory is created root-only-writable (0755) when missing
 * and refused when it is a link, not ours, or writable by others.
 */
export async function startSocketEndpoint(options: EndpointOptions): Promise<LocalEndpoint> {
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
    return answerRequest(line, options.handlers, log);
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

// Connection caps of the listening server. One client address may hold at most `perAddress`
// connections: its further connections are closed at once, so that one host opening thousands of
// idle connections cannot crowd out the fleet. Over the overall cap (kept below the open-file
// limit), the oldest idle connection makes room for the new one; only when every connection has a
// request in flight is the new one closed. Accept errors (EMFILE: out of file descriptors) are
// logged and the server keeps listening. Warnings are rate-limited: a flood makes a few lines.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { TrustedProxies } from './forwarded';

export interface ConnectionLimits {
  /** Open connections in all. */
  total: number;
  /** Open connections from one client address; 0 means no per-address cap. */
  perAddress: number;
}

/** At most one warning of each kind per this period; the ones in between are counted in the next. */
const WARNING_PERIOD_MS = 10_000;

interface Connection {
  address: string;
  /** The response to its latest request: a request is in flight until that closes (`destroyed`: answered, or cut off). */
  response: ServerResponse | undefined;
}

/** Connections from `proxies` (behind a TLS-terminating proxy) carry many agents: no per-address cap for them (see ./forwarded). */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger, proxies?: TrustedProxies): void {
  // Keyed by the accepted socket, in the order of acceptance: the first idle one is the oldest.
  // Nothing here costs a request more than one Map lookup: every new TLS connection carries one
  // request at the agents' cadence, so per-request listeners and keys were paid per connection.
  const connections = new Map<Socket, Connection>();
  const perAddress = new Map<string, number>();
  const warn = throttledWarnings(logger);

  function release(this: Socket): void {
    const connection = connections.get(this);
    if (connection === undefined) return;
    connections.delete(this);
    const left = (perAddress.get(connection.address) ?? 1) - 1;
    if (left === 0) perAddress.delete(connection.address);
    else perAddress.set(connection.address, left);
  }

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const fromAddress = perAddress.get(address) ?? 0;
    if (limits.perAddress > 0 && fromAddress >= limits.perAddress && !proxies?.has(address)) {
      socket.destroy();
      warn(
        'per_address_cap',
        { address, cap: limits.perAddress },
        `connection refused: ${address} already holds ${limits.perAddress} connections (--max-connections-per-address)`,
      );
      return;
    }
    if (connections.size >= limits.total) {
      const idle = oldestIdle(connections);
      if (idle === undefined) {
        socket.destroy();
        warn('total_cap', { cap: limits.total }, `connection refused: ${limits.total} connections are open, all busy (--max-connections)`);
        return;
      }
      idle.destroy();
      warn(
        'idle_evicted',
        { cap: limits.total },
        `${limits.total} connections are open (--max-connections): closing the oldest idle ones to make room`,
      );
    }
    connections.set(socket, { address, response: undefined });
    perAddress.set(address, fromAddress + 1);
    socket.on('close', release);
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(acceptedSocket(request.socket));
    if (connection !== undefined) connection.response = response;
  });

  // Without a listener an accept error would end the process; the server keeps listening after it.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EMFILE' || error.code === 'ENFILE') {
      warn(
        'accept_failed',
        { code: error.code, open_connections: connections.size },
        `cannot accept connections: ${error.code} (out of file descriptors); raise the open-file limit or lower --max-connections`,
      );
    } else {
      logger.error({ err: error }, 'server error');
    }
  });
}

function oldestIdle(connections: Map<Socket, Connection>): Socket | undefined {
  for (const [socket, { response }] of connections) if (response === undefined || response.destroyed) return socket;
  return undefined;
}

/**
 * The socket the server accepted ('connection'). Over TLS, a request's socket is the TLSSocket
 * around it, which refers to it as `_parent` (Node 20 and 24); reading the TLSSocket's own
 * remoteAddress instead would cost a getpeername system call per connection.
 */
function acceptedSocket(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}

function throttledWarnings(logger: Logger) {
  const state = new Map<string, { lastAt: number; suppressed: number }>();
  return (kind: string, fields: Record<string, unknown>, message: string): void => {
    const now = Date.now();
    const entry = state.get(kind);
    if (entry && now - entry.lastAt < WARNING_PERIOD_MS) {
      entry.suppressed += 1;
      return;
    }
    logger.warn({ event: kind, ...fields, similar_since_last: entry?.suppressed ?? 0 }, message);
    state.set(kind, { lastAt: now, suppressed: 0 });
  };
}

// Connection caps of the listening server. One client address may hold at most `perAddress`
// connections: its further connections are closed at once, so that one host opening thousands of
// idle connections cannot crowd out the fleet. Over the overall cap (kept below the open-file
// limit), the oldest idle connection makes room for the new one; only when every connection has a
// request in flight is the new one closed. Accept errors (EMFILE: out of file descriptors) are
// logged and the server keeps listening. Warnings are rate-limited: a flood makes a few lines.
import type { Server } from 'node:http';
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
  socket: Socket;
  address: string;
  /** A request is being received or answered. */
  busy: boolean;
}

/** Connections from `proxies` (behind a TLS-terminating proxy) carry many agents: no per-address cap for them (see ./forwarded). */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger, proxies?: TrustedProxies): void {
  // Keyed by address and port: plain and TLS sockets of one connection share them.
  const connections = new Map<string, Connection>();
  const perAddress = new Map<string, number>();
  const warn = throttledWarnings(logger);

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const key = `${address}|${socket.remotePort}`;
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
      idle.socket.destroy();
      warn(
        'idle_evicted',
        { cap: limits.total },
        `${limits.total} connections are open (--max-connections): closing the oldest idle ones to make room`,
      );
    }
    connections.set(key, { socket, address, busy: false });
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      if (connections.get(key)?.socket !== socket) return;
      connections.delete(key);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });

  server.on('request', (request, response) => {
    const connection = connections.get(`${request.socket.remoteAddress ?? 'unknown'}|${request.socket.remotePort}`);
    if (!connection) return;
    connection.busy = true;
    response.once('close', () => {
      connection.busy = false;
    });
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

function oldestIdle(connections: Map<string, Connection>): Connection | undefined {
  for (const connection of connections.values()) if (!connection.busy) return connection;
  return undefined;
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

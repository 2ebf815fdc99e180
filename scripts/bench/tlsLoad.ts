// Load generator of the TLS benchmarks: N concurrent loops, each sending the next request of a
// round-robin fleet and waiting for its answer, over one of three transports:
//   full        a new TLS connection per request, never offering a session (every one a full handshake)
//   resume      a new TLS connection per request, offering the session this loop last received
//               (the server's cost of a resumption is the same whoever's ticket it opens: tickets
//               carry the whole session, and every resumption renews the ticket, as for an agent)
//   keep-alive  one TLS connection per loop, requests one after the other (the upper bound)
// Latency is measured from the start of the connection (or of the request, on keep-alive) to the
// end of the answer: what an agent waits. Raw sockets and a minimal HTTP/1.1 reader, so that the
// client does no more work than the protocol needs; used by scripts/bench/tls.ts.
import { connect, createSecureContext, type TLSSocket } from 'node:tls';

export type Transport = 'full' | 'resume' | 'keep-alive';

export interface FleetRequest {
  /** The serialized HTTP/1.1 request without the Connection header and final CRLF. */
  head: string;
  body: string;
}

export interface LoadOptions {
  url: string;
  /** PEM trusted for the server's certificate. */
  ca: string;
  /** The i-th request of the run (called with 0, 1, 2, …). */
  request: (index: number) => FleetRequest;
  connections: number;
  durationMs: number;
  transport: Transport;
  /** Sessions by loop, filled on every transport and offered on `resume`; share it across runs against one server. */
  sessions: Map<number, Buffer>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection failures, timeouts and answers that were not 2xx. */
  errors: number;
  /** Share of the run's new connections that resumed a session (0 on keep-alive). */
  resumedShare: number;
  /** The load generator's own CPU, share of one core: near 1, it (not the server) may be the bound. */
  clientCpu: number;
}

const TIMEOUT_MS = 10_000;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(options.url);
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let connections = 0;
  let resumed = 0;
  // One client context for every connection (a `ca` option would build one per connection).
  const secureContext = createSecureContext({ ca: options.ca });
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + options.durationMs;

  const open = (loop: number): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const session = options.transport === 'resume' ? options.sessions.get(loop) : undefined;
      const socket = connect({ host: hostname, port: Number(port), secureContext, session, servername: 'localhost' });
      socket.on('session', (ticket: Buffer) => options.sessions.set(loop, ticket));
      socket.once('secureConnect', () => {
        connections += 1;
        if (socket.isSessionReused()) resumed += 1;
        resolve(socket);
      });
      socket.once('error', reject);
    });

  async function loop(id: number): Promise<void> {
    let socket: TLSSocket | undefined;
    while (performance.now() < end) {
      const request = options.request(next++);
      const began = performance.now();
      try {
        const keepAlive = options.transport === 'keep-alive';
        if (!socket || socket.destroyed) socket = await open(id);
        const status = await exchange(
          socket,
          `${request.head}\r\nConnection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n${request.body}`,
        );
        if (status.code < 200 || status.code >= 300) errors += 1;
        else latencies.push(performance.now() - began);
        // A server (nginx after keepalive_requests) may end a kept-alive connection with its answer.
        if (!keepAlive || status.closing) {
          socket.destroy();
          socket = undefined;
        }
      } catch {
        errors += 1;
        socket?.destroy();
        socket = undefined;
      }
    }
    socket?.destroy();
  }

  await Promise.all(Array.from({ length: options.connections }, (_, id) => loop(id)));
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
    resumedShare: options.transport === 'keep-alive' || connections === 0 ? 0 : resumed / connections,
    clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}

/**
 * Writes one request and resolves with the answer's status, and whether the server closes the
 * connection after it, once its whole body (Content-Length) is in.
 */
function exchange(socket: TLSSocket, request: string): Promise<{ code: number; closing: boolean }> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error('timed out')), TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const headerEnd = buffered.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const head = buffered.subarray(0, headerEnd).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length - headerEnd - 4 >= length) {
        finish(undefined, { code: Number(head.slice(9, 12)), closing: /\r\nconnection:\s*close/i.test(head) });
      }
    };
    const onClose = () => finish(new Error('closed before the answer'));
    function finish(error?: Error, status?: { code: number; closing: boolean }) {
      clearTimeout(timer);
      socket.off('data', onData).off('close', onClose).off('error', finish);
      if (error) reject(error);
      else resolve(status!);
    }
    socket.on('data', onData).once('close', onClose).once('error', finish);
    socket.write(request);
  });
}

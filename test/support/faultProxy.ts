// A small HTTP proxy in front of the real reference server that injects the faults a correct server
// cannot produce: a connection dropped mid-response, 503 with Retry-After, 413, 400 on one result of
// a batch, 401 in mid-flight, slow answers, a skewed server_time. Everything else is forwarded
// unchanged. It records every request it saw, so tests assert on traffic rather than on log text.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_PREFIX } from '../../src/protocol/schemas';

/** enroll, heartbeat, postures, unenroll, or any other path. */
type Route = string;

export interface SeenRequest {
  route: Route;
  method: string;
  /** Parsed JSON body, or undefined when it was not JSON (test/support/daemonWire.ts reads it typed). */
  body: unknown;
  bodyBytes: number;
  hasAuthorization: boolean;
  /** Status the agent received; 0 when the connection was dropped. */
  status: number;
  /** When the request arrived (ms since epoch). */
  at: number;
  /** POSTURE_REPORT_HEADER the agent received, if any. */
  reportId?: string;
}

type Fault =
  /** Answer without forwarding. */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Forward (the server processes it), then cut the connection in the middle of the response. */
  | { kind: 'drop' }
  /** Forward after a delay. */
  | { kind: 'delay'; ms: number }
  /** Never forwarded nor answered: the connection stays open until the client or the proxy ends it. */
  | { kind: 'hang' }
  /** Forward and rewrite the JSON answer. */
  | { kind: 'rewrite'; transform: (body: unknown) => unknown };

interface FaultRule {
  route?: Route;
  /** Further condition on the request body. */
  when?: (body: unknown) => boolean;
  fault: Fault;
  /** How many requests it applies to (default: all). */
  times?: number;
}

export interface FaultProxy {
  url: string;
  readonly requests: SeenRequest[];
  /** Requests to one route. */
  seen(route: Route): SeenRequest[];
  add(rule: FaultRule): void;
  clearRules(): void;
  /** Resolves once `predicate` holds for the recorded requests (polls every 20 ms). */
  waitFor(predicate: (requests: SeenRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Called as each request arrives, before it is answered. */
  onRequest?: (request: SeenRequest) => void;
  stop(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const requests: SeenRequest[] = [];
  let rules: (FaultRule & { remaining: number })[] = [];

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const seen: SeenRequest = {
        route: path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length + 1) : path,
        method: req.method ?? 'GET',
        body: parseJson(raw.toString('utf8')),
        bodyBytes: raw.length,
        hasAuthorization: typeof req.headers.authorization === 'string',
        status: 0,
        at: Date.now(),
      };
      requests.push(seen);
      proxy.onRequest?.(seen);
      const rule = rules.find((r) => r.remaining > 0 && (!r.route || r.route === seen.route) && (!r.when || r.when(seen.body)));
      if (rule) rule.remaining -= 1;
      const fault = rule?.fault;

      if (fault?.kind === 'answer') {
        seen.status = fault.status;
        const body = fault.body === undefined ? '' : JSON.stringify(fault.body);
        res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
        res.end(body);
        return;
      }
      if (fault?.kind === 'hang') return;
      const forward = () =>
        forwardTo(
          upstream,
          req.method ?? 'GET',
          path,
          req.headers,
          raw,
          (status, headers, body) => {
            if (fault?.kind === 'drop') {
              // Part of a status line, then the connection goes: the server did the work, the agent never hears.
              res.socket?.write('HTTP/1.1 20');
              res.socket?.destroy();
              return;
            }
            let out = body;
            if (fault?.kind === 'rewrite') {
              const parsed = parseJson(body.toString('utf8'));
              if (parsed !== undefined) out = Buffer.from(JSON.stringify(fault.transform(parsed)));
            }
            seen.status = status;
            const reportId = headers['posture-report-id'];
            if (typeof reportId === 'string') seen.reportId = reportId;
            const { 'content-length': _length, 'transfer-encoding': _encoding, connection: _connection, ...rest } = headers;
            res.writeHead(status, { ...rest, ...(out.length > 0 ? { 'content-length': String(out.length) } : {}) });
            res.end(out);
          },
          () => {
            res.socket?.destroy();
          },
        );
      if (fault?.kind === 'delay') setTimeout(forward, fault.ms);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    requests,
    seen: (route) => requests.filter((r) => r.route === route),
    add: (rule) => void rules.push({ ...rule, remaining: rule.times ?? Number.POSITIVE_INFINITY }),
    clearRules: () => void (rules = []),
    async waitFor(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(requests)) {
        if (Date.now() > deadline) {
          const summary = requests.map((r) => `${r.route}:${r.status}`).join(' ');
          throw new Error(`proxy: condition not met within ${timeoutMs} ms; saw ${summary || 'no request'}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}

function forwardTo(
  upstream: URL,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  done: (status: number, headers: IncomingHttpHeaders, body: Buffer) => void,
  failed: () => void,
): void {
  const { host: _host, connection: _connection, ...rest } = headers;
  const req = httpRequest(
    { host: upstream.hostname, port: upstream.port, method, path, headers: { ...rest, host: upstream.host } },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(res.statusCode ?? 502, res.headers, Buffer.concat(chunks)));
      res.on('error', failed);
    },
  );
  req.on('error', failed);
  req.end(body);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

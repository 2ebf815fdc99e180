// The agent routes every device calls on schedule (heartbeat, postures), each defined once and
// served two ways: as a fastify route (registerAgentRoute), and directly on node:http in front of
// fastify (directAgentRoutes), which answers the common shape of those requests without fastify's
// per-request lifecycle (its request and reply objects, hooks, promises and listeners: about a
// fifth of a heartbeat's CPU over a new TLS connection, docs/server.md). The direct path takes a
// request only when nothing about it needs fastify: POST to the exact path (a query string
// allowed), a Content-Type agents send, a Content-Length within the route's limit, not from a
// trusted proxy. Everything else (chunked bodies, other content types, oversized bodies, wrong
// methods, proxied requests) goes to fastify, which answers it as it always has. Both ways
// authenticate, spend the budgets, read and parse the body and answer errors through the same
// functions, with the same bodies and headers.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { authenticateDevice, deviceByAuthorization, deviceOf } from './auth';
import type { AuthenticatedDevice } from './db/store';
import type { DeviceCache } from './deviceCache';
import { HttpError, badRequest } from './errors';

type AgentAnswer = { status: 200; json: object } | { status: 204; headers: Record<string, string> };

export interface AgentRoute {
  path: string;
  bodyLimit: number;
  /** After authentication, before the body is read: spends the device's budgets (a 429 HttpError). */
  admit(device: AuthenticatedDevice, headers: IncomingHttpHeaders): void;
  /** The answer to the request's body (undefined when empty); refusals are thrown as HttpErrors. */
  answer(device: AuthenticatedDevice, body: unknown): Promise<AgentAnswer>;
}

export function registerAgentRoute(app: FastifyInstance, devices: DeviceCache, route: AgentRoute): void {
  const admit = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // A callback hook: fastify answers a throw from it as the request's error.
    route.admit(deviceOf(request), request.headers);
    done();
  };
  app.post(route.path, { bodyLimit: route.bodyLimit, onRequest: [authenticateDevice(devices), admit] }, async (request, reply) => {
    const answer = await route.answer(deviceOf(request), request.body);
    if (answer.status === 204) return reply.code(204).headers(answer.headers).send();
    return answer.json;
  });
}

/** What the direct path shares with the fastify application (app.ts). */
export interface DirectServing {
  /** The body's JSON text as a value (undefined for an empty body); a 400 HttpError when it is not JSON. */
  parseJson(text: string): unknown;
  /** What to answer for a thrown error (logged when it is the server's own failure). */
  httpError(error: unknown, path: string, bodyLimit: number): HttpError;
  /** Metrics and the request log, once a request is answered. */
  answered(request: IncomingMessage, path: string, status: number, ms: number, deviceId: string | undefined): void;
  /** The server is stopping: answers close their connection. */
  closing(): boolean;
  /** Requests left to fastify whatever their shape (from a trusted proxy: X-Forwarded-For is read there). */
  bypass(request: IncomingMessage): boolean;
}

/** Content-Type values agents send; any other (valid or not) is fastify's to answer. */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const JSON_TYPE = 'application/json; charset=utf-8';

/** The answer's message when a request breaks off in its body (as app.ts answers fastify's). */
export const UNREADABLE_BODY = 'the request could not be read';

/**
 * A request listener that answers `routes` directly when it can, and returns false for any request
 * it leaves to fastify (nothing of it read).
 */
export function directAgentRoutes(
  routes: readonly AgentRoute[],
  devices: DeviceCache,
  serving: DirectServing,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  return (request, response) => {
    if (request.method !== 'POST') return false;
    const url = request.url ?? '';
    const query = url.indexOf('?');
    const route = byPath.get(query === -1 ? url : url.slice(0, query));
    if (route === undefined) return false;
    const { headers } = request;
    // No Content-Length: a chunked body (Node refuses a request that has both).
    const length = headers['content-length'];
    if (length === undefined || !JSON_TYPES.has(headers['content-type'] ?? '')) return false;
    // Node has refused a malformed Content-Length; a larger one gets fastify's early 413.
    const declared = Number(length);
    if (declared > route.bodyLimit || serving.bypass(request)) return false;
    void serveDirectly(route, request, response, devices, serving);
    return true;
  };
}

async function serveDirectly(
  route: AgentRoute,
  request: IncomingMessage,
  response: ServerResponse,
  devices: DeviceCache,
  serving: DirectServing,
): Promise<void> {
  const start = performance.now();
  if (serving.closing()) response.setHeader('connection', 'close');
  let device: AuthenticatedDevice | undefined;
  let status: number;
  try {
    device = await deviceByAuthorization(devices, request.headers.authorization);
    route.admit(device, request.headers);
    let body: unknown;
    try {
      // An agent's request usually arrives whole with its headers: its body is then taken at once.
      body = serving.parseJson(request.complete ? bufferedBody(request) : await readBody(request));
    } catch (error) {
      // As fastify does: the client may still be sending, so its connection ends with this answer.
      response.setHeader('connection', 'close');
      throw error;
    }
    const answer = await route.answer(device, body);
    status = answer.status;
    if (answer.status === 204) {
      response.writeHead(204, { ...answer.headers, 'cache-control': 'no-store' });
      response.end();
    } else {
      send(response, 200, {}, JSON.stringify(answer.json));
    }
  } catch (error) {
    const httpError = serving.httpError(error, route.path, route.bodyLimit);
    status = httpError.statusCode;
    send(response, status, httpError.headers, JSON.stringify({ error: httpError.code, message: httpError.message }));
  }
  serving.answered(request, route.path, status, performance.now() - start, device?.id);
}

function send(response: ServerResponse, status: number, headers: Record<string, string>, text: string): void {
  response.writeHead(status, {
    ...headers,
    'content-type': JSON_TYPE,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

// Node frames a body by its Content-Length (anything past it is the next request), so a body read
// to its end has exactly the declared length.

/** The body of a request received whole (`request.complete`), from the stream's buffer. */
function bufferedBody(request: IncomingMessage): string {
  const body = request.read() as Buffer | null;
  return body === null ? '' : body.toString('utf8');
}

/** The whole body as text; a 400 HttpError when the request breaks off. */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (error?: Error) => {
      request.off('data', onData).off('end', onEnd).off('error', onEnd);
      if (error !== undefined) reject(badRequest(UNREADABLE_BODY));
      else resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    request.on('data', onData).on('end', onEnd).on('error', onEnd);
  });
}

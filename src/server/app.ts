// The HTTP application: JSON parsing, routing errors (404/405) refused before the body is read,
// one error body for everything ({error, message}), one allow-listed log line per request at
// debug and a summary at info (requestLog.ts).
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HookHandlerDoneFunction,
} from 'fastify';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { EXTENSION_ROUTES, ROUTES } from '../protocol/schemas';
import { decorateAdmin, registerAdminCookies } from './adminAuth';
import { UNREADABLE_BODY, directAgentRoutes, registerAgentRoute, type DirectServing } from './agentRoute';
import { decorateDevice } from './auth';
import { devicePageRoutes } from './console/devicePageRoutes';
import { consoleRoutes } from './console/routes';
import type { AppContext } from './context';
import { databaseErrorAnswers, type DatabaseErrorAnswer } from './databaseErrors';
import { DEVICE_PAGE_PATH } from './devicePage';
import { HttpError, badRequest } from './errors';
import { limitForwardedAddresses } from './forwarded';
import { adminApiRoutes } from './routes/adminApi';
import { NotFoundError, UsageError } from './usage';
import { enrollRoute } from './routes/enroll';
import { healthRoute, HEALTH_PATH, READY_PATH } from './routes/health';
import { metricsRoute, METRICS_PATH } from './routes/metrics';
import { heartbeatRoute } from './routes/heartbeat';
import { RequestLog } from './requestLog';
import { posturesRoute } from './routes/postures';
import { policyRoute } from './routes/policy';
import { registerRoute } from './routes/register';
import { unenrollRoute } from './routes/unenroll';
import { devicePageRoute } from './routes/devicePage';

/** Methods each known path answers; any other method gets 405 with this Allow header. */
const ALWAYS_ALLOWED: ReadonlyArray<readonly [string, string]> = [
  [ROUTES.enroll, 'POST'],
  [ROUTES.heartbeat, 'POST'],
  [ROUTES.postures, 'POST'],
  [ROUTES.unenroll, 'POST'],
  [EXTENSION_ROUTES.register, 'POST'],
  [EXTENSION_ROUTES.devicePage, 'POST'],
  [DEVICE_PAGE_PATH, 'GET'],
  [HEALTH_PATH, 'GET, HEAD'],
  [READY_PATH, 'GET, HEAD'],
  [METRICS_PATH, 'GET, HEAD'],
];
/** With the policy extension on; with `serve --no-policy` its path is no route at all (404), as on the spec's server. */
const POLICY_ALLOWED: ReadonlyArray<readonly [string, string]> = [[EXTENSION_ROUTES.policy, 'POST']];

/** Whole-request deadline: generous for 1 MiB on a slow link, bounded against slow-loris clients. */
const REQUEST_TIMEOUT_MS = 60_000;
/** Time from connecting (or the end of the previous request) to the end of the headers. */
const HEADERS_TIMEOUT_MS = 10_000;
/** An idle keep-alive connection is closed after this. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A connection without traffic either way for this long is closed. */
const IDLE_TIMEOUT_MS = 30_000;
/** How often the header and request deadlines are enforced (Node's default is every 30 s). */
const DEADLINE_CHECK_INTERVAL_MS = 1_000;
/** Bodies no route reads: nothing legitimate sends more than a small form there. */
const UNREAD_BODY_LIMIT = 4 * 1024;
const NODE_SERVER_OPTIONS = { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: DEADLINE_CHECK_INTERVAL_MS };

export function buildApp(context: AppContext): FastifyInstance {
  const { logger } = context;
  const allowed: ReadonlyMap<string, string> = new Map([...ALWAYS_ALLOWED, ...(context.config.policy ? POLICY_ALLOWED : [])]);
  const agentRoutes = [heartbeatRoute(context), posturesRoute(context)];
  // The agent routes' requests of the usual shape are answered before fastify sees them (agentRoute.ts).
  let direct: (request: IncomingMessage, response: ServerResponse) => boolean = () => false;
  const options = {
    // fastify's own lines (its listening banner, per-request lines) stay quiet: the app logs one
    // allow-listed line per request itself, and serve.ts announces the URL.
    loggerInstance: logger.child({}, { level: atLeastWarn(logger.level) }),
    logController: new LogController({ disableRequestLogging: true }),
    // fastify's request.log is a pino child per request by default, a sizeable share of a
    // heartbeat's time; nothing here logs through it, and fastify's own rare lines (at warn) need
    // no request id, so every request shares the instance's logger.
    childLoggerFactory: (instanceLogger: FastifyBaseLogger) => instanceLogger,
    // Never trust a client-chosen request id in our logs.
    requestIdHeader: false as const,
    // Requests on open keep-alive connections during shutdown are still served (the database closes after).
    return503OnClosing: false,
    serverFactory: (fastifyHandler: (request: IncomingMessage, response: ServerResponse) => void) => {
      const handler = (request: IncomingMessage, response: ServerResponse) => {
        if (!direct(request, response)) fastifyHandler(request, response);
      };
      const { tls } = context.config;
      const server = tls ? createHttpsServer({ ...tls, ...NODE_SERVER_OPTIONS }, handler) : createHttpServer(NODE_SERVER_OPTIONS, handler);
      // What fastify sets on a server it creates itself.
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = REQUEST_TIMEOUT_MS;
      server.setTimeout(IDLE_TIMEOUT_MS);
      return server;
    },
    // Every route that reads a body sets its own limit (the spec's, per route); this one bounds
    // the bodies nothing reads (unknown paths, a JSON body sent to a console form route).
    bodyLimit: UNREAD_BODY_LIMIT,
    // request.ip: X-Forwarded-For is read only on connections from a configured proxy.
    trustProxy: (address: string) => context.config.forwarded?.proxies.has(address) ?? false,
  };
  const app = Fastify(options) as unknown as FastifyInstance;

  const parseJson = jsonParser(app);
  acceptJson(app, parseJson);
  decorateDevice(app);
  decorateAdmin(app);
  registerAdminCookies(app, context.config.tls !== undefined);
  app.addHook('onRequest', refuseUnroutable(allowed));
  if (context.config.forwarded) app.addHook('onRequest', limitForwardedAddresses(context.config.forwarded));
  app.setNotFoundHandler((request) => {
    throw routingError(request, allowed);
  });
  const databaseError = databaseErrorAnswers(logger);
  const answerFor = (error: FastifyError | HttpError, path: string, bodyLimit: number | undefined): HttpError => {
    const httpError = toHttpError(error, bodyLimit, databaseError);
    if (httpError.code === 'internal_error') logger.error({ err: error, path }, 'request failed');
    return httpError;
  };
  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    const httpError = answerFor(error, loggedPath(request, allowed), request.routeOptions.bodyLimit);
    reply.code(httpError.statusCode).headers(httpError.headers).send({ error: httpError.code, message: httpError.message });
  });
  // Callback hooks: an async one costs each request a promise and a turn of the microtask queue.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  const requests = new RequestLog(logger);
  /** Metrics and the request log of one answered request. */
  const answered = (raw: IncomingMessage, path: string, status: number, ms: number, deviceId?: string, admin?: string) => {
    const method = raw.method ?? '';
    context.metrics.observeRequest(path, method, status, ms / 1000);
    requests.count(method, path, status, ms);
    if (requests.perRequest) {
      requests.line({
        method,
        path,
        status,
        ms: Math.round(ms * 10) / 10,
        device_id: deviceId,
        admin,
        // Whether this TLS connection resumed a session (no full handshake); absent over plain HTTP.
        tls_resumed: (raw.socket as Partial<TLSSocket>).isSessionReused?.(),
      });
    }
  };
  app.addHook('onResponse', (request, reply, done) => {
    answered(request.raw, loggedPath(request, allowed), reply.statusCode, reply.elapsedTime, request.device?.id, request.admin?.actor);
    done();
  });
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    requests.stop();
    done();
  });
  const serving: DirectServing = {
    parseJson,
    httpError: (error, path, bodyLimit) => answerFor(error as FastifyError, path, bodyLimit),
    answered,
    closing: () => closing,
    bypass: (request) => context.config.forwarded?.proxies.has(request.socket.remoteAddress) ?? false,
  };
  direct = directAgentRoutes(agentRoutes, context.devices, serving);

  healthRoute(app, context);
  metricsRoute(app, context);
  enrollRoute(app, context);
  for (const route of agentRoutes) registerAgentRoute(app, context.devices, route);
  unenrollRoute(app, context);
  if (context.config.policy) policyRoute(app, context);
  registerRoute(app, context);
  adminApiRoutes(app, context);
  void app.register(consoleRoutes(context, databaseError));
  devicePageRoute(app, context);
  void app.register(devicePageRoutes(context, databaseError));
  return app;
}

/**
 * A body's JSON text as a value, with fastify's parser (which refuses `__proto__` and `constructor`
 * keys). An empty body is `undefined`, which /unenroll accepts and every other route refuses with 400.
 */
function jsonParser(app: FastifyInstance): (text: string) => unknown {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (text) => {
    if (text === '') return undefined;
    let value: unknown;
    let failed = false;
    // With a callback the default parser answers at once and returns nothing to wait for.
    void parse(undefined as never, text, (error, parsed) => {
      failed = error !== null;
      value = parsed;
    });
    if (failed) throw badRequest(INVALID_JSON);
    return value;
  };
}

/** application/json (any parameters) is the only body type. */
function acceptJson(app: FastifyInstance, parseJson: (text: string) => unknown): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    let value: unknown;
    try {
      value = parseJson(body as string);
    } catch (error) {
      done(error as HttpError, undefined);
      return;
    }
    done(null, value);
  });
}

function pathOf(request: FastifyRequest): string {
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
}

/**
 * Known routes only, as their patterns (`/api/admin/v1/devices/:id`): an unknown path may carry
 * anything, even a credential, and a query string may too.
 */
function loggedPath(request: FastifyRequest, allowed: ReadonlyMap<string, string>): string {
  const path = pathOf(request);
  if (allowed.has(path)) return path;
  return request.is404 ? '(unknown)' : (request.routeOptions.url ?? '(unknown)');
}

function routingError(request: FastifyRequest, allowedMethods: ReadonlyMap<string, string>): HttpError {
  const allowed = allowedMethods.get(pathOf(request));
  if (allowed === undefined)
    return new HttpError(
      'not_found',
      'no such route; the agent API lives under /api/agent/v1, the admin API under /api/admin/v1, the console under /console',
    );
  return new HttpError('method_not_allowed', `${request.method} is not allowed here; use ${allowed}`, { allow: allowed });
}

/** Unknown paths and wrong methods are answered before any body is read (a callback hook: fastify answers its throw). */
function refuseUnroutable(allowed: ReadonlyMap<string, string>) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (request.is404) throw routingError(request, allowed);
    done();
  };
}

function atLeastWarn(level: string): string {
  return ['fatal', 'error', 'silent'].includes(level) ? level : 'warn';
}

const INVALID_JSON = 'the request body is not valid JSON';

function toHttpError(error: FastifyError | HttpError, bodyLimit: number | undefined, databaseError: DatabaseErrorAnswer): HttpError {
  if (error instanceof HttpError) return error;
  const fromDatabase = databaseError(error);
  if (fromDatabase) return fromDatabase;
  // The admin service layer's refusals (admin.ts), shared with the CLI.
  if (error instanceof NotFoundError) return new HttpError('not_found', error.message);
  if (error instanceof UsageError) return badRequest(error.message);
  if (error.code?.startsWith('FST_CSRF'))
    return new HttpError('forbidden', 'a request authenticated by the console session needs its CSRF token (x-csrf-token)');
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError('payload_too_large', `the request body exceeds this route's limit of ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return badRequest('the request body must have Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('the Content-Length does not match the request body');
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return new HttpError('payload_too_large', 'the request body is too large');
  if (status >= 400 && status < 500) return badRequest(UNREADABLE_BODY);
  return new HttpError('internal_error', 'internal server error');
}

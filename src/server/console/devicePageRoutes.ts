// GET /my-device: the device page (src/server/devicePage.ts) in the browser. A visit with `?code=`
// exchanges the code for a page session (cookie on this path only, HttpOnly, SameSite=Strict,
// Secure under TLS) and is redirected to the same path without the code; a visit without one shows
// the session's device. POST /my-device/check is the page's "Check again" (../checkRequests.ts).
// Whatever fails shows the plain "this link has expired" page. The console's CSP and escaping apply
// (consoleHeaders, html.ts).
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context';
import type { DatabaseErrorAnswer } from '../databaseErrors';
import {
  CHECK_AGAIN_PATH,
  DEVICE_PAGE_COOKIE,
  DEVICE_PAGE_PATH,
  PAGE_SESSION_LIFETIME_MS,
  devicePageView,
  redeemDevicePageCode,
  requestCheckFromPage,
} from '../devicePage';
import type { Html } from './html';
import { devicePageExpired, myDevicePage } from './pages';
import { consoleHeaders } from './routes';

/** What a link whose code was used, expired or never existed answers. */
const GONE = 410;
/** The "check again" form sends no field: anything larger is not that form. */
const FORM_BODY_LIMIT = 1024;

export function devicePageRoutes(context: AppContext, databaseError: DatabaseErrorAnswer) {
  const { store, logger, checks } = context;
  const pageSettings = { heartbeatIntervalSeconds: context.config.heartbeatIntervalSeconds };
  const secure = context.config.tls !== undefined;
  const cookieOptions = { path: DEVICE_PAGE_PATH, httpOnly: true, sameSite: 'strict' as const, secure };

  return async function devicePagePlugin(app: FastifyInstance): Promise<void> {
    await app.register(helmet, consoleHeaders(secure));
    const page = (reply: FastifyReply, markup: Html, code = 200) => reply.code(code).type('text/html; charset=utf-8').send(markup.text);

    app.setErrorHandler((error: FastifyError, request, reply) => {
      // A request fastify refused before the handler (a body over the limit) keeps its status.
      const refused = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : undefined;
      const fromDatabase = databaseError(error);
      if (fromDatabase) reply.headers(fromDatabase.headers);
      else if (refused === undefined) logger.error({ err: error, path: DEVICE_PAGE_PATH }, 'request failed');
      return page(reply, devicePageExpired(), fromDatabase?.statusCode ?? refused ?? 500);
    });

    // No HEAD: a link preview's HEAD must not spend the code.
    app.get(DEVICE_PAGE_PATH, { exposeHeadRoute: false }, async (request: FastifyRequest, reply) => {
      const now = new Date();
      const query = (request.query ?? {}) as Record<string, unknown>;
      if (query.code !== undefined) {
        const session = typeof query.code === 'string' ? await redeemDevicePageCode(store, query.code, now) : undefined;
        if (session === undefined) return page(reply, devicePageExpired(), GONE);
        reply.setCookie(DEVICE_PAGE_COOKIE, session, { ...cookieOptions, maxAge: PAGE_SESSION_LIFETIME_MS / 1000 });
        return reply.redirect(DEVICE_PAGE_PATH, 303);
      }
      const view = await devicePageView(store, checks, request.cookies[DEVICE_PAGE_COOKIE], now);
      if (!view) return page(reply, devicePageExpired(), GONE);
      return page(reply, myDevicePage(view, now, pageSettings));
    });

    // "Check again": the form's body carries nothing; the session cookie (SameSite=Strict, so never
    // sent by another site's form) names the device.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_request, _body, done) => done(null, {}),
    );
    app.post(CHECK_AGAIN_PATH, async (request: FastifyRequest, reply) => {
      const now = new Date();
      const session = request.cookies[DEVICE_PAGE_COOKIE];
      const outcome = await requestCheckFromPage(store, checks, session, now);
      if (!outcome) return page(reply, devicePageExpired(), GONE);
      if (outcome.kind === 'recorded') {
        logger.info({ event: 'device_check_requested', path: CHECK_AGAIN_PATH }, 'check again requested from the device page');
        return reply.redirect(DEVICE_PAGE_PATH, 303);
      }
      const view = await devicePageView(store, checks, session, now);
      if (!view) return page(reply, devicePageExpired(), GONE);
      const seconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      return page(
        reply,
        myDevicePage(view, now, { ...pageSettings, notice: `You asked less than a minute ago; try again in ${seconds} s.` }),
        429,
      );
    });
  };
}

// The admin console under /console: server-rendered pages over the same service layer as the admin
// API and CLI. Sessions live in the store (HttpOnly, SameSite=Strict cookie, Secure under TLS);
// every POST carries a CSRF token bound to the session (adminAuth.ts); signing in and out renews the
// session and the CSRF secret; helmet sets a strict CSP (nothing but this server's stylesheet);
// sign-in attempts are limited per client address and per account (signInThrottle.ts).
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import {
  complianceSeries,
  complianceSummary,
  createDevice,
  DEVICE_LIST_PARAMETERS,
  deviceHistory,
  deviceStatusChanges,
  findDevice,
  getDevice,
  listDevicePage,
  organizationInScope,
  revokeDevice,
} from '../admin';
import { SESSION_LIFETIME_MS, signIn, signInEmail, signOut, type AdminPrincipal } from '../adminAccess';
import { CSRF_COOKIE, SESSION_COOKIE, adminCookieOptions, adminOf, auditWho, csrfToken, sessionOf } from '../adminAuth';
import { listAudit, recordAudit, type AuditEvent } from '../audit';
import { AUDIT_PATH, auditPage } from './auditPage';
import { WEBHOOKS_PATH, createdWebhookPage, webhooksPage } from './webhookPages';
import { WEBHOOK_EVENTS, createWebhook, deleteWebhook, deliveryLog, listWebhooks } from '../webhooks';
import type { AppContext } from '../context';
import type { DatabaseErrorAnswer } from '../databaseErrors';
import type { SignInAttempts } from '../db/store';
import { HttpError } from '../errors';
import { fleetFailures } from '../remediation';
import { NotFoundError, UsageError } from '../usage';
import { enrollWays, secretInstallWays } from './enrollInstructions';
import { SECRETS_PATH, SECRET_LIFETIMES, createdSecretPage, secretsPage } from './secretPages';
import { createSecret, labelsFromLines, listSecrets, revokeSecret } from '../enrollSecrets';
import { DEFAULT_PUBLIC_URL, PUBLIC_URL_SETTING, enrollmentLink } from '../publicUrl';
import { CREATED_COOKIE, CREATED_COOKIE_SECONDS, createdCookieValue, createdPath, tokenFromCookie } from './createdDevice';
import { trusted, type Html } from './html';
import { SignInAddressLimit, SignInThrottle } from './signInThrottle';
import {
  CONSOLE_PREFIX,
  STYLESHEET_PATH,
  TOKEN_LIFETIMES,
  createdOncePage,
  devicePage,
  devicesPage,
  enrollPage,
  enrolledPage,
  errorPage,
  overviewPage,
  revokePage,
  signInPage,
  type PageContext,
} from './pages';
import { STYLESHEET } from './style';
import { documentFromForm, policyPage } from './policyForm';
import { setPolicy, showPolicy } from '../policy';
import { deviceExceptions, grantException, listExceptions, removeException, type ExceptionView } from '../exceptions';
import { parseId } from '../ids';
import { EXCEPTIONS_PATH, exceptionsSection, type ExceptionFormState } from './exceptionForms';
import { labelsSection, type LabelsFormState } from './labelForm';
import { changeDeviceLabels, labelsAuditEvent } from '../deviceLabels';

const FORM_BODY_LIMIT = 16 * 1024;
const DEVICE_PAGE_SIZE = 50;
const HISTORY_PAGE_SIZE = 50;
const AUDIT_PAGE_SIZE = 50;
const LIST_FIELDS = DEVICE_LIST_PARAMETERS;

type Form = Record<string, string>;
type Query = Record<string, string | string[] | undefined>;

/** A query's single-valued, non-empty parameters among `names` (repeats: the last one). */
function pick(request: FastifyRequest, names: readonly string[]): Record<string, string | undefined> {
  const query = (request.query ?? {}) as Query;
  const picked: Record<string, string | undefined> = {};
  for (const name of names) {
    const value = query[name];
    const text = Array.isArray(value) ? value.at(-1) : value;
    if (text !== undefined && text !== '') picked[name] = text;
  }
  return picked;
}

function formOf(request: FastifyRequest): Form {
  return (request.body ?? {}) as Form;
}

/** helmet's options for the console's pages (and the device page): a strict CSP, nothing but this server's stylesheet. */
export function consoleHeaders(secure: boolean) {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    hsts: secure ? { maxAge: 15_552_000 } : false,
    referrerPolicy: { policy: 'no-referrer' as const },
  };
}

export function consoleRoutes(context: AppContext, databaseError: DatabaseErrorAnswer) {
  const { store, config, logger } = context;
  const secure = config.tls !== undefined;
  const cookieOptions = adminCookieOptions(secure);
  const signInAttempts = new SignInThrottle(store);
  const signInAddresses = new SignInAddressLimit(store, config.signInsPerAddressPerMinute);
  /** A signed-in request's account's sign-in attempts, read with its session (requireSession). */
  const attemptsNotice = new WeakMap<FastifyRequest, SignInAttempts>();
  /** Records an action the signed-in admin has just done (audit.ts). */
  const audit = (request: FastifyRequest, event: AuditEvent) => recordAudit(store, auditWho(request), event);

  return async function consolePlugin(app: FastifyInstance): Promise<void> {
    await app.register(helmet, consoleHeaders(secure));
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );

    const page = (reply: FastifyReply, markup: Html, code = 200) => reply.code(code).type('text/html; charset=utf-8').send(markup.text);
    const pageContext = (request: FastifyRequest, reply: FastifyReply): PageContext => ({
      principal: request.admin,
      csrfToken: csrfToken(request, reply),
      now: new Date(),
      // An account's sessions are told of the sign-in attempts made on it since its last sign-in.
      signInAttempts: attemptsNotice.get(request),
    });
    const tooMany = (request: FastifyRequest, reply: FastifyReply, waitMs: number, why: string) => {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      reply.header('retry-after', String(seconds));
      return page(reply, signInPage(pageContext(request, reply), `${why}; try again in ${seconds} s.`), 429);
    };

    app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
      let status: number;
      let message: string;
      const fromDatabase = databaseError(error);
      if (fromDatabase) {
        status = fromDatabase.statusCode;
        message =
          status === 503
            ? 'The database is unavailable for a moment; try again shortly.'
            : 'A value in the address or the form is not one the database can store.';
        reply.headers(fromDatabase.headers);
      } else if (error instanceof HttpError) [status, message] = [error.statusCode, error.message];
      else if (error instanceof NotFoundError) [status, message] = [404, error.message];
      else if (error instanceof UsageError) [status, message] = [400, error.message];
      else if (error.code?.startsWith('FST_CSRF'))
        [status, message] = [403, 'This form has expired or did not come from this console; reload the page and try again.'];
      else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
        [status, message] = [400, 'The request could not be read.'];
      else {
        logger.error({ err: error, path: request.routeOptions.url }, 'request failed');
        [status, message] = [500, 'Internal server error.'];
      }
      if (error instanceof HttpError) reply.headers(error.headers);
      return page(reply, errorPage(pageContext(request, reply), status, message), status);
    });

    /** onRequest of every signed-in page: the session's admin, or off to the sign-in page. */
    async function requireSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const principal = await sessionOf(store, request);
      if (!principal) {
        await reply.redirect(`${CONSOLE_PREFIX}/sign-in`, 303);
        return;
      }
      request.admin = principal;
      const attempts = principal.account === null ? undefined : await signInAttempts.attemptsOf(principal.account);
      if (attempts) attemptsNotice.set(request, attempts);
    }
    const csrf = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => app.csrfProtection(request, reply, done);
    const signedIn = { onRequest: requireSession };
    const signedInPost = { onRequest: requireSession, preHandler: csrf };

    app.get(STYLESHEET_PATH, async (_request, reply) => reply.type('text/css; charset=utf-8').send(STYLESHEET));
    app.get(CONSOLE_PREFIX, async (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/overview`, 303));
    // Any other console address gets the console's own page, not the API's JSON.
    app.get(`${CONSOLE_PREFIX}/*`, () => {
      throw new NotFoundError('There is no console page at this address.');
    });

    app.get(`${CONSOLE_PREFIX}/sign-in`, async (request, reply) => {
      if (await sessionOf(store, request)) return reply.redirect(`${CONSOLE_PREFIX}/overview`, 303);
      return page(reply, signInPage(pageContext(request, reply)));
    });

    app.post(`${CONSOLE_PREFIX}/sign-in`, { preHandler: csrf }, async (request, reply) => {
      const addressWait = await signInAddresses.attempt(request.ip);
      if (addressWait !== undefined) return tooMany(request, reply, addressWait, 'Too many sign-in attempts');
      const form = formOf(request);
      const email = signInEmail(form.email ?? '');
      const accountWait = await signInAttempts.attempt(email, request.ip);
      if (accountWait !== undefined) return tooMany(request, reply, accountWait, 'Too many failed sign-ins for this account');
      const outcome = await signIn(store, email, form.password ?? '');
      if (!outcome.ok) {
        // The email only when it is an account's: an unknown one may be a password typed in the wrong field.
        const attempts = outcome.account === undefined ? undefined : await signInAttempts.attemptsOf(outcome.account);
        logger.warn(
          {
            event: 'console_sign_in_refused',
            ...(attempts && {
              actor: `account:${outcome.account}`,
              attempts: attempts.attempts,
              address: request.ip,
              ...(attempts.blockedUntil > 0 && { next_attempt_at: new Date(attempts.blockedUntil).toISOString() }),
            }),
          },
          'console sign-in refused',
        );
        // Who: the account when the email is one (an unknown email may be a password typed in the wrong field: never recorded).
        const account = outcome.account === undefined ? undefined : await store.findAdminAccount(outcome.account);
        await recordAudit(
          store,
          { actor: account === undefined ? 'unknown' : `account:${account.email}`, address: request.ip },
          { action: 'sign_in_refused', orgId: account?.orgId ?? null, detail: { attempts: attempts?.attempts ?? null } },
        );
        return page(reply, signInPage(pageContext(request, reply), 'Wrong email or password.', form.email ?? ''), 401);
      }
      await signInAttempts.succeeded(email);
      logger.info({ event: 'console_sign_in', actor: outcome.principal.actor }, 'console sign-in');
      await recordAudit(
        store,
        { actor: outcome.principal.actor, address: request.ip },
        { action: 'sign_in', orgId: outcome.principal.scope.orgId },
      );
      // A new session identifier and a new CSRF secret: the session this browser held ends, and no
      // token minted before signing in is accepted after (each is bound to its session besides).
      await endSession(request, reply);
      reply.setCookie(SESSION_COOKIE, outcome.sessionSecret, { ...cookieOptions, maxAge: SESSION_LIFETIME_MS / 1000 });
      return reply.redirect(`${CONSOLE_PREFIX}/overview`, 303);
    });

    app.post(`${CONSOLE_PREFIX}/sign-out`, { preHandler: csrf }, async (request, reply) => {
      const principal = await sessionOf(store, request);
      await endSession(request, reply);
      if (principal)
        await recordAudit(store, { actor: principal.actor, address: request.ip }, { action: 'sign_out', orgId: principal.scope.orgId });
      return reply.redirect(`${CONSOLE_PREFIX}/sign-in`, 303);
    });

    /** Deletes the request's session, if any, and clears its cookie and the CSRF secret's. */
    async function endSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const secret = request.cookies[SESSION_COOKIE];
      if (secret !== undefined) await signOut(store, secret);
      reply.clearCookie(SESSION_COOKIE, cookieOptions);
      reply.clearCookie(CSRF_COOKIE, cookieOptions);
    }

    app.get(`${CONSOLE_PREFIX}/overview`, signedIn, async (request, reply) => {
      const { scope } = adminOf(request);
      const { org } = pick(request, ['org']);
      const intervals = {
        heartbeatIntervalSeconds: config.heartbeatIntervalSeconds,
        postureIntervalSeconds: config.postureIntervalSeconds,
      };
      const summary = await complianceSummary(store, scope, { org, ...intervals });
      const { days } = await complianceSeries(store, scope, { org, days: 30, retentionMs: config.retentionMs });
      const failures = await fleetFailures(store, org, scope);
      return page(reply, overviewPage(pageContext(request, reply), { org, summary, days, failures }));
    });

    app.get(`${CONSOLE_PREFIX}/devices`, signedIn, async (request, reply) => {
      const query = pick(request, LIST_FIELDS);
      const listed = await listDevicePage(store, adminOf(request).scope, { ...query, limit: DEVICE_PAGE_SIZE });
      return page(reply, devicesPage(pageContext(request, reply), { query, page: listed }));
    });

    /** A device's page, with its labels, its exceptions and the form granting one (each refused: what was typed, and why). */
    async function showDevicePage(
      request: FastifyRequest<{ Params: { id: string } }>,
      reply: FastifyReply,
      refused: { exceptionForm?: ExceptionFormState; labelsForm?: LabelsFormState } = {},
      code = 200,
    ) {
      const { scope } = adminOf(request);
      const { check, before, log } = pick(request, ['check', 'before', 'log']);
      const device = await getDevice(store, scope, request.params.id);
      const historyRequest = {
        check,
        before: before === undefined || !/^\d{1,15}$/.test(before) ? undefined : Number(before),
        limit: HISTORY_PAGE_SIZE,
      };
      // Status changes, or (log=1) every result received.
      const history =
        log === '1'
          ? { log: await deviceHistory(store, scope, device.device_id, historyRequest) }
          : { changes: await deviceStatusChanges(store, scope, device.device_id, historyRequest) };
      const context = pageContext(request, reply);
      const target = { device: device.device_id, org: device.org };
      const exceptions = exceptionsSection(context, target, await deviceExceptions(store, scope, device.device_id), refused.exceptionForm);
      const labels = labelsSection(context, device, refused.labelsForm);
      return page(reply, devicePage(context, { device, history, check, exceptions, labels }), code);
    }

    app.get<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/devices/:id`, signedIn, (request, reply) => showDevicePage(request, reply));

    // POST→redirect→GET: a granted exception answers 303 to the device's page; a refused one is the page again, with why (400).
    app.post<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/devices/:id/exceptions`, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const device = await getDevice(store, principal.scope, request.params.id);
      const form = formOf(request);
      const granted = await grantFromConsole(principal, { org: device.org, device: device.device_id }, form);
      if (typeof granted === 'string') return showDevicePage(request, reply, { exceptionForm: { error: granted, values: form } }, 400);
      return reply.redirect(`${CONSOLE_PREFIX}/devices/${encodeURIComponent(device.device_id)}#exceptions`, 303);
    });

    // POST→redirect→GET: saved labels answer 303 to the device's page; refused ones are the page again, with why (400).
    app.post<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/devices/:id/labels`, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const text = formOf(request).labels ?? '';
      let view;
      try {
        view = await changeDeviceLabels(store, principal.scope, request.params.id, { replace: labelsFromLines(text) });
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError))
          return showDevicePage(request, reply, { labelsForm: { error: error.message, text } }, 400);
        throw error;
      }
      // This process's own commit is no external change: the policy cache is dropped here.
      context.policies.forgetAll();
      const event = labelsAuditEvent(view);
      if (event) {
        logger.info(
          { event: 'device_labels_set', device_id: view.device_id, actor: principal.actor },
          'device labels set from the console',
        );
        await audit(request, event);
      }
      return reply.redirect(`${CONSOLE_PREFIX}/devices/${encodeURIComponent(view.device_id)}#labels`, 303);
    });

    /** Grants an exception from a console form: the exception, or why it was refused (nothing stored). */
    async function grantFromConsole(
      principal: AdminPrincipal,
      target: { org: string; device?: string; label?: string },
      form: Form,
    ): Promise<ExceptionView | string> {
      let granted: ExceptionView;
      try {
        const request = {
          ...target,
          check: form.check ?? '',
          reason: form.reason ?? '',
          expires: form.expires ?? '',
          actor: principal.actor,
        };
        granted = await grantException(store, principal.scope, request);
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError)) return error.message;
        throw error;
      }
      logger.info(
        { event: 'policy_exception_granted', exception_id: granted.exception_id, check_key: granted.check_key, actor: principal.actor },
        'policy exception granted from the console',
      );
      return granted;
    }

    app.get<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/devices/:id/revoke`, signedIn, async (request, reply) => {
      const device = await getDevice(store, adminOf(request).scope, request.params.id);
      return page(reply, revokePage(pageContext(request, reply), device));
    });

    app.post<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/devices/:id/revoke`, signedInPost, async (request, reply) => {
      if (formOf(request).confirm !== 'yes') throw new UsageError('revoking needs the confirmation');
      const principal = adminOf(request);
      const outcome = await revokeDevice(store, request.params.id, new Date(), principal.scope);
      // This process's own commit does not move the store's change counter: drop the device cache here.
      context.devices.forgetAll();
      logger.info(
        { event: 'device_revoked', device_id: request.params.id, actor: principal.actor, outcome },
        'device revoked from the console',
      );
      await audit(request, { action: 'device.revoke', target: { type: 'device', id: request.params.id }, detail: { outcome } });
      return reply.redirect(`${CONSOLE_PREFIX}/devices/${encodeURIComponent(request.params.id)}`, 303);
    });

    /** An organization's policy page, with its exceptions (each form refused: what was typed, and why). */
    async function showPolicyPage(
      request: FastifyRequest,
      reply: FastifyReply,
      refused: { policy?: string; exceptionForm?: ExceptionFormState } = {},
      code = 200,
    ) {
      const principal = adminOf(request);
      const org = principal.orgName ?? pick(request, ['org']).org;
      const context = pageContext(request, reply);
      if (org === undefined) return page(reply, policyPage(context, undefined, org), code);
      const view = await showPolicy(store, principal.scope, { org });
      const exceptions = await listExceptions(store, principal.scope, { org });
      const section = exceptionsSection(context, { org: view.org }, exceptions, refused.exceptionForm);
      return page(reply, policyPage(context, view, org, refused.policy, section), code);
    }

    app.get(`${CONSOLE_PREFIX}/policy`, signedIn, (request, reply) => showPolicyPage(request, reply));

    // POST→redirect→GET: a stored policy answers 303 to its page; a refused one is the form again, with why (400).
    app.post(`${CONSOLE_PREFIX}/policy`, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const org = principal.orgName ?? pick(request, ['org']).org;
      if (org === undefined) throw new UsageError('choose an organization');
      const view = await showPolicy(store, principal.scope, { org });
      try {
        const document = documentFromForm(view.document, formOf(request));
        const set = await setPolicy(store, principal.scope, { org, document, actor: principal.actor });
        // This process's own commit is no external change: the policy cache is dropped here.
        context.policies.forgetAll();
        logger.info({ event: 'policy_set', org: set.org, version: set.version, actor: principal.actor }, 'policy changed from the console');
        await audit(request, { action: 'policy.set', org: set.org, detail: { label: set.label, version: set.version } });
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError))
          return showPolicyPage(request, reply, { policy: error.message }, 400);
        throw error;
      }
      return reply.redirect(`${CONSOLE_PREFIX}/policy?org=${encodeURIComponent(view.org)}`, 303);
    });

    // A label's exception, from the policy page: 303 back to it, or the page again with why (400).
    app.post(EXCEPTIONS_PATH, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const org = principal.orgName ?? pick(request, ['org']).org;
      if (org === undefined) throw new UsageError('choose an organization');
      const form = formOf(request);
      const granted = await grantFromConsole(principal, { org, label: form.label ?? '' }, form);
      if (typeof granted === 'string') return showPolicyPage(request, reply, { exceptionForm: { error: granted, values: form } }, 400);
      return reply.redirect(`${CONSOLE_PREFIX}/policy?org=${encodeURIComponent(granted.org)}#exceptions`, 303);
    });

    // Ends an exception now, then back to the page it was ended from: the device's, or the policy page.
    app.post<{ Params: { id: string } }>(`${EXCEPTIONS_PATH}/:id/remove`, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const form = formOf(request);
      const org = principal.orgName ?? form.org ?? '';
      await removeException(store, principal.scope, { org, id: request.params.id });
      logger.info(
        { event: 'policy_exception_removed', exception_id: request.params.id, actor: principal.actor },
        'policy exception ended from the console',
      );
      const device = form.device === undefined ? undefined : parseId('device', form.device);
      return reply.redirect(
        device === undefined
          ? `${CONSOLE_PREFIX}/policy?org=${encodeURIComponent(org)}#exceptions`
          : `${CONSOLE_PREFIX}/devices/${encodeURIComponent(device)}#exceptions`,
        303,
      );
    });

    app.get(`${CONSOLE_PREFIX}/enroll`, signedIn, async (request, reply) => page(reply, enrollPage(pageContext(request, reply))));

    app.post(`${CONSOLE_PREFIX}/enroll`, signedInPost, async (request, reply) => {
      const principal: AdminPrincipal = adminOf(request);
      const form = formOf(request);
      const lifetime = TOKEN_LIFETIMES.find(([value]) => value === form.ttl);
      if (!lifetime) throw new UsageError('choose a token lifetime from the list');
      const org = principal.orgName ?? form.org ?? '';
      if (principal.scope.orgId !== null) await organizationInScope(store, principal.scope, org);
      const name = form.name?.trim() ? form.name : undefined;
      let created;
      try {
        created = await createDevice(store, { org, name, tokenTtlMs: lifetime[2] * 1000 }, new Date(), principal.scope);
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError)) {
          return page(reply, enrollPage(pageContext(request, reply), error.message.replace(/^--/, '')), 400);
        }
        throw error;
      }
      logger.info({ event: 'device_created', device_id: created.device_id, actor: principal.actor }, 'device created from the console');
      await audit(request, {
        action: 'device.create',
        org: created.org,
        target: { type: 'device', id: created.device_id },
        detail: { token_expires_at: created.token_expires_at },
      });
      // POST → redirect → GET: reloading the page shows it again without creating another device (createdDevice.ts).
      const path = createdPath(created.device_id);
      const session = request.cookies[SESSION_COOKIE] ?? '';
      reply.setCookie(CREATED_COOKIE, createdCookieValue(session, created.device_id, created.enrollment_token), {
        ...cookieOptions,
        path,
        maxAge: CREATED_COOKIE_SECONDS,
      });
      return reply.redirect(path, 303);
    });

    /** The device just created: its token and link the first time (from the cookie, which this clears), a note after. */
    app.get<{ Params: { id: string } }>(`${CONSOLE_PREFIX}/enroll/created/:id`, signedIn, async (request, reply) => {
      const device = await findDevice(store, request.params.id, adminOf(request).scope);
      const path = createdPath(device.id);
      const token = tokenFromCookie(request.cookies[CREATED_COOKIE], request.cookies[SESSION_COOKIE], device.id);
      if (request.cookies[CREATED_COOKIE] !== undefined) reply.clearCookie(CREATED_COOKIE, { ...cookieOptions, path });
      const context = pageContext(request, reply);
      // Shown only while the token is unused and unexpired: the device is still waiting for it.
      if (
        token === undefined ||
        device.state !== 'PENDING' ||
        device.tokenExpiresAt === null ||
        device.tokenExpiresAt <= context.now.toISOString()
      )
        return page(reply, createdOncePage(context, device));
      const serverUrl = (await store.getSetting(PUBLIC_URL_SETTING)) ?? DEFAULT_PUBLIC_URL;
      const created = {
        device_id: device.id,
        org: device.orgName,
        enrollment_token: token,
        server_url: serverUrl,
        enrollment_link: enrollmentLink(serverUrl, token),
        token_expires_at: device.tokenExpiresAt,
      };
      const qr = await QRCode.toString(created.enrollment_link, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
      return page(reply, enrolledPage(context, created, trusted(qr), enrollWays(created)));
    });

    app.get(SECRETS_PATH, signedIn, async (request, reply) => {
      const { scope } = adminOf(request);
      return page(reply, secretsPage(pageContext(request, reply), await listSecrets(store, scope, undefined)));
    });

    // Like the device's enrollment page, the answer to the POST shows the new secret, once: a
    // redirect would have to keep it somewhere to show it after.
    app.post(SECRETS_PATH, signedInPost, async (request, reply) => {
      const principal: AdminPrincipal = adminOf(request);
      const form = formOf(request);
      const org = principal.orgName ?? form.org ?? '';
      if (principal.scope.orgId !== null) await organizationInScope(store, principal.scope, org);
      let created;
      try {
        const lifetime = SECRET_LIFETIMES.find(([value]) => value === (form.expires ?? ''));
        if (!lifetime) throw new UsageError('choose an expiry from the list');
        const maxUses = form.max_uses?.trim() ? Number(form.max_uses) : undefined;
        const labels = labelsFromLines(form.labels ?? '');
        const note = form.note?.trim() ? form.note : undefined;
        const expiresInMs = lifetime[2] === undefined ? undefined : lifetime[2] * 1000;
        created = await createSecret(store, { org, expiresInMs, maxUses, labels, note }, new Date(), principal.scope);
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError)) {
          const secrets = await listSecrets(store, principal.scope, undefined);
          return page(reply, secretsPage(pageContext(request, reply), secrets, error.message), 400);
        }
        throw error;
      }
      logger.info(
        { event: 'enroll_secret_created', secret_id: created.secret_id, actor: principal.actor },
        'enrollment secret created from the console',
      );
      await audit(request, {
        action: 'enroll_secret.create',
        org,
        target: { type: 'enroll_secret', id: created.secret_id },
        detail: { expires_at: created.expires_at, max_uses: created.max_uses },
      });
      const serverUrl = (await store.getSetting(PUBLIC_URL_SETTING)) ?? DEFAULT_PUBLIC_URL;
      const ways = secretInstallWays(serverUrl, created.enroll_secret);
      return page(reply, createdSecretPage(pageContext(request, reply), created, org.trim(), ways), 201);
    });

    app.post<{ Params: { id: string } }>(`${SECRETS_PATH}/:id/revoke`, signedInPost, async (request, reply) => {
      if (formOf(request).confirm !== 'yes') throw new UsageError('revoking needs the confirmation');
      const principal = adminOf(request);
      const outcome = await revokeSecret(store, request.params.id, new Date(), principal.scope);
      logger.info(
        { event: 'enroll_secret_revoked', secret_id: request.params.id, actor: principal.actor, outcome },
        'enrollment secret revoked from the console',
      );
      await audit(request, {
        action: 'enroll_secret.revoke',
        target: { type: 'enroll_secret', id: request.params.id },
        detail: { outcome },
      });
      return reply.redirect(SECRETS_PATH, 303);
    });

    const webhooksView = async (request: FastifyRequest) => {
      const { scope } = adminOf(request);
      return { webhooks: await listWebhooks(store, scope, undefined), deliveries: await deliveryLog(store, scope, undefined) };
    };

    app.get(WEBHOOKS_PATH, signedIn, async (request, reply) =>
      page(reply, webhooksPage(pageContext(request, reply), await webhooksView(request))),
    );

    // Like a new secret, the answer to the POST shows the webhook's signing secret, once.
    app.post(WEBHOOKS_PATH, signedInPost, async (request, reply) => {
      const principal = adminOf(request);
      const form = formOf(request);
      let created;
      try {
        created = await createWebhook(store, principal.scope, {
          org: principal.orgName ?? form.org ?? '',
          url: (form.url ?? '').trim(),
          format: form.format,
          events: WEBHOOK_EVENTS.filter((e) => form[`event_${e}`] === 'yes'),
          includeEvidence: form.include_evidence === 'yes',
          actor: principal.actor,
        });
      } catch (error) {
        if (error instanceof UsageError && !(error instanceof NotFoundError))
          return page(reply, webhooksPage(pageContext(request, reply), await webhooksView(request), error.message), 400);
        throw error;
      }
      await audit(request, {
        action: 'webhook.create',
        org: created.org,
        target: { type: 'webhook', id: created.webhook_id },
        detail: { url: created.url, format: created.format, events: created.events.join(','), include_evidence: created.include_evidence },
      });
      return page(reply, createdWebhookPage(pageContext(request, reply), created), 201);
    });

    app.post<{ Params: { id: string } }>(`${WEBHOOKS_PATH}/:id/delete`, signedInPost, async (request, reply) => {
      if (formOf(request).confirm !== 'yes') throw new UsageError('deleting needs the confirmation');
      const { org } = await deleteWebhook(store, adminOf(request).scope, request.params.id);
      await audit(request, { action: 'webhook.delete', org, target: { type: 'webhook', id: request.params.id } });
      return reply.redirect(WEBHOOKS_PATH, 303);
    });

    app.get(AUDIT_PATH, signedIn, async (request, reply) => {
      const { action, before } = pick(request, ['action', 'before']);
      const olderThan = before === undefined || !/^\d{1,15}$/.test(before) ? undefined : Number(before);
      const entries = await listAudit(store, adminOf(request).scope, { action, before: olderThan, limit: AUDIT_PAGE_SIZE });
      return page(reply, auditPage(pageContext(request, reply), { action, before: olderThan, page: entries }));
    });
  };
}

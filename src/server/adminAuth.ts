// Admin authentication for the admin API and the console: an admin API token (`Authorization:
// Bearer dat_…`) or the console's session cookie. A request the cookie authenticates must also
// carry the CSRF token when it changes something.
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateAdminToken, sessionPrincipal, type AdminPrincipal } from './adminAccess';
import type { AuditWho } from './audit';
import type { Store } from './db/store';
import { unauthorized } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admin authentication hooks. */
    admin: AdminPrincipal | null;
  }
}

export const SESSION_COOKIE = 'device_agent_session';
/** The CSRF secret's cookie (@fastify/csrf-protection keeps the secret there, HttpOnly). */
export const CSRF_COOKIE = 'device_agent_csrf';
/**
 * CSRF tokens are bound to the session they were minted in (@fastify/csrf's userInfo): a token from
 * before sign-in, or of an ended session, is refused even with its own secret cookie sent back (a
 * cookie set from a sibling domain). Before sign-in they are bound to this word. The HMAC key is not
 * a secret: what an attacker cannot compute is the hash of a session secret they do not have. It is
 * one constant so that every `--workers` process, which share no memory, accepts every token.
 */
const SIGNED_OUT = 'signed-out';
const CSRF_BINDING_KEY = 'device-agent console CSRF binding';
const BEARER = /^Bearer +([^\s]+) *$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function decorateAdmin(app: FastifyInstance): void {
  app.decorateRequest('admin', null);
}

/** What the CSRF tokens of this request are bound to: its session cookie, or none. */
function csrfBinding(request: FastifyRequest): string {
  return request.cookies[SESSION_COOKIE] || SIGNED_OUT;
}

/** The session's and the CSRF secret's cookie: HttpOnly, SameSite=Strict, Secure under TLS. */
export function adminCookieOptions(secure: boolean) {
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure };
}

/** Cookies, and CSRF tokens bound to the session, for the console and the admin API. */
export function registerAdminCookies(app: FastifyInstance, secure: boolean): void {
  void app.register(cookie);
  void app.register(csrfProtection, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: adminCookieOptions(secure),
    csrfOpts: { userInfo: true, hmacKey: CSRF_BINDING_KEY },
    getUserInfo: csrfBinding,
  });
}

/** A CSRF token for this request's session (for a form's hidden `_csrf`, or `x-csrf-token`). */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: csrfBinding(request) });
}

/** The session cookie's principal, when the request carries a valid one. */
export async function sessionOf(store: Store, request: FastifyRequest): Promise<AdminPrincipal | undefined> {
  const secret = request.cookies[SESSION_COOKIE];
  return secret === undefined ? undefined : sessionPrincipal(store, secret);
}

/**
 * onRequest hook of the admin API. A Bearer token is checked first; without an Authorization
 * header the session cookie is used, and then unsafe methods need the CSRF token (checked in
 * preHandler by `csrfForSessions`, once the body is read).
 */
export function authenticateAdmin(store: Store) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const token = BEARER.exec(header)?.[1];
      const principal = token === undefined ? undefined : await authenticateAdminToken(store, token);
      if (!principal) throw unauthorized('the admin token is not valid: malformed, unknown or revoked');
      request.admin = principal;
      return;
    }
    const principal = await sessionOf(store, request);
    if (!principal) throw unauthorized('missing "Authorization: Bearer <admin token>" header (or a console session)');
    request.admin = principal;
  };
}

/** preHandler: a cookie-authenticated request that changes something must carry the CSRF token. */
export function csrfForSessions(app: FastifyInstance) {
  return function check(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    if (SAFE_METHODS.has(request.method) || request.headers.authorization !== undefined) {
      done();
      return;
    }
    app.csrfProtection(request, reply, done);
  };
}

/** The authenticated admin; only called behind authenticateAdmin or the console's session hook. */
export function adminOf(request: FastifyRequest): AdminPrincipal {
  if (!request.admin) throw new Error('admin route reached without an authenticated admin');
  return request.admin;
}

/** The audit log's who and where of an authenticated admin request (request.ip honours --trust-proxy). */
export function auditWho(request: FastifyRequest): AuditWho {
  return { actor: adminOf(request).actor, address: request.ip };
}

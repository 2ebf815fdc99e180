// "Device created" after POST → redirect → GET (console/routes.ts): the new device's enrollment
// token, which the database keeps only as a hash, reaches the page the browser is sent to in a
// cookie of its own: HttpOnly, SameSite=Strict, scoped to that page's path, for two minutes, bound to
// the session that created it (an HMAC keyed by the session's secret), and cleared by the GET that
// shows it. Nothing is stored on the server, so any process of a deployment can answer the GET;
// reloading the page creates nothing and shows the token no more.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CONSOLE_PREFIX } from './pages';

export const CREATED_COOKIE = 'device_agent_created';
/** Long enough for the redirect on a slow connection; the token is in the browser no longer. */
export const CREATED_COOKIE_SECONDS = 120;

/** Where the browser is sent after creating the device. */
export function createdPath(deviceId: string): string {
  return `${CONSOLE_PREFIX}/enroll/created/${encodeURIComponent(deviceId)}`;
}

function binding(session: string, deviceId: string, token: string): Buffer {
  return createHmac('sha256', session).update(`${deviceId}\n${token}`).digest();
}

/** The cookie's value: the token and its binding to the session and the device. */
export function createdCookieValue(session: string, deviceId: string, token: string): string {
  return `${token}.${binding(session, deviceId, token).toString('base64url')}`;
}

/** The token the cookie carries for this device and session; undefined when it carries none (or was not made by them). */
export function tokenFromCookie(value: string | undefined, session: string | undefined, deviceId: string): string | undefined {
  if (value === undefined || session === undefined) return undefined;
  const dot = value.indexOf('.');
  if (dot < 1) return undefined;
  const token = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  const expected = binding(session, deviceId, token);
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : undefined;
}

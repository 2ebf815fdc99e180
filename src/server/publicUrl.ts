// The origin agents use to reach the server: announced by `serve` in the database, so that
// `device create` prints a server URL and enrollment link that work.
import { hostname } from 'node:os';
import { LINK_SCHEME } from '../protocol/constants';

export const PUBLIC_URL_SETTING = 'public_url';
/** What `device create` assumes when no server has announced itself yet (the serve defaults). */
export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

/** The origin of an http(s) URL, or undefined when `text` is not one (path, query, userinfo…). */
export function parseOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const plain = url.username === '' && url.password === '' && url.search === '' && url.hash === '' && url.pathname === '/';
  return plain && (url.protocol === 'http:' || url.protocol === 'https:') ? url.origin : undefined;
}

/** http(s)://host:port for a listening address; wildcard addresses name this machine instead. */
export function originFor(scheme: 'http' | 'https', host: string, port: number): string {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  const name = wildcard ? hostname() : host;
  return new URL(`${scheme}://${name.includes(':') ? `[${name}]` : name}:${port}`).origin;
}

export function enrollmentLink(serverUrl: string, token: string): string {
  return `${LINK_SCHEME}://enroll?server=${encodeURIComponent(serverUrl)}&token=${token}`;
}

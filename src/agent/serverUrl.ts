// Validation of the server URL (contract: "Agent behaviour decided here"). The result is the
// normalised origin (lower-case host, default port dropped) that the client and the enrollment
// record use. Messages describe the problem without echoing the input: it may carry userinfo.
import { InvalidInputError } from './errors';

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  if (!host.startsWith('127.')) return false;
  // The WHATWG parser has already canonicalised IPv4 forms such as 127.1 to 127.0.0.1. node:net is
  // loaded only here: every command reads the server URL, few need the built-in (start-up).
  return process.getBuiltinModule('node:net').isIP(host) === 4;
}

/** Returns the origin (`https://host[:port]`) or throws InvalidInputError. */
export function parseServerUrl(input: string): string {
  const raw = input.trim();
  const fail = (why: string) =>
    new InvalidInputError(`invalid server URL: ${why} (expected https://<host>[:<port>], http:// only for localhost)`);
  if (raw === '') throw fail('it is empty');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw fail('it has no scheme');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fail('it is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail(`the scheme must be https, not ${url.protocol.slice(0, -1)}`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw fail('plain http is allowed only for loopback hosts (localhost, 127.0.0.0/8, [::1]); use https');
  }
  // The raw authority: the parser drops an empty user name ("https://@host").
  if (
    raw
      .slice(url.protocol.length + 2)
      .split(/[/?#\\]/, 1)[0]!
      .includes('@')
  )
    throw fail('it must not contain a user name or password');
  // The parser drops an empty "?" or "#", so look at the raw text for them.
  if (raw.includes('?')) throw fail('it must not have a query');
  if (raw.includes('#')) throw fail('it must not have a fragment');
  if (url.pathname !== '/') throw fail('it must not have a path'); // http(s) URLs always have a path, "/" at least
  return url.origin;
}

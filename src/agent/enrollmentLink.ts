// The desktop enrollment link (contract): device-agent://enroll?server=<https origin>&token=<96 hex>.
// Strict: scheme and host fixed, only `server` and `token`, each exactly once. The link carries the
// token, so no message here repeats it or any part of it.
import { LINK_SCHEME } from '../protocol/schemas';
import { InvalidInputError } from './errors';
import { parseEnrollmentToken } from './enrollmentToken';
import { parseServerUrl } from './serverUrl';

export interface EnrollmentInput {
  serverUrl: string;
  token: string;
}

const ALLOWED_PARAMS = ['server', 'token'] as const;

export function parseEnrollmentLink(input: string): EnrollmentInput {
  const fail = (why: string) =>
    new InvalidInputError(`invalid enrollment link: ${why} (expected scheme ${LINK_SCHEME}, host enroll, parameters server and token)`);
  let url: URL;
  try {
    url = new URL(input); // the parser itself strips surrounding whitespace
  } catch {
    throw fail('it is not a valid URL');
  }
  if (url.protocol !== `${LINK_SCHEME}:`) throw fail(`the scheme must be ${LINK_SCHEME}`);
  if (url.hostname.toLowerCase() !== 'enroll' || url.port !== '' || url.username !== '' || url.password !== '') {
    throw fail('the host must be "enroll"');
  }
  // Some desktop launchers append a slash after the host; nothing else is allowed there.
  if (url.pathname !== '' && url.pathname !== '/') throw fail('it must not have a path');
  // The raw text: the parser drops an empty "#".
  if (input.includes('#')) throw fail('it must not have a fragment');

  const params = url.searchParams;
  for (const name of new Set(params.keys())) {
    if (!(ALLOWED_PARAMS as readonly string[]).includes(name)) throw fail('only the "server" and "token" parameters are allowed');
  }
  const [server, token] = ALLOWED_PARAMS.map((name) => {
    const values = params.getAll(name);
    if (values.length !== 1) throw fail(`the "${name}" parameter must appear exactly once`);
    return values[0]!;
  }) as [string, string];
  return { serverUrl: parseServerUrl(server), token: parseEnrollmentToken(token, 'the enrollment link') };
}

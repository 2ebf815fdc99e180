// The input rules of the contract ("Agent behaviour decided here"), in process. The CLI-level tests
// (enroll.test.ts) prove that each rule exits 2 before any request.
import { describe, expect, it } from 'vitest';
import { parseEnrollmentLink } from '../../src/agent/enrollmentLink';
import { parseEnrollmentToken } from '../../src/agent/enrollmentToken';
import { InvalidInputError } from '../../src/agent/errors';
import { parseServerUrl } from '../../src/agent/serverUrl';
import { redactCredentials } from '../../src/cli/exitCodes';
import { parseEnrollSecret } from '../../src/agent/enrollSecret';
import { processTitle } from '../../src/cli/redaction';

const TOKEN = 'ab'.repeat(48);
const link = (query: string) => `device-agent://enroll?${query}`;

function rejection(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as Error).message;
  }
  throw new Error('expected an InvalidInputError');
}

describe('server URL', () => {
  it.each([
    ['https://agents.example.com', 'https://agents.example.com'],
    ['https://Agents.Example.COM/', 'https://agents.example.com'],
    ['https://agents.example.com:443', 'https://agents.example.com'],
    ['https://agents.example.com:8443/', 'https://agents.example.com:8443'],
    ['  https://agents.example.com  ', 'https://agents.example.com'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['http://LOCALHOST', 'http://localhost'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.45.6.7', 'http://127.45.6.7'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://[2001:db8::1]', 'https://[2001:db8::1]'],
  ])('accepts %s as %s', (input, origin) => {
    expect(parseServerUrl(input)).toBe(origin);
  });

  it.each([
    ['', 'empty'],
    ['agents.example.com', 'no scheme'],
    ['ftp://agents.example.com', 'scheme must be https'],
    ['http://agents.example.com', 'plain http is allowed only for loopback'],
    ['http://10.0.0.1', 'plain http is allowed only for loopback'],
    ['http://128.0.0.1', 'plain http is allowed only for loopback'],
    ['http://localhost.example.com', 'plain http is allowed only for loopback'],
    // Names that start like 127.0.0.0/8 are not addresses: only a parsed IPv4 address counts.
    ['http://127.attacker.example', 'plain http is allowed only for loopback'],
    ['http://127.0.0.1.nip.io', 'plain http is allowed only for loopback'],
    ['http://[::ffff:127.0.0.1]', 'plain http is allowed only for loopback'],
    ['https://user:secret@agents.example.com', 'user name or password'],
    ['https://user@agents.example.com', 'user name or password'],
    ['https://agents.example.com/api', 'must not have a path'],
    ['https://agents.example.com/api/agent/v1', 'must not have a path'],
    ['https://agents.example.com?x=1', 'must not have a query'],
    ['https://agents.example.com/?', 'must not have a query'],
    ['https://agents.example.com#top', 'must not have a fragment'],
    ['https://', 'not a valid URL'],
    ['1https://agents.example.com', 'it has no scheme'],
    ['ftp://agents.example.com', 'the scheme must be https, not ftp ('],
    ['https://@agents.example.com', 'user name or password'],
    ['https://:pw@agents.example.com', 'user name or password'],
    // An "@" after the authority is not a user name: the message names what is really wrong.
    ['https://agents.example.com/@x', 'it must not have a path'],
    ['https://agents.example.com\\@x', 'it must not have a path'],
    ['https://agents.example.com?to=@x', 'it must not have a query'],
    ['https://agents.example.com#@x', 'it must not have a fragment'],
  ])('refuses %j (%s)', (input, why) => {
    const message = rejection(() => parseServerUrl(input));
    expect(message).toContain(why);
    if (input.includes('secret')) expect(message).not.toContain('secret');
  });
});

describe('enrollment token', () => {
  it('accepts 96 hexadecimal characters in either case', () => {
    expect(parseEnrollmentToken(TOKEN, '--token')).toBe(TOKEN);
    expect(parseEnrollmentToken(TOKEN.toUpperCase(), '--token')).toBe(TOKEN.toUpperCase());
  });

  it.each([
    ['', '(it is empty)'],
    [TOKEN.slice(1), '(it has 95 characters)'],
    [`${TOKEN}0`, '(it has 97 characters)'],
    [`${TOKEN.slice(1)}g`, '(it has 96 characters, not all hexadecimal)'],
    [` ${TOKEN.slice(1)}`, '(it has 96 characters, not all hexadecimal)'],
    ['g', '(it has 1 characters, not all hexadecimal)'],
  ])('refuses a malformed token (%#) without repeating it', (input, why) => {
    const message = rejection(() => parseEnrollmentToken(input, '--token'));
    expect(message).toBe(`invalid enrollment token from --token: it must be exactly 96 hexadecimal characters ${why}`);
    if (input.length > 8) expect(message).not.toContain(input.trim().slice(0, 16));
  });
});

describe('enrollment link', () => {
  const server = encodeURIComponent('https://agents.example.com');

  it('gives the server origin and the token', () => {
    expect(parseEnrollmentLink(link(`server=${server}&token=${TOKEN}`))).toEqual({ serverUrl: 'https://agents.example.com', token: TOKEN });
    expect(parseEnrollmentLink(link(`token=${TOKEN}&server=${server}`)).serverUrl).toBe('https://agents.example.com');
    expect(parseEnrollmentLink(`DEVICE-AGENT://enroll/?server=${server}&token=${TOKEN}`).token).toBe(TOKEN);
    expect(parseEnrollmentLink(` \n${link(`server=${server}&token=${TOKEN}`)}\n`).token).toBe(TOKEN);
    expect(parseEnrollmentLink(link(`server=${encodeURIComponent('http://127.0.0.1:8080')}&token=${TOKEN}`)).serverUrl).toBe(
      'http://127.0.0.1:8080',
    );
  });

  it.each([
    [`other://enroll?server=${server}&token=${TOKEN}`, 'scheme must be device-agent'],
    [`device-agent://enrol?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent:///enroll?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent:enroll?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent://user@enroll?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent://:pw@enroll?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent://enroll?server=${server}&token=${TOKEN}#`, 'must not have a fragment'],
    [`device-agent://enroll:99?server=${server}&token=${TOKEN}`, 'host must be "enroll"'],
    [`device-agent://enroll/now?server=${server}&token=${TOKEN}`, 'must not have a path'],
    [link(`server=${server}&token=${TOKEN}#frag`), 'must not have a fragment'],
    [link(`server=${server}&token=${TOKEN}&next=x`), 'only the "server" and "token" parameters'],
    [link(`server=${server}&token=${TOKEN}&token=${TOKEN}`), '"token" parameter must appear exactly once'],
    [link(`server=${server}&server=${server}&token=${TOKEN}`), '"server" parameter must appear exactly once'],
    [link(`token=${TOKEN}`), '"server" parameter must appear exactly once'],
    [link(`server=${server}`), '"token" parameter must appear exactly once'],
    [link(`server=${encodeURIComponent('http://agents.example.com')}&token=${TOKEN}`), 'plain http is allowed only for loopback'],
    [link(`server=${encodeURIComponent('https://agents.example.com/path')}&token=${TOKEN}`), 'must not have a path'],
    [
      link(`server=${server}&token=${TOKEN.slice(2)}`),
      'invalid enrollment token from the enrollment link: it must be exactly 96 hexadecimal characters',
    ],
    ['not a link at all', 'not a valid URL'],
  ])('refuses %#: %s', (input, why) => {
    const message = rejection(() => parseEnrollmentLink(input));
    expect(message).toContain(why);
    expect(message).not.toContain(TOKEN.slice(0, 16));
    expect(message).not.toContain(input);
    expect(redactCredentials(message)).toBe(message);
  });
});

describe('redaction of printed failures', () => {
  it('hides 96-hex runs and enrollment links', () => {
    const text = redactCredentials(`error: unknown option '--tokn=${TOKEN}' and ${link(`server=x&token=${TOKEN}`)} here`);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('device-agent://');
    expect(text).toContain(' here');
  });
});

describe('enrollment secret', () => {
  const SECRET = `das_${'0f'.repeat(32)}`;

  it('accepts 1 to 512 printable ASCII characters, the server deciding the rest', () => {
    expect(parseEnrollSecret(SECRET, 'test')).toBe(SECRET);
    expect(parseEnrollSecret('x', 'test')).toBe('x');
    expect(parseEnrollSecret('~'.repeat(512), 'test')).toBe('~'.repeat(512));
  });

  it.each([
    ['', 'it is empty'],
    ['a'.repeat(513), 'it has 513 characters, more than 512'],
    [`${SECRET} x`, 'it contains blanks, control or non-ASCII characters'],
    [`${SECRET}\t`, 'it contains blanks, control or non-ASCII characters'],
    [`${SECRET}é`, 'it contains blanks, control or non-ASCII characters'],
    [`"${SECRET}\u007f`, 'it contains blanks, control or non-ASCII characters'],
  ])('refuses %j, naming the source and never the secret', (input, why) => {
    const err = (() => {
      try {
        parseEnrollSecret(input, 'DEVICE_AGENT_ENROLL_SECRET');
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err?.message).toBe(`invalid enrollment secret from DEVICE_AGENT_ENROLL_SECRET: ${why}`);
  });

  it('is kept out of the process title: the value after --enroll-secret and --enroll-secret=<value> (not -)', () => {
    expect(processTitle(['enroll', '--server', 'https://a.example', '--enroll-secret', SECRET, '--keystore', 'file'])).toBe(
      'device-agent enroll --server https://a.example --enroll-secret --keystore file',
    );
    expect(processTitle(['enroll', `--enroll-secret=${SECRET}`])).toBe('device-agent enroll');
    expect(processTitle(['enroll', '--enroll-secret', '-', '--enroll-secret-file', '/etc/secret'])).toBe(
      'device-agent enroll --enroll-secret - --enroll-secret-file /etc/secret',
    );
  });
});

// Where `enroll` takes its inputs from (src/cli/enrollmentInput.ts), in process: real files, a real
// stream for standard input, and for the terminal a stream that answers setRawMode the way a TTY
// does (the CLI-level pseudo-terminal runs are in enroll.test.ts). Every refusal is an
// InvalidInputError (exit 2) whose message never repeats the token or the link.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { InvalidInputError } from '../../src/agent/errors';
import { MAX_SECRET_INPUT_BYTES, readSecretInput, resolveEnrollmentInput, type RawEnrollmentOptions } from '../../src/cli/enrollmentInput';
import { tempDir } from '../support/agent';

const TOKEN = 'ab'.repeat(48);
const SERVER = 'https://agents.example.com';
const LINK = `device-agent://enroll?server=${encodeURIComponent(SERVER)}&token=${TOKEN}`;
const expected: unknown = expect.objectContaining({ serverUrl: SERVER, token: TOKEN });

const piped = (text: string | Buffer[]) => Readable.from(typeof text === 'string' ? [Buffer.from(text)] : text);
function file(content: string | Buffer): string {
  const path = join(tempDir(), 'input');
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

async function refusal(raw: RawEnrollmentOptions): Promise<string> {
  const err = await resolveEnrollmentInput(raw).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  const message = (err as Error).message;
  expect(message).not.toContain(TOKEN);
  expect(message).not.toContain('device-agent://');
  return message;
}

/** A terminal: data typed in, setRawMode calls recorded (raw mode = echo off). */
function terminal() {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode: (mode: boolean) => void; rawModes: boolean[] };
  stream.isTTY = true;
  stream.rawModes = [];
  stream.setRawMode = (mode: boolean) => void stream.rawModes.push(mode);
  return stream;
}

describe('token from standard input (--token -)', () => {
  it.each([
    ['echo "$T" | … (trailing newline)', `${TOKEN}\n`],
    ['a CRLF line', `${TOKEN}\r\n`],
    ['printf %s (no newline)', TOKEN],
    ['surrounding blanks', `  ${TOKEN} \n\n`],
  ])('%s', async (_label, input) => {
    expect(
      await resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin: piped(input) }),
    ).toEqual(expected);
  });

  it('a token split across chunks', async () => {
    const stdin = piped([Buffer.from(TOKEN.slice(0, 10)), Buffer.from(TOKEN.slice(10)), Buffer.from('\n')]);
    expect(await resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin })).toEqual(expected);
  });

  it('accepts exactly 4 KiB and refuses one byte more, naming the limit', async () => {
    const padded = `${TOKEN}${' '.repeat(MAX_SECRET_INPUT_BYTES - TOKEN.length)}`;
    expect(await readSecretInput('-', 'token', piped(padded))).toBe(TOKEN);
    const message = await refusal({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin: piped(`${padded} `) });
    expect(message).toBe('standard input is larger than 4096 bytes, too large to hold an enrollment token');
  });

  it('counts bytes, not characters', async () => {
    const multibyte = 'é'.repeat(MAX_SECRET_INPUT_BYTES / 2 + 1); // 4098 bytes in 2049 characters
    expect(await readSecretInput('-', 'link', piped(multibyte)).catch((e: Error) => e.message)).toBe(
      'standard input is larger than 4096 bytes, too large to hold an enrollment link',
    );
  });

  it('DEVICE_AGENT_TOKEN=- is a token value, not standard input', async () => {
    const message = await refusal({ server: SERVER, serverSource: 'env', token: '-', tokenSource: 'env', stdin: piped(TOKEN) });
    expect(message).toContain('invalid enrollment token from DEVICE_AGENT_TOKEN');
  });
});

describe('token on a terminal', () => {
  it('turns echo off before the prompt, reads one line with backspace, and restores echo', async () => {
    const stdin = terminal();
    const pending = resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin });
    stdin.write(`x\u007f${TOKEN.slice(0, 5)}`);
    stdin.write(`${TOKEN.slice(5, 20)}z\b`);
    stdin.write(`${TOKEN.slice(20)}\rtyped ahead`);
    expect(await pending).toEqual(expected);
    expect(stdin.rawModes).toEqual([true, false]);
    expect(stdin.isPaused()).toBe(true);
  });

  it.each([
    ['Ctrl-C', '\u0003', 'no enrollment token entered'],
    ['Ctrl-D', '\u0004', 'no enrollment token entered'],
    ['a line over 4 KiB', 'a'.repeat(MAX_SECRET_INPUT_BYTES + 1), 'input too long to be an enrollment token'],
  ])('%s refuses and still restores echo', async (_label, typed, message) => {
    const stdin = terminal();
    const pending = resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin });
    stdin.write(typed);
    await expect(pending).rejects.toThrow(new InvalidInputError(message));
    expect(stdin.rawModes).toEqual([true, false]);
    expect(stdin.listenerCount('data')).toBe(0);
  });

  it('prompts on stderr, trims blanks typed around the token, and ends the prompt line', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
    try {
      const stdin = terminal();
      const pending = readSecretInput('-', 'link', stdin);
      stdin.write(`  ${TOKEN} \n`);
      expect(await pending).toBe(TOKEN);
    } finally {
      spy.mockRestore();
    }
    expect(written).toEqual(['Enrollment link (not shown): ', '\n']);
  });

  it('a line of exactly 4 KiB is read (and then refused as a token, not as too long)', async () => {
    const stdin = terminal();
    const pending = readSecretInput('-', 'token', stdin);
    stdin.write(`${'a'.repeat(MAX_SECRET_INPUT_BYTES)}\n`);
    expect(await pending).toHaveLength(MAX_SECRET_INPUT_BYTES);
  });

  it('a stream that is a TTY without setRawMode is read like a pipe', async () => {
    const stdin = Object.assign(piped(`${TOKEN}\n`), { isTTY: true });
    expect(await readSecretInput('-', 'token', stdin)).toBe(TOKEN);
  });
});

describe('token and link files', () => {
  it('reads a token file with a trailing newline, and a link file with CRLF', async () => {
    expect(await resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', tokenFile: file(`${TOKEN}\n`) })).toEqual(expected);
    expect(await resolveEnrollmentInput({ linkFile: file(`${LINK}\r\n`) })).toEqual(expected);
  });

  it('accepts exactly 4 KiB and refuses one byte more', async () => {
    const padded = `${TOKEN}${'\n'.repeat(MAX_SECRET_INPUT_BYTES - TOKEN.length)}`;
    expect(await resolveEnrollmentInput({ server: SERVER, serverSource: 'cli', tokenFile: file(padded) })).toEqual(expected);
    const big = file(`${padded}\n`);
    expect(await refusal({ server: SERVER, serverSource: 'cli', tokenFile: big })).toBe(
      `cannot read the token file ${big}: larger than 4096 bytes, too large to hold an enrollment token`,
    );
  });

  it.each([
    ['a directory', () => tempDir(), 'not a regular file'],
    ['a missing file', () => join(tempDir(), 'none'), 'ENOENT'],
  ])('refuses %s', async (_label, path, why) => {
    const where = path();
    expect(await refusal({ server: SERVER, serverSource: 'cli', tokenFile: where })).toMatch(
      new RegExp(`^cannot read the token file ${where}: .*${why}`),
    );
    expect(await refusal({ linkFile: where })).toMatch(new RegExp(`^cannot read the link file ${where}: .*${why}`));
  });

  it.skipIf(process.platform !== 'linux')('closes every file it opens, also on a refusal', async () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i += 1) {
      await readSecretInput(file(TOKEN), 'token');
      await readSecretInput(tempDir(), 'token').catch(() => undefined);
      await readSecretInput(file('x'.repeat(MAX_SECRET_INPUT_BYTES + 1)), 'token').catch(() => undefined);
    }
    expect(open()).toBeLessThanOrEqual(before);
  });

  it('reads the link from standard input with --link-file -', async () => {
    expect(await resolveEnrollmentInput({ linkFile: '-', stdin: piped(`${LINK}\n`) })).toEqual(expected);
  });
});

/** What resolveEnrollmentInput writes on stderr while it runs, and how it ends. */
async function stderrOf(raw: RawEnrollmentOptions): Promise<{ written: string[]; outcome: unknown }> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
  try {
    return { written, outcome: await resolveEnrollmentInput(raw).catch((err: unknown) => err) };
  } finally {
    spy.mockRestore();
  }
}

const LINK_ARGUMENT_WARNING =
  'device-agent: warning: an enrollment link given as an argument can be read by other local users in the process list ' +
  'while the agent starts; give it with --link-file <path> (a file only you can read) or --link-file - (standard input) instead\n';

const LINK_ARGUMENT_REFUSED =
  'an enrollment link is not accepted as an argument: other local users can read it in the process list and spend its token first. ' +
  'Nothing was sent; give it with --link-file <path> (a file only you can read) or --link-file - (standard input), ' +
  'e.g. device-agent enroll --link-file - < link.txt (old scripts may set DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 meanwhile)';

describe('the link as an argument', () => {
  it('is refused with the safe forms, before anything else is looked at, and warns of nothing', async () => {
    for (const raw of [{ link: LINK }, { link: LINK, linkFile: '-' }, { link: LINK, server: SERVER, serverSource: 'cli' as const }]) {
      const { written, outcome } = await stderrOf(raw);
      expect(outcome).toBeInstanceOf(InvalidInputError);
      expect((outcome as Error).message).toBe(LINK_ARGUMENT_REFUSED);
      expect(written).toEqual([]);
    }
  });

  it('is refused unless the opt-in is exactly true', async () => {
    expect(await refusal({ link: LINK, allowLinkArgument: false })).toBe(LINK_ARGUMENT_REFUSED);
  });

  it('with DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 (old scripts): gives the server and token, with one warning naming the safe forms', async () => {
    const { written, outcome } = await stderrOf({ link: LINK, allowLinkArgument: true });
    expect(outcome).toEqual(expected);
    expect(written).toEqual([LINK_ARGUMENT_WARNING]);
    expect(written.join('')).not.toContain(TOKEN);
  });

  it('with the opt-in, warns even when the link is then refused (it was in the process list all the same)', async () => {
    const { written, outcome } = await stderrOf({ link: LINK, allowLinkArgument: true, server: SERVER, serverSource: 'cli' });
    expect(outcome).toBeInstanceOf(InvalidInputError);
    expect(written).toEqual([LINK_ARGUMENT_WARNING]);
  });

  it('--link-file and --server with a token warn of nothing', async () => {
    expect((await stderrOf({ linkFile: file(LINK) })).written).toEqual([]);
    expect((await stderrOf({ server: SERVER, serverSource: 'cli', tokenFile: file(TOKEN) })).written).toEqual([]);
  });
});

describe('which inputs combine', () => {
  it.each<[string, RawEnrollmentOptions, string]>([
    [
      'the link and --link-file',
      { link: LINK, allowLinkArgument: true, linkFile: '-' },
      'give the enrollment link or --link-file, not both',
    ],
    [
      'the link and --server',
      { link: LINK, allowLinkArgument: true, server: SERVER, serverSource: 'cli' },
      'give either the enrollment link or --server with a token or an enrollment secret, not both',
    ],
    [
      'the link and --token',
      { link: LINK, allowLinkArgument: true, token: TOKEN, tokenSource: 'cli' },
      'give either the enrollment link or --server with a token or an enrollment secret, not both',
    ],
    [
      'the link and --token-file',
      { link: LINK, allowLinkArgument: true, tokenFile: '/dev/null' },
      'give either the enrollment link or --server with a token or an enrollment secret, not both',
    ],
    [
      '--link-file and --token-file',
      { linkFile: '-', tokenFile: '/dev/null' },
      'give either the enrollment link or --server with a token or an enrollment secret, not both',
    ],
    [
      '--token and --token-file',
      { server: SERVER, serverSource: 'cli', token: TOKEN, tokenSource: 'cli', tokenFile: '/dev/null' },
      'give --token or --token-file, not both',
    ],
    ['no server', { token: TOKEN, tokenSource: 'cli' }, 'missing the server'],
    ['no token', { server: SERVER, serverSource: 'cli' }, 'missing the enrollment token'],
  ])('refuses %s', async (_label, raw, message) => {
    expect(await refusal(raw)).toContain(message);
  });

  it('the link wins over DEVICE_AGENT_SERVER and DEVICE_AGENT_TOKEN from the environment', async () => {
    const other = 'cd'.repeat(48);
    expect(
      await resolveEnrollmentInput({
        link: LINK,
        allowLinkArgument: true,
        server: 'https://elsewhere.example',
        serverSource: 'env',
        token: other,
        tokenSource: 'env',
      }),
    ).toEqual(expected);
  });

  it('--token-file wins over DEVICE_AGENT_TOKEN', async () => {
    expect(
      await resolveEnrollmentInput({
        server: SERVER,
        serverSource: 'env',
        token: 'cd'.repeat(48),
        tokenSource: 'env',
        tokenFile: file(TOKEN),
      }),
    ).toEqual(expected);
  });

  it('names where a malformed token came from', async () => {
    expect(await refusal({ server: SERVER, serverSource: 'cli', token: 'abc', tokenSource: 'cli' })).toContain('from --token:');
    expect(await refusal({ server: SERVER, serverSource: 'cli', token: 'abc', tokenSource: 'env' })).toContain('from DEVICE_AGENT_TOKEN:');
    expect(await refusal({ server: SERVER, serverSource: 'cli', tokenFile: file('abc') })).toContain('from --token-file:');
    expect(await refusal({ server: SERVER, serverSource: 'cli', token: '-', tokenSource: 'cli', stdin: piped('abc') })).toContain(
      'from standard input:',
    );
  });
});

// Where `enroll` gets its server and token: the link (--link-file <path> / - for standard input,
// which keeps it out of the process list, or the argument), or --server/DEVICE_AGENT_SERVER with a
// token from --token-file, --token - (standard input), --token <hex> or DEVICE_AGENT_TOKEN. Everything
// is validated here, before any request. No message repeats a token or a link.
//
// The link as an argument is in the contract's command line (`device-agent enroll '<link>'`), so it
// keeps working; as it has sat in /proc/<pid>/cmdline until processTitle.ts cleared it, every use is
// warned about with the safe forms (docs/agent.md, "Secrets and the process list").
import { open } from 'node:fs/promises';
import type { OptionValueSource } from 'commander';
import { parseEnrollmentLink, type EnrollmentInput } from '../agent/enrollmentLink';
import { parseEnrollmentToken } from '../agent/enrollmentToken';
import { InvalidInputError, firstLine } from '../agent/errors';
import { parseServerUrl } from '../agent/serverUrl';

type Source = OptionValueSource | undefined;

export interface RawEnrollmentOptions {
  link?: string;
  /** A file holding the link, or `-` for standard input. */
  linkFile?: string;
  server?: string;
  serverSource?: Source;
  token?: string;
  tokenSource?: Source;
  tokenFile?: string;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

type Stdin = NonNullable<RawEnrollmentOptions['stdin']>;

/** A token or link file, or piped input, is at most a line; anything longer is not one. */
export const MAX_SECRET_INPUT_BYTES = 4096;

const LINK_ARGUMENT_WARNING =
  'warning: an enrollment link given as an argument can be read by other local users in the process list while the agent starts; ' +
  'give it with --link-file <path> (a file only you can read) or --link-file - (standard input) instead';

export async function resolveEnrollmentInput(raw: RawEnrollmentOptions): Promise<EnrollmentInput> {
  if (raw.link !== undefined) process.stderr.write(`device-agent: ${LINK_ARGUMENT_WARNING}\n`);
  const tokenOnCommandLine = raw.token !== undefined && raw.tokenSource === 'cli';
  if (raw.link !== undefined && raw.linkFile !== undefined)
    throw new InvalidInputError('give the enrollment link or --link-file, not both');
  if (raw.link !== undefined || raw.linkFile !== undefined) {
    if ((raw.server !== undefined && raw.serverSource === 'cli') || tokenOnCommandLine || raw.tokenFile !== undefined) {
      throw new InvalidInputError('give either the enrollment link or --server with a token, not both');
    }
    return parseEnrollmentLink(raw.link ?? (await readSecretInput(raw.linkFile!, 'link', raw.stdin)));
  }
  if (raw.server === undefined) {
    throw new InvalidInputError('missing the server: pass --server <https-url> (or set DEVICE_AGENT_SERVER), or give the enrollment link');
  }
  const serverUrl = parseServerUrl(raw.server);
  if (tokenOnCommandLine && raw.tokenFile !== undefined) throw new InvalidInputError('give --token or --token-file, not both');

  if (raw.tokenFile !== undefined) {
    return { serverUrl, token: parseEnrollmentToken(await readSecretFile(raw.tokenFile, 'token'), '--token-file') };
  }
  if (raw.token === '-' && raw.tokenSource === 'cli') {
    return { serverUrl, token: parseEnrollmentToken(await readSecretStdin(raw.stdin ?? process.stdin, 'token'), 'standard input') };
  }
  if (raw.token !== undefined) {
    return { serverUrl, token: parseEnrollmentToken(raw.token, raw.tokenSource === 'env' ? 'DEVICE_AGENT_TOKEN' : '--token') };
  }
  throw new InvalidInputError(
    'missing the enrollment token: pass --token-file <path> or --token - (standard input), or --token <hex>, or set DEVICE_AGENT_TOKEN',
  );
}

type SecretKind = 'token' | 'link';
const SECRET_NAME: Record<SecretKind, string> = { token: 'an enrollment token', link: 'an enrollment link' };

/** A token or link from a file, or from standard input for `-`; trimmed, at most 4 KiB. */
export function readSecretInput(path: string, kind: SecretKind, stdin: Stdin = process.stdin): Promise<string> {
  return path === '-' ? readSecretStdin(stdin, kind) : readSecretFile(path, kind);
}

async function readSecretFile(path: string, kind: SecretKind): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
    if (!(await handle.stat()).isFile()) throw new Error('not a regular file');
    const buffer = Buffer.alloc(MAX_SECRET_INPUT_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_SECRET_INPUT_BYTES)
      throw new Error(`larger than ${MAX_SECRET_INPUT_BYTES} bytes, too large to hold ${SECRET_NAME[kind]}`);
    return buffer.subarray(0, bytesRead).toString('utf8').trim();
  } catch (err) {
    throw new InvalidInputError(`cannot read the ${kind} file ${path}: ${firstLine(err)}`);
  } finally {
    await handle?.close();
  }
}

async function readSecretStdin(stdin: Stdin, kind: SecretKind): Promise<string> {
  if (stdin.isTTY && stdin.setRawMode) return readHiddenLine(stdin, kind);
  let text = '';
  for await (const chunk of stdin) {
    text += chunk.toString();
    if (Buffer.byteLength(text) > MAX_SECRET_INPUT_BYTES) {
      throw new InvalidInputError(`standard input is larger than ${MAX_SECRET_INPUT_BYTES} bytes, too large to hold ${SECRET_NAME[kind]}`);
    }
  }
  return text.trim();
}

/** On a terminal: prompt on stderr and read one line without echoing it. */
async function readHiddenLine(stdin: Stdin, kind: SecretKind): Promise<string> {
  // Echo off before the prompt appears, so that nothing typed after it is ever echoed.
  stdin.setRawMode!(true);
  process.stderr.write(`Enrollment ${kind} (not shown): `);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let line = '';
      const onData = (chunk: Buffer | string) => {
        for (const char of chunk.toString()) {
          if (char === '\r' || char === '\n') return done(() => resolve(line.trim()));
          if (char === '\u0003' || char === '\u0004') return done(() => reject(new InvalidInputError(`no enrollment ${kind} entered`)));
          if (char === '\u007f' || char === '\b') line = line.slice(0, -1);
          else line += char;
          if (line.length > MAX_SECRET_INPUT_BYTES)
            return done(() => reject(new InvalidInputError(`input too long to be ${SECRET_NAME[kind]}`)));
        }
      };
      const done = (settle: () => void) => {
        stdin.removeListener('data', onData);
        settle();
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode!(false);
    stdin.pause();
    process.stderr.write('\n');
  }
}

// Where `enroll` gets its server and token: the link, or --server/DEVICE_AGENT_SERVER with a token
// from --token-file, --token - (standard input), --token <hex> or DEVICE_AGENT_TOKEN. Everything is
// validated here, before any request. No message repeats a token or a link.
import { open } from 'node:fs/promises';
import { parseEnrollmentLink, type EnrollmentInput } from '../agent/enrollmentLink';
import { parseEnrollmentToken } from '../agent/enrollmentToken';
import { InvalidInputError, firstLine } from '../agent/errors';
import { parseServerUrl } from '../agent/serverUrl';

type Source = 'cli' | 'env' | 'default' | string | undefined;

export interface RawEnrollmentOptions {
  link?: string;
  server?: string;
  serverSource?: Source;
  token?: string;
  tokenSource?: Source;
  tokenFile?: string;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

/** A token file or piped token is at most a line; anything longer is not a token. */
const MAX_TOKEN_INPUT_BYTES = 4096;

export async function resolveEnrollmentInput(raw: RawEnrollmentOptions): Promise<EnrollmentInput> {
  const tokenOnCommandLine = raw.token !== undefined && raw.tokenSource === 'cli';
  if (raw.link !== undefined) {
    if ((raw.server !== undefined && raw.serverSource === 'cli') || tokenOnCommandLine || raw.tokenFile !== undefined) {
      throw new InvalidInputError('give either the enrollment link or --server with a token, not both');
    }
    return parseEnrollmentLink(raw.link);
  }
  if (raw.server === undefined) {
    throw new InvalidInputError('missing the server: pass --server <https-url> (or set DEVICE_AGENT_SERVER), or give the enrollment link');
  }
  const serverUrl = parseServerUrl(raw.server);
  if (tokenOnCommandLine && raw.tokenFile !== undefined) throw new InvalidInputError('give --token or --token-file, not both');

  if (raw.tokenFile !== undefined) {
    return { serverUrl, token: parseEnrollmentToken(await readTokenFile(raw.tokenFile), '--token-file') };
  }
  if (raw.token === '-' && raw.tokenSource === 'cli') {
    return { serverUrl, token: parseEnrollmentToken(await readTokenFromStdin(raw.stdin ?? process.stdin), 'standard input') };
  }
  if (raw.token !== undefined) {
    return { serverUrl, token: parseEnrollmentToken(raw.token, raw.tokenSource === 'env' ? 'DEVICE_AGENT_TOKEN' : '--token') };
  }
  throw new InvalidInputError(
    'missing the enrollment token: pass --token-file <path> or --token - (standard input), or --token <hex>, or set DEVICE_AGENT_TOKEN',
  );
}

async function readTokenFile(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
    if (!(await handle.stat()).isFile()) throw new Error('not a regular file');
    const buffer = Buffer.alloc(MAX_TOKEN_INPUT_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_TOKEN_INPUT_BYTES) throw new Error('too large to be a token file');
    return buffer.subarray(0, bytesRead).toString('utf8').trim();
  } catch (err) {
    throw new InvalidInputError(`cannot read the token file ${path}: ${firstLine(err)}`);
  } finally {
    await handle?.close();
  }
}

async function readTokenFromStdin(stdin: NonNullable<RawEnrollmentOptions['stdin']>): Promise<string> {
  if (stdin.isTTY && stdin.setRawMode) return readHiddenLine(stdin);
  let text = '';
  for await (const chunk of stdin) {
    text += chunk.toString();
    if (text.length > MAX_TOKEN_INPUT_BYTES) throw new InvalidInputError('standard input is too large to be an enrollment token');
  }
  return text.trim();
}

/** On a terminal: prompt on stderr and read one line without echoing it. */
async function readHiddenLine(stdin: NonNullable<RawEnrollmentOptions['stdin']>): Promise<string> {
  // Echo off before the prompt appears, so that nothing typed after it is ever echoed.
  stdin.setRawMode!(true);
  process.stderr.write('Enrollment token (not shown): ');
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let line = '';
      const onData = (chunk: Buffer | string) => {
        for (const char of chunk.toString()) {
          if (char === '\r' || char === '\n') return done(() => resolve(line.trim()));
          if (char === '\u0003' || char === '\u0004') return done(() => reject(new InvalidInputError('no enrollment token entered')));
          if (char === '\u007f' || char === '\b') line = line.slice(0, -1);
          else line += char;
          if (line.length > MAX_TOKEN_INPUT_BYTES) return done(() => reject(new InvalidInputError('input too long to be an enrollment token')));
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

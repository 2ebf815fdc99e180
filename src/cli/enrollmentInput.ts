// Where `enroll` and `install` get their server and credential: the link (--link-file <path> / - for
// standard input, which keeps it out of the process list), or
// --server/DEVICE_AGENT_SERVER with either a one-time token (--token-file, --token - for standard
// input, --token <hex> or DEVICE_AGENT_TOKEN) or the organization's reusable enrollment secret
// (--enroll-secret-file, --enroll-secret - or DEVICE_AGENT_ENROLL_SECRET; never a command-line
// value: a secret enrolls any number of devices, so it is refused there rather than warned about).
// Everything is validated here, before any request. No message repeats a token, secret or link.
//
// The link as an argument is in the contract's command line (`device-agent enroll '<link>'`), but it
// sits in /proc/<pid>/cmdline until processTitle.ts clears it, where another local user can race it
// and spend the token first: it is refused with the safe forms, and taken (with a warning) only when
// DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 asks for the old form (docs/agent.md, "Secrets and the process list").
import { open } from 'node:fs/promises';
import type { OptionValueSource } from 'commander';
import { parseEnrollmentLink, type EnrollmentInput } from '../agent/enrollmentLink';
import { parseEnrollSecret } from '../agent/enrollSecret';
import { parseEnrollmentToken } from '../agent/enrollmentToken';
import { InvalidInputError, firstLine } from '../agent/errors';
import { parseServerUrl } from '../agent/serverUrl';

type Source = OptionValueSource | undefined;

export interface RawEnrollmentOptions {
  link?: string;
  /** DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1: take the link as an argument after all (old scripts). */
  allowLinkArgument?: boolean;
  /** A file holding the link, or `-` for standard input. */
  linkFile?: string;
  server?: string;
  serverSource?: Source;
  token?: string;
  tokenSource?: Source;
  tokenFile?: string;
  /** `-` (standard input) from the command line, or the value of DEVICE_AGENT_ENROLL_SECRET. */
  enrollSecret?: string;
  enrollSecretSource?: Source;
  enrollSecretFile?: string;
  /**
   * --allow-enroll-secret-argument: take --enroll-secret <value> after all. Only for installers that
   * run the agent where no other user can read its command line (the MSI's LocalSystem action).
   */
  allowSecretArgument?: boolean;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

/**
 * A one-time token (from a link or the token options), or an enrollment secret for /register, and
 * where it came from, for messages ("token from --token-file /path"; never the value).
 */
export type EnrollmentCredentials = (EnrollmentInput | { serverUrl: string; enrollSecret: string }) & { from: string };

type Stdin = NonNullable<RawEnrollmentOptions['stdin']>;

/** A token or link file, or piped input, is at most a line; anything longer is not one. */
export const MAX_SECRET_INPUT_BYTES = 4096;

/** The variable that lets old scripts give the link as an argument. */
export const ALLOW_LINK_ARGUMENT_ENV = 'DEVICE_AGENT_ALLOW_LINK_ARGUMENT';

const LINK_SAFE_FORMS = 'give it with --link-file <path> (a file only you can read) or --link-file - (standard input)';
const LINK_ARGUMENT_WARNING = `warning: an enrollment link given as an argument can be read by other local users in the process list while the agent starts; ${LINK_SAFE_FORMS} instead`;
const LINK_ARGUMENT_REFUSED =
  'an enrollment link is not accepted as an argument: other local users can read it in the process list and spend its token first. ' +
  `Nothing was sent; ${LINK_SAFE_FORMS}, e.g. device-agent enroll --link-file - < link.txt ` +
  `(old scripts may set ${ALLOW_LINK_ARGUMENT_ENV}=1 meanwhile)`;

/** How one kind of credential is given: its flags, its variable, its format. */
interface CredentialOptions {
  kind: 'token' | 'secret';
  flag: string;
  fileFlag: string;
  env: string;
  parse: (input: string, source: string) => string;
  /** Whether a value on the command line is accepted (tokens: the contract's form; secrets: never). */
  valueOnCommandLine: boolean;
}

const TOKEN: CredentialOptions = {
  kind: 'token',
  flag: '--token',
  fileFlag: '--token-file',
  env: 'DEVICE_AGENT_TOKEN',
  parse: parseEnrollmentToken,
  valueOnCommandLine: true,
};
const ENROLL_SECRET: CredentialOptions = {
  kind: 'secret',
  flag: '--enroll-secret',
  fileFlag: '--enroll-secret-file',
  env: 'DEVICE_AGENT_ENROLL_SECRET',
  parse: parseEnrollSecret,
  valueOnCommandLine: false,
};

/** One credential's inputs: the value and where it came from, and the file option. */
interface GivenCredential {
  options: CredentialOptions;
  value: string | undefined;
  source: Source;
  file: string | undefined;
}

const explicitlyGiven = (given: GivenCredential) => given.file !== undefined || (given.value !== undefined && given.source === 'cli');

export async function resolveEnrollmentInput(raw: RawEnrollmentOptions): Promise<EnrollmentCredentials> {
  if (raw.link !== undefined) {
    if (raw.allowLinkArgument !== true) throw new InvalidInputError(LINK_ARGUMENT_REFUSED);
    process.stderr.write(`device-agent: ${LINK_ARGUMENT_WARNING}\n`);
  }
  const token: GivenCredential = { options: TOKEN, value: raw.token, source: raw.tokenSource, file: raw.tokenFile };
  const secret: GivenCredential = {
    options: ENROLL_SECRET,
    value: raw.enrollSecret,
    source: raw.enrollSecretSource,
    file: raw.enrollSecretFile,
  };
  if (raw.link !== undefined && raw.linkFile !== undefined)
    throw new InvalidInputError('give the enrollment link or --link-file, not both');
  if (raw.link !== undefined || raw.linkFile !== undefined) {
    if ((raw.server !== undefined && raw.serverSource === 'cli') || explicitlyGiven(token) || explicitlyGiven(secret)) {
      throw new InvalidInputError('give either the enrollment link or --server with a token or an enrollment secret, not both');
    }
    const link = parseEnrollmentLink(raw.link ?? (await readSecretInput(raw.linkFile!, 'link', raw.stdin)));
    return { ...link, from: `token from the enrollment link${raw.linkFile === undefined ? '' : ` (--link-file ${raw.linkFile})`}` };
  }
  if (raw.server === undefined) {
    throw new InvalidInputError('missing the server: pass --server <https-url> (or set DEVICE_AGENT_SERVER), or give the enrollment link');
  }
  const serverUrl = parseServerUrl(raw.server);
  for (const given of [token, secret]) {
    if (given.value !== undefined && given.source === 'cli' && given.file !== undefined)
      throw new InvalidInputError(`give ${given.options.flag} or ${given.options.fileFlag}, not both`);
  }
  // A flag overrides the environment; two explicit credentials, or two in the environment, are ambiguous.
  const both = 'give either an enrollment token or an enrollment secret, not both';
  if (explicitlyGiven(token) && explicitlyGiven(secret)) throw new InvalidInputError(both);
  const chosen = explicitlyGiven(token) ? token : explicitlyGiven(secret) ? secret : undefined;
  if (chosen === undefined && token.value !== undefined && secret.value !== undefined)
    throw new InvalidInputError(`${both}: DEVICE_AGENT_TOKEN and DEVICE_AGENT_ENROLL_SECRET are both set`);
  const used = chosen ?? (token.value !== undefined ? token : secret.value !== undefined ? secret : undefined);
  if (used === undefined) {
    throw new InvalidInputError(
      'missing the enrollment token or secret: pass --token-file <path> or --token - (standard input), or --token <hex>, or set DEVICE_AGENT_TOKEN; ' +
        'or --enroll-secret-file <path> or --enroll-secret - (standard input), or set DEVICE_AGENT_ENROLL_SECRET',
    );
  }
  const { value, from } = await readCredential(used, raw.stdin, raw.allowSecretArgument === true);
  return used === token ? { serverUrl, token: value, from } : { serverUrl, enrollSecret: value, from };
}

async function readCredential(
  given: GivenCredential,
  stdin: Stdin = process.stdin,
  allowSecretArgument = false,
): Promise<{ value: string; from: string }> {
  const { options, value, source, file } = given;
  const read = async (origin: string, text: Promise<string> | string, detail = '') => ({
    value: options.parse(await text, origin),
    from: `${options.kind === 'token' ? 'token' : 'enrollment secret'} from ${origin}${detail}`,
  });
  if (file !== undefined) return read(options.fileFlag, readSecretFile(file, options.kind), ` ${file}`);
  if (value === '-' && source === 'cli') return read('standard input', readSecretStdin(stdin, options.kind));
  if (source === 'cli' && !options.valueOnCommandLine && !allowSecretArgument) {
    throw new InvalidInputError(
      `an enrollment ${options.kind} is not accepted as a command-line value (other local users can read the process list): ` +
        `use ${options.fileFlag} <path>, ${options.flag} - (standard input) or ${options.env}`,
    );
  }
  return read(source === 'env' ? options.env : options.flag, value!);
}

type SecretKind = 'token' | 'link' | 'secret';
const SECRET_NAME: Record<SecretKind, string> = {
  token: 'an enrollment token',
  link: 'an enrollment link',
  secret: 'an enrollment secret',
};

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

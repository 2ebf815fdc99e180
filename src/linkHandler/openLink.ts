// `device-agent open-link <link>`: what the desktop runs when someone opens a device-agent:// link.
// It shows the server the link would enroll this device with and asks before doing anything; the
// link is never printed or logged. When the service's state needs administrator rights, the
// confirmed link goes to an elevated copy of this command (elevate.ts), never on a command line.
// The link comes over D-Bus (Linux, FreeBSD) or in a file (macOS); only Windows' registry handler
// gives it as an argument ("%1", which Windows offers nothing else for); elsewhere an argument is
// refused unless DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 (docs/agent.md, "Secrets and the process list").
import { createInterface, type Interface } from 'node:readline';
import { rm } from 'node:fs/promises';
import { enroll } from '../agent/enrollment';
import { parseEnrollmentLink } from '../agent/enrollmentLink';
import { ElevationRequiredError, InvalidInputError } from '../agent/errors';
import { createLogger } from '../agent/logger';
import { openAgentState, resolveStateDir } from '../agent/state';
import { currentPlatform } from '../platform/current';
import type { CommonOptions } from '../cli/commonOptions';
import { explain as explainEnrollmentFailure } from '../cli/commands/enroll';
import { ALLOW_LINK_ARGUMENT_ENV, readSecretInput } from '../cli/enrollmentInput';
import { describeFailure, redactCredentials } from '../cli/exitCodes';
import { keystoreFor } from '../platform/serviceKeystore';
import { runningProgram } from '../service/program';
import { elevateWithSudo, elevateWithUac, programArgv } from './elevate';
import { DBUS_SERVICE_FLAG, MY_DEVICE_LINK } from './types';
import { openLinkInTerminal } from './xdgTerminal';

export interface OpenLinkOptions extends CommonOptions {
  /** Read the link from this file (deleted after use with --yes), or `-` for standard input. */
  linkFile?: string;
  /** Print the server origin only (the macOS handler shows it in its own dialog). */
  describe?: boolean;
  /** The user already confirmed (the elevated step, or the macOS dialog). */
  yes?: boolean;
  /** Started by the .desktop handler without a terminal: hand the link to one (xdgTerminal.ts). */
  viaTerminal?: boolean;
  /** The link file was written for this one use: delete it once read. */
  consumeLinkFile?: boolean;
  /** Started by the session bus (the D-Bus service file): the links arrive over D-Bus (dbusApplication.ts). */
  dbusService?: boolean;
}

async function readLink(link: string | undefined, options: OpenLinkOptions): Promise<string> {
  if (options.linkFile === undefined) {
    if (link === undefined) throw new InvalidInputError('no enrollment link given');
    return link;
  }
  if (link !== undefined) throw new InvalidInputError('give the link or --link-file, not both');
  try {
    return await readSecretInput(options.linkFile, 'link');
  } finally {
    // Written for this one use: the elevated step (elevate.ts, the macOS applet), the terminal handover.
    if ((options.yes || options.consumeLinkFile) && options.linkFile !== '-') await rm(options.linkFile, { force: true });
  }
}

/**
 * The terminal the desktop opened for the link: one line reader for the question and the final
 * pause, released while another program (sudo) needs the terminal.
 */
class Terminal {
  private reader: Interface | undefined;
  /** Lines typed ahead are kept for the next question (readline drops lines nobody asked for). */
  private lines: AsyncIterator<string> | undefined;
  private inputEnded = false;

  static open(): Terminal {
    if (!process.stdin.isTTY) {
      throw new InvalidInputError('opening an enrollment link needs your confirmation: open it from a desktop, or run this in a terminal');
    }
    return new Terminal();
  }

  async question(text: string): Promise<string> {
    if (!this.reader) {
      const reader = createInterface({ input: process.stdin, output: process.stderr });
      reader.once('close', () => (this.inputEnded = reader === this.reader));
      this.reader = reader;
      this.inputEnded = false;
      this.lines = reader[Symbol.asyncIterator]();
    }
    if (this.inputEnded) {
      // Input ended (the lines already typed are still queued); Node 24 refuses to prompt on a
      // closed reader, so show the prompt ourselves.
      process.stderr.write(text);
    } else {
      this.reader.setPrompt(text);
      this.reader.prompt();
    }
    const next = await this.lines!.next();
    return next.done ? '' : next.value; // end of input: no answer
  }

  release(): void {
    this.reader?.close();
    this.reader = undefined;
    this.lines = undefined;
  }

  async confirm(serverUrl: string): Promise<boolean> {
    process.stderr.write(
      `This link enrolls this device with the server\n\n    ${serverUrl}\n\nContinue only if your IT department sent you this link.\n`,
    );
    return /^\s*y(es)?\s*$/i.test(await this.question('Enroll this device? [y/N] '));
  }

  /** The terminal closes when we exit: let the user read the outcome first. */
  async pause(): Promise<void> {
    await this.question('Press Enter to close. ');
  }
}

/** Windows' URL handler can only take the link as an argument; elsewhere it is an old form, opted into. */
function linkArgumentAllowed(env: NodeJS.ProcessEnv): boolean {
  return currentPlatform() === 'WINDOWS' || env[ALLOW_LINK_ARGUMENT_ENV] === '1';
}

/** device-agent://my-device (a trailing slash tolerated, as for enrollment links). */
export function isMyDeviceLink(link: string): boolean {
  return link.trim().replace(/\/$/, '').toLowerCase() === MY_DEVICE_LINK;
}

/** The notification's "Open My device": `my-device` as the user who clicked; a failure stays on the screen. */
async function openMyDevice(options: OpenLinkOptions): Promise<number> {
  try {
    return await (await import('../cli/commands/myDevice')).default(options);
  } catch (err) {
    const failure = describeFailure(err);
    if (failure.message !== null) process.stderr.write(`device-agent: ${failure.message}\n`);
    if (process.stdin.isTTY) {
      const terminal = Terminal.open();
      await terminal.pause().finally(() => terminal.release());
    }
    return failure.exitCode;
  }
}

export default async function openLinkCommand(link: string | undefined, options: OpenLinkOptions): Promise<number> {
  if (link !== undefined && isMyDeviceLink(link)) return openMyDevice(options);
  if (link !== undefined && !options.dbusService && !linkArgumentAllowed(process.env)) {
    throw new InvalidInputError(
      'an enrollment link is not accepted as an argument: other local users can read it in the process list and spend its token first. ' +
        'Nothing was sent. Desktops that support D-Bus activation hand the link over D-Bus; otherwise save it in a file ' +
        `and run device-agent enroll --link-file <file> (or set ${ALLOW_LINK_ARGUMENT_ENV}=1 in the session for this launcher)`,
    );
  }
  if (options.dbusService) {
    if (link !== undefined || options.linkFile !== undefined)
      throw new InvalidInputError(`${DBUS_SERVICE_FLAG} takes links over D-Bus only`);
    const program = programArgv(runningProgram());
    const { serveLinkHandler } = await import('./dbusApplication');
    return serveLinkHandler(process.env, (received, env) => openLinkInTerminal(received, program, env));
  }
  if (options.viaTerminal) {
    if (link === undefined) throw new InvalidInputError('no enrollment link given');
    return openLinkInTerminal(link, programArgv(runningProgram()));
  }
  if (options.yes || options.describe) return openLink(link, options, null);
  const terminal = Terminal.open();
  try {
    return await openLink(link, options, terminal);
  } catch (err) {
    const failure = describeFailure(err);
    if (failure.message !== null) process.stderr.write(redactCredentials(`device-agent: ${failure.message}\n`));
    await terminal.pause();
    return failure.exitCode;
  } finally {
    terminal.release();
  }
}

async function openLink(link: string | undefined, options: OpenLinkOptions, terminal: Terminal | null): Promise<number> {
  const linkText = await readLink(link, options);
  const input = parseEnrollmentLink(linkText);
  if (options.describe) {
    process.stdout.write(`${input.serverUrl}\n`);
    return 0;
  }
  if (terminal && !(await terminal.confirm(input.serverUrl))) {
    process.stderr.write('Not enrolled: nothing was sent.\n');
    return 0;
  }
  const logger = await createLogger({ level: options.logLevel });
  let stateDir: string;
  try {
    stateDir = resolveStateDir({ explicit: options.stateDir });
  } catch (err) {
    if (!(err instanceof ElevationRequiredError) || !terminal) throw err;
    // The service's state: enroll it as administrator (sudo asks on the terminal).
    terminal.release();
    const elevate = currentPlatform() === 'WINDOWS' ? elevateWithUac : elevateWithSudo;
    const code = await elevate(programArgv(runningProgram()), [], linkText);
    await terminal.pause();
    return code;
  }
  const result = await enroll(await openAgentState(stateDir), {
    serverUrl: input.serverUrl,
    credential: { token: input.token },
    keystore: keystoreFor(options.keystore, stateDir),
    force: false,
    caFile: options.caFile,
    logger,
  }).catch((err: unknown) => {
    throw explainEnrollmentFailure(err);
  });
  process.stdout.write(`Enrolled this device with ${result.serverUrl}. The agent picks up the enrollment by itself.\n`);
  await terminal?.pause();
  return 0;
}

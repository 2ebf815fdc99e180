// Linux and FreeBSD desktops: the handler runs without a terminal (Terminal=false). It gets the link
// over D-Bus (dbusApplication.ts), or, when the session opted into the old form
// (DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1), from the .desktop Exec= fallback as its own argument, which it
// clears at start-up (src/cli/processTitle.ts). It writes the link to a 0600 file in the user's
// private runtime directory and opens a terminal on `open-link --link-file <file>`, whose command line
// names the file, never the link. With Terminal=true the desktop would start the terminal with the
// link in its own arguments, readable by every local user while it stays open.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { InvalidInputError, firstLine } from '../agent/errors';
import { OPEN_LINK_COMMAND } from './types';

/** Terminal launchers tried in order, with the argument that precedes the command. */
const TERMINALS: ReadonlyArray<readonly [name: string, before: readonly string[]]> = [
  ['xdg-terminal-exec', []],
  ['x-terminal-emulator', ['-e']],
  ['gnome-terminal', ['--']],
  ['konsole', ['-e']],
  ['xfce4-terminal', ['-x']],
  ['xterm', ['-e']],
];

/** The hidden open-link flag of the handover: the link file is deleted once read. */
const CONSUME_LINK_FILE = '--consume-link-file';

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => isAbsolute(d))) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** XDG_RUNTIME_DIR (per user, 0700, cleared at logout) when usable, else the temporary directory. */
function privateDir(env: NodeJS.ProcessEnv): string {
  const runtime = env.XDG_RUNTIME_DIR;
  try {
    if (runtime && isAbsolute(runtime) && statSync(runtime).isDirectory()) return runtime;
  } catch {
    // fall through
  }
  return tmpdir();
}

/** Writes the link to a private file and opens a terminal on `open-link --link-file <file>`. */
export async function openLinkInTerminal(link: string, program: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const terminal = TERMINALS.map(([name, before]) => [onPath(name, env), before] as const).find(([path]) => path !== undefined);
  if (!terminal) {
    throw new InvalidInputError(
      `no terminal emulator found (${TERMINALS.map(([name]) => name).join(', ')}) to ask for your confirmation: ` +
        'save the link in a file and run device-agent enroll --link-file <file> in a terminal',
    );
  }
  const [path, before] = terminal;
  const file = join(privateDir(env), `device-agent-link-${randomBytes(8).toString('hex')}`);
  await writeFile(file, link, { mode: 0o600, flag: 'wx' });
  const child = spawn(path!, [...before, ...program, OPEN_LINK_COMMAND, CONSUME_LINK_FILE, '--link-file', file], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  } catch (err) {
    await rm(file, { force: true });
    throw new InvalidInputError(`cannot open the terminal ${path}: ${firstLine(err)}`);
  }
  child.unref();
  return 0;
}

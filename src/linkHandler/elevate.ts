// Running the confirmed link as administrator, when the service's state needs those rights. The
// link never goes on the elevated command line: POSIX pipes it to `sudo … --link-file -`; Windows
// (whose UAC prompt cannot pass standard input) writes it to a file in the user's own temporary
// directory, which the elevated process reads and deletes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningProgram } from '../service/program';
import { OPEN_LINK_COMMAND } from './types';

export type Elevate = (program: readonly string[], extraArgs: readonly string[], link: string) => Promise<number>;

export function programArgv(running: RunningProgram): string[] {
  return running.kind === 'executable' ? [running.path] : [running.node, running.script];
}

function exitCodeOf(child: ReturnType<typeof spawn>): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

const SUDO_DIRS = ['/usr/bin', '/usr/local/bin', '/bin'];

export const elevateWithSudo: Elevate = async (program, extraArgs, link) => {
  const child = spawn('sudo', ['--', ...program, OPEN_LINK_COMMAND, '--yes', '--link-file', '-', ...extraArgs], {
    stdio: ['pipe', 'inherit', 'inherit'],
    env: { ...process.env, PATH: SUDO_DIRS.join(':') },
  });
  child.stdin.end(link);
  return exitCodeOf(child);
};

/** A PowerShell single-quoted string. */
function psQuote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

export const elevateWithUac: Elevate = async (program, extraArgs, link) => {
  const linkFile = join(tmpdir(), `device-agent-link-${randomBytes(8).toString('hex')}`);
  await writeFile(linkFile, link, { mode: 0o600, flag: 'wx' });
  try {
    const [file, ...args] = program;
    const argumentList = [...args, OPEN_LINK_COMMAND, '--yes', '--link-file', linkFile, ...extraArgs].map((arg) => psQuote(`"${arg}"`));
    const script = `$p = Start-Process -FilePath ${psQuote(file!)} -ArgumentList @(${argumentList.join(',')}) -Verb RunAs -Wait -PassThru; exit $p.ExitCode`;
    const powershell = join(process.env.SystemRoot ?? 'C:\\Windows', 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe');
    return await exitCodeOf(
      spawn(powershell, ['-NoProfile', '-NonInteractive', '-Command', script], { stdio: 'inherit', windowsHide: false }),
    );
  } finally {
    await rm(linkFile, { force: true });
  }
};

// Where the system tools the checks run are installed. Commands always run from an absolute path
// and never from the caller's PATH; a tool is looked for first at its usual place, then in this
// fixed list of system directories: the other of /usr/sbin and /usr/bin (older distributions put
// some tools in the other one), the pre-merge /sbin and /bin, /usr/local, and NixOS's system
// profile. A tool found nowhere keeps its usual path, so running it reports command_not_found.
import type { CommandResult, Host, RunOptions } from '../types';

export const SYSTEM_TOOL_DIRS = [
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
  '/usr/local/sbin',
  '/usr/local/bin',
  '/run/current-system/sw/bin',
] as const;

/** The places `usual` (an absolute path) is looked for, in order. */
export function toolCandidates(usual: string): string[] {
  const slash = usual.lastIndexOf('/');
  const dir = usual.slice(0, slash);
  const name = usual.slice(slash + 1);
  return [usual, ...SYSTEM_TOOL_DIRS.filter((d) => d !== dir).map((d) => `${d}/${name}`)];
}

/** Where the tool usually at `usual` (an absolute path) is installed: the first candidate that is a file. */
export async function findTool(host: Host, usual: string): Promise<string | undefined> {
  for (const candidate of toolCandidates(usual)) {
    const s = await host.stat(candidate);
    if (s.ok && !s.isDirectory) return candidate;
  }
  return undefined;
}

/** Runs the tool usually at `usual` from where it is installed (from `usual` when found nowhere, which reports command_not_found). */
export async function runTool(host: Host, usual: string, args: readonly string[], options?: RunOptions): Promise<CommandResult> {
  return host.run((await findTool(host, usual)) ?? usual, args, options);
}

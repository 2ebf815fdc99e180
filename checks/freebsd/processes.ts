// The process table from ps(1), read once per cycle: which daemons run (time sync, sshd,
// anti-malware agents) and which desktop sessions and screen lockers exist, with their owners.
import type { CheckContext, CommandResult } from '../types';
import { RunningCommands } from '../runningCommands';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

const PS = '/bin/ps';
/** `-ax`: every process, with or without a terminal; empty headers suppress the header line. */
const PS_ARGS = ['-ax', '-o', 'uid=', '-o', 'comm='] as const;

/** ps shows the kernel's command name, at most MAXCOMLEN (19) characters. */
const COMM_LENGTH = 19;

export interface ProcessInfo {
  uid: number;
  /** The kernel's command name, at most COMM_LENGTH characters. */
  comm: string;
}

export type ProcessTable = { ok: true; processes: ProcessInfo[] } | { ok: false; reason: CommandFailureReason | 'process_table_partial' };

export function processProbe(ctx: CheckContext): Promise<CommandResult> {
  return ctx.shared('freebsd:ps', () => ctx.host.run(PS, PS_ARGS));
}

export function parseProcessTable(result: CommandResult): ProcessTable {
  if (result.error || result.exitCode !== 0) return { ok: false, reason: commandFailureReason(result) };
  const processes: ProcessInfo[] = [];
  for (const line of result.stdout.split('\n')) {
    if (line.trim() === '') continue;
    const match = /^\s*(\d+)\s+(\S(?:.*\S)?)\s*$/.exec(line);
    if (!match) {
      // A header line ("UID COMMAND") from a ps that prints one anyway is harmless; nothing else is.
      if (/^\s*UID\s+COMMAND\s*$/.test(line)) continue;
      return { ok: false, reason: 'parse_error' };
    }
    processes.push({ uid: Number(match[1]), comm: match[2]! });
  }
  // ps itself is always running: an empty table means the output was not what we asked for.
  if (processes.length === 0) return { ok: false, reason: 'parse_error' };
  // The kernel's own processes and init run as root and ps -ax lists them to anyone who may see
  // other users' processes. Without one, the table hides other users
  // (security.bsd.see_other_uids=0 or see_other_gids=0 and an agent not running as root, or
  // mac_seeotheruids): a daemon missing from it may run all the same.
  if (!processes.some((p) => p.uid === 0)) return { ok: false, reason: 'process_table_partial' };
  return { ok: true, processes };
}

/** Distinct uids running a process with one of these command names. */
export function ownersOf(table: ProcessInfo[], names: readonly string[]): number[] {
  return [...new Set(table.filter((p) => names.includes(p.comm)).map((p) => p.uid))].sort((a, b) => a - b);
}

/** The command names running on this table. */
export function runningCommands(table: ProcessInfo[]): RunningCommands {
  return new RunningCommands(
    table.map((p) => p.comm),
    COMM_LENGTH,
  );
}

// The process table from /proc/<pid>/comm, read once per cycle: which daemons run (time sync,
// anti-malware agents, desktops, remote-login servers) without `ps`, which minimal hosts lack.
import { RunningCommands } from '../runningCommands';
import type { CheckContext, Host } from '../types';

export interface ProcessInfo {
  pid: number;
  /** The kernel's 15-character command name ("systemd-timesyn" for systemd-timesyncd). */
  comm: string;
}

export interface ProcessTable {
  /** False when /proc could not be listed. */
  readable: boolean;
  /**
   * True when every process is visible. With `hidepid` a non-root reader sees only its own
   * processes (PID 1 is hidden), so "no daemon found" would prove nothing.
   */
  complete: boolean;
  processes: ProcessInfo[];
}

/** The kernel truncates comm to TASK_COMM_LEN 16, the NUL included. */
const COMM_LENGTH = 15;

export async function readProcessTable(host: Host): Promise<ProcessTable> {
  const listing = await host.readDir('/proc');
  if (!listing.ok) return { readable: false, complete: false, processes: [] };
  const pids = listing.entries.filter((e) => /^\d+$/.test(e)).map(Number);
  const processes = await Promise.all(
    pids.map(async (pid): Promise<ProcessInfo | null> => {
      const comm = await host.readFile(`/proc/${pid}/comm`);
      // A process may exit between the listing and the read: skip it.
      return comm.ok ? { pid, comm: comm.text.replace(/\n$/, '') } : null;
    }),
  );
  const found = processes.filter((p): p is ProcessInfo => p !== null).sort((a, b) => a.pid - b.pid);
  return { readable: true, complete: pids.includes(1), processes: found };
}

export function processTable(ctx: CheckContext): Promise<ProcessTable> {
  return ctx.shared('linux.processes', () => readProcessTable(ctx.host));
}

/** The command names running on this table. */
export function runningCommands(table: ProcessTable): RunningCommands {
  return new RunningCommands(table.processes.map((p) => p.comm), COMM_LENGTH);
}

// The process table from /proc/<pid>/comm, read once per cycle: which daemons run (time sync,
// anti-malware agents, desktops, remote-login servers) without `ps`, which minimal hosts lack.
// The kernel cuts comm to 15 characters ("falcon-sensor-b" for CrowdStrike's eBPF-mode
// "falcon-sensor-bpf"): a comm that long may be cut, so its full name is read from the executable
// (/proc/<pid>/exe, root) or the command line's first word (/proc/<pid>/cmdline) when either
// begins with the comm.
import { RunningCommands } from '../runningCommands';
import type { CheckContext, Host } from '../types';

interface ProcessInfo {
  pid: number;
  /** The kernel's 15-character command name ("systemd-timesyn" for systemd-timesyncd). */
  comm: string;
  /** The untruncated program name, when comm may be cut and the full name could be read. */
  name?: string;
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

const basename = (file: string) => file.slice(file.lastIndexOf('/') + 1);

/** The program's whole name, from its executable or its command line, when it extends `comm`. */
async function fullName(host: Host, pid: number, comm: string): Promise<string | undefined> {
  const exe = await host.readLink(`/proc/${pid}/exe`);
  const fromExe = exe.ok ? basename(exe.target.replace(/ \(deleted\)$/, '')) : undefined;
  if (fromExe?.startsWith(comm)) return fromExe;
  const cmdline = await host.readFile(`/proc/${pid}/cmdline`);
  // argv[0] up to the first NUL; a daemon may have rewritten it ("sshd: user@pts/0"): then it does not extend comm.
  const fromCmdline = cmdline.ok ? basename(cmdline.text.split('\0')[0]!) : undefined;
  return fromCmdline?.startsWith(comm) ? fromCmdline : undefined;
}

async function readProcessTable(host: Host): Promise<ProcessTable> {
  const listing = await host.readDir('/proc');
  if (!listing.ok) return { readable: false, complete: false, processes: [] };
  const pids = listing.entries.filter((e) => /^\d+$/.test(e)).map(Number);
  const processes = await Promise.all(
    pids.map(async (pid): Promise<ProcessInfo | null> => {
      const read = await host.readFile(`/proc/${pid}/comm`);
      // A process may exit between the listing and the read: skip it.
      if (!read.ok) return null;
      const comm = read.text.replace(/\n$/, '');
      const name = comm.length === COMM_LENGTH ? await fullName(host, pid, comm) : undefined;
      return name ? { pid, comm, name } : { pid, comm };
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
  return new RunningCommands(
    table.processes.map((p) => p.name ?? p.comm),
    COMM_LENGTH,
  );
}

// sockstat(1) tables: "USER COMMAND PID FD PROTO LOCAL ADDRESS FOREIGN ADDRESS". Addresses are
// used to tell loopback from reachable listeners and never leave this module's callers as evidence.

export interface Socket {
  command: string;
  proto: string;
  address: string;
  port: number | null;
}

export interface SocketTable {
  sockets: Socket[];
  /** Data rows that do not have the seven columns. */
  unparsed: number;
}

const HEADER = /^USER\s+COMMAND\s+PID\s+FD\s+PROTO\s+LOCAL ADDRESS\s+FOREIGN ADDRESS\b/;
const ROW = /^(\S+)\s+(\S+)\s+(\d+|\?)\s+(\d+|\?)\s+((?:tcp|udp|sctp|udplite)(?:4|6|46))\s+(\S+)\s+(\S+)(?:\s.*)?$/;

/** "*:22", "127.0.0.1:22", "::1:22", "fe80::1%lo0:22": the port follows the last colon. */
function splitAddress(local: string): { address: string; port: number | null } {
  const at = local.lastIndexOf(':');
  const port = local.slice(at + 1);
  return { address: at === -1 ? local : local.slice(0, at), port: /^\d+$/.test(port) ? Number(port) : null };
}

/** null when the output has no sockstat header. */
export function parseSockstat(stdout: string): SocketTable | null {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  if (!HEADER.test(lines[0] ?? '')) return null;
  const sockets: Socket[] = [];
  let unparsed = 0;
  for (const line of lines.slice(1)) {
    const m = ROW.exec(line);
    if (!m) {
      unparsed++;
      continue;
    }
    sockets.push({ command: m[2]!, proto: m[5]!, ...splitAddress(m[6]!) });
  }
  return { sockets, unparsed };
}

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
  /** 1-based line numbers (in sockstat's output) of data rows that do not have the seven columns. */
  unparsedLines: number[];
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
  const lines = stdout.split('\n').map((text, i) => ({ text, number: i + 1 }));
  const rows = lines.filter((l) => l.text.trim() !== '');
  if (!HEADER.test(rows[0]?.text ?? '')) return null;
  const sockets: Socket[] = [];
  const unparsedLines: number[] = [];
  for (const { text, number } of rows.slice(1)) {
    const m = ROW.exec(text);
    if (!m) {
      unparsedLines.push(number);
      continue;
    }
    sockets.push({ command: m[2]!, proto: m[5]!, ...splitAddress(m[6]!) });
  }
  return { sockets, unparsedLines };
}

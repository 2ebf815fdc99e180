// TCP listening sockets on macOS from `netstat -an -p tcp`: every user's sockets without root (lsof
// shows only the caller's), launchd's socket-activation listeners included, numeric, untranslated.
// Rows are "tcp4|tcp6|tcp46 <recv-q> <send-q> <local> <foreign> LISTEN", the port joined to the
// address by its last dot ("*.22", "127.0.0.1.22", "::1.631").

export const NETSTAT = '/usr/sbin/netstat';
export const NETSTAT_ARGS = ['-an', '-p', 'tcp'] as const;

export interface TcpListener {
  /** "*" (every address), an IPv4 or IPv6 address. */
  address: string;
  port: number;
}

const HEADER = /^Proto\s+Recv-Q\s+Send-Q\s+Local Address\s+Foreign Address\s+\(state\)\s*$/;
const ROW = /^tcp(?:4|6|46)\s+\d+\s+\d+\s+(\S+)\.(\d+)\s+\S+\s+(\S+)\s*$/;

/** The LISTEN rows; null when the output is not netstat's table (no header, or a tcp row it cannot read). */
export function parseNetstatListeners(stdout: string): TcpListener[] | null {
  const lines = stdout.split('\n');
  if (!lines.some((l) => HEADER.test(l))) return null;
  const listeners: TcpListener[] = [];
  for (const line of lines) {
    if (!/^tcp/.test(line)) continue;
    const m = ROW.exec(line);
    if (!m) return null;
    if (m[3] === 'LISTEN') listeners.push({ address: m[1]!, port: Number(m[2]) });
  }
  return listeners;
}

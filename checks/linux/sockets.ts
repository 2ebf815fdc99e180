// Listening TCP sockets from /proc/net/tcp and /proc/net/tcp6 (per network namespace, no root, no
// `ss`), and which process owns a socket, from the socket:[inode] links in /proc/<pid>/fd.
import type { FsError, Host } from '../types';

export type Bind = 'any' | 'loopback' | 'specific';

export interface Listener {
  family: 4 | 6;
  port: number;
  bind: Bind;
  inode: number;
}

const LISTEN = '0A';

/** 32-bit words in /proc/net/tcp* are printed in host byte order. */
function wordBytes(hex: string, littleEndian: boolean): number[] {
  const bytes = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return littleEndian ? bytes.reverse() : bytes;
}

export function addressBytes(hex: string, littleEndian: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < hex.length; i += 8) out.push(...wordBytes(hex.slice(i, i + 8), littleEndian));
  return out;
}

export function classifyAddress(bytes: readonly number[]): Bind {
  if (bytes.every((b) => b === 0)) return 'any';
  if (bytes.length === 4) return bytes[0] === 127 ? 'loopback' : 'specific';
  const v4mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (v4mapped) return classifyAddress(bytes.slice(12));
  const loopback = bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1;
  return loopback ? 'loopback' : 'specific';
}

/** LISTEN rows of one /proc/net/tcp or tcp6 file. */
export function parseProcNetTcp(text: string, family: 4 | 6, littleEndian: boolean): Listener[] {
  const listeners: Listener[] = [];
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== LISTEN) continue;
    const [addr, port] = cols[1]!.split(':');
    if (!addr || !port || addr.length !== (family === 4 ? 8 : 32)) continue;
    listeners.push({ family, port: parseInt(port, 16), bind: classifyAddress(addressBytes(addr, littleEndian)), inode: Number(cols[9]) });
  }
  return listeners;
}

export type ListenerFacts = { ok: true; listeners: Listener[] } | { ok: false; error: FsError };

export async function readListeners(host: Host, littleEndian: boolean): Promise<ListenerFacts> {
  const [tcp, tcp6] = await Promise.all([host.readFile('/proc/net/tcp'), host.readFile('/proc/net/tcp6')]);
  if (!tcp.ok) return { ok: false, error: tcp.error };
  // tcp6 is absent when IPv6 is disabled in the kernel.
  if (!tcp6.ok && tcp6.error !== 'not_found') return { ok: false, error: tcp6.error };
  return {
    ok: true,
    listeners: [...parseProcNetTcp(tcp.text, 4, littleEndian), ...(tcp6.ok ? parseProcNetTcp(tcp6.text, 6, littleEndian) : [])],
  };
}

/** inode -> owning pid for the sockets the given processes hold; `complete` is false when a fd table was unreadable. */
export async function socketOwners(host: Host, pids: readonly number[]): Promise<{ owners: Map<number, number>; complete: boolean }> {
  const owners = new Map<number, number>();
  let complete = true;
  await Promise.all(
    pids.map(async (pid) => {
      const fds = await host.readDir(`/proc/${pid}/fd`);
      if (!fds.ok) {
        if (fds.error !== 'not_found') complete = false;
        return;
      }
      await Promise.all(
        fds.entries.map(async (fd) => {
          const link = await host.readLink(`/proc/${pid}/fd/${fd}`);
          const inode = link.ok ? /^socket:\[(\d+)\]$/.exec(link.target)?.[1] : undefined;
          if (inode) owners.set(Number(inode), pid);
        }),
      );
    }),
  );
  return { owners, complete };
}

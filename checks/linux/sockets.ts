// Listening TCP sockets from /proc/net/tcp and /proc/net/tcp6 (per network namespace, no root, no
// `ss`), and which process owns a socket, from the socket:[inode] links in /proc/<pid>/fd.
import type { FsError, Host } from '../types';

export type Bind = 'any' | 'loopback' | 'specific';

interface Listener {
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

export interface ProcNetTcp {
  listeners: Listener[];
  /** 1-based numbers of rows that are not the kernel's columns (a LISTEN row among them cannot be ruled out). */
  unreadableLines: number[];
}

/** LISTEN rows of one /proc/net/tcp or tcp6 file; rows it cannot read are numbered, not skipped silently. */
export function parseProcNetTcp(text: string, family: 4 | 6, littleEndian: boolean): ProcNetTcp {
  const listeners: Listener[] = [];
  const unreadableLines: number[] = [];
  text.split('\n').forEach((line, i) => {
    // The first line is the column header.
    if (i === 0 || line.trim() === '') return;
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || !/^[0-9A-F]{2}$/.test(cols[3]!)) return void unreadableLines.push(i + 1);
    if (cols[3] !== LISTEN) return;
    const [addr, port] = cols[1]!.split(':');
    if (!addr || !port || addr.length !== (family === 4 ? 8 : 32) || !/^[0-9A-F]{4}$/.test(port) || !/^\d+$/.test(cols[9]!)) {
      return void unreadableLines.push(i + 1);
    }
    listeners.push({ family, port: parseInt(port, 16), bind: classifyAddress(addressBytes(addr, littleEndian)), inode: Number(cols[9]) });
  });
  return { listeners, unreadableLines };
}

export type ListenerFacts =
  { ok: true; listeners: Listener[]; unreadable: { tcp?: number[]; tcp6?: number[] } } | { ok: false; error: FsError };

export async function readListeners(host: Host, littleEndian: boolean): Promise<ListenerFacts> {
  const [tcp, tcp6] = await Promise.all([host.readFile('/proc/net/tcp'), host.readFile('/proc/net/tcp6')]);
  if (!tcp.ok) return { ok: false, error: tcp.error };
  // tcp6 is absent when IPv6 is disabled in the kernel.
  if (!tcp6.ok && tcp6.error !== 'not_found') return { ok: false, error: tcp6.error };
  const v4 = parseProcNetTcp(tcp.text, 4, littleEndian);
  const v6 = tcp6.ok ? parseProcNetTcp(tcp6.text, 6, littleEndian) : { listeners: [], unreadableLines: [] };
  const unreadable: { tcp?: number[]; tcp6?: number[] } = {};
  if (v4.unreadableLines.length > 0) unreadable.tcp = v4.unreadableLines;
  if (v6.unreadableLines.length > 0) unreadable.tcp6 = v6.unreadableLines;
  return { ok: true, listeners: [...v4.listeners, ...v6.listeners], unreadable };
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

// Local accounts from /etc/passwd (the same format on Linux and FreeBSD), for running a command or
// reading a file in a session user's context. Nothing from here is ever evidence.

export interface Account {
  uid: number;
  gid: number;
  /** Absolute: it becomes part of paths and command arguments. */
  home: string;
}

export const PASSWD = '/etc/passwd';

/** uid → account; the first line for a uid wins (as getpwuid), malformed lines and relative homes are skipped. */
export function parsePasswd(text: string): Map<number, Account> {
  const out = new Map<number, Account>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const f = line.split(':');
    if (f.length !== 7 || !/^\d+$/.test(f[2]!) || !/^\d+$/.test(f[3]!) || !f[5]!.startsWith('/')) continue;
    const uid = Number(f[2]);
    if (!out.has(uid)) out.set(uid, { uid, gid: Number(f[3]), home: f[5]! });
  }
  return out;
}

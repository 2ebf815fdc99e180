// Where an SSH server would listen: ports from sshd_config (world-readable on most
// distributions) and from systemd socket units (ssh.socket on Debian/Ubuntu, sshd.socket
// elsewhere; Ubuntu 22.10+ generates a drop-in from sshd_config), and the effective
// authentication settings from `sshd -T` (root; read by checks/sshd.ts).
import { readSshdEffectiveConfig, SSHD, sshdConfigDirectives, type SshdReading } from '../sshd';
import { meaningfulLines } from '../text';
import type { Host } from '../types';
import { runTool } from './tools';

/** `Port` lines of sshd_config and the files its `Include` lines name (glob `*.conf` in one directory). */
export async function sshdConfigPorts(host: Host): Promise<number[]> {
  const ports: number[] = [];
  const visit = async (file: string, depth: number): Promise<void> => {
    const read = await host.readFile(file);
    if (!read.ok || depth > 4) return;
    // Settings after the first Match block apply only to matching connections.
    for (const { keyword: key, value } of sshdConfigDirectives(read.text)) {
      if (key === 'port' && /^\d+$/.test(value)) ports.push(Number(value));
      if (key === 'include') {
        const pattern = /^(.*)\/\*\.conf$/.exec(value);
        if (!pattern) await visit(value.startsWith('/') ? value : `/etc/ssh/${value}`, depth + 1);
        else {
          const dirPath = pattern[1]!.startsWith('/') ? pattern[1]! : `/etc/ssh/${pattern[1]}`;
          const dir = await host.readDir(dirPath);
          if (dir.ok) for (const e of dir.entries.filter((n) => n.endsWith('.conf')).sort()) await visit(`${dirPath}/${e}`, depth + 1);
        }
      }
    }
  };
  await visit('/etc/ssh/sshd_config', 0);
  return ports;
}

const UNIT_DIRS = [
  '/etc/systemd/system',
  '/run/systemd/system',
  '/run/systemd/generator',
  '/usr/lib/systemd/system',
  '/lib/systemd/system',
];

/** TCP ports of `ListenStream=` settings in order; an empty assignment resets the list. */
export function applyListenStream(ports: number[], unitText: string): number[] {
  let out = [...ports];
  let inSocket = false;
  for (const line of meaningfulLines(unitText)) {
    if (line.startsWith('[')) {
      inSocket = line === '[Socket]';
      continue;
    }
    const m = /^ListenStream\s*=\s*(.*)$/.exec(line);
    if (!inSocket || !m) continue;
    const value = m[1]!.trim();
    if (value === '') {
      out = [];
      continue;
    }
    const port = /^(?:.*:)?(\d+)$/.exec(value)?.[1];
    if (port) out.push(Number(port));
  }
  return out;
}

/** Ports the SSH socket units would listen on: the first unit file found by precedence, then its drop-ins by name. */
export async function sshSocketPorts(host: Host): Promise<number[]> {
  const ports: number[] = [];
  for (const unit of ['ssh.socket', 'sshd.socket']) {
    let current: number[] = [];
    for (const dir of UNIT_DIRS) {
      const main = await host.readFile(`${dir}/${unit}`);
      if (main.ok) {
        current = applyListenStream([], main.text);
        break;
      }
    }
    const dropIns = new Map<string, string>();
    for (const dir of [...UNIT_DIRS].reverse()) {
      const listing = await host.readDir(`${dir}/${unit}.d`);
      if (listing.ok) for (const e of listing.entries.filter((n) => n.endsWith('.conf'))) dropIns.set(e, `${dir}/${unit}.d/${e}`);
    }
    for (const name of [...dropIns.keys()].sort()) {
      const read = await host.readFile(dropIns.get(name)!);
      if (read.ok) current = applyListenStream(current, read.text);
    }
    ports.push(...current);
  }
  return ports;
}

/** `sshd -T`: the effective configuration, as root. */
export async function readSshdSettings(host: Host): Promise<SshdReading> {
  return readSshdEffectiveConfig(await runTool(host, SSHD, ['-T']));
}

// REMOTE_LOGIN on Linux (research §8.2): exposure, so PASS means nothing offers a remote
// interactive login. The listening sockets of /proc/net/tcp{,6} are the truth: a socket-activated
// ssh.socket (held by systemd, PID 1) listens while ssh.service is inactive, and a unit that is
// "enabled" but never started listens on nothing. Owners come from /proc/<pid>/fd (root).
import { endianness } from 'node:os';
import type { Policy } from '../policy';
import { defineCheck, type CheckContext } from '../types';
import { fail, fsFailureReason, pass, unknown, type FsFailureReason } from '../verdict';
import { processTable } from './processes';
import { readListeners, socketOwners, type Bind } from './sockets';
import { isHardened, sshdEvidence, type SshdReading } from '../sshd';
import { readSshdSettings, sshdConfigPorts, sshSocketPorts } from './sshConfig';

export type RemoteService = 'ssh' | 'telnet' | 'rdp' | 'vnc';

/** Daemons whose listening sockets are remote logins, by kernel comm name. */
const DAEMON_SERVICE: Record<string, RemoteService> = {
  sshd: 'ssh',
  dropbear: 'ssh',
  telnetd: 'telnet',
  'in.telnetd': 'telnet',
  xrdp: 'rdp',
  Xvnc: 'vnc',
  Xtigervnc: 'vnc',
  x11vnc: 'vnc',
  x0vncserver: 'vnc',
  'vino-server': 'vnc',
  wayvnc: 'vnc',
  krfb: 'vnc',
};
/** Processes that listen on behalf of a service they start on connection (socket activation). */
const ACTIVATORS = new Set(['systemd', 'inetd', 'xinetd']);

function serviceByPort(port: number, sshPorts: ReadonlySet<number>): RemoteService | undefined {
  if (port === 22 || sshPorts.has(port)) return 'ssh';
  if (port === 23) return 'telnet';
  if (port === 3389) return 'rdp';
  if (port >= 5900 && port <= 5999) return 'vnc';
  return undefined;
}

export interface OwnedListener {
  port: number;
  bind: Bind;
  /** Owning process's comm name; undefined when not mapped (not root, or not a candidate process). */
  owner?: string;
}

interface RemoteLoginFacts {
  listeners:
    | {
        ok: true;
        items: OwnedListener[];
        /** Rows of /proc/net/tcp{,6} that could not be read, by file. */ unreadable: { tcp?: number[]; tcp6?: number[] };
      }
    | { ok: false; reason: FsFailureReason };
  ownerMapping: 'complete' | 'partial' | 'unavailable';
  /** Ports configured for SSH besides 22 (sshd_config Port, ListenStream of ssh(d).socket). */
  sshPorts: number[];
  sshd?: SshdReading;
}

/** The remote service a listener offers, if any. Configured SSH ports count only for sshd itself, an activator or an unknown owner. */
/** X11's TCP display ports: Xvnc is an X server too and listens on 6000+display besides its VNC port. */
const isX11DisplayPort = (port: number) => port >= 6000 && port <= 6063;

export function classify(l: OwnedListener, sshPorts: ReadonlySet<number>): RemoteService | undefined {
  const byOwner = l.owner ? DAEMON_SERVICE[l.owner] : undefined;
  if (byOwner && !(byOwner === 'vnc' && isX11DisplayPort(l.port))) return byOwner;
  if (byOwner) return undefined;
  const trustConfigured = l.owner === undefined || ACTIVATORS.has(l.owner);
  return serviceByPort(l.port, trustConfigured ? sshPorts : new Set());
}

async function collect(ctx: CheckContext): Promise<RemoteLoginFacts> {
  const { host } = ctx;
  const [listening, table, configured, socketPorts] = await Promise.all([
    readListeners(host, endianness() === 'LE'),
    processTable(ctx),
    sshdConfigPorts(host),
    sshSocketPorts(host),
  ]);
  const sshPorts = [...new Set([...configured, ...socketPorts])].filter((p) => p !== 22).sort((a, b) => a - b);
  if (!listening.ok) return { listeners: { ok: false, reason: fsFailureReason(listening.error) }, ownerMapping: 'unavailable', sshPorts };
  const candidates = table.processes.filter(
    (p) => DAEMON_SERVICE[p.comm] || (ACTIVATORS.has(p.comm) && (p.pid === 1 || p.comm !== 'systemd')),
  );
  const mapping = await socketOwners(
    host,
    candidates.map((p) => p.pid),
  );
  const portSet = new Set(sshPorts);
  // A configured SSH port held by some other process is not SSH; find out who holds it (rare,
  // so the full fd scan of every process runs only then).
  const ambiguous = listening.listeners.some((l) => l.bind !== 'loopback' && portSet.has(l.port) && !mapping.owners.has(l.inode));
  if (ambiguous) {
    const others = await socketOwners(
      host,
      table.processes.filter((p) => !candidates.includes(p)).map((p) => p.pid),
    );
    others.owners.forEach((pid, inode) => mapping.owners.set(inode, pid));
    mapping.complete &&= others.complete;
  }
  const commOf = new Map(table.processes.map((p) => [p.pid, p.comm]));
  const items = listening.listeners.map((l): OwnedListener => {
    const pid = mapping.owners.get(l.inode);
    const owner = pid !== undefined ? commOf.get(pid) : undefined;
    return owner ? { port: l.port, bind: l.bind, owner } : { port: l.port, bind: l.bind };
  });
  const mapped = table.complete && mapping.complete;
  const facts: RemoteLoginFacts = {
    listeners: { ok: true, items, unreadable: listening.unreadable },
    ownerMapping: mapped ? 'complete' : mapping.owners.size > 0 ? 'partial' : 'unavailable',
    sshPorts,
  };
  // The server's authentication settings matter only when SSH is reachable.
  if (items.some((l) => l.bind !== 'loopback' && classify(l, portSet) === 'ssh')) facts.sshd = await readSshdSettings(host);
  return facts;
}

function evaluate(facts: RemoteLoginFacts, policy: Policy) {
  const evidence: Record<string, unknown> = { source: 'procfs', owner_mapping: facts.ownerMapping };
  if (!facts.listeners.ok) return unknown(facts.listeners.reason, evidence);
  const sshPorts = new Set(facts.sshPorts);
  const classified = facts.listeners.items.map((l) => ({ ...l, service: classify(l, sshPorts) }));
  const exposed = classified.filter((l) => l.service && l.bind !== 'loopback');
  const ssh = exposed.filter((l) => l.service === 'ssh');
  const others = [...new Set(exposed.filter((l) => l.service !== 'ssh').map((l) => l.service!))].sort();
  Object.assign(evidence, {
    ssh_listening: ssh.length > 0,
    ssh_loopback_only: ssh.length === 0 && classified.some((l) => l.service === 'ssh'),
    other_remote: others,
    other_listeners_count: new Set(classified.filter((l) => !l.service && l.bind !== 'loopback').map((l) => l.port)).size,
  });
  if (ssh.length > 0) {
    Object.assign(evidence, {
      ssh_bind: ssh.some((l) => l.bind === 'any') ? 'any' : 'specific',
      ssh_ports: [...new Set(ssh.map((l) => l.port))].sort((a, b) => a - b),
      ssh_socket_activated: ssh.some((l) => l.owner !== undefined && ACTIVATORS.has(l.owner)),
    });
    if (facts.sshd?.ok) Object.assign(evidence, sshdEvidence(facts.sshd.settings));
    else if (facts.sshd) evidence.sshd_config = facts.sshd.reason;
  }
  // A row that could not be read may be a listener: an exposure seen stands, a PASS does not.
  const unreadable = facts.listeners.unreadable;
  if (unreadable.tcp || unreadable.tcp6) evidence.unrecognized_lines = unreadable;
  if (exposed.length === 0) {
    return unreadable.tcp || unreadable.tcp6
      ? unknown('unrecognized_lines', evidence)
      : pass({ ...evidence, rule: 'no_remote_login_listening' });
  }
  if (policy.remoteLogin.allowSshIfHardened && others.length === 0) {
    // Only SSH is exposed and the policy accepts it when hardened: that needs sshd's answer.
    if (!facts.sshd?.ok) return unknown(facts.sshd?.reason ?? 'check_error', { ...evidence, step: 'sshd_config' });
    if (isHardened(facts.sshd.settings)) {
      return unreadable.tcp || unreadable.tcp6 ? unknown('unrecognized_lines', evidence) : pass({ ...evidence, rule: 'ssh_hardened' });
    }
  }
  return fail({ ...evidence, rule: 'remote_login_exposed' });
}

export const remoteLogin = defineCheck({ key: 'REMOTE_LOGIN', platform: 'LINUX', collect, evaluate });

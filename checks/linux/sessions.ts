// Graphical sessions on this machine: from logind's session state files when systemd runs
// (/run/systemd/sessions/<id>, the data `loginctl show-session` prints, without spawning it), else
// from desktop processes in the process table. Used by SCREEN_LOCK, whose settings are per user.
import { PASSWD, parsePasswd, type Account } from '../passwd';
import type { CheckContext, Host } from '../types';
import { processTable } from './processes';
import { systemdBooted } from './systemd';
import { parseKeyValue } from '../text';

interface GraphicalSession {
  uid: number;
  /** XDG desktop name(s) as logind or the process gives them: "GNOME", "ubuntu:GNOME", "KDE", "XFCE", … */
  desktop: string;
  /** x11, wayland, mir; "unknown" when found by process. */
  type: string;
  remote: boolean;
}

export interface SessionFacts {
  source: 'logind' | 'procfs' | 'none';
  sessions: GraphicalSession[];
  /** A desktop or display manager is installed, so a graphical login is possible here. */
  desktopInstalled: boolean;
}

const GRAPHICAL_TYPES = new Set(['x11', 'wayland', 'mir']);

/** logind session file -> a graphical user session, or null (tty, greeter, closing, …). */
function parseLogindSession(text: string): GraphicalSession | null {
  const f = parseKeyValue(text);
  if (!f.TYPE || !GRAPHICAL_TYPES.has(f.TYPE)) return null;
  if (f.CLASS !== undefined && f.CLASS !== 'user') return null;
  if (f.STATE === 'closing') return null;
  const uid = Number(f.UID);
  if (!Number.isInteger(uid)) return null;
  return { uid, desktop: f.DESKTOP ?? '', type: f.TYPE, remote: f.REMOTE === '1' };
}

/** Processes that only run inside a graphical session, and the desktop they mean. */
const DESKTOP_PROCESSES: Record<string, string> = {
  'gnome-shell': 'GNOME',
  plasmashell: 'KDE',
  kwin_wayland: 'KDE',
  kwin_x11: 'KDE',
  'xfce4-session': 'XFCE',
  cinnamon: 'X-Cinnamon',
  'mate-session': 'MATE',
  sway: 'sway',
  i3: 'i3',
};

const SESSION_DIRS = ['/usr/share/xsessions', '/usr/share/wayland-sessions'];
const DISPLAY_MANAGERS = ['/usr/sbin/gdm3', '/usr/sbin/gdm', '/usr/bin/sddm', '/usr/sbin/lightdm', '/usr/sbin/lxdm'];

async function desktopInstalled(host: Host): Promise<boolean> {
  const [dirs, managers] = await Promise.all([
    Promise.all(SESSION_DIRS.map((d) => host.readDir(d))),
    Promise.all(DISPLAY_MANAGERS.map((m) => host.stat(m))),
  ]);
  return dirs.some((d) => d.ok && d.entries.some((e) => e.endsWith('.desktop'))) || managers.some((m) => m.ok);
}

async function logindSessions(host: Host): Promise<GraphicalSession[] | null> {
  const dir = await host.readDir('/run/systemd/sessions');
  if (!dir.ok) return null;
  // Each session has a state file named by its id, plus *.ref fifos.
  const files = dir.entries.filter((e) => !e.endsWith('.ref'));
  const sessions = await Promise.all(
    files.map(async (id) => {
      const file = await host.readFile(`/run/systemd/sessions/${id}`);
      return file.ok ? parseLogindSession(file.text) : null;
    }),
  );
  return sessions.filter((s): s is GraphicalSession => s !== null);
}

export function graphicalSessions(ctx: CheckContext): Promise<SessionFacts> {
  return ctx.shared('linux.sessions', async () => {
    const { host } = ctx;
    const [booted, installed] = await Promise.all([systemdBooted(ctx), desktopInstalled(host)]);
    const fromLogind = booted ? await logindSessions(host) : null;
    if (fromLogind) return { source: 'logind', sessions: fromLogind, desktopInstalled: installed };
    const table = await processTable(ctx);
    const desktops = table.processes.filter((p) => DESKTOP_PROCESSES[p.comm] !== undefined);
    const sessions = await Promise.all(
      desktops.map(async (p): Promise<GraphicalSession | null> => {
        const s = await host.stat(`/proc/${p.pid}`);
        return s.ok ? { uid: s.uid, desktop: DESKTOP_PROCESSES[p.comm]!, type: 'unknown', remote: false } : null;
      }),
    );
    const found = sessions.filter((s): s is GraphicalSession => s !== null);
    return { source: table.readable ? 'procfs' : 'none', sessions: found, desktopInstalled: installed };
  });
}

/** The local account of a uid from /etc/passwd (home and group for running in its context); never sent as evidence. */
export async function accountOf(host: Host, uid: number): Promise<Account | undefined> {
  const passwd = await host.readFile(PASSWD);
  return passwd.ok ? parsePasswd(passwd.text).get(uid) : undefined;
}

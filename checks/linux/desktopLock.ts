// A desktop user's screen-lock settings, read in that user's context: GNOME-family desktops through
// `gsettings` run as the user (root's gsettings would print root's values or the schema defaults),
// KDE Plasma from kscreenlockerrc and XFCE from xfce4-screensaver's xfconf channel (plain files in
// the user's home, read without spawning anything).
import type { Host } from '../types';
import { parseBoolean, parseIni } from '../text';
import { commandFailureReason, type CommandFailureReason } from '../verdict';
import type { Account } from '../passwd';
import { findTool, runTool } from './tools';

export interface LockSettings {
  desktop: 'gnome' | 'cinnamon' | 'kde' | 'xfce';
  source: 'gsettings' | 'kscreenlockerrc' | 'xfconf';
  lockEnabled?: boolean;
  /** Whether the screensaver/locker starts on idle at all. */
  idleActivation?: boolean;
  /** Idle time before the screen blanks and locks; 0 = never. */
  idleDelaySeconds?: number;
  /** Grace period between blanking and locking. */
  lockDelaySeconds?: number;
  /** Some values are the desktop's defaults because the user never changed them. */
  defaultsUsed?: boolean;
}

/** Why a desktop's lock settings could not be read. */
export type LockUnreadable =
  CommandFailureReason | 'gsettings_defaults_only' | 'unsupported_locker' | 'unsupported_desktop' | 'no_user_account';

export type LockReading = { ok: true; settings: LockSettings } | { ok: false; reason: LockUnreadable; desktop: string };

const GSETTINGS = '/usr/bin/gsettings';
const XFCE4_SCREENSAVER = '/usr/bin/xfce4-screensaver';

/** The desktop family whose settings we know how to read, from an XDG desktop name list. */
function desktopFamily(desktop: string): LockSettings['desktop'] | undefined {
  const names = desktop.split(':').map((n) => n.trim().toLowerCase());
  if (names.some((n) => n === 'x-cinnamon' || n === 'cinnamon')) return 'cinnamon';
  if (names.includes('kde')) return 'kde';
  if (names.includes('xfce')) return 'xfce';
  if (names.some((n) => ['gnome', 'unity', 'budgie', 'gnome-flashback', 'gnome-classic', 'pop'].includes(n))) return 'gnome';
  return undefined;
}

/** `gsettings list-recursively` lines -> key -> value ("uint32 300" -> "300"). */
export function parseGsettings(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^(\S+)\s+(\S+)\s+(.+)$/.exec(line.trim());
    if (match) out[`${match[1]}.${match[2]}`] = match[3]!.replace(/^u?int32\s+/, '').trim();
  }
  return out;
}

const int = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);

function userContext(account: Account) {
  const runtime = `/run/user/${account.uid}`;
  return {
    user: { uid: account.uid, gid: account.gid },
    env: { HOME: account.home, XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: `unix:path=${runtime}/bus` },
  };
}

async function readGsettings(host: Host, account: Account, desktop: 'gnome' | 'cinnamon', asOtherUser: boolean): Promise<LockReading> {
  const prefix = desktop === 'gnome' ? 'org.gnome.desktop' : 'org.cinnamon.desktop';
  const options = asOtherUser ? userContext(account) : { env: userContext(account).env };
  const results = await Promise.all([
    runTool(host, GSETTINGS, ['list-recursively', `${prefix}.screensaver`], options),
    runTool(host, GSETTINGS, ['list-recursively', `${prefix}.session`], options),
  ]);
  for (const r of results) {
    if (r.error) return { ok: false, reason: commandFailureReason(r), desktop };
    if (r.exitCode !== 0) return { ok: false, reason: 'parse_error', desktop };
    // Without the dconf backend GIO falls back to an in-memory store that only knows the defaults.
    if (/memory['"]? GSettings backend/i.test(r.stderr)) return { ok: false, reason: 'gsettings_defaults_only', desktop };
  }
  const values = { ...parseGsettings(results[0].stdout), ...parseGsettings(results[1].stdout) };
  const settings: LockSettings = { desktop, source: 'gsettings' };
  const lockEnabled = parseBoolean(values[`${prefix}.screensaver.lock-enabled`]);
  const idleActivation = parseBoolean(values[`${prefix}.screensaver.idle-activation-enabled`]);
  const idle = int(values[`${prefix}.session.idle-delay`]);
  const grace = int(values[`${prefix}.screensaver.lock-delay`]);
  if (lockEnabled !== undefined) settings.lockEnabled = lockEnabled;
  if (idleActivation !== undefined) settings.idleActivation = idleActivation;
  if (idle !== undefined) settings.idleDelaySeconds = idle;
  if (grace !== undefined) settings.lockDelaySeconds = grace;
  return { ok: true, settings };
}

/** KConfig INI: [Group] then key=value; `key[$i]` (kiosk lock) keeps its value. */
export function parseKconfigGroup(text: string, group: string): Record<string, string> {
  const entries = Object.entries(parseIni(text)[group] ?? {});
  return Object.fromEntries(entries.map(([key, value]) => [key.replace(/\[\$[a-z]+\]$/, '').trim(), value]));
}

/** kscreenlocker's defaults (kscreenlockersettings.kcfg): lock after 5 minutes, 5 s grace. */
const KDE_DEFAULTS = { Autolock: 'true', Timeout: '5', LockGrace: '5' };

async function readKde(host: Host, account: Account): Promise<LockReading> {
  const [system, user] = await Promise.all([
    host.readFile('/etc/xdg/kscreenlockerrc'),
    host.readFile(`${account.home}/.config/kscreenlockerrc`),
  ]);
  if (!user.ok && user.error !== 'not_found')
    return { ok: false, reason: user.error === 'permission_denied' ? 'permission_denied' : 'check_error', desktop: 'kde' };
  const set = {
    ...(system.ok ? parseKconfigGroup(system.text, 'Daemon') : {}),
    ...(user.ok ? parseKconfigGroup(user.text, 'Daemon') : {}),
  };
  const merged = { ...KDE_DEFAULTS, ...set };
  const timeoutMinutes = int(merged.Timeout);
  const settings: LockSettings = {
    desktop: 'kde',
    source: 'kscreenlockerrc',
    defaultsUsed: Object.keys(KDE_DEFAULTS).some((k) => !(k in set)),
  };
  const lockEnabled = parseBoolean(merged.Autolock);
  const grace = int(merged.LockGrace);
  if (lockEnabled !== undefined) settings.lockEnabled = lockEnabled;
  if (timeoutMinutes !== undefined) settings.idleDelaySeconds = timeoutMinutes * 60;
  if (grace !== undefined) settings.lockDelaySeconds = grace;
  return { ok: true, settings };
}

/** xfconf channel XML: nested <property name type value> elements -> "/lock/enabled" -> "true". */
export function parseXfconfChannel(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  const stack: string[] = [];
  for (const tag of xml.matchAll(/<(\/?)property\b([^>]*?)(\/?)>/g)) {
    if (tag[1]) {
      stack.pop();
      continue;
    }
    const attrs = Object.fromEntries([...tag[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const path = `${stack.join('')}/${attrs.name ?? ''}`;
    if (attrs.value !== undefined) out[path] = attrs.value;
    if (!tag[3]) stack.push(`/${attrs.name ?? ''}`);
  }
  return out;
}

/** xfce4-screensaver's defaults: saver after 5 idle minutes, locking with it, no delay. */
const XFCE_DEFAULTS: Record<string, string> = {
  '/saver/enabled': 'true',
  '/saver/idle-activation/enabled': 'true',
  '/saver/idle-activation/delay': '5',
  '/lock/enabled': 'true',
  '/lock/saver-activation/enabled': 'true',
  '/lock/saver-activation/delay': '0',
};
const XFCONF_FILE = 'xfce4/xfconf/xfce-perchannel-xml/xfce4-screensaver.xml';

async function readXfce(host: Host, account: Account): Promise<LockReading> {
  const installed = await findTool(host, XFCE4_SCREENSAVER);
  // XFCE can lock with light-locker or xscreensaver instead, whose settings we do not read.
  if (!installed) return { ok: false, reason: 'unsupported_locker', desktop: 'xfce' };
  const [system, user] = await Promise.all([
    host.readFile(`/etc/xdg/${XFCONF_FILE}`),
    host.readFile(`${account.home}/.config/${XFCONF_FILE}`),
  ]);
  const set = { ...(system.ok ? parseXfconfChannel(system.text) : {}), ...(user.ok ? parseXfconfChannel(user.text) : {}) };
  const v = { ...XFCE_DEFAULTS, ...set };
  const settings: LockSettings = {
    desktop: 'xfce',
    source: 'xfconf',
    defaultsUsed: Object.keys(XFCE_DEFAULTS).some((k) => !(k in set)),
  };
  const saver = parseBoolean(v['/saver/enabled']);
  const idleOn = parseBoolean(v['/saver/idle-activation/enabled']);
  const lock = parseBoolean(v['/lock/enabled']);
  const lockWithSaver = parseBoolean(v['/lock/saver-activation/enabled']);
  const idleMinutes = int(v['/saver/idle-activation/delay']);
  const graceMinutes = int(v['/lock/saver-activation/delay']);
  if (lock !== undefined && lockWithSaver !== undefined) settings.lockEnabled = lock && lockWithSaver;
  if (saver !== undefined && idleOn !== undefined) settings.idleActivation = saver && idleOn;
  if (idleMinutes !== undefined) settings.idleDelaySeconds = idleMinutes * 60;
  if (graceMinutes !== undefined) settings.lockDelaySeconds = graceMinutes * 60;
  return { ok: true, settings };
}

/** Reads one session user's settings; `asOtherUser` when the agent must switch to that user to run commands. */
export function readLockSettings(host: Host, account: Account, desktop: string, asOtherUser: boolean): Promise<LockReading> {
  const family = desktopFamily(desktop);
  switch (family) {
    case 'gnome':
    case 'cinnamon':
      return readGsettings(host, account, family, asOtherUser);
    case 'kde':
      return readKde(host, account);
    case 'xfce':
      return readXfce(host, account);
    default:
      return Promise.resolve({ ok: false, reason: 'unsupported_desktop', desktop: desktop.toLowerCase() || 'unknown' });
  }
}

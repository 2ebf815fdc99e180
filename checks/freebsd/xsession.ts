// Parsers for the X11 screen-saver settings SCREEN_LOCK reads: XScreenSaver's resource files
// (~/.xscreensaver, and the app-defaults file the port installs) and `xset q`.
import { parseBoolean } from '../text';

/** "name:value" resource lines; backslash-newline joins lines; app-defaults prefix "*" or "XScreenSaver." */
export function parseResources(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.replace(/\\\n/g, '').split('\n')) {
    if (/^\s*[!#]/.test(line)) continue;
    const m = /^\s*(?:XScreenSaver)?[*.]?([A-Za-z][A-Za-z0-9]*)\s*:\s*(.*?)\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** XScreenSaver's time resources: "H:MM:SS", "MM:SS", or a bare number of minutes. */
export function parseXsTime(value: string | undefined): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\d+):(\d{1,2}):(\d{1,2})$/.exec(v))) return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  if ((m = /^(\d+):(\d{1,2})$/.exec(v))) return Number(m[1]) * 60 + Number(m[2]);
  if (/^\d+$/.test(v)) return Number(v) * 60;
  return null;
}

export interface LockSettings {
  locks: boolean;
  idleSeconds: number;
  graceSeconds: number;
}

/**
 * XScreenSaver's effective lock settings: the user's file over the app-defaults. "mode: off"
 * means the screen saver never starts, so nothing locks.
 */
export function xscreensaverSettings(user: Map<string, string> | null, defaults: Map<string, string> | null): LockSettings | null {
  const get = (key: string) => user?.get(key) ?? defaults?.get(key);
  const lock = parseBoolean(get('lock'));
  const timeout = parseXsTime(get('timeout'));
  const grace = parseXsTime(get('lockTimeout'));
  const mode = get('mode')?.trim().toLowerCase();
  if (lock === undefined || timeout === null || grace === null) return null;
  return { locks: lock && mode !== 'off' && timeout > 0, idleSeconds: timeout, graceSeconds: grace };
}

/** `xset q`'s "Screen Saver:" section: "  timeout:  600    cycle:  600" (0 = screen saver off). */
export function parseXsetTimeout(stdout: string): number | null {
  const section = /^Screen Saver:\n(?:.*\n)*?\s+timeout:\s+(\d+)\s+cycle:\s+\d+\s*$/m.exec(stdout);
  return section ? Number(section[1]) : null;
}

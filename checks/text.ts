// Small parsers for line-oriented text that tools and configuration files print on every platform:
// comments and blank lines, KEY=value and shell assignments, INI sections, yes/no tokens, ages.

/** Non-empty lines with `#` comments removed and surrounding whitespace trimmed. */
export function meaningfulLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0);
}

/** `KEY=value` lines (timedatectl show, logind state files); the first `=` splits, later duplicates win. */
export function parseKeyValue(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/**
 * Shell-style assignments as in os-release(5): `KEY="value"`, `KEY='value'` or `KEY=value`,
 * backslash escapes inside double quotes, comments and blank lines ignored.
 */
export function parseShellAssignments(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    out[match[1]!] = unquote(match[2]!);
  }
  return out;
}

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\(["\\`$])/g, '$1');
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1);
  return v;
}

/**
 * INI files as dnf, KConfig and similar readers take them: `[section]` headers, `key=value` lines,
 * whole-line `#` or `;` comments (a `#` inside a value is part of it). Keys are kept as written;
 * later duplicates win. Lines before the first header belong to section "".
 */
export function parseIni(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([^\]]+)\]/.exec(line);
    if (header) {
      section = header[1]!.trim();
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0) (out[section] ??= {})[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** The exact `yes`/`no` (and 1/0, true/false, on/off) tokens, any case; anything else is not a boolean. */
export function parseBoolean(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'yes' || v === 'true' || v === '1' || v === 'on') return true;
  if (v === 'no' || v === 'false' || v === '0' || v === 'off') return false;
  return undefined;
}

/** Whole days between two instants, floored; negative ages (clock skew) count as 0. */
export function ageInDays(thenMs: number, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - thenMs) / 86_400_000));
}

// The PAM `password` stack that `passwd` runs, read from /etc/pam.d: entries in order, with
// Debian's `@include` and the `include`/`substack` controls followed into the files they name.
import type { Host } from '../types';

export interface PamEntry {
  /** Module name without directory or ".so" suffix: "pam_unix", "pam_pwquality". */
  module: string;
  control: string;
  args: string[];
  /** Which /etc/pam.d file the line is in (evidence: a file name, not a path with user data). */
  file: string;
}

/** Why the stack could not be read. */
type PamStackUnreadable = 'permission_denied' | 'pam_file_missing' | 'check_error' | 'parse_error' | 'no_pam_stack';

export type PamStack = { ok: true; service: string; entries: PamEntry[]; files: string[] } | { ok: false; reason: PamStackUnreadable };

const PAM_DIR = '/etc/pam.d';
const MAX_INCLUDE_DEPTH = 8;

/** Tokens of one PAM line; a `[...]` control stays one token. */
export function tokenizePamLine(line: string): string[] {
  return line.match(/\[[^\]]*\]|\S+/g) ?? [];
}

function moduleName(path: string): string {
  return path.replace(/^.*\//, '').replace(/\.so$/, '');
}

/** `password` lines of one file and the files it pulls in, in stack order. */
async function expand(host: Host, file: string, depth: number, files: string[]): Promise<PamEntry[] | { reason: PamStackUnreadable }> {
  const read = await host.readFile(`${PAM_DIR}/${file}`);
  if (!read.ok)
    return {
      reason: read.error === 'permission_denied' ? 'permission_denied' : read.error === 'not_found' ? 'pam_file_missing' : 'check_error',
    };
  files.push(file);
  const entries: PamEntry[] = [];
  // Backslash-newline continues a line (pam.conf(5)).
  const text = read.text.replace(/\\\n/g, ' ');
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const tokens = tokenizePamLine(line);
    const include =
      tokens[0] === '@include'
        ? tokens[1]
        : tokens[0]?.replace(/^-/, '') === 'password' && (tokens[1] === 'include' || tokens[1] === 'substack')
          ? tokens[2]
          : undefined;
    if (include) {
      if (depth >= MAX_INCLUDE_DEPTH) return { reason: 'parse_error' };
      const nested = await expand(host, include, depth + 1, files);
      if (!Array.isArray(nested)) return nested;
      entries.push(...nested);
      continue;
    }
    if (tokens[0]?.replace(/^-/, '') !== 'password' || tokens.length < 3) continue;
    entries.push({ module: moduleName(tokens[2]!), control: tokens[1]!, args: tokens.slice(3), file });
  }
  return entries;
}

/** The password stack of `passwd`, or of the distribution's shared stack file when there is no passwd service file. */
export async function readPasswordStack(host: Host): Promise<PamStack> {
  const dir = await host.readDir(PAM_DIR);
  if (!dir.ok)
    return {
      ok: false,
      reason: dir.error === 'not_found' ? 'no_pam_stack' : dir.error === 'permission_denied' ? 'permission_denied' : 'check_error',
    };
  const service = ['passwd', 'common-password', 'system-auth'].find((f) => dir.entries.includes(f));
  if (!service) return { ok: false, reason: 'no_pam_stack' };
  const files: string[] = [];
  const entries = await expand(host, service, 0, files);
  return Array.isArray(entries) ? { ok: true, service, entries, files } : { ok: false, reason: entries.reason };
}

/** Controls under which a failing module does not stop the password change. */
export function enforces(control: string): boolean {
  return control !== 'optional' && control !== 'sufficient';
}

/** `key=value` module arguments (later ones win, as the modules parse them). */
export function moduleArgs(entry: PamEntry): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of entry.args) {
    const eq = arg.indexOf('=');
    out[eq > 0 ? arg.slice(0, eq) : arg] = eq > 0 ? arg.slice(eq + 1) : '';
  }
  return out;
}

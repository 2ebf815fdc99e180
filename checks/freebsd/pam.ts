// OpenPAM policy files (/etc/pam.d/<service>, then /usr/local/etc/pam.d/<service>): lines of
// "facility control-flag module [options]" or "facility include service", "#" comments at the
// start of a word, backslash-newline continuations, quoted words. A service without a chain for
// the facility falls back to the "other" service.
import type { FileResult, FsError } from '../types';

const PAM_DIRS = ['/etc/pam.d', '/usr/local/etc/pam.d'] as const;

export interface PamEntry {
  facility: string;
  control: string;
  module: string;
  options: string[];
}

function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) {
    if (m[3]?.startsWith('#')) break;
    out.push(m[1] ?? m[2] ?? m[3]!);
  }
  return out;
}

export function parsePamFile(text: string): PamEntry[] {
  const entries: PamEntry[] = [];
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const [facility, control, module, ...options] = words(line);
    if (facility === undefined || control === undefined || module === undefined) continue;
    entries.push({ facility, control, module, options });
  }
  return entries;
}

export type PamFiles = Record<string, FileResult>;

export type Chain =
  | { state: 'resolved'; entries: PamEntry[] }
  /** Files the chain needs that have not been read yet. */
  | { state: 'incomplete'; missing: string[] }
  | { state: 'unreadable'; path: string; error: FsError | 'include_loop' };

const candidates = (service: string) => PAM_DIRS.map((d) => `${d}/${service}`);

/** The entries of `facility` for `service`, with includes expanded, from the files read so far. */
export function resolveChain(files: PamFiles, service: string, facility: string, depth = 0): Chain {
  if (depth > 8) return { state: 'unreadable', path: service, error: 'include_loop' };
  let text: string | undefined;
  for (const path of candidates(service)) {
    const file = files[path];
    if (file === undefined) return { state: 'incomplete', missing: [path] };
    if (file.ok) {
      text = file.text;
      break;
    }
    if (file.error !== 'not_found') return { state: 'unreadable', path, error: file.error };
  }
  const entries = text === undefined ? [] : parsePamFile(text).filter((e) => e.facility === facility);
  if (entries.length === 0) {
    return service === 'other' ? { state: 'resolved', entries: [] } : resolveChain(files, 'other', facility, depth + 1);
  }
  const out: PamEntry[] = [];
  for (const entry of entries) {
    if (entry.control !== 'include') {
      out.push(entry);
      continue;
    }
    const included = resolveChain(files, entry.module, facility, depth + 1);
    if (included.state !== 'resolved') return included;
    out.push(...included.entries);
  }
  return { state: 'resolved', entries: out };
}

// What unattended-upgrades may install against what the machine's APT sources fetch. Its allowed
// origins (Unattended-Upgrade::Origins-Pattern, and the older Allowed-Origins "origin:archive" list)
// are matched, by unattended-upgrades' own rules, against each archive in /var/lib/apt/lists: the
// header of its InRelease (or Release) file and the host and components its file names carry.
// The rules are learnt from mvo5/unattended-upgrades (the `unattended-upgrade` script:
// get_allowed_origins_legacy, get_allowed_origins, substitute, match_whitelist_string,
// is_allowed_origin), not copied.
import type { CheckContext } from '../types';
import type { OsRelease } from './osRelease';

const APT_LISTS = '/var/lib/apt/lists';
/** The fields unattended-upgrades matches sit at the top of a Release file, before its checksum lists (often 100 KiB and more). */
const RELEASE_HEAD_BYTES = 4096;
/** Release files read per cycle at most: a machine fetches a handful of archives; more are not read. */
const MAX_RELEASE_FILES = 64;
/** Archives named in evidence at most. */
const MAX_EVIDENCE_ARCHIVES = 10;

/** One archive the machine fetches, with the values unattended-upgrades matches (`''` where its Release file has none). */
export interface AptArchive {
  /** The Release file's name in /var/lib/apt/lists. */
  file: string;
  origin: string;
  label: string;
  /** `Suite` (apt's "archive"; `Archive` where a Release file has no Suite). */
  suite: string;
  codename: string;
  /** The host the lists come from, as the file name carries it. */
  site: string;
  /** The components whose package lists were fetched (the Release file's Components when none is listed). */
  components: string[];
}

/** `${distro_id}`, `${distro_codename}`, `${distro_release}`: what `lsb_release -i -s`, `-c -s`, `-r -s` print. */
export interface DistroIdentity {
  distro_id: string;
  distro_codename: string;
  distro_release: string;
}

export type ArchiveLists =
  { ok: true; archives: AptArchive[]; unread?: string[] } | { ok: false; reason: 'lists_unreadable' | 'no_release_files'; error?: string };

/**
 * The identity lsb_release gives on Debian 12 and later (lsb-release 12, a shell script reading
 * os-release): ID with its first letter upper-cased, or NAME where NAME is ID in other case;
 * VERSION_CODENAME; VERSION_ID; `n/a` where os-release has none.
 */
export function lsbIdentity(release: OsRelease | undefined): DistroIdentity {
  const id = release?.id ?? '';
  const capitalised = id.charAt(0).toUpperCase() + id.slice(1);
  const name = release?.name;
  return {
    distro_id: (name && name.toLowerCase() === id.toLowerCase() ? name : capitalised) || 'n/a',
    distro_codename: release?.versionCodename || 'n/a',
    distro_release: release?.versionId || 'n/a',
  };
}

/** A string unattended-upgrades refuses (it stops with an error there): what is wrong, and where. */
export class OriginPatternError extends Error {}

/** Python's string.Template.substitute over the three names: `$$` is `$`; an unknown name or a lone `$` is an error. */
export function substitute(text: string, distro: DistroIdentity): string {
  return text.replace(/\$(?:(\$)|([_a-z][_a-z0-9]*)|\{([_a-z][_a-z0-9]*)\}|())/gi, (whole, dollar, bare, braced, invalid) => {
    if (dollar) return '$';
    if (invalid !== undefined) throw new OriginPatternError(`invalid placeholder in ${text}`);
    const name = (bare ?? braced) as string as keyof DistroIdentity;
    if (!Object.hasOwn(distro, name)) throw new OriginPatternError(`unknown placeholder ${whole} in ${text}`);
    return distro[name];
  });
}

/** A value of `apt-config dump` (`Key:: "value";` for a list item), unescaped as apt prints it. */
function listValues(dump: string, key: string): string[] {
  const out: string[] = [];
  const prefix = `${key}:: "`;
  for (const line of dump.split('\n')) {
    if (line.startsWith(prefix) && line.endsWith('";')) out.push(line.slice(prefix.length, -2));
  }
  return out;
}

/**
 * The allowed origins, each as an Origins-Pattern string with `${…}` substituted: first the legacy
 * Allowed-Origins ("origin:archive", or "origin archive"; `\:` a literal colon, a `,` escaped) turned
 * into `o=…,a=…`, then Origins-Pattern. Throws OriginPatternError where unattended-upgrades stops.
 */
export function allowedOrigins(dump: string, distro: DistroIdentity): string[] {
  const legacy = listValues(dump, 'Unattended-Upgrade::Allowed-Origins').map((entry) => {
    const parts = /(?<!\\):/.test(entry) ? entry.split(/(?<!\\):/) : entry.split(/\s+/).filter(Boolean);
    if (parts.length !== 2) throw new OriginPatternError(`cannot split ${entry} into origin and archive`);
    const escapeCommas = (s: string) => s.replace(/([^\\]),/g, '$1\\,');
    const origin = escapeCommas(parts[0]!.replace(/\\:/g, ':'));
    return `o=${substitute(origin, distro)},a=${substitute(escapeCommas(parts[1]!), distro)}`;
  });
  return [...legacy, ...listValues(dump, 'Unattended-Upgrade::Origins-Pattern').map((p) => substitute(p, distro))];
}

/** Python's fnmatch.fnmatch on POSIX: the whole string, case-sensitive; `*`, `?`, `[seq]`, `[!seq]`. */
export function fnmatch(name: string, pattern: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) {
        source += '\\[';
        continue;
      }
      // Python's re reads `]` first in a set, and `\` in it, literally; a JavaScript class needs them escaped.
      let set = pattern.slice(i + 1, j).replace(/[\\\]]/g, '\\$&');
      if (set.startsWith('!')) set = `^${set.slice(1)}`;
      else if (set.startsWith('^')) set = `\\${set}`;
      source += `[${set}]`;
      i = j;
    } else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^(?:${source})$`, 's').test(name);
}

const FIELD_OF: Record<string, (a: AptArchive, component: string) => string> = {
  o: (a) => a.origin,
  origin: (a) => a.origin,
  l: (a) => a.label,
  label: (a) => a.label,
  a: (a) => a.suite,
  suite: (a) => a.suite,
  archive: (a) => a.suite,
  c: (_, component) => component,
  component: (_, component) => component,
  site: (a) => a.site,
  n: (a) => a.codename,
  codename: (a) => a.codename,
};

/**
 * Whether one allowed-origin pattern admits an archive: every `key=value` token (`\,` a literal
 * comma) must match, as fnmatch, for one of its components (each component is its own origin to
 * unattended-upgrades). An empty pattern matches nothing. Throws OriginPatternError where
 * unattended-upgrades stops (a token without one `=`, an unknown key).
 */
export function patternMatches(pattern: string, archive: AptArchive, distro: DistroIdentity): boolean {
  const whole = pattern.trim();
  if (whole === '') return false;
  const tokens = whole
    .replace(/\\,/g, '%2C')
    .split(',')
    .map((token) => {
      const parts = token.split('=').map((s) => s.trim().replace(/%2C/g, ','));
      if (parts.length !== 2) throw new OriginPatternError(`token ${token} of ${pattern} is not key=value`);
      const field = Object.hasOwn(FIELD_OF, parts[0]!) ? FIELD_OF[parts[0]!] : undefined;
      if (!field) throw new OriginPatternError(`unknown key ${parts[0]} in ${pattern}`);
      return [field, substitute(parts[1]!, distro)] as const;
    });
  const components = archive.components.length ? archive.components : [''];
  return components.some((component) => tokens.every(([field, value]) => fnmatch(field(archive, component), value)));
}

/** An archive that carries security updates: its suite or codename ends in `-security`, or its label does (Debian-Security). */
export function isSecurityArchive(a: AptArchive): boolean {
  return [a.suite, a.codename, a.label].some((v) => /-security$/i.test(v));
}

/** `Origin/suite`: how evidence names an archive. */
const archiveName = (a: AptArchive) => `${a.origin || '?'}/${a.suite || a.codename || '?'}`;

/** Characters of one pattern in evidence at most. */
const MAX_EVIDENCE_PATTERN = 120;

/**
 * Text about patterns fit for evidence: a `site=` value (a mirror's host name, often an internal
 * one) is never shown, whatever else the pattern says.
 */
export const withoutSites = (text: string) => text.replace(/\bsite=(?:[^,\\\s]|\\.)*/g, 'site=…');

/** The allowed origins as evidence: up to MAX_EVIDENCE_ARCHIVES patterns, each cut, their sites hidden. */
export const patternsForEvidence = (patterns: string[]) =>
  patterns.slice(0, MAX_EVIDENCE_ARCHIVES).map((p) => withoutSites(p).slice(0, MAX_EVIDENCE_PATTERN));

/** Up to MAX_EVIDENCE_ARCHIVES archive names, distinct, in order. */
export const archiveNames = (archives: AptArchive[]) => [...new Set(archives.map(archiveName))].slice(0, MAX_EVIDENCE_ARCHIVES);

/** The fields of a Release file's header: `Key: value` lines before the first checksum list, PGP armour skipped; keys lower-cased. */
export function parseReleaseHeader(text: string, truncated: boolean): Record<string, string> {
  let lines = text.split('\n');
  // A bounded read may end inside a line: that line is not whole.
  if (truncated) lines = lines.slice(0, -1);
  if (text.startsWith('-----BEGIN PGP SIGNED MESSAGE-----')) lines = lines.slice(lines.indexOf('') + 1);
  const fields: Record<string, string> = {};
  for (const line of lines) {
    if (line.trim() === '' || line.startsWith('-----BEGIN PGP SIGNATURE-----')) break;
    const m = /^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    // The checksum lists (MD5Sum:, SHA256:, …) start with an empty value; nothing matched follows.
    if (m[2] === '' && /^(md5sum|sha1|sha256|sha512)$/.test(key)) break;
    fields[key] ??= m[2]!;
  }
  return fields;
}

const decode = (s: string) => s.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * The Release files in a listing of /var/lib/apt/lists, one per archive (InRelease before Release),
 * each with the components whose package lists sit beside it. apt names a list by its URI without
 * the scheme, `/` turned into `_` and `_` into `%5f`: `<host>_<path>_dists_<suite>_InRelease`,
 * `…_<component>_binary-<arch>_Packages[.ext]`; a flat repository has `…_Packages` beside its Release.
 */
export function releaseFiles(entries: string[]): { file: string; site: string; components: string[] }[] {
  const prefixes = new Map<string, string>();
  for (const entry of entries) {
    const m = /^(.+_)(InRelease|Release)$/.exec(entry);
    if (m && (m[2] === 'InRelease' || !prefixes.has(m[1]!))) prefixes.set(m[1]!, entry);
  }
  return [...prefixes].map(([prefix, file]) => {
    const components = new Set<string>();
    for (const entry of entries) {
      if (!entry.startsWith(prefix)) continue;
      const rest = entry.slice(prefix.length);
      const list = /^(.+)_binary-[^_]+_Packages(?:\.\w+)?$/.exec(rest) ?? /^()Packages(?:\.\w+)?$/.exec(rest);
      if (list) components.add(decode(list[1]!.replace(/_/g, '/')));
    }
    return { file, site: decode(prefix.slice(0, prefix.indexOf('_'))), components: [...components] };
  });
}

/** The archives this machine fetches: a listing of /var/lib/apt/lists, then the head of each Release file (bounded reads, no process). */
export async function collectArchives(ctx: CheckContext): Promise<ArchiveLists> {
  const dir = await ctx.host.readDir(APT_LISTS);
  if (!dir.ok) return { ok: false, reason: 'lists_unreadable', error: dir.error };
  const files = releaseFiles(dir.entries).slice(0, MAX_RELEASE_FILES);
  if (files.length === 0) return { ok: false, reason: 'no_release_files' };
  const heads = await Promise.all(files.map((f) => ctx.host.readFile(`${APT_LISTS}/${f.file}`, { maxBytes: RELEASE_HEAD_BYTES })));
  const archives: AptArchive[] = [];
  const unread: string[] = [];
  files.forEach((f, i) => {
    const head = heads[i]!;
    if (!head.ok) {
      unread.push(f.file);
      return;
    }
    const h = parseReleaseHeader(head.text, Buffer.byteLength(head.text) >= RELEASE_HEAD_BYTES);
    archives.push({
      file: f.file,
      origin: h.origin ?? '',
      label: h.label ?? '',
      suite: h.suite ?? h.archive ?? '',
      codename: h.codename ?? '',
      site: f.site,
      components: f.components.length ? f.components : (h.components ?? '').split(/\s+/).filter(Boolean),
    });
  });
  if (archives.length === 0) return { ok: false, reason: 'lists_unreadable', error: 'release_files_unreadable' };
  return unread.length ? { ok: true, archives, unread } : { ok: true, archives };
}

export type OriginsJudgement =
  | { ok: true; allowed: AptArchive[] }
  | {
      ok: false;
      word: 'allowed_origins_not_fetched' | 'security_archive_not_allowed' | 'distribution_archive_not_allowed';
      notAllowed: AptArchive[];
    }
  | { ok: false; word: 'origin_pattern_unreadable'; error: string };

/**
 * What unattended-upgrades can install, judged by the archives fetched: none of them allowed (it
 * installs nothing); a security archive fetched but not allowed (AUTO_UPDATE asks for security
 * updates); or the distribution's own archives (Origin = `${distro_id}`, any case) fetched and
 * none allowed (a derivative whose patterns name its base: the installed system's packages never update).
 */
export function judgeOrigins(patterns: string[], archives: AptArchive[], distro: DistroIdentity): OriginsJudgement {
  let allowed: AptArchive[];
  try {
    allowed = archives.filter((a) => patterns.some((p) => patternMatches(p, a, distro)));
  } catch (err) {
    if (err instanceof OriginPatternError) return { ok: false, word: 'origin_pattern_unreadable', error: err.message };
    throw err;
  }
  const notAllowed = archives.filter((a) => !allowed.includes(a));
  if (allowed.length === 0) return { ok: false, word: 'allowed_origins_not_fetched', notAllowed };
  const security = notAllowed.filter(isSecurityArchive);
  if (security.length) return { ok: false, word: 'security_archive_not_allowed', notAllowed: security };
  const own = archives.filter((a) => a.origin.toLowerCase() === distro.distro_id.toLowerCase());
  if (own.length && !own.some((a) => allowed.includes(a))) return { ok: false, word: 'distribution_archive_not_allowed', notAllowed: own };
  return { ok: true, allowed };
}

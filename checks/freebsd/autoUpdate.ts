// AUTO_UPDATE on FreeBSD (research §6.3): base-system security updates must be installed by a
// scheduled job. `freebsd-update cron` only fetches (and mails root); installing needs
// `freebsd-update install`. On a pkgbase system (FreeBSD-* base packages, optional from 15.0)
// the base is updated by `pkg upgrade`, which installs only non-interactively (-y or
// ASSUME_ALWAYS_YES). Jobs for a jail or another root (-b, -j, -c, -r) do not update this host.
// Effect over intent: an installing job passes only on what it did. freebsd-update: its tag
// (/var/db/freebsd-update/tag, rewritten by every successful fetch: `freebsd-update|<arch>|<release>|
// <patch>|<index hash>|<end of life>`) names the newest patch level fetched; the installed kernel and
// userland (freebsd-version -ku) must carry it, and the fetch must be recent. pkgbase: pkg's database
// (/var/db/pkg/local.sqlite) must have changed recently; a fetch-only `pkg upgrade -F` (accepted by
// policy) must have brought a recent package into pkg's cache.
import type { Policy } from '../policy';
import { ageInDays, parseBoolean } from '../text';
import {
  defineCheck,
  type CheckContext,
  type CommandResult,
  type DirResult,
  type Evidence,
  type FileResult,
  type FsError,
  type Host,
  type StatResult,
} from '../types';
import { judgePackageChange } from '../updateEffect';
import { fail, fsFailureReason, pass, unknown } from '../verdict';
import { parseCrontab, simpleCommands } from './crontab';
import { jailProbe, jailVerdict } from './sysctl';
import { interpretVersions, parseFreebsdVersion, sharedVersions, type VersionProbe } from './version';

/** The installed pkg(8); /usr/sbin/pkg is only the bootstrapper and would offer to install it. */
const PKG = '/usr/local/sbin/pkg';
const SYSTEM_CRONTAB = '/etc/crontab';
const ROOT_CRONTAB = '/var/cron/tabs/root';
const CRON_DIRS = ['/etc/cron.d', '/usr/local/etc/cron.d'] as const;
/** freebsd-update's record of its last successful fetch (freebsd-update.sh: `mv tag.new tag`). */
const UPDATE_TAG = '/var/db/freebsd-update/tag';
/** pkg's database of installed packages, rewritten by every install, upgrade and removal. */
const PKG_DATABASE = '/var/db/pkg/local.sqlite';
const PKG_CONF = '/usr/local/etc/pkg.conf';
/** pkg.conf(5)'s default PKG_CACHEDIR, where `pkg upgrade -F` leaves what it fetched. */
const PKG_CACHEDIR = '/var/cache/pkg';

/**
 * What `pkg upgrade -F` fetched: the package files in pkg's cache and the newest one's time. pkg
 * sets a fetched file's time to the repository's time for it (libpkg/fetch.c: futimes after a
 * successful fetch), so the newest file says a package published then was fetched since.
 */
type PackageCache = { dir: string } & ({ ok: true; packages: number; newestMs?: number } | { ok: false; error: FsError });

interface UpdateFacts {
  jailed: CommandResult;
  /** `pkg info -e FreeBSD-runtime`: exit 0 on a pkgbase system. */
  pkgbase: CommandResult;
  dirs: Record<string, DirResult>;
  /** Crontab path → content; cron.d files are listed in `dirs`. */
  crontabs: Record<string, FileResult>;
  /** The effect: freebsd-update's tag and its time, the installed versions, pkg's database time. */
  tag: FileResult;
  tagStat: StatResult;
  versions: VersionProbe;
  pkgDatabase: StatResult;
  /** Read only where it can decide: a pkgbase system whose policy accepts download-only. */
  pkgCache?: PackageCache;
}

/** pkg.conf's PKG_CACHEDIR (UCL: `PKG_CACHEDIR = "/path";` or `PKG_CACHEDIR: /path`), else the default. */
export function pkgCacheDir(conf: FileResult): string {
  const m = conf.ok ? /^\s*PKG_CACHEDIR\s*[:=]\s*"?(\/[^";#\s]*)"?\s*;?\s*(?:#.*)?$/m.exec(conf.text) : null;
  return m?.[1] ?? PKG_CACHEDIR;
}

async function collectPkgCache(host: Host): Promise<PackageCache> {
  const dir = pkgCacheDir(await host.readFile(PKG_CONF));
  const listing = await host.readDir(dir);
  if (!listing.ok) return { dir, ok: false, error: listing.error };
  const names = listing.entries.filter((n) => !n.startsWith('.') && n.endsWith('.pkg'));
  const stats = await Promise.all(names.map((n) => host.stat(`${dir}/${n}`)));
  let newestMs: number | undefined;
  let packages = 0;
  for (const st of stats) {
    if (!st.ok || st.isDirectory) continue;
    packages++;
    if (st.mtimeMs !== undefined && (newestMs === undefined || st.mtimeMs > newestMs)) newestMs = st.mtimeMs;
  }
  return newestMs === undefined ? { dir, ok: true, packages } : { dir, ok: true, packages, newestMs };
}

async function collectUpdates(ctx: CheckContext): Promise<UpdateFacts> {
  const { host } = ctx;
  const [jailed, pkgbase, tag, tagStat, versions, pkgDatabase, ...dirResults] = await Promise.all([
    jailProbe(ctx),
    host.run(PKG, ['info', '-e', 'FreeBSD-runtime']),
    host.readFile(UPDATE_TAG),
    host.stat(UPDATE_TAG),
    sharedVersions(ctx),
    host.stat(PKG_DATABASE),
    ...CRON_DIRS.map((d) => host.readDir(d)),
  ]);
  const dirs = Object.fromEntries(CRON_DIRS.map((d, i) => [d, dirResults[i]!]));
  const paths = [SYSTEM_CRONTAB, ROOT_CRONTAB];
  for (const [dir, listing] of Object.entries(dirs)) {
    if (listing.ok)
      paths.push(
        ...listing.entries
          .filter((n) => !n.startsWith('.'))
          .sort()
          .map((n) => `${dir}/${n}`),
      );
  }
  const [files, pkgCache] = await Promise.all([
    Promise.all(paths.map((p) => host.readFile(p))),
    !pkgbase.error && pkgbase.exitCode === 0 && ctx.policy.autoUpdate.acceptDownloadOnly ? collectPkgCache(host) : undefined,
  ]);
  return {
    jailed,
    pkgbase,
    dirs,
    crontabs: Object.fromEntries(paths.map((p, i) => [p, files[i]!])),
    tag,
    tagStat,
    versions,
    pkgDatabase,
    ...(pkgCache ? { pkgCache } : {}),
  };
}

export interface UpdateJobs {
  /** freebsd-update fetch or cron scheduled for this host. */
  baseFetch: boolean;
  /** freebsd-update install scheduled for this host. */
  baseInstall: boolean;
  /** pkg upgrade scheduled for this host: installing (-y) or downloading only (-F). */
  pkgUpgrade: 'install' | 'fetch' | null;
  /** Update jobs aimed at a jail or another root directory. */
  otherRoots: number;
}

/** pkg.conf(5) booleans: ASSUME_ALWAYS_YES takes yes/true/on/1 in any case. */
const yes = (value: string | undefined) => parseBoolean(value) === true;

/** What one crontab command line does about updates. */
export function updateJobsOf(commandLine: string, fileEnv: Record<string, string>, jobs: UpdateJobs): void {
  for (const { argv, env } of simpleCommands(commandLine)) {
    const [program, ...args] = argv;
    if (program === 'freebsd-update') {
      const other = args.some((a, i) => (a === '-b' || a === '-j') && args[i + 1] !== undefined);
      const verbs = args.filter((a, i) => /^[a-zA-Z]+$/.test(a) && !/^-[bdfjkrst]$/.test(args[i - 1] ?? ''));
      if (other) {
        jobs.otherRoots++;
        continue;
      }
      if (verbs.includes('fetch') || verbs.includes('cron')) jobs.baseFetch = true;
      if (verbs.includes('install')) jobs.baseInstall = true;
    } else if (program === 'pkg' || program === 'pkg-static') {
      const verbAt = args.findIndex((a, i) => !a.startsWith('-') && !/^-[jcrCRo]$/.test(args[i - 1] ?? ''));
      if (verbAt === -1 || args[verbAt] !== 'upgrade') continue;
      const global = args.slice(0, verbAt);
      const options = args.slice(verbAt + 1).filter((a) => a.startsWith('-'));
      if (global.some((a) => /^-[jcr]$/.test(a))) {
        jobs.otherRoots++;
        continue;
      }
      if (options.some((o) => /^-[a-zA-Z]*n/.test(o) || o === '--dry-run')) continue;
      const assumeYes =
        options.some((o) => /^-[a-zA-Z]*y/.test(o) || o === '--yes') ||
        yes(env.ASSUME_ALWAYS_YES) ||
        yes(fileEnv.ASSUME_ALWAYS_YES) ||
        global.some((a, i) => a === '-o' && yes(/^ASSUME_ALWAYS_YES=(.*)$/.exec(global[i + 1] ?? '')?.[1]));
      if (!assumeYes) continue;
      const fetchOnly = options.some((o) => /^-[a-zA-Z]*F/.test(o) || o === '--fetch-only');
      if (!fetchOnly) jobs.pkgUpgrade = 'install';
      else jobs.pkgUpgrade ??= 'fetch';
    }
  }
}

/** `freebsd-update|amd64|14.1-RELEASE|5|<hash>|<eol>` → the release and the newest patch level fetched. */
function parseUpdateTag(text: string): { release: string; patch: number } | null {
  const m = /^freebsd-update\|[^|]+\|(\d+\.\d+-[A-Z0-9]+)\|(\d+)\|[0-9a-f]+\|\d+\s*$/.exec(text.trim());
  return m ? { release: m[1]!, patch: Number(m[2]) } : null;
}

/**
 * The effect of scheduled freebsd-update fetch and install: the newest patch level fetched for the
 * installed release is installed (a patch level touches the kernel, the userland or both, so the
 * installed level is the higher of the two), and the last fetch is within autoUpdate.maxPendingDays.
 * Between a fetch and the install job scheduled after it, a new patch level FAILs until installed.
 * Fetching only (accepted by policy): the last fetch alone.
 */
/** freebsd-update's last fetch: its tag, dated within autoUpdate.maxPendingDays; else the verdict that says why not. */
function judgeFetch(facts: UpdateFacts, evidence: Evidence, policy: Policy, now: Date) {
  if (!facts.tag.ok) {
    return facts.tag.error === 'not_found' ? unknown('no_fetch_recorded', evidence) : unknown(fsFailureReason(facts.tag.error), evidence);
  }
  const tag = parseUpdateTag(facts.tag.text);
  if (!tag) return unknown('parse_error', evidence);
  if (!facts.tagStat.ok || facts.tagStat.mtimeMs === undefined) return unknown('no_fetch_recorded', evidence);
  const age = ageInDays(facts.tagStat.mtimeMs, now);
  Object.assign(evidence, {
    fetched_release: tag.release,
    fetched_patch: tag.patch,
    last_fetch: new Date(facts.tagStat.mtimeMs).toISOString(),
    last_fetch_age_days: age,
    max_fetch_age_days: policy.autoUpdate.maxPendingDays,
  });
  return age > policy.autoUpdate.maxPendingDays ? fail({ ...evidence, rule: 'not_run_recently' }) : { tag };
}

/** An accepted `pkg upgrade -F` job: the newest package it left in pkg's cache is within autoUpdate.maxPendingDays. */
function judgePkgFetch(cache: PackageCache | undefined, evidence: Evidence, policy: Policy, now: Date) {
  if (!cache) return unknown('no_package_fetched', evidence);
  evidence.package_cache = cache.dir;
  if (!cache.ok)
    return cache.error === 'not_found' ? unknown('no_package_fetched', evidence) : unknown(fsFailureReason(cache.error), evidence);
  evidence.cached_packages = cache.packages;
  if (cache.newestMs === undefined) return unknown('no_package_fetched', evidence);
  const age = ageInDays(cache.newestMs, now);
  Object.assign(evidence, {
    newest_cached_package: new Date(cache.newestMs).toISOString(),
    newest_cached_package_age_days: age,
    max_fetch_age_days: policy.autoUpdate.maxPendingDays,
  });
  return age > policy.autoUpdate.maxPendingDays
    ? fail({ ...evidence, rule: 'no_recent_package_fetch' })
    : pass({ ...evidence, rule: 'fetch_only_accepted' });
}

function judgeBaseUpdate(facts: UpdateFacts, evidence: Evidence, policy: Policy, now: Date) {
  const versions = interpretVersions(facts.versions);
  if (!versions.ok) return unknown('version_unreadable', { ...evidence, version_error: versions.reason });
  const userland = parseFreebsdVersion(versions.userland);
  const kernel = versions.installedKernel === null ? null : parseFreebsdVersion(versions.installedKernel);
  if (!userland || (versions.installedKernel !== null && !kernel))
    return unknown('version_unreadable', { ...evidence, version_error: 'parse_error' });
  const installedPatch = Math.max(userland.patch, kernel?.patch ?? 0);
  Object.assign(evidence, { installed_userland: userland.text, installed_kernel: kernel?.text ?? null, installed_patch: installedPatch });
  const fetched = judgeFetch(facts, evidence, policy, now);
  if ('status' in fetched) return fetched;
  const { tag } = fetched;
  // A tag of another release: the last fetch predates an upgrade (or a -r upgrade is under way).
  if (tag.release !== `${userland.major}.${userland.minor}-${userland.branch}`) return unknown('fetched_other_release', evidence);
  if (tag.patch > installedPatch) return fail({ ...evidence, rule: 'fetched_not_installed' });
  return pass({ ...evidence, mode: 'install', rule: 'installs' });
}

function evaluateUpdates(facts: UpdateFacts, policy: Policy, now: Date) {
  const jail = jailVerdict(facts.jailed, policy, 'cron');
  if (jail) return jail;
  const jobs: UpdateJobs = { baseFetch: false, baseInstall: false, pkgUpgrade: null, otherRoots: 0 };
  let unreadable: ReturnType<typeof fsFailureReason> | undefined;
  let read = 0;
  for (const [path, file] of Object.entries(facts.crontabs)) {
    if (!file.ok) {
      if (file.error !== 'not_found') unreadable ??= fsFailureReason(file.error);
      continue;
    }
    read++;
    const crontab = parseCrontab(file.text, path !== ROOT_CRONTAB);
    for (const command of crontab.commands) updateJobsOf(command, crontab.environment, jobs);
  }
  for (const listing of Object.values(facts.dirs)) {
    if (!listing.ok && listing.error !== 'not_found') unreadable ??= fsFailureReason(listing.error);
  }
  const pkgbase = !facts.pkgbase.error && facts.pkgbase.exitCode === 0;
  const pkgbaseKnown = pkgbase || facts.pkgbase.error === 'not_found' || (!facts.pkgbase.error && facts.pkgbase.exitCode === 1);
  const installs = pkgbase ? jobs.pkgUpgrade === 'install' : jobs.baseInstall && jobs.baseFetch;
  const fetches = pkgbase ? jobs.pkgUpgrade !== null : jobs.baseFetch;
  const evidence: Evidence = {
    source: 'cron',
    base_update: pkgbase ? 'pkgbase' : pkgbaseKnown ? 'freebsd-update' : 'unknown',
    freebsd_update_cron: jobs.baseFetch,
    freebsd_update_install: jobs.baseInstall,
    pkg_upgrade_cron: jobs.pkgUpgrade ?? false,
    installs,
    crontabs_read: read,
    ...(jobs.otherRoots > 0 ? { jobs_for_other_roots: jobs.otherRoots } : {}),
  };
  if (installs) {
    if (!pkgbase) return judgeBaseUpdate(facts, evidence, policy, now);
    const db = facts.pkgDatabase;
    const packages = db.ok && db.mtimeMs !== undefined ? { path: PKG_DATABASE, changedMs: db.mtimeMs } : undefined;
    return judgePackageChange(packages, 'installs', { ...evidence, mode: 'install' }, policy, now);
  }
  // A crontab we could not read may hold the installing job.
  if (unreadable) return unknown(unreadable, evidence);
  if (!pkgbaseKnown && jobs.pkgUpgrade === 'install') return unknown('pkgbase_unknown', evidence);
  if (fetches) {
    if (!policy.autoUpdate.acceptDownloadOnly) return fail({ ...evidence, mode: 'fetch_only', rule: 'fetch_only' });
    // Accepted: judged by what the job fetched (pkg's cache; freebsd-update's tag).
    evidence.mode = 'fetch_only';
    if (pkgbase) return judgePkgFetch(facts.pkgCache, evidence, policy, now);
    const fetched = judgeFetch(facts, evidence, policy, now);
    return 'status' in fetched ? fetched : pass({ ...evidence, rule: 'fetch_only_accepted' });
  }
  return fail({ ...evidence, mode: 'manual', rule: 'manual' });
}

export const autoUpdateCheck = defineCheck({
  key: 'AUTO_UPDATE',
  platform: 'FREEBSD',
  collect: collectUpdates,
  evaluate: evaluateUpdates,
});

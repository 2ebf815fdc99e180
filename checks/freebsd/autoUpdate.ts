// AUTO_UPDATE on FreeBSD (research §6.3): base-system security updates must be installed by a
// scheduled job. `freebsd-update cron` only fetches (and mails root); installing needs
// `freebsd-update install`. On a pkgbase system (FreeBSD-* base packages, optional from 15.0)
// the base is updated by `pkg upgrade`, which installs only non-interactively (-y or
// ASSUME_ALWAYS_YES). Jobs for a jail or another root (-b, -j, -c, -r) do not update this host.
import type { Policy } from '../policy';
import { parseBoolean } from '../text';
import { defineCheck, type CheckContext, type CommandResult, type DirResult, type Evidence, type FileResult } from '../types';
import { fail, fsFailureReason, pass, unknown } from '../verdict';
import { parseCrontab, simpleCommands } from './crontab';
import { jailProbe, jailVerdict } from './sysctl';

/** The installed pkg(8); /usr/sbin/pkg is only the bootstrapper and would offer to install it. */
const PKG = '/usr/local/sbin/pkg';
const SYSTEM_CRONTAB = '/etc/crontab';
const ROOT_CRONTAB = '/var/cron/tabs/root';
const CRON_DIRS = ['/etc/cron.d', '/usr/local/etc/cron.d'] as const;

export interface UpdateFacts {
  jailed: CommandResult;
  /** `pkg info -e FreeBSD-runtime`: exit 0 on a pkgbase system. */
  pkgbase: CommandResult;
  dirs: Record<string, DirResult>;
  /** Crontab path → content; cron.d files are listed in `dirs`. */
  crontabs: Record<string, FileResult>;
}

async function collectUpdates(ctx: CheckContext): Promise<UpdateFacts> {
  const { host } = ctx;
  const [jailed, pkgbase, ...dirResults] = await Promise.all([
    jailProbe(ctx),
    host.run(PKG, ['info', '-e', 'FreeBSD-runtime']),
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
  const files = await Promise.all(paths.map((p) => host.readFile(p)));
  return { jailed, pkgbase, dirs, crontabs: Object.fromEntries(paths.map((p, i) => [p, files[i]!])) };
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

function evaluateUpdates(facts: UpdateFacts, policy: Policy) {
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
  if (installs) return pass({ ...evidence, mode: 'install', rule: 'installs' });
  // A crontab we could not read may hold the installing job.
  if (unreadable) return unknown(unreadable, evidence);
  if (!pkgbaseKnown && jobs.pkgUpgrade === 'install') return unknown('pkgbase_unknown', evidence);
  if (fetches) {
    return policy.autoUpdate.acceptDownloadOnly
      ? pass({ ...evidence, mode: 'fetch_only', rule: 'fetch_only_accepted' })
      : fail({ ...evidence, mode: 'fetch_only', rule: 'fetch_only' });
  }
  return fail({ ...evidence, mode: 'manual', rule: 'manual' });
}

export const autoUpdateCheck = defineCheck({
  key: 'AUTO_UPDATE',
  platform: 'FREEBSD',
  collect: collectUpdates,
  evaluate: (facts, policy) => evaluateUpdates(facts, policy),
});

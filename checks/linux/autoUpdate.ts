// AUTO_UPDATE on Linux (research §6.2): security updates install by themselves. Per package
// manager family: APT needs unattended-upgrades installed, APT::Periodic::{Update-Package-Lists,
// Unattended-Upgrade} on (each key read, not "any 1 in the file") and a scheduler that actually
// runs (systemd timers only when systemd is PID 1, else cron's apt-compat); dnf needs
// dnf-automatic installing (apply_updates), not only downloading; Arch has no such mechanism.
// Effect over intent: a configured updater passes only on what it did. APT by unattended-upgrades'
// log; dnf-automatic and transactional-update by systemd's record of their timer and service (last
// trigger within the timer's period, last run succeeded); cron jobs (apk, zypper's online update) by
// when the package database last changed. What unattended-upgrades may install must also be what the
// machine fetches: its allowed origins against the archives in /var/lib/apt/lists (aptOrigins.ts).
import type { Policy } from '../policy';
import { defineCheck, type CheckContext } from '../types';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { containerEvidence, containerFacts, containerVerdict, type ContainerFacts } from './container';
import { family, osRelease } from './osRelease';
import { processTable, runningCommands } from './processes';
import { judgePackageChange } from '../updateEffect';
import { packageChange, type PackageChange } from './packageDatabases';
import { isEnabledState, parseSystemdTimestamp, systemdBooted, unitFileStates, unitProperties, type UnitProperties } from './systemd';
import { ageInDays, meaningfulLines, parseBoolean, parseIni } from '../text';
import { runTool } from './tools';
import {
  allowedOrigins,
  archiveNames,
  patternsForEvidence,
  withoutSites,
  collectArchives,
  judgeOrigins,
  lsbIdentity,
  OriginPatternError,
  type ArchiveLists,
  type DistroIdentity,
} from './aptOrigins';

const DPKG_QUERY = '/usr/bin/dpkg-query';
/** Touched by apt.systemd.daily after each successful `apt-get -d dist-upgrade` (Download-Upgradeable-Packages). */
const APT_DOWNLOAD_STAMP = '/var/lib/apt/periodic/download-upgradeable-stamp';
/**
 * Touched by unattended-upgrade itself when an install run completes (`write_stamp_file`, whatever
 * it found to install), never by a `--download-only` run, which writes the same log.
 */
const UNATTENDED_INSTALL_STAMP = '/var/lib/apt/periodic/unattended-upgrades-stamp';
const APT_CONFIG = '/usr/bin/apt-config';

type Tri = boolean | 'unknown';
type Readable<T> = { ok: true; value: T } | { ok: false; reason: CommandFailureReason };

type UpdateFacts =
  | {
      manager: 'apt';
      installed: Tri;
      /** dpkg's `want flag status` while a dpkg run is part-way (installed is then 'unknown'). */
      packageState?: string;
      periodic: Readable<Record<string, string>>;
      scheduler: { kind: 'systemd'; timers: Record<string, Tri> } | { kind: 'cron'; script: boolean; cronRunning: boolean | null };
      /** unattended-upgrades.log's time: any run, installing or only downloading. */
      lastRunMs?: number;
      /** unattended-upgrade's own stamp of its last completed install run. */
      lastInstallMs?: number;
      /** apt.systemd.daily's stamp of its last successful download of upgradeable packages. */
      lastDownloadMs?: number;
      /** unattended-upgrades' allowed origins, substituted, and the archives fetched (read only when it is installed). */
      origins?: { patterns: string[]; distro: DistroIdentity; archives: ArchiveLists } | { error: string };
    }
  | {
      manager: 'dnf';
      systemd: boolean;
      timers: Readable<Record<string, Tri>>;
      applyUpdates?: boolean;
      upgradeType?: string;
      /** The automatic.conf files read, in the order their keys override each other. */
      configFiles?: string[];
      /** systemd's record of the enabled timers and their services (absent when none is enabled). */
      runs?: UnitProperties;
    }
  | {
      manager: 'zypper';
      systemd: boolean;
      timers: Readable<Record<string, Tri>>;
      onlineUpdateCron?: boolean;
      runs?: UnitProperties;
      packages?: PackageChange;
    }
  | { manager: 'apk'; periodicUpgrade: boolean; cronRunning: boolean | null; packages?: PackageChange }
  | { manager: 'pacman' }
  | { manager: 'unknown'; id?: string };

interface AutoUpdateFacts {
  container: ContainerFacts;
  update: UpdateFacts;
  /** The program that showed the package manager installed (absent when none was found and os-release's family named it). */
  detectedBy?: string;
}

type PackageState = 'installed' | 'not_installed' | 'transitional' | 'unknown';

/**
 * A package's `${Status}` as dpkg-query(1) prints it, `want flag status`, by its documented meaning:
 * `installed` is installed whatever is wanted (`hold ok installed`, `deinstall ok installed` not yet
 * removed); `not-installed` and `config-files` are not; `half-installed`, `unpacked`,
 * `half-configured`, `triggers-awaited`, `triggers-pending` and the `reinstreq` flag are what a dpkg
 * run part-way (or broken off) leaves: the package does not yet (or no longer) work as installed.
 */
function dpkgPackageState(status: string): PackageState {
  const m = /^(unknown|install|hold|deinstall|purge) (ok|reinstreq) ([a-z-]+)$/.exec(status.trim());
  if (!m) return 'unknown';
  const [, , flag, state] = m as unknown as [string, string, string, string];
  if (['not-installed', 'config-files'].includes(state)) return flag === 'ok' ? 'not_installed' : 'transitional';
  if (state === 'installed' && flag === 'ok') return 'installed';
  return ['installed', 'half-installed', 'unpacked', 'half-configured', 'triggers-awaited', 'triggers-pending'].includes(state)
    ? 'transitional'
    : 'unknown';
}

/** `apt-config dump APT::Periodic` lines -> key -> value. */
export function parseAptPeriodic(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^APT::Periodic::([\w-]+)\s+"([^"]*)";\s*$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** An APT::Periodic interval: "0"/"" off, a day count or "always" on (apt.systemd.daily's reading). */
export function periodicOn(value: string | undefined): Tri {
  if (value === undefined || value === '' || value === '0') return false;
  if (value === 'always' || /^[1-9]\d*[smhd]?$/.test(value)) return true;
  return 'unknown';
}

/**
 * Days between unattended-upgrade runs for an APT::Periodic::Unattended-Upgrade value that is on:
 * a day count, or a number with apt.systemd.daily's s/m/h/d unit, or `always` (each daily timer run);
 * never below one day, the timer's own period.
 */
export function periodicDays(value: string | undefined): number {
  const m = /^(\d+)([smhd]?)$/.exec(value ?? '');
  if (!m) return 1;
  const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, '': 86_400 };
  const seconds = Number(m[1]) * unitSeconds[m[2]!]!;
  return Math.max(1, Math.ceil(seconds / 86_400));
}

/** Days a run may be late: apt-daily-upgrade.timer's random delay, a machine switched off over a weekend. */
const LAST_RUN_SLACK_DAYS = 2;

const APT_TIMERS = ['apt-daily.timer', 'apt-daily-upgrade.timer'];
const DNF_TIMERS = ['dnf-automatic-install.timer', 'dnf-automatic.timer', 'dnf-automatic-download.timer', 'dnf5-automatic.timer'];
const ZYPPER_TIMERS = ['transactional-update.timer'];
const CRON_DAEMONS = ['cron', 'crond', 'anacron'];

async function timers(ctx: CheckContext, units: string[]): Promise<Readable<Record<string, Tri>>> {
  const states = await unitFileStates(ctx.host, units);
  if (!states.ok) return { ok: false, reason: states.reason };
  return { ok: true, value: Object.fromEntries(units.map((u) => [u, isEnabledState(states.states[u]) ?? 'unknown'])) };
}

/** What systemd records of a timer's runs: its last trigger and next one, its service's state, result and exit. */
const RUN_PROPERTIES = ['LastTriggerUSec', 'NextElapseUSecRealtime', 'ActiveState', 'Result', 'ExecMainStatus', 'ExecMainExitTimestamp'];
/** The service a timer starts (the shipped update timers name no other `Unit=`). */
const serviceOf = (timer: string) => timer.replace(/\.timer$/, '.service');

/** systemd's record of the enabled timers' runs; only where systemd runs and one is enabled (one process then, none else). */
async function timerRuns(ctx: CheckContext, booted: boolean, timers: Readable<Record<string, Tri>>): Promise<UnitProperties | undefined> {
  const on = timers.ok ? Object.keys(timers.value).filter((unit) => timers.value[unit] === true) : [];
  if (!booted || on.length === 0) return undefined;
  return unitProperties(
    ctx.host,
    on.flatMap((timer) => [timer, serviceOf(timer)]),
    RUN_PROPERTIES,
  );
}

async function cronRunning(ctx: CheckContext): Promise<boolean | null> {
  const table = await processTable(ctx);
  if (!table.complete) return null;
  return runningCommands(table).among(CRON_DAEMONS).length > 0;
}

async function collectApt(ctx: CheckContext): Promise<UpdateFacts> {
  const { host } = ctx;
  const [query, dump, booted, log, installedStamp, downloaded, os] = await Promise.all([
    runTool(host, DPKG_QUERY, ['-W', '-f=${Status}', 'unattended-upgrades']),
    // One process for both trees: the periodic job's keys and unattended-upgrades' own.
    runTool(host, APT_CONFIG, ['dump', 'APT::Periodic', 'Unattended-Upgrade']),
    systemdBooted(ctx),
    host.stat('/var/log/unattended-upgrades/unattended-upgrades.log'),
    host.stat(UNATTENDED_INSTALL_STAMP),
    host.stat(APT_DOWNLOAD_STAMP),
    osRelease(ctx),
  ]);
  // dpkg-query exits 1 with "no packages found" for a package dpkg never knew.
  const state: PackageState = query.error
    ? 'unknown'
    : query.exitCode === 0
      ? dpkgPackageState(query.stdout)
      : /no packages found/.test(query.stderr)
        ? 'not_installed'
        : 'unknown';
  const installed: Tri = state === 'installed' ? true : state === 'not_installed' ? false : 'unknown';
  const periodic: Readable<Record<string, string>> =
    dump.error || dump.exitCode !== 0
      ? { ok: false, reason: dump.error ? commandFailureReason(dump) : 'parse_error' }
      : { ok: true, value: parseAptPeriodic(dump.stdout) };
  let scheduler: Extract<UpdateFacts, { manager: 'apt' }>['scheduler'];
  if (booted) {
    const t = await timers(ctx, APT_TIMERS);
    scheduler = { kind: 'systemd', timers: t.ok ? t.value : Object.fromEntries(APT_TIMERS.map((u) => [u, 'unknown' as const])) };
  } else {
    // Without systemd, /etc/cron.daily/apt-compat runs apt.systemd.daily from cron.
    const [script, cron] = await Promise.all([host.stat('/etc/cron.daily/apt-compat'), cronRunning(ctx)]);
    scheduler = { kind: 'cron', script: script.ok, cronRunning: cron };
  }
  const facts: UpdateFacts = { manager: 'apt', installed, periodic, scheduler };
  if (state === 'transitional') facts.packageState = query.stdout.trim();
  if (log.ok && log.mtimeMs !== undefined) facts.lastRunMs = log.mtimeMs;
  if (installedStamp.ok && installedStamp.mtimeMs !== undefined) facts.lastInstallMs = installedStamp.mtimeMs;
  if (downloaded.ok && downloaded.mtimeMs !== undefined) facts.lastDownloadMs = downloaded.mtimeMs;
  if (installed === true && periodic.ok) {
    const distro = lsbIdentity(os.ok ? os.release : undefined);
    try {
      facts.origins = { patterns: allowedOrigins(dump.stdout, distro), distro, archives: await collectArchives(ctx) };
    } catch (err) {
      if (!(err instanceof OriginPatternError)) throw err;
      facts.origins = { error: err.message };
    }
  }
  return facts;
}

/** dnf5's distribution defaults and the two host files it layers over them (see dnf5Commands). */
const DNF5_DEFAULTS = '/usr/share/dnf5/dnf5-plugins/automatic.conf';
const DNF5_PLUGIN_CONF = '/etc/dnf/dnf5-plugins/automatic.conf';
const DNF_AUTOMATIC_CONF = '/etc/dnf/automatic.conf';

/** `[commands]` of an automatic.conf, keys lower-cased (dnf reads option names case-insensitively). */
function automaticCommands(text: string): Record<string, string> {
  return Object.fromEntries(Object.entries(parseIni(text).commands ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

type Commands = Record<string, string> | undefined;

/**
 * The `[commands]` dnf5 automatic acts on: every existing file of the three, read in this order, each
 * key of a later one overriding an earlier one's: the distribution defaults, the deprecated
 * /etc/dnf/dnf5-plugins/automatic.conf (still read, with a warning), then /etc/dnf/automatic.conf
 * (rpm-software-management/dnf5 dnf5-plugins/automatic_plugin/automatic.cpp,
 * AutomaticCommand::pre_configure, since 5.2.6.1 (commit 73ed42f, 2024-09-11); before it the first
 * two only, layered the same way; dnf5-automatic(8)).
 */
function dnf5Commands(defaults: Commands, pluginConf: Commands, hostConf: Commands): Record<string, string> {
  return { ...defaults, ...pluginConf, ...hostConf };
}

async function collectDnf(ctx: CheckContext): Promise<UpdateFacts> {
  const read = async (file: string): Promise<Commands> => {
    const r = await ctx.host.readFile(file);
    return r.ok ? automaticCommands(r.text) : undefined;
  };
  const [booted, defaults, pluginConf, hostConf] = await Promise.all([
    systemdBooted(ctx),
    read(DNF5_DEFAULTS),
    read(DNF5_PLUGIN_CONF),
    read(DNF_AUTOMATIC_CONF),
  ]);
  const facts: Extract<UpdateFacts, { manager: 'dnf' }> = { manager: 'dnf', systemd: booted, timers: await timers(ctx, DNF_TIMERS) };
  const runs = await timerRuns(ctx, booted, facts.timers);
  if (runs) facts.runs = runs;
  const dnf5 = facts.timers.ok && facts.timers.value['dnf5-automatic.timer'] === true;
  let commands: Commands;
  if (dnf5 || defaults) {
    const files: [string, Commands][] = [
      [DNF5_DEFAULTS, defaults],
      [DNF5_PLUGIN_CONF, pluginConf],
      [DNF_AUTOMATIC_CONF, hostConf],
    ];
    const present = files.filter(([, c]) => c !== undefined).map(([file]) => file);
    if (present.length) facts.configFiles = present;
    // No file present: dnf5's built-in default (apply_updates = no).
    commands = present.length ? dnf5Commands(defaults, pluginConf, hostConf) : undefined;
  } else {
    // dnf 4's dnf-automatic reads /etc/dnf/automatic.conf only.
    commands = hostConf;
  }
  if (commands) {
    // dnf-automatic's default is apply_updates = no: download only.
    facts.applyUpdates = parseBoolean(commands.apply_updates) === true;
    if (commands.upgrade_type) facts.upgradeType = commands.upgrade_type;
  }
  return facts;
}

async function collectZypper(ctx: CheckContext): Promise<UpdateFacts> {
  const [booted, aou] = await Promise.all([systemdBooted(ctx), ctx.host.readFile('/etc/sysconfig/automatic_online_update')]);
  const facts: Extract<UpdateFacts, { manager: 'zypper' }> = {
    manager: 'zypper',
    systemd: booted,
    timers: await timers(ctx, ZYPPER_TIMERS),
  };
  if (aou.ok) facts.onlineUpdateCron = /^AOU_ENABLE_CRONJOB="?true"?\s*$/m.test(aou.text);
  const [runs, packages] = await Promise.all([
    timerRuns(ctx, booted, facts.timers),
    facts.onlineUpdateCron ? packageChange(ctx, ['zypper']) : undefined,
  ]);
  if (runs) facts.runs = runs;
  if (packages) facts.packages = packages;
  return facts;
}

async function collectApk(ctx: CheckContext): Promise<UpdateFacts> {
  // Alpine's convention: scripts in /etc/periodic/<interval>/ run by busybox crond.
  const intervals = ['15min', 'hourly', 'daily', 'weekly', 'monthly'];
  const scripts = (
    await Promise.all(
      intervals.map(async (i) => {
        const dir = await ctx.host.readDir(`/etc/periodic/${i}`);
        return dir.ok ? Promise.all(dir.entries.map((e) => ctx.host.readFile(`/etc/periodic/${i}/${e}`))) : [];
      }),
    )
  ).flat();
  const periodicUpgrade = scripts.some((s) => s.ok && meaningfulLines(s.text).some((l) => /\bapk\b.*\bupgrade\b/.test(l)));
  const [cron, packages] = await Promise.all([cronRunning(ctx), periodicUpgrade ? packageChange(ctx, ['apk']) : undefined]);
  return packages
    ? { manager: 'apk', periodicUpgrade, cronRunning: cron, packages }
    : { manager: 'apk', periodicUpgrade, cronRunning: cron };
}

const COLLECTORS: Record<string, (ctx: CheckContext) => Promise<UpdateFacts>> = {
  debian: collectApt,
  ubuntu: collectApt,
  rhel: collectDnf,
  fedora: collectDnf,
  centos: collectDnf,
  rocky: collectDnf,
  almalinux: collectDnf,
  suse: collectZypper,
  opensuse: collectZypper,
  'opensuse-leap': collectZypper,
  'opensuse-tumbleweed': collectZypper,
  alpine: collectApk,
  arch: () => Promise.resolve({ manager: 'pacman' }),
};

/**
 * Package managers by the program that shows them installed, in the order a machine with several is
 * judged (an apt-based distribution may carry rpm, never dnf), each with the family whose collector reads it.
 */
const INSTALLED_MANAGERS: readonly (readonly [program: string, family: string])[] = [
  ['/usr/bin/apt-get', 'debian'],
  ['/usr/bin/dnf5', 'fedora'],
  ['/usr/bin/dnf', 'fedora'],
  ['/usr/bin/zypper', 'opensuse'],
  ['/sbin/apk', 'alpine'],
  ['/usr/bin/pacman', 'arch'],
];

/** The package managers installed, in INSTALLED_MANAGERS' order. */
async function installedManagers(ctx: CheckContext): Promise<(typeof INSTALLED_MANAGERS)[number][]> {
  const found = await Promise.all(INSTALLED_MANAGERS.map(([program]) => ctx.host.stat(program)));
  return INSTALLED_MANAGERS.filter((_, i) => found[i]!.ok && !found[i]!.isDirectory);
}

async function collect(ctx: CheckContext): Promise<AutoUpdateFacts> {
  const [container, os, installed] = await Promise.all([containerFacts(ctx), osRelease(ctx), installedManagers(ctx)]);
  // What is installed decides; the distribution's identity only refines: among the managers found,
  // its own family's; none of them found, the family's (whose tools then answer for themselves).
  const known = os.ok ? family(os.release).find((id) => COLLECTORS[id]) : undefined;
  const chosen = installed.find(([, fam]) => known && COLLECTORS[fam] === COLLECTORS[known]) ?? installed[0];
  if (chosen) return { container, update: await COLLECTORS[chosen[1]]!(ctx), detectedBy: chosen[0] };
  if (known) return { container, update: await COLLECTORS[known]!(ctx) };
  return { container, update: os.ok ? { manager: 'unknown', id: os.release.id } : { manager: 'unknown' } };
}

/** Whether APT's periodic job will actually run: both timers enabled under systemd, or apt-compat with a cron daemon. */
function aptScheduled(scheduler: Extract<UpdateFacts, { manager: 'apt' }>['scheduler']): Tri {
  if (scheduler.kind === 'systemd') {
    const states = Object.values(scheduler.timers);
    if (states.every((t) => t === true)) return true;
    return states.includes('unknown') ? 'unknown' : false;
  }
  if (!scheduler.script || scheduler.cronRunning === false) return false;
  return scheduler.cronRunning === null ? 'unknown' : true;
}

/**
 * unattended-upgrades' allowed origins against the archives fetched (aptOrigins.ts): a FAIL or an
 * UNKNOWN, or undefined when they match (the names of the archives allowed then added to evidence).
 */
function originsVerdict(origins: Extract<UpdateFacts, { manager: 'apt' }>['origins'], evidence: Record<string, unknown>) {
  // Read whenever unattended-upgrades is installed and APT's configuration readable, as here.
  if (!origins) return unknown('archive_lists_unreadable', { ...evidence, lists: 'not_read' });
  if ('error' in origins)
    return unknown('origin_pattern_unreadable', { ...evidence, pattern_error: withoutSites(origins.error).slice(0, 200) });
  evidence.allowed_origins = patternsForEvidence(origins.patterns);
  const lists = origins.archives;
  if (!lists.ok)
    return unknown('archive_lists_unreadable', { ...evidence, lists: lists.reason, ...(lists.error ? { lists_error: lists.error } : {}) });
  const judged = judgeOrigins(origins.patterns, lists.archives, origins.distro);
  // A Release file not read may be the archive a pattern admits, or a security archive none admits:
  // only a security archive read and not admitted is decided without it.
  if (lists.unread && !(!judged.ok && judged.word === 'security_archive_not_allowed')) {
    return unknown('archive_lists_unreadable', { ...evidence, lists: 'release_files_unreadable', lists_unread: lists.unread.length });
  }
  if (judged.ok) {
    evidence.archives_allowed = archiveNames(judged.allowed);
    return undefined;
  }
  if (judged.word === 'origin_pattern_unreadable')
    return unknown(judged.word, { ...evidence, pattern_error: withoutSites(judged.error).slice(0, 200) });
  return fail({
    ...evidence,
    archives_fetched: archiveNames(lists.archives),
    archives_not_allowed: archiveNames(judged.notAllowed),
    rule: judged.word,
  });
}

function evaluateApt(u: Extract<UpdateFacts, { manager: 'apt' }>, evidence: Record<string, unknown>, policy: Policy, now: Date) {
  evidence.unattended_upgrades_installed = u.installed;
  if (u.packageState) return unknown('package_state_transitional', { ...evidence, package_state: u.packageState });
  if (u.lastRunMs !== undefined) evidence.last_run_age_days = ageInDays(u.lastRunMs, now);
  if (u.lastInstallMs !== undefined) evidence.last_install_age_days = ageInDays(u.lastInstallMs, now);
  if (u.scheduler.kind === 'systemd') evidence.timers_enabled = Object.values(u.scheduler.timers).every((t) => t === true);
  else Object.assign(evidence, { scheduler: 'cron', cron_script: u.scheduler.script, cron_running: u.scheduler.cronRunning });
  if (!u.periodic.ok) {
    return u.installed === false ? fail({ ...evidence, rule: 'not_installed' }) : unknown(u.periodic.reason, evidence);
  }
  const p = u.periodic.value;
  const lists = periodicOn(p['Update-Package-Lists']);
  const upgrade = periodicOn(p['Unattended-Upgrade']);
  const download = periodicOn(p['Download-Upgradeable-Packages']);
  const enabled = p.Enable !== '0';
  Object.assign(evidence, {
    update_lists_days: p['Update-Package-Lists'] ?? null,
    unattended_upgrade_days: p['Unattended-Upgrade'] ?? null,
    periodic_enabled: enabled,
  });
  if (u.installed === 'unknown' || lists === 'unknown' || upgrade === 'unknown') return unknown('parse_error', evidence);
  const scheduled = aptScheduled(u.scheduler);
  const installs = u.installed && enabled && lists && upgrade;
  if (installs) {
    if (scheduled === true) {
      // Configured and scheduled is the intent; the effect is that unattended-upgrade completed an
      // install run: its own stamp, written at the end of every such run whatever it found to
      // install. Its log is written by download-only runs too (apt-daily.service), so a fresh log
      // without the stamp is no install.
      // And what it may install must be what the machine fetches: a mismatch installs nothing, run or not.
      const origins = originsVerdict(u.origins, evidence);
      if (origins?.status === 'FAIL') return origins;
      const maxAge = periodicDays(p['Unattended-Upgrade']) + LAST_RUN_SLACK_DAYS;
      evidence.max_run_age_days = maxAge;
      if (u.lastInstallMs === undefined) return unknown(u.lastRunMs === undefined ? 'no_run_recorded' : 'no_install_recorded', evidence);
      if (ageInDays(u.lastInstallMs, now) > maxAge) return fail({ ...evidence, rule: 'not_run_recently' });
      return origins ?? pass({ ...evidence, rule: 'unattended_upgrades' });
    }
    if (scheduled === 'unknown') return unknown('scheduler_unreadable', evidence);
    return fail({ ...evidence, rule: 'not_scheduled' });
  }
  if (enabled && lists && download === true && scheduled === true) {
    if (!policy.autoUpdate.acceptDownloadOnly) return fail({ ...evidence, rule: 'download_only' });
    // Accepted, download-only still has an effect: apt.systemd.daily's stamp of its last download.
    const maxAge = periodicDays(p['Download-Upgradeable-Packages']) + LAST_RUN_SLACK_DAYS;
    // The age that counts here is the download's, not unattended-upgrades' log's nor its install stamp's.
    delete evidence.last_run_age_days;
    delete evidence.last_install_age_days;
    Object.assign(evidence, {
      job: u.scheduler.kind === 'systemd' ? 'apt-daily.timer' : '/etc/cron.daily/apt-compat',
      max_run_age_days: maxAge,
    });
    if (u.lastDownloadMs === undefined) return unknown('no_run_recorded', evidence);
    Object.assign(evidence, { last_run: new Date(u.lastDownloadMs).toISOString(), last_run_age_days: ageInDays(u.lastDownloadMs, now) });
    if (ageInDays(u.lastDownloadMs, now) > maxAge) return fail({ ...evidence, rule: 'not_run_recently' });
    return pass({ ...evidence, rule: 'download_only_accepted' });
  }
  return fail({ ...evidence, rule: u.installed ? 'periodic_disabled' : 'not_installed' });
}

const DAY_MS = 86_400_000;
/** A service still starting or stopping: its last run's result is not written yet. */
const RUNNING_STATES = new Set(['activating', 'deactivating', 'reloading']);

/**
 * The effect of an enabled update timer: systemd's record of its last run. The newest trigger among
 * `timers` must lie within the timer's period (its next trigger minus its last, at least a day and at
 * most autoUpdate.maxPendingDays) plus LAST_RUN_SLACK_DAYS, and the run it started must have
 * succeeded (Result=success, exit status 0). A service's result lives only until reboot: a run
 * before this boot, or a trigger whose start left no newer exit, is UNKNOWN, never assumed.
 */
function judgeTimerRun<Rule extends string>(
  runs: UnitProperties | undefined,
  timers: string[],
  rule: Rule,
  evidence: Record<string, unknown>,
  policy: Policy,
  now: Date,
) {
  if (!runs?.ok) return unknown('run_record_unreadable', { ...evidence, record_error: runs?.reason ?? 'not_read' });
  const triggers = timers.map((timer) => [timer, parseSystemdTimestamp(runs.units[timer]?.LastTriggerUSec)] as const);
  if (triggers.some(([, at]) => at === null)) return unknown('run_record_unreadable', { ...evidence, record_error: 'parse_error' });
  const ran = triggers.filter((t): t is readonly [string, number] => t[1] !== undefined).sort((a, b) => b[1] - a[1])[0];
  if (!ran) return unknown('no_run_recorded', { ...evidence, job: timers[0] });
  const [timer, last] = ran;
  const age = ageInDays(last, now);
  const next = parseSystemdTimestamp(runs.units[timer]!.NextElapseUSecRealtime);
  const periodDays = next ? Math.min(Math.max(1, Math.round((next - last) / DAY_MS)), policy.autoUpdate.maxPendingDays) : 1;
  Object.assign(evidence, {
    job: timer,
    last_run: new Date(last).toISOString(),
    last_run_age_days: age,
    max_run_age_days: periodDays + LAST_RUN_SLACK_DAYS,
  });
  if (age > periodDays + LAST_RUN_SLACK_DAYS) return fail({ ...evidence, rule: 'not_run_recently' });
  const service = runs.units[serviceOf(timer)]!;
  if (RUNNING_STATES.has(service.ActiveState ?? '')) return unknown('run_in_progress', { ...evidence, service_state: service.ActiveState });
  const exit = parseSystemdTimestamp(service.ExecMainExitTimestamp);
  if (exit === null) return unknown('run_record_unreadable', { ...evidence, record_error: 'parse_error' });
  // The service starts when the timer triggers (RandomizedDelaySec is spent before): its exit is later.
  if (exit === undefined || exit < last - 60_000) return unknown('run_result_unknown', evidence);
  Object.assign(evidence, { run_result: service.Result ?? null, exit_status: service.ExecMainStatus ?? null });
  if (service.Result !== 'success' || service.ExecMainStatus !== '0') return fail({ ...evidence, rule: 'last_run_failed' });
  return pass({ ...evidence, rule });
}

function evaluateTimers(
  u: Extract<UpdateFacts, { manager: 'dnf' | 'zypper' }>,
  evidence: Record<string, unknown>,
  policy: Policy,
  now: Date,
) {
  // zypper's online update runs from cron: its effect is read without systemd.
  if (u.manager === 'zypper' && u.onlineUpdateCron && !u.systemd) {
    evidence.online_update_cron = true;
    return judgePackageChange(u.packages, 'online_update_cron', evidence, policy, now);
  }
  if (!u.systemd) return unknown('systemd_not_running', evidence);
  if (!u.timers.ok) return unknown(u.timers.reason, evidence);
  const on = Object.entries(u.timers.value)
    .filter(([, s]) => s === true)
    .map(([unit]) => unit);
  evidence.timers_enabled = on;
  if (u.manager === 'zypper') {
    if (u.onlineUpdateCron !== undefined) evidence.online_update_cron = u.onlineUpdateCron;
    if (on.length > 0) return judgeTimerRun(u.runs, on, 'transactional_update', evidence, policy, now);
    if (u.onlineUpdateCron) return judgePackageChange(u.packages, 'online_update_cron', evidence, policy, now);
    return fail({ ...evidence, rule: 'no_auto_update' });
  }
  if (u.applyUpdates !== undefined) evidence.apply_updates = u.applyUpdates;
  if (u.upgradeType) evidence.upgrade_type = u.upgradeType;
  if (u.configFiles) evidence.config_files = u.configFiles;
  // dnf-automatic-install.timer installs whatever automatic.conf says; the others follow apply_updates.
  if (on.includes('dnf-automatic-install.timer')) {
    return judgeTimerRun(u.runs, ['dnf-automatic-install.timer'], 'dnf_automatic_install', evidence, policy, now);
  }
  if (on.length === 0) return fail({ ...evidence, rule: 'no_auto_update' });
  // Download-only, when the policy accepts it, is judged by the downloading timers' runs.
  const downloadOnly = () =>
    policy.autoUpdate.acceptDownloadOnly
      ? judgeTimerRun(u.runs, on, 'download_only_accepted', evidence, policy, now)
      : fail({ ...evidence, rule: 'download_only' });
  if (on.includes('dnf-automatic-download.timer') && on.length === 1) return downloadOnly();
  if (u.applyUpdates === true) {
    // The timers that follow apply_updates (dnf-automatic-download.timer never installs).
    const applying = on.filter((unit) => unit !== 'dnf-automatic-download.timer');
    return judgeTimerRun(u.runs, applying, 'dnf_automatic_apply', evidence, policy, now);
  }
  if (u.applyUpdates === undefined) return unknown('config_unreadable', evidence);
  return downloadOnly();
}

function evaluate(facts: AutoUpdateFacts, policy: Policy, now: Date) {
  const inContainer = containerVerdict(facts.container, policy);
  if (inContainer) return inContainer;
  const u = facts.update;
  const evidence: Record<string, unknown> = { source: u.manager, ...containerEvidence(facts.container) };
  if (facts.detectedBy) evidence.detected_by = facts.detectedBy;
  switch (u.manager) {
    case 'apt':
      return evaluateApt(u, evidence, policy, now);
    case 'dnf':
    case 'zypper':
      return evaluateTimers(u, evidence, policy, now);
    case 'apk':
      Object.assign(evidence, { periodic_upgrade: u.periodicUpgrade, cron_running: u.cronRunning });
      if (u.periodicUpgrade && u.cronRunning === true) return judgePackageChange(u.packages, 'periodic_apk_upgrade', evidence, policy, now);
      if (u.periodicUpgrade && u.cronRunning === null) return unknown('process_table_incomplete', evidence);
      return fail({ ...evidence, rule: u.periodicUpgrade ? 'not_scheduled' : 'no_auto_update' });
    case 'pacman':
      return fail({ ...evidence, rule: 'no_auto_update_mechanism' });
    case 'unknown':
      return unknown('package_manager_unknown', u.id ? { ...evidence, id: u.id } : evidence);
  }
}

export const autoUpdate = defineCheck({ key: 'AUTO_UPDATE', platform: 'LINUX', collect, evaluate });

// PASSWORD_POLICY on Linux (research §7.2): the minimum length the PAM password stack enforces when
// a local password is changed. Quality modules (pam_pwquality with pwquality.conf, pam_cracklib,
// pam_passwdqc) and pam_unix's own minlen (default 6) all count; the strictest wins. login.defs'
// PASS_MIN_LEN is obsolete under PAM and never decides.
import type { Policy } from '../policy';
import { passwdqcConfigFiles, passwdqcMinLength, passwdqcRequiresClasses, passwdqcSettings, type PasswdqcProblem } from '../passwdqc';
import { defineCheck, type CheckContext, type FileResult, type Host } from '../types';
import { fail, pass, unknown } from '../verdict';
import { enforces, moduleArgs, readPasswordStack, type PamEntry, type PamStack } from './pamStack';
import { meaningfulLines } from '../text';
import { compareVersions } from '../release';
import { runTool } from './tools';

interface PasswordPolicyFacts {
  stack: PamStack;
  /** Files named by pam_passwdqc's config= options, by path. */
  passwdqcConfigs: Record<string, FileResult>;
  /** pwquality.conf.d/*.conf then pwquality.conf, merged (only read when pam_pwquality is used). */
  pwqualityConf: Record<string, string>;
  /** pwquality.conf alone: what libpwquality before 1.3.0 reads (it knows no pwquality.conf.d). */
  pwqualityConfAlone: Record<string, string>;
  /** The installed libpwquality's version, when the package database says. */
  pwqualityVersion?: string;
  loginDefs: Record<string, string>;
}

const PWQUALITY_CONF = '/etc/security/pwquality.conf';
const PWQUALITY_CONF_DIR = '/etc/security/pwquality.conf.d';

/** pwquality.conf(5): `name = value` (the `=` optional), `#` comments. */
export function parsePwqualityConf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of meaningfulLines(text)) {
    const m = /^(\S+?)(?:\s*=\s*|\s+)(.*)$/.exec(line) ?? /^(\S+)$/.exec(line);
    if (m) out[m[1]!.toLowerCase()] = (m[2] ?? '').trim();
  }
  return out;
}

function parseLoginDefs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of meaningfulLines(text)) {
    const [key, value] = line.split(/\s+/);
    if (key && value !== undefined) out[key] = value;
  }
  return out;
}

const DPKG_QUERY = '/usr/bin/dpkg-query';
const RPM = '/usr/bin/rpm';
const PACMAN = '/usr/bin/pacman';

/** libpwquality's version from dpkg (libpwquality1), rpm or pacman (libpwquality), whichever knows it. */
async function pwqualityVersion(host: Host): Promise<string | undefined> {
  const results = await Promise.all([
    runTool(host, DPKG_QUERY, ['-W', '-f=${Version}', 'libpwquality1']),
    runTool(host, RPM, ['-q', '--qf', '%{VERSION}', 'libpwquality']),
    runTool(host, PACMAN, ['-Q', 'libpwquality']),
  ]);
  for (const r of results) {
    // dpkg: "1.4.5-1+b1" (epoch and revision around the upstream version); rpm: "1.4.4"; pacman: "libpwquality 1.4.5-5".
    const version = !r.error && r.exitCode === 0 ? /^(?:libpwquality )?(?:\d+:)?(\d+(?:\.\d+)+)/.exec(r.stdout.trim())?.[1] : undefined;
    if (version) return version;
  }
  return undefined;
}

async function collect(ctx: CheckContext): Promise<PasswordPolicyFacts> {
  const { host } = ctx;
  const [stack, defs] = await Promise.all([readPasswordStack(host), host.readFile('/etc/login.defs')]);
  let pwqualityConf: Record<string, string> = {};
  let pwqualityConfAlone: Record<string, string> = {};
  let version: string | undefined;
  if (stack.ok && stack.entries.some((e) => e.module === 'pam_pwquality')) {
    const dir = await host.readDir(PWQUALITY_CONF_DIR);
    const snippets = dir.ok
      ? dir.entries
          .filter((e) => e.endsWith('.conf'))
          .sort()
          .map((e) => `${PWQUALITY_CONF_DIR}/${e}`)
      : [];
    const texts = await Promise.all([...snippets, PWQUALITY_CONF].map((f) => host.readFile(f)));
    for (const t of texts) if (t.ok) pwqualityConf = { ...pwqualityConf, ...parsePwqualityConf(t.text) };
    const main = texts.at(-1)!;
    if (main.ok) pwqualityConfAlone = parsePwqualityConf(main.text);
    version = await pwqualityVersion(host);
  }
  const configPaths = stack.ok
    ? [...new Set(stack.entries.filter((e) => e.module === 'pam_passwdqc').flatMap((e) => passwdqcConfigFiles(e.args)))]
    : [];
  const configs = await Promise.all(configPaths.map((path) => host.readFile(path)));
  const passwdqcConfigs = Object.fromEntries(configPaths.map((path, i) => [path, configs[i]!]));
  const facts: PasswordPolicyFacts = {
    stack,
    passwdqcConfigs,
    pwqualityConf,
    pwqualityConfAlone,
    loginDefs: defs.ok ? parseLoginDefs(defs.text) : {},
  };
  if (version) facts.pwqualityVersion = version;
  return facts;
}

interface Strength {
  module: string;
  minLength: number;
  /** Raw settings for evidence. */
  minlen?: number;
  credits?: Record<string, number>;
  minClass?: number;
  complex: boolean;
}

const num = (v: string | undefined, fallback: number) => (v !== undefined && /^-?\d+$/.test(v) ? Number(v) : fallback);
const CREDITS = ['dcredit', 'ucredit', 'lcredit', 'ocredit'] as const;

/** Defaults of libpwquality before 1.3.0 (and of pam_cracklib): minlen 9, a credit of 1 per class. */
const LEGACY_DEFAULTS = { minlen: 9, credit: 1 };
/** Defaults of libpwquality 1.3.0 and later: minlen 8, no credits. */
const CURRENT_DEFAULTS = { minlen: 8, credit: 0 };

/** Which libpwquality the readings assume: its version's defaults and whether it reads pwquality.conf.d. */
type PwqualityGeneration = 'legacy' | 'current';

function pwqualityGeneration(version: string | undefined): PwqualityGeneration | undefined {
  if (version === undefined) return undefined;
  return compareVersions(version, '1.3.0') < 0 ? 'legacy' : 'current';
}

/**
 * pam_pwquality / pam_cracklib: a password passes when length + class credits >= minlen, so the
 * shortest accepted password is minlen minus the positive credits; negative credits require a
 * class instead. pwquality raises minlen below 6 to 6.
 */
function creditModule(entry: PamEntry, settings: Record<string, string>, defaults: typeof LEGACY_DEFAULTS): Strength {
  const pwquality = entry.module === 'pam_pwquality';
  const minlen = Math.max(num(settings.minlen, defaults.minlen), pwquality ? 6 : 0);
  const credits = Object.fromEntries(CREDITS.map((c) => [c, num(settings[c], defaults.credit)]));
  const bonus = Object.values(credits).reduce((sum, c) => sum + Math.max(c, 0), 0);
  const required = Object.values(credits).filter((c) => c < 0).length;
  const minClass = num(settings.minclass, 0);
  return {
    module: entry.module,
    minLength: Math.max(minlen - bonus, 1),
    minlen,
    credits,
    minClass,
    complex: minClass >= 3 || required >= 3,
  };
}

/**
 * pam_passwdqc (checks/passwdqc.ts): the shortest length any password class may have; nothing
 * when `enforce=none` (it only warns); a malformed option or unreadable config file is a problem.
 */
function passwdqc(entry: PamEntry, configs: PasswordPolicyFacts['passwdqcConfigs']): Strength | { problem: PasswdqcProblem } | null {
  const settings = passwdqcSettings(entry.args, configs);
  if ('error' in settings) return { problem: settings.error };
  if (settings.enforce === 'none') return null;
  return { module: 'pam_passwdqc', minLength: passwdqcMinLength(settings) ?? 0, complex: passwdqcRequiresClasses(settings) };
}

/** pam_unix's own check: minlen=N, default 6 (pam_unix(8)). */
function unixModule(entry: PamEntry): Strength {
  const minlen = num(moduleArgs(entry).minlen, 6);
  return { module: 'pam_unix', minLength: minlen, minlen, complex: false };
}

/** What each enforcing module of the stack requires (pam_pwquality as the given libpwquality generation reads it), or the first module whose options cannot be read. */
function strengths(facts: PasswordPolicyFacts, generation: PwqualityGeneration = 'current'): Strength[] | { problem: PasswdqcProblem } {
  if (!facts.stack.ok) return [];
  const out: Strength[] = [];
  for (const entry of facts.stack.entries) {
    if (entry.module === 'pam_unix') out.push(unixModule(entry));
    else if (!enforces(entry.control)) continue;
    else if (entry.module === 'pam_pwquality') {
      const conf = generation === 'legacy' ? facts.pwqualityConfAlone : facts.pwqualityConf;
      out.push(creditModule(entry, { ...conf, ...moduleArgs(entry) }, generation === 'legacy' ? LEGACY_DEFAULTS : CURRENT_DEFAULTS));
    } else if (entry.module === 'pam_cracklib') out.push(creditModule(entry, moduleArgs(entry), LEGACY_DEFAULTS));
    else if (entry.module === 'pam_passwdqc') {
      const strength = passwdqc(entry, facts.passwdqcConfigs);
      if (strength && 'problem' in strength) return strength;
      if (strength) out.push(strength);
    }
  }
  return out;
}

const DIRECTORY_MODULES = ['pam_sss', 'pam_ldap', 'pam_krb5', 'pam_winbind'];

function evaluate(facts: PasswordPolicyFacts, policy: Policy) {
  if (!facts.stack.ok) return unknown(facts.stack.reason, { source: 'pam' });
  const evidence: Record<string, unknown> = {
    source: 'pam',
    service: facts.stack.service,
    stack_files: facts.stack.files,
    min_length_required: policy.password.minLength,
  };
  const directory = facts.stack.entries.find((e) => DIRECTORY_MODULES.includes(e.module));
  if (directory) evidence.directory_module = directory.module;
  const maxDays = facts.loginDefs.PASS_MAX_DAYS;
  if (maxDays !== undefined && /^-?\d+$/.test(maxDays)) evidence.pass_max_days_default = Number(maxDays);
  // Shown so that nobody mistakes it for the policy: PAM ignores it.
  if (facts.loginDefs.PASS_MIN_LEN !== undefined) evidence.login_defs_pass_min_len_ignored = num(facts.loginDefs.PASS_MIN_LEN, 0);
  const usesPwquality = facts.stack.entries.some((e) => e.module === 'pam_pwquality' && enforces(e.control));
  const generation = pwqualityGeneration(facts.pwqualityVersion);
  if (usesPwquality) evidence.pwquality_version = facts.pwqualityVersion ?? null;
  if (!usesPwquality || generation) return judge(strengths(facts, generation), evidence, directory !== undefined, policy);
  // The installed libpwquality is unknown: judge as both generations would; only an agreement decides.
  const [legacy, current] = (['legacy', 'current'] as const).map((g) =>
    judge(strengths(facts, g), { ...evidence }, directory !== undefined, policy),
  );
  if (legacy!.status === current!.status) return current!;
  return unknown('pwquality_version_unknown', { ...current!.evidence, min_length_if_before_1_3: legacy!.evidence?.min_length ?? null });
}

function judge(found: Strength[] | { problem: PasswdqcProblem }, evidence: Record<string, unknown>, directory: boolean, policy: Policy) {
  if (!Array.isArray(found)) return unknown(found.problem, { ...evidence, module: 'pam_passwdqc' });
  if (found.length === 0) return unknown(directory ? 'directory_accounts_only' : 'no_password_module', evidence);
  const strongest = found.reduce((a, b) => (b.minLength > a.minLength ? b : a));
  Object.assign(evidence, { module: strongest.module, min_length: strongest.minLength, modules: found.map((s) => s.module) });
  if (strongest.minlen !== undefined) evidence.minlen = strongest.minlen;
  if (strongest.credits) evidence.credits = strongest.credits;
  if (strongest.minClass !== undefined) evidence.min_class = strongest.minClass;
  const complex = found.some((s) => s.complex);
  evidence.complexity = complex;
  if (strongest.minLength < policy.password.minLength) return fail({ ...evidence, rule: 'min_length' });
  if (policy.password.requireComplexity && !complex) return fail({ ...evidence, rule: 'complexity' });
  return pass({ ...evidence, rule: 'min_length_met' });
}

export const passwordPolicy = defineCheck({ key: 'PASSWORD_POLICY', platform: 'LINUX', collect, evaluate });

// What a verdict means and what to do about it, for the person at the keyboard and for the fleet's
// administrator. One catalogue per platform (checks/<os>/remediation.ts, beside that platform's
// checks) maps each check's words (`rule` on PASS/FAIL, `reason` on UNKNOWN/NOT_APPLICABLE) to an
// entry; the compiler keeps each catalogue exactly complete against its checks' typed words
// (PlatformCatalogue below).
// Data and pure functions only (no policy, no I/O), so that the server bundles the same texts.
// No text ever carries a secret, a user name, a home path or command output: interpolations are
// numbers and the evidence's own short enum words, through `num`/`word` below.
import type { CheckKey, Platform, PostureResult, PostureStatus } from '../src/protocol/schemas';
import type { Policy } from './policy';
import type { judgeRelease } from './release';
import type { Check, VerdictWord, WordOf } from './types';

/** The OS release the advice is for: the device's OS_VERSION evidence (product/id and version). */
export interface OsHint {
  /** "debian", "ubuntu", "rhel", "macos", "windows-11-pro", "freebsd", … */
  product?: string;
  /** "12.11", "15.4", "22631.4317", "14.3-RELEASE", … */
  version?: string;
  /** Linux os-release ID_LIKE. */
  idLike?: string[];
}

/** The policy thresholds a text may quote; the agent fills them from the policy that judged, the evidence often carries them too. */
export interface PolicyValues {
  maxIdleSeconds?: number;
  maxGraceSeconds?: number;
  minLength?: number;
  maxSignatureAgeDays?: number;
}

/** The thresholds a text quotes, from the policy that judged. */
export function policyValues(policy: Policy): PolicyValues {
  return {
    maxIdleSeconds: policy.screenLock.maxIdleSeconds,
    maxGraceSeconds: policy.screenLock.maxGraceSeconds,
    minLength: policy.password.minLength,
    maxSignatureAgeDays: policy.malware.maxSignatureAgeDays,
  };
}

export interface RemedyContext {
  /** The result's check key (a newer agent may send keys beyond the nine). */
  checkKey: string;
  evidence: Record<string, unknown>;
  policy: PolicyValues;
  os: OsHint;
}

export type Text = string | ((ctx: RemedyContext) => string);

/** Steps that differ by release or desktop; `applies` picks the one(s) for this device when it can tell. */
export interface Variant {
  for: string;
  applies?: (ctx: RemedyContext) => boolean;
  steps: Text;
}

export interface Remedy {
  /** One plain sentence for the end user: what was found, with the facts that decided it. */
  summary: Text;
  /** What the user does, as a person does it on that OS (and the command where one exists). */
  fix: Text | readonly Variant[];
  /** What the administrator does for the whole fleet; for UNKNOWN, what lets the check decide. */
  admin: Text;
}

/** One check's entries, by word. */
type CheckRemedies = Readonly<Record<string, Remedy>>;

/** A catalogue as lookups read it: any platform's, by check key and word (a result may come from a newer agent). */
export interface PlatformRemedies {
  platform: Platform;
  /** Entries for words that mean the same for every check of the platform (permission_denied, timeout, …). */
  shared: CheckRemedies;
  checks: Readonly<Record<CheckKey, CheckRemedies>>;
}

/**
 * A platform's catalogue as the compiler checks it against `Checks`, that platform's checks
 * (checks/<os>/index.ts): `shared` explains the words `Shared` for every check (each word returned
 * by some check), and each check has an entry for every other word it returns and none for a word
 * it does not. A missing or extra word is a compile error in checks/<os>/remediation.ts.
 */
export interface PlatformCatalogue<Checks extends readonly Check[], Shared extends WordOf<Checks[number]>> {
  platform: Platform;
  shared: Record<Shared, Remedy>;
  checks: {
    [C in Checks[number] as C['key']]: string extends WordOf<C>
      ? { 'this check returns words typed string, which no catalogue can list': never }
      : Record<Exclude<WordOf<C>, Shared>, Remedy>;
  };
}

export const NOTHING_TO_DO = 'Nothing to do.';

/** An entry for a passing word: only its summary says something. */
export const passing = (summary: Text): Remedy => ({ summary, fix: NOTHING_TO_DO, admin: NOTHING_TO_DO });

/** A variant for one protection product: the evidence's `agent` names it (`agent_health_unreadable`). */
export const healthOf = (agent: string) => (c: RemedyContext) => c.evidence.agent === agent;

/** What each check is about, for the texts shared by every check. */
const CHECK_SUBJECT: Record<CheckKey, string> = {
  DISK_ENCRYPTION: 'disk encryption',
  SCREEN_LOCK: 'the screen lock',
  FIREWALL_ENABLED: 'the firewall',
  TIME_SYNC: 'time synchronisation',
  OS_VERSION: 'the operating system version',
  AUTO_UPDATE: 'automatic updates',
  PASSWORD_POLICY: 'the password policy',
  REMOTE_LOGIN: 'remote login',
  MALWARE_PROTECTION: 'malware protection',
};

function subjectOf(checkKey: string): string {
  return Object.hasOwn(CHECK_SUBJECT, checkKey) ? CHECK_SUBJECT[checkKey as CheckKey] : 'what this check looks at';
}

// ---- interpolation: numbers and short enum words only -------------------------------------------

/** A finite number from the evidence, else undefined. */
export function num(ctx: RemedyContext, key: string): number | undefined {
  const v = ctx.evidence[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A short lowercase enum word from the evidence (never free text), else undefined. */
export function word(ctx: RemedyContext, key: string): string | undefined {
  const v = ctx.evidence[key];
  return typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$/.test(v) ? v : undefined;
}

/** A product name from the evidence ("Windows 11 Pro", "macOS"): letters, digits, spaces and dots only. */
function label(ctx: RemedyContext, key: string): string | undefined {
  const v = ctx.evidence[key];
  return typeof v === 'string' && /^[A-Za-z][A-Za-z0-9 .+()-]{0,59}$/.test(v) ? v : undefined;
}

/** "15 minutes", "30 seconds", "2 hours". */
export function duration(seconds: number): string {
  if (seconds % 60 !== 0 || seconds < 60) return plural(seconds, 'second');
  const minutes = seconds / 60;
  if (minutes < 60 || minutes % 60 !== 0) return plural(minutes, 'minute');
  return plural(minutes / 60, 'hour');
}

export function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** " (your organization requires X)" when the limit is known, else "". */
export function requires(limit: string | undefined): string {
  return limit === undefined ? '' : `; your organization requires ${limit}`;
}

export function maxIdle(ctx: RemedyContext): number | undefined {
  return num(ctx, 'max_idle_seconds') ?? ctx.policy.maxIdleSeconds;
}
export function maxGrace(ctx: RemedyContext): number | undefined {
  return num(ctx, 'max_grace_seconds') ?? ctx.policy.maxGraceSeconds;
}
export function minLength(ctx: RemedyContext): number | undefined {
  return num(ctx, 'required_min_length') ?? num(ctx, 'min_length_required') ?? ctx.policy.minLength;
}
export function maxSignatureAge(ctx: RemedyContext): number | undefined {
  return num(ctx, 'max_signature_age_days') ?? ctx.policy.maxSignatureAgeDays;
}

// ---- shared entries -----------------------------------------------------------------------------

/** How the agent runs as a service on a platform, for the UNKNOWN texts that need it. */
export interface ServiceWording {
  /** "the device-agent system service (systemd unit device-agent.service, runs as root)". */
  service: string;
  /** How a user runs the local check with the rights the service has. */
  elevated: string;
}

/** Words that mean the same for every check of a platform. */
export type SharedWord = 'permission_denied' | 'timeout' | 'check_error' | 'parse_error' | 'command_not_found' | 'not_found';

/** Entries for the words every check of a platform can return, with the same meaning. */
export function sharedRemedies(s: ServiceWording): Record<SharedWord, Remedy> {
  const subject = (ctx: RemedyContext) => subjectOf(ctx.checkKey);
  return {
    permission_denied: {
      summary: (c) => `The agent was not allowed to read ${subject(c)}, so it cannot tell whether this device complies.`,
      fix: `Nothing to change on the device; run the check with administrator rights: ${s.elevated}.`,
      admin: `Let the check run with the rights it needs: ${s.service}. A result from an unprivileged \`device-agent check\` is not the service's.`,
    },
    timeout: {
      summary: (c) => `Reading ${subject(c)} took too long, so the agent could not decide.`,
      fix: 'Nothing to change; the next check runs again on its own. If it keeps happening, tell your IT team.',
      admin:
        "A tool the check runs did not answer in time (a hung service or a very busy machine). Look at the device's load and at the service's log; the next cycle retries.",
    },
    check_error: {
      summary: (c) => `The agent hit an internal error while checking ${subject(c)}.`,
      fix: 'Nothing to change; tell your IT team if it persists.',
      admin: "The check itself failed (see the agent's log for the error class). Report it with the agent version; the next cycle retries.",
    },
    parse_error: {
      summary: (c) => `The agent could not understand what the system reported about ${subject(c)}.`,
      fix: 'Nothing to change; tell your IT team if it persists.',
      admin:
        'The tool the check reads printed something this agent version does not recognise (a newer or localised OS). Update the agent; report the OS release if the newest agent still says this.',
    },
    command_not_found: {
      summary: (c) => `A system tool the agent needs to check ${subject(c)} is not installed.`,
      fix: 'Nothing to change unless your IT team asks you to install a tool.',
      admin: "Install the tool the check reads (see docs/checks/<os>.md for the check's sources), or accept UNKNOWN for this device class.",
    },
    not_found: {
      summary: (c) => `A system file the agent reads to check ${subject(c)} does not exist on this device.`,
      fix: 'Nothing to change unless your IT team asks.',
      admin: "The file the check reads is missing (a minimal or unusual installation). See docs/checks/<os>.md for the check's sources.",
    },
  };
}

/** Containers and jails: the host's controls are out of sight (`policy.containers.mode`). */
export function containerRemedy(kind: 'container' | 'jail'): Remedy {
  return {
    summary: (c) => `This agent runs inside a ${kind}, where ${subjectOf(c.checkKey)} belongs to the host, which it cannot see.`,
    fix: `Nothing to change inside the ${kind}; the host is checked by the agent installed on the host.`,
    admin: `Install the agent on the host rather than in the ${kind}. Set policy \`containers.mode\` to NOT_APPLICABLE to stop counting ${kind}s as undecided.`,
  };
}

/** A required Wazuh agent judged by its state file (checks/wazuhState.ts), the same on Linux and FreeBSD. */
export const wazuhRemedies: Record<'agent_disconnected' | 'agent_connecting', Remedy> = {
  agent_disconnected: {
    summary: 'The Wazuh agent runs but is disconnected from its manager: nothing it detects reaches your security team.',
    fix: 'Ask your IT team; the agent must reach its Wazuh manager (ports 1514 and 1515 by default).',
    admin:
      "wazuh-agentd's state file says `status='disconnected'`: check the manager address in /var/ossec/etc/ossec.conf, the agent's key (`agent-auth`), the network path to the manager, and /var/ossec/logs/ossec.log on the device.",
  },
  agent_connecting: {
    summary: 'The Wazuh agent runs but has not connected to its manager yet, so whether it reports is not known.',
    fix: 'Nothing to change if the agent just started; tell your IT team if this persists.',
    admin:
      "wazuh-agentd's state file says `status='pending'` (not connected since it started): an agent that stays pending never reached its manager; see /var/ossec/logs/ossec.log on the device.",
  },
};

// ---- lookup -------------------------------------------------------------------------------------

export interface Explanation {
  /** The word the entry is for: `rule` on PASS/FAIL, `reason` otherwise. */
  word: string | null;
  summary: string;
  fix: string;
  admin: string;
  /** True when the catalogue had no entry (a newer agent's word): the texts are generic. */
  generic: boolean;
}

/** The word a result's entry is filed under. */
function outcomeWord(status: PostureStatus, evidence: Record<string, unknown> | undefined): string | null {
  const value = status === 'PASS' || status === 'FAIL' ? evidence?.rule : evidence?.reason;
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The entry a catalogue has for a check's word (its own, else the platform's shared one). */
function findRemedy(catalogue: PlatformRemedies, checkKey: string, w: string): Remedy | undefined {
  const own = Object.hasOwn(catalogue.checks, checkKey) ? catalogue.checks[checkKey as CheckKey] : undefined;
  if (own && Object.hasOwn(own, w)) return own[w];
  return Object.hasOwn(catalogue.shared, w) ? catalogue.shared[w] : undefined;
}

const GENERIC: Record<PostureStatus, Omit<Explanation, 'word' | 'generic'>> = {
  PASS: { summary: 'This check passes.', fix: NOTHING_TO_DO, admin: NOTHING_TO_DO },
  FAIL: {
    summary: 'This check fails.',
    fix: 'Ask your IT team what to change; this agent version has no instructions for this result.',
    admin:
      "The device reported a result this catalogue does not know (a newer or different agent). Its evidence says what decided; see that agent's documentation for the check.",
  },
  UNKNOWN: {
    summary: 'The agent could not decide this check.',
    fix: 'Nothing to change; tell your IT team if it persists.',
    admin:
      "The device reported a reason this catalogue does not know (a newer or different agent). Its evidence says what was missing; see that agent's documentation for the check.",
  },
  NOT_APPLICABLE: { summary: 'This check does not apply to this device.', fix: NOTHING_TO_DO, admin: NOTHING_TO_DO },
};

function render(text: Text, ctx: RemedyContext): string {
  return typeof text === 'function' ? text(ctx) : text;
}

/** The fix steps: variants for this device when it can be told, else every variant with its label. */
export function renderFix(fix: Remedy['fix'], ctx: RemedyContext): string {
  if (typeof fix === 'string' || typeof fix === 'function') return render(fix, ctx);
  const matching = fix.filter((v) => v.applies?.(ctx) === true);
  const shown = matching.length > 0 ? matching : fix;
  return shown.map((v) => `${v.for}: ${render(v.steps, ctx)}`).join('\n');
}

/** The OS hint from a device's OS_VERSION result (any platform's evidence names product and version). */
export function osHintFrom(results: readonly Pick<PostureResult, 'check_key' | 'evidence'>[]): OsHint {
  const evidence = results.find((r) => r.check_key === 'OS_VERSION')?.evidence ?? {};
  const text = (k: string) => (typeof evidence[k] === 'string' && /^[\w.+-]{1,40}$/.test(evidence[k]) ? evidence[k] : undefined);
  const idLike = Array.isArray(evidence.id_like) ? evidence.id_like.filter((v): v is string => typeof v === 'string') : undefined;
  const hint: OsHint = {};
  const product = text('product') ?? text('id');
  const version = text('version');
  if (product) hint.product = product;
  if (version) hint.version = version;
  if (idLike) hint.idLike = idLike;
  return hint;
}

/** What a result means and what to do, from the catalogue, or generic texts for a word it does not know. */
export function explain(
  catalogue: PlatformRemedies | undefined,
  result: Pick<PostureResult, 'check_key' | 'status' | 'evidence'>,
  context: { policy?: PolicyValues; os?: OsHint } = {},
): Explanation {
  const evidence = result.evidence ?? {};
  const w = outcomeWord(result.status, evidence);
  const remedy = catalogue && w !== null ? findRemedy(catalogue, result.check_key, w) : undefined;
  // A status outside the four (another implementation of the API) reads as undecided.
  if (!remedy) return { word: w, ...(Object.hasOwn(GENERIC, result.status) ? GENERIC[result.status] : GENERIC.UNKNOWN), generic: true };
  const ctx: RemedyContext = { checkKey: result.check_key, evidence, policy: context.policy ?? {}, os: context.os ?? {} };
  return {
    word: w,
    summary: render(remedy.summary, ctx),
    fix: renderFix(remedy.fix, ctx),
    admin: render(remedy.admin, ctx),
    generic: false,
  };
}

// ---- release helpers shared by the platforms' variants --------------------------------------------

/** The major version number of the hint, when it has one. */
export function majorVersion(os: OsHint): number | undefined {
  const m = /^(\d+)/.exec(os.version ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Linux family tests on os-release ID / ID_LIKE. */
export function linuxFamily(os: OsHint, ...ids: string[]): boolean {
  return [os.product, ...(os.idLike ?? [])].some((id) => id !== undefined && ids.includes(id));
}

// ---- entries shared by several platforms' checks --------------------------------------------------

/** OS_VERSION's words from checks/release.ts, and the release its platform could not read. */
type ReleaseWord = VerdictWord<ReturnType<typeof judgeRelease>> | 'unrecognized_version';

/**
 * OS_VERSION's words from checks/release.ts, with the platform's own upgrade steps. `Words` is the
 * check's own words (`keyof Entries<'OS_VERSION'>`): a release word the check no longer returns
 * asks for a third argument, which no caller gives, so the compiler reports it where the entries
 * are spread into the catalogue (spread entries are not checked for extra keys).
 */
export function releaseRemedies<Words extends string>(
  upgrade: Remedy['fix'],
  adminUpgrade: Text,
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check only: never given
  ..._everyWordReturned: [Exclude<ReleaseWord, Words>] extends [never]
    ? []
    : [`release words the check never returns: ${Exclude<ReleaseWord, Words>}`]
): Record<ReleaseWord, Remedy> {
  const release = (c: RemedyContext) => {
    const product = label(c, 'name') ?? label(c, 'product_name') ?? word(c, 'product');
    const version = word(c, 'version');
    if (!product || !version) return 'This operating system release';
    return `${product.charAt(0).toUpperCase()}${product.slice(1)} ${version}`;
  };
  const on = (c: RemedyContext, key: string) => (word(c, key) ? ` on ${word(c, key)}` : '');
  const until = (c: RemedyContext) => (word(c, 'extended_end') ? ` until ${word(c, 'extended_end')}` : '');
  const extension = (c: RemedyContext) => label(c, 'extended_support') ?? 'extended support';
  const setting = (c: RemedyContext) => (word(c, 'extended_support_setting') ? ` (\`${word(c, 'extended_support_setting')}\`)` : '');
  return {
    supported: passing((c) => `${release(c)} is supported and receives security updates.`),
    extended_support: passing(
      (c) =>
        `${release(c)}'s regular security support ended${on(c, 'eol')}; it is covered by ${extension(c)}${until(c)}, which your organization's policy accepts${setting(c)}.`,
    ),
    extended_support_not_accepted: {
      summary: (c) =>
        `${release(c)}'s regular security support ended${on(c, 'eol')}. ${extension(c)} still covers it${until(c)}, but your organization's policy does not count it${setting(c)}.`,
      fix: upgrade,
      admin: (c) =>
        `${typeof adminUpgrade === 'function' ? adminUpgrade(c) : adminUpgrade} Or, for devices enrolled in ${extension(c)}, accept it in the policy${setting(c)}.`,
    },
    eol: {
      summary: (c) => `${release(c)} no longer receives security updates (support ended${on(c, 'eol')}).`,
      fix: upgrade,
      admin: adminUpgrade,
    },
    extended_eol: {
      summary: (c) =>
        `${release(c)} no longer receives security updates: regular support ended${on(c, 'eol')}, and its extended support too${word(c, 'extended_end') ? ` (${word(c, 'extended_end')})` : ''}.`,
      fix: upgrade,
      admin: adminUpgrade,
    },
    minimum: {
      summary: (c) =>
        `${release(c)} is older than the minimum your organization requires${word(c, 'minimum') ? ` (${word(c, 'minimum')})` : ''}.`,
      fix: upgrade,
      admin: adminUpgrade,
    },
    patch_lag: {
      summary: (c) =>
        `${release(c)} is missing updates released for it${word(c, 'latest') ? ` (the newest is ${word(c, 'latest')})` : ''} longer ago than your organization allows.`,
      fix: upgrade,
      admin: adminUpgrade,
    },
    // A release beyond the lifecycle table (checks/release.ts: always for macOS, when the cadence says one is due elsewhere).
    newer_than_table: passing(
      (c) =>
        `${release(c)} is newer than every release the agent's lifecycle table lists${word(c, 'newest_listed') ? ` (newest: ${word(c, 'newest_listed')})` : ''}; it is taken as a current, supported release.`,
    ),
    older_than_table: {
      summary: (c) =>
        `${release(c)} is older than every release the agent knows, and those are past their support, so it no longer receives security updates.`,
      fix: upgrade,
      admin: adminUpgrade,
    },
    unknown_release: {
      summary: (c) => `The agent does not know the support dates of ${release(c).replace(/^This/, 'this')}.`,
      fix: 'Nothing to change unless your IT team asks; an update of the agent may know this release.',
      admin:
        "The built-in lifecycle table does not list this release: update the agent, or add the release to the policy's `osVersion.lifecycle`. Policy `osVersion.unknownRelease` decides whether an unknown release is UNKNOWN or FAIL.",
    },
    unrecognized_version: {
      summary: 'The agent could not read which operating system release this is.',
      fix: 'Nothing to change; tell your IT team if it persists.',
      admin:
        'The release file or tool the check reads gave no version this agent understands (a derivative or pre-release). Update the agent; add the release to `osVersion.lifecycle` if it is a derivative.',
    },
  };
}

/** REMOTE_LOGIN's SSH words shared by the POSIX platforms (checks/sshd.ts). */
export function sshRemedies(
  configPath: string,
  reload: string,
): Record<'ssh_hardened' | 'sshd_config_unreadable', Remedy> & { ssh_not_hardened: Remedy & { fix: string } } {
  return {
    ssh_hardened: passing('An SSH server accepts connections, but only with keys and never as root, which your organization allows.'),
    sshd_config_unreadable: {
      summary: 'An SSH server is listening, but the agent could not read its effective settings to see whether it is hardened.',
      fix: "Nothing to change unless your IT team asks; the check needs administrator rights to read the SSH server's configuration.",
      admin: `Run the agent as the system service (root), which can run \`sshd -T\`; check that ${configPath} and the host keys are readable by root.`,
    },
    ssh_not_hardened: {
      summary: 'An SSH server accepts remote logins with passwords or as root.',
      fix: `If you do not need remote login, turn the SSH server off. Otherwise set \`PasswordAuthentication no\`, \`KbdInteractiveAuthentication no\` and \`PermitRootLogin no\` in ${configPath}, then ${reload}.`,
      admin: `Deploy an sshd_config drop-in with \`PasswordAuthentication no\`, \`KbdInteractiveAuthentication no\`, \`PermitRootLogin no\` (${configPath}), or disable the SSH service where it is not needed.`,
    },
  };
}

// The posture policy: every threshold an evaluator compares against, with documented defaults
// (docs/checks.md) that an administrator overrides with a JSON file. Evaluators record the
// rule that decided in their evidence (`rule`).
import { readFileSync } from 'node:fs';
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { CHECK_KEYS } from '../src/protocol/constants';
import { LifecycleCycle, LifecycleDataSchema } from './lifecycleTable';
import { DARWIN_AGENT_NAMES } from './requiredAgents';

/** Whole numbers (within the safe range) above zero, and from zero: every count and threshold below. */
const positiveInt = z.int().check(z.positive());
const nonnegativeInt = z.int().check(z.nonnegative());
const flag = z._default(z.boolean(), false);
/** The longest grace period a policy may give a new FAIL (checks.graceSeconds): 30 days. */
const MAX_GRACE_SECONDS = 30 * 86_400;
const graceSeconds = nonnegativeInt.check(z.lte(MAX_GRACE_SECONDS));

/** The policy's sections: what a server policy's `localOverrides` names. */
const POLICY_SECTIONS = [
  'screenLock',
  'password',
  'timeSync',
  'diskEncryption',
  'autoUpdate',
  'malware',
  'containers',
  'remoteLogin',
  'osVersion',
  'checks',
  'notifications',
] as const;

const PolicySchema = z.object({
  checks: z.prefault(
    z.object({
      /** Checks not run at all: each is reported NOT_APPLICABLE with reason `disabled_by_policy`. */
      disabled: z._default(z.array(z.enum(CHECK_KEYS)), []),
      /**
       * The server's, not the agent's (agents ignore them): how long a check's new FAIL is "in grace"
       * before it counts as failing in the overview, the device list and webhooks; a check's own
       * setting, else this one; 0: none (docs/server.md, "Grace periods").
       */
      graceSeconds: z._default(graceSeconds, 0),
      graceSecondsByCheck: z._default(z.partialRecord(z.enum(CHECK_KEYS), graceSeconds), {}),
    }),
    {},
  ),
  /**
   * In a server's policy: the sections a device's local policy file (--policy, DEVICE_AGENT_POLICY)
   * may still set, each taken whole from the file. Empty: the server's policy alone decides.
   */
  localOverrides: z._default(z.array(z.enum(POLICY_SECTIONS)), []),
  screenLock: z.prefault(
    z.object({
      maxIdleSeconds: z._default(positiveInt, 900),
      maxGraceSeconds: z._default(nonnegativeInt, 5),
    }),
    {},
  ),
  password: z.prefault(
    z.object({
      minLength: z._default(positiveInt, 8),
      requireComplexity: flag,
    }),
    {},
  ),
  timeSync: z.prefault(
    z.object({
      /** When set, a measured clock offset above it FAILs (DARWIN: unset means 270 s for timed, checks/darwin/timeSync.ts). */
      maxOffsetSeconds: z._default(z.nullable(z.number().check(z.positive())), null),
    }),
    {},
  ),
  diskEncryption: z.prefault(
    z.object({
      /** root: the volume holding the OS; all_local: every local fixed volume. */
      scope: z._default(z.enum(['root', 'all_local']), 'root'),
      /** Verdict while encryption is still in progress. */
      inProgress: z._default(z.enum(['FAIL', 'PASS']), 'FAIL'),
      /** FAIL when swap is written to an unencrypted device (swap is always reported in evidence). */
      failUnencryptedSwap: flag,
    }),
    {},
  ),
  autoUpdate: z.prefault(
    z.object({
      /** Count "download automatically, install by hand" as compliant. */
      acceptDownloadOnly: flag,
      /**
       * The effect of automatic updating: a security update released this many days ago and still not
       * installed FAILs AUTO_UPDATE whatever the settings say (WINDOWS: the monthly cumulative update,
       * by the installed UBR; DARWIN: the newest release of the installed line, by its lifecycle date). 45: Windows Update for Business may defer a quality update 30 days,
       * then give up to 7 days before its install deadline and 2 days of grace. LINUX and FREEBSD: the
       * longest period an update timer is judged by, and the most days a cron-driven updater, or
       * freebsd-update's last fetch, may go without installing (fetching) anything.
       */
      maxPendingDays: z._default(positiveInt, 45),
    }),
    {},
  ),
  malware: z.prefault(
    z.object({
      /**
       * LINUX, FREEBSD (no built-in anti-malware): agents that must run, by name (e.g. "clamav",
       * "falcon-sensor"); empty: NOT_APPLICABLE. DARWIN: products judged by their own health report
       * besides Gatekeeper and XProtect (DARWIN_AGENT_NAMES); empty: XProtect and Gatekeeper alone.
       */
      requiredAgents: z.prefault(
        z.object({
          LINUX: z._default(z.array(z.string().check(z.minLength(1))), []),
          FREEBSD: z._default(z.array(z.string().check(z.minLength(1))), []),
          DARWIN: z._default(z.array(z.enum(DARWIN_AGENT_NAMES)), []),
        }),
        {},
      ),
      /** Signature/definition age above which protection FAILs: Defender (WINDOWS), ClamAV (LINUX). */
      maxSignatureAgeDays: z._default(positiveInt, 7),
      /**
       * DARWIN: age of XProtect's data above which MALWARE_PROTECTION FAILs. Apple ships XProtect every
       * one to two weeks, with longer gaps and iCloud delivery lagging Software Update by up to two
       * weeks, so a healthy Mac's copy is often older than Defender's daily signatures ever get.
       */
      xprotectMaxAgeDays: z._default(positiveInt, 30),
    }),
    {},
  ),
  containers: z.prefault(
    z.object({
      /** Verdict for host-level controls (disk, firewall, time, updates) inside a container. */
      mode: z._default(z.enum(['UNKNOWN', 'NOT_APPLICABLE']), 'UNKNOWN'),
    }),
    {},
  ),
  remoteLogin: z.prefault(
    z.object({
      /** PASS an SSH server that refuses passwords and root logins. */
      allowSshIfHardened: flag,
    }),
    {},
  ),
  osVersion: z.prefault(
    z.object({
      /**
       * Count a release's extended support (the lifecycle table's extendedEnd) as support: Debian LTS,
       * Ubuntu ESM (Ubuntu Pro), RHEL Extended Life Cycle Support, SUSE LTSS, Windows ESU.
       */
      acceptExtendedSupport: z.prefault(
        z.object({ debianLts: flag, ubuntuEsm: flag, rhelEls: flag, suseLtss: flag, windowsEsu: flag }),
        {},
      ),
      graceDaysAfterEol: z._default(nonnegativeInt, 0),
      /** FAIL when a newer patch of the installed cycle was released more than this many days ago. */
      maxPatchLagDays: z._default(z.nullable(positiveInt), null),
      /**
       * FAIL when the installed cumulative update was released more than this many days ago (WINDOWS:
       * the UBR's date from checks/windows/updateHistory.ts). Off by default: the table ships with the
       * agent, and once its newest row is older than the limit an up-to-date machine can only be
       * UNKNOWN (docs/checks/windows.md suggests 45).
       */
      maxPatchAgeDays: z.prefault(z.object({ WINDOWS: z._default(z.nullable(positiveInt), null) }), {}),
      /** Rolling releases (Arch, openSUSE Tumbleweed) FAIL when their last upgrade is older than this. */
      rollingMaxAgeDays: z._default(positiveInt, 90),
      /** Verdict for an OS release the lifecycle table does not know. */
      unknownRelease: z._default(z.enum(['UNKNOWN', 'FAIL']), 'UNKNOWN'),
      minimum: z.prefault(
        z.object({
          DARWIN: z._default(z.string(), '14.0'),
          WINDOWS: z.prefault(
            z.object({
              /** Client build floor (19045 = Windows 10 22H2, 22631 = Windows 11 23H2). */
              minBuild: z._default(positiveInt, 19045),
              /** Windows Server build floor (14393 = Server 2016, 17763 = 2019, 20348 = 2022, 26100 = 2025). */
              minServerBuild: z._default(positiveInt, 14393),
            }),
            {},
          ),
          /** Keyed by os-release ID. */
          LINUX: z._default(z.record(z.string(), z.string()), {}),
          FREEBSD: z._default(z.string(), '14.0'),
        }),
        {},
      ),
      /**
       * Replaces the built-in lifecycle table (checks/<os>/lifecycle.ts, generated from endoflife.date)
       * as a whole when given; absent, each platform judges by its own built-in table.
       */
      lifecycle: z.optional(z.record(z.string(), z.array(LifecycleCycle))),
      /**
       * Set by the agent from the server's lifecycle data set (`device-agent-server lifecycle import`):
       * this platform's table with its provenance, replacing the built-in one (`lifecycle` still wins).
       */
      lifecycleData: z.optional(LifecycleDataSchema),
    }),
    {},
  ),
  notifications: z.prefault(
    z.object({
      /** Desktop notifications on the device when a check turns FAIL or passes again (docs/agent.md); false: none. */
      enabled: z._default(z.boolean(), true),
    }),
    {},
  ),
});

export type Policy = z.infer<typeof PolicySchema>;
export type PolicyOverride = z.input<typeof PolicySchema>;

export const DEFAULT_POLICY: Policy = PolicySchema.parse({});

export class PolicyError extends Error {
  override name = 'PolicyError';
}

/** Validates an override (partial policy) and fills the rest from the defaults. */
export function resolvePolicy(override: unknown = {}): Policy {
  // zod/mini carries no messages ("Invalid input" for everything): the policy file's author reads zod's
  // English ones, which only a failing parse formats.
  const parsed = PolicySchema.safeParse(override, { error: en().localeError });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PolicyError(`invalid policy at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/**
 * Validates a policy as an administrator writes it for the server: the schema's rules, and no field
 * the schema does not know (a misspelt setting would otherwise be dropped silently). Agents stay
 * lenient (resolvePolicy), so that a newer server's setting never makes an older agent refuse a policy.
 */
export function validatePolicyDocument(document: unknown): Policy {
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new PolicyError('invalid policy at (root): expected a JSON object');
  const policy = resolvePolicy(document);
  const unknownPath = firstUnknownField(document, policy, []);
  if (unknownPath) throw new PolicyError(`invalid policy at ${unknownPath.join('.')}: unknown setting`);
  if ((document as { osVersion?: { lifecycleData?: unknown } }).osVersion?.lifecycleData !== undefined)
    throw new PolicyError('invalid policy at osVersion.lifecycleData: set by the server from `lifecycle import`, not in a policy');
  return policy;
}

/** A key of an object in `given` that the parsed policy dropped (records keep every key, so only unknown settings). */
function firstUnknownField(given: unknown, parsed: unknown, path: string[]): string[] | undefined {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return undefined;
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(parsed, key)) return [...path, key];
    const deeper = firstUnknownField(value, (parsed as Record<string, unknown>)[key], [...path, key]);
    if (deeper) return deeper;
  }
  return undefined;
}

/** Reads a policy file's JSON, validated, as written (the sections it sets), for merging under a server's policy. */
export function readPolicyFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PolicyError(`cannot read policy file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PolicyError(`policy file ${file} is not valid JSON`);
  }
  resolvePolicy(json);
  return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
}

/**
 * The policy an agent applies (docs/checks.md, "Where the policy comes from"): without a server
 * policy, the local file over the defaults; with one, the server's, except the sections its
 * `localOverrides` lets the local file set, which are taken whole from the file.
 */
export function effectivePolicy(server: Record<string, unknown> | undefined, local: Record<string, unknown> | undefined): Policy {
  if (server === undefined) return resolvePolicy(local ?? {});
  const allowed = resolvePolicy(server).localOverrides;
  const merged: Record<string, unknown> = { ...server };
  for (const section of allowed) if (local && Object.hasOwn(local, section)) merged[section] = local[section];
  return resolvePolicy(merged);
}

/** Reads an administrator's policy file (JSON); a missing or malformed file is an error, never silently ignored. */
export function loadPolicyFile(file: string): Policy {
  return resolvePolicy(readPolicyFile(file));
}

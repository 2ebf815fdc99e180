// The posture policy: every threshold an evaluator compares against, with documented defaults
// (docs/checks.md) that an administrator overrides with a JSON file. Evaluators record the
// rule that decided in their evidence (`rule`).
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { darwinLifecycle } from './darwin/lifecycle';
import { freebsdLifecycle } from './freebsd/lifecycle';
import { linuxLifecycle } from './linux/lifecycle';
import { windowsLifecycle } from './windows/lifecycle';
import { LifecycleCycle, type LifecycleTable } from './lifecycleTable';

export const DEFAULT_LIFECYCLE: LifecycleTable = {
  ...linuxLifecycle,
  ...darwinLifecycle,
  ...windowsLifecycle,
  ...freebsdLifecycle,
};

/** Date the built-in lifecycle table was last checked against its sources (endoflife.date, vendor pages). */
export const LIFECYCLE_CHECKED_AT = '2026-11-21';

const PolicySchema = z.object({
  screenLock: z
    .object({
      maxIdleSeconds: z.number().int().positive().default(900),
      maxGraceSeconds: z.number().int().nonnegative().default(5),
    })
    .prefault({}),
  password: z
    .object({
      minLength: z.number().int().positive().default(8),
      requireComplexity: z.boolean().default(false),
    })
    .prefault({}),
  timeSync: z
    .object({
      /** When set, a measured clock offset above it FAILs. */
      maxOffsetSeconds: z.number().positive().nullable().default(null),
    })
    .prefault({}),
  diskEncryption: z
    .object({
      /** root: the volume holding the OS; all_local: every local fixed volume. */
      scope: z.enum(['root', 'all_local']).default('root'),
      /** Verdict while encryption is still in progress. */
      inProgress: z.enum(['FAIL', 'PASS']).default('FAIL'),
      /** FAIL when swap is written to an unencrypted device (swap is always reported in evidence). */
      failUnencryptedSwap: z.boolean().default(false),
    })
    .prefault({}),
  autoUpdate: z
    .object({
      /** Count "download automatically, install by hand" as compliant. */
      acceptDownloadOnly: z.boolean().default(false),
    })
    .prefault({}),
  malware: z
    .object({
      /** On platforms without built-in anti-malware (LINUX, FREEBSD): agents that must run, by name (e.g. "clamav", "falcon-sensor"). Empty: NOT_APPLICABLE. */
      requiredAgents: z
        .object({ LINUX: z.array(z.string().min(1)).default([]), FREEBSD: z.array(z.string().min(1)).default([]) })
        .prefault({}),
      /** Signature/definition age above which protection FAILs: Defender (WINDOWS), ClamAV (LINUX). */
      maxSignatureAgeDays: z.number().int().positive().default(7),
      /**
       * DARWIN: age of XProtect's data above which MALWARE_PROTECTION FAILs. Apple ships XProtect every
       * one to two weeks, with longer gaps and iCloud delivery lagging Software Update by up to two
       * weeks, so a healthy Mac's copy is often older than Defender's daily signatures ever get.
       */
      xprotectMaxAgeDays: z.number().int().positive().default(30),
    })
    .prefault({}),
  containers: z
    .object({
      /** Verdict for host-level controls (disk, firewall, time, updates) inside a container. */
      mode: z.enum(['UNKNOWN', 'NOT_APPLICABLE']).default('UNKNOWN'),
    })
    .prefault({}),
  remoteLogin: z
    .object({
      /** PASS an SSH server that refuses passwords and root logins. */
      allowSshIfHardened: z.boolean().default(false),
    })
    .prefault({}),
  osVersion: z
    .object({
      acceptExtendedSupport: z
        .object({
          debianLts: z.boolean().default(false),
          ubuntuEsm: z.boolean().default(false),
          windowsEsu: z.boolean().default(false),
        })
        .prefault({}),
      graceDaysAfterEol: z.number().int().nonnegative().default(0),
      /** FAIL when a newer patch of the installed cycle was released more than this many days ago. */
      maxPatchLagDays: z.number().int().positive().nullable().default(null),
      /**
       * FAIL when the installed cumulative update was released more than this many days ago (WINDOWS:
       * the UBR's date from checks/windows/updateHistory.ts). Off by default: the table ships with the
       * agent, and once its newest row is older than the limit an up-to-date machine can only be
       * UNKNOWN (docs/checks/windows.md suggests 45).
       */
      maxPatchAgeDays: z.object({ WINDOWS: z.number().int().positive().nullable().default(null) }).prefault({}),
      /** Rolling releases (Arch, openSUSE Tumbleweed) FAIL when their last upgrade is older than this. */
      rollingMaxAgeDays: z.number().int().positive().default(90),
      /** Verdict for an OS release the lifecycle table does not know. */
      unknownRelease: z.enum(['UNKNOWN', 'FAIL']).default('UNKNOWN'),
      minimum: z
        .object({
          DARWIN: z.string().default('14.0'),
          WINDOWS: z
            .object({
              /** Client build floor (19045 = Windows 10 22H2, 22631 = Windows 11 23H2). */
              minBuild: z.number().int().positive().default(19045),
              /** Windows Server build floor (14393 = Server 2016, 17763 = 2019, 20348 = 2022, 26100 = 2025). */
              minServerBuild: z.number().int().positive().default(14393),
            })
            .prefault({}),
          /** Keyed by os-release ID. */
          LINUX: z.record(z.string(), z.string()).default({}),
          FREEBSD: z.string().default('14.0'),
        })
        .prefault({}),
      lifecycle: z.record(z.string(), z.array(LifecycleCycle)).default(DEFAULT_LIFECYCLE),
    })
    .prefault({}),
});

export type Policy = z.infer<typeof PolicySchema>;
export type PolicyOverride = z.input<typeof PolicySchema>;

export const DEFAULT_POLICY: Policy = PolicySchema.parse({});

export class PolicyError extends Error {
  override name = 'PolicyError';
}

/** Validates an override (partial policy) and fills the rest from the defaults. */
export function resolvePolicy(override: unknown = {}): Policy {
  const parsed = PolicySchema.safeParse(override);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PolicyError(`invalid policy at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Reads an administrator's policy file (JSON); a missing or malformed file is an error, never silently ignored. */
export function loadPolicyFile(file: string): Policy {
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
  return resolvePolicy(json);
}

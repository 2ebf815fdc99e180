// PASSWORD_POLICY on Windows (research §7.4), never from `net accounts` (translated text): the local
// security policy as `secedit /export` writes it ([System Access] of its INF: fixed key names),
// NetUserModalsGet through ADSI when secedit is denied (length only, no complexity), and the MDM
// DeviceLock CSP. The effective minimum is the largest enforced one. On a machine joined to Entra ID
// only, accounts get their password policy from the cloud: a weak local policy is not proof.
import * as z from 'zod/mini';
import type { Policy } from '../policy';
import type { Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import { defineProbeCheck, probeComputer, probeElevated, probeSection, registryKey, type ComputerFacts, type Section } from './probe';
import { regNumber, type RegistryValues } from './registry';

const SeceditExport = z.object({ ExitCode: z.nullable(z.int()), SystemAccess: z.array(z.string()) });
type SeceditExport = z.infer<typeof SeceditExport>;
const AccountPolicy = z.object({ MinPasswordLength: z.int() });
type AccountPolicy = z.infer<typeof AccountPolicy>;

export interface PasswordPolicyFacts {
  secedit: Section<SeceditExport>;
  accountPolicy: Section<AccountPolicy>;
  deviceLock: Section<RegistryValues | null>;
  computer: Section<ComputerFacts>;
  elevated: boolean | null;
}

export interface SystemAccess {
  minimumPasswordLength: number | null;
  passwordComplexity: number | null;
  maximumPasswordAge: number | null;
  lockoutBadCount: number | null;
}

const SYSTEM_ACCESS_LINE = /^\s*(MinimumPasswordLength|PasswordComplexity|MaximumPasswordAge|LockoutBadCount)\s*=\s*(-?\d{1,10})\s*$/;

/** Reads the allow-listed numeric settings of secedit's [System Access] section; other lines (account names) are ignored. */
export function parseSystemAccess(lines: string[]): SystemAccess {
  const found: Record<string, number> = {};
  for (const line of lines) {
    const match = SYSTEM_ACCESS_LINE.exec(line);
    if (match) found[match[1]!] = Number(match[2]);
  }
  return {
    minimumPasswordLength: found.MinimumPasswordLength ?? null,
    passwordComplexity: found.PasswordComplexity ?? null,
    maximumPasswordAge: found.MaximumPasswordAge ?? null,
    lockoutBadCount: found.LockoutBadCount ?? null,
  };
}

export function evaluatePasswordPolicy(facts: PasswordPolicyFacts, policy: Policy) {
  const evidence: Evidence = {};
  const lengths: number[] = [];
  const sources: string[] = [];
  let complexity: boolean | null = null;

  const access = facts.secedit.ok && facts.secedit.value.ExitCode === 0 ? parseSystemAccess(facts.secedit.value.SystemAccess) : null;
  if (access && access.minimumPasswordLength !== null) {
    sources.push('secedit');
    lengths.push(access.minimumPasswordLength);
    complexity = access.passwordComplexity === null ? null : access.passwordComplexity === 1;
    Object.assign(evidence, {
      complexity,
      max_age_days: access.maximumPasswordAge === null || access.maximumPasswordAge < 0 ? null : access.maximumPasswordAge,
      lockout_threshold: access.lockoutBadCount,
    });
  } else if (facts.accountPolicy.ok) {
    sources.push('netusermodals');
    lengths.push(facts.accountPolicy.value.MinPasswordLength);
  }

  // DeviceLock CSP: DevicePasswordEnabled 0 means a password is required (1, the default, means not).
  if (facts.deviceLock.ok) {
    const required = regNumber(facts.deviceLock.value, 'DevicePasswordEnabled');
    const minimum = regNumber(facts.deviceLock.value, 'MinDevicePasswordLength');
    if (required === 0 && typeof minimum === 'number') {
      sources.push('mdm');
      lengths.push(minimum);
      evidence.mdm_min_length = minimum;
    }
  }
  if (facts.computer.ok)
    Object.assign(evidence, { domain_joined: facts.computer.value.PartOfDomain, entra_joined: facts.computer.value.EntraJoined });

  if (lengths.length === 0) {
    const denied = facts.elevated === false || (!facts.secedit.ok && facts.secedit.reason === 'permission_denied');
    return unknown(denied ? 'permission_denied' : facts.secedit.ok ? 'parse_error' : facts.secedit.reason, evidence);
  }
  const minLength = Math.max(...lengths);
  Object.assign(evidence, {
    source: sources.length > 1 ? 'max' : sources[0],
    sources,
    min_length: minLength,
    required_min_length: policy.password.minLength,
  });

  const weakLength = minLength < policy.password.minLength;
  const weakComplexity = policy.password.requireComplexity && complexity === false;
  if (weakLength || weakComplexity) {
    const cloudOnly = facts.computer.ok && facts.computer.value.EntraJoined && !facts.computer.value.PartOfDomain;
    if (cloudOnly) return unknown('directory_managed', { ...evidence, rule: 'directory_managed' });
    return fail({ ...evidence, rule: weakLength ? 'min_length' : 'complexity' });
  }
  if (policy.password.requireComplexity && complexity === null) {
    return unknown(facts.elevated === false ? 'permission_denied' : 'complexity_unknown', evidence);
  }
  return pass({ ...evidence, rule: 'meets_policy' });
}

export const passwordPolicyCheck = defineProbeCheck(
  'PASSWORD_POLICY',
  (probe): PasswordPolicyFacts => ({
    secedit: probeSection(probe, 'secedit', SeceditExport),
    accountPolicy: probeSection(probe, 'accountPolicy', AccountPolicy),
    deviceLock: registryKey(probe, 'deviceLock'),
    computer: probeComputer(probe),
    elevated: probeElevated(probe),
  }),
  (facts, policy) => evaluatePasswordPolicy(facts, policy),
);

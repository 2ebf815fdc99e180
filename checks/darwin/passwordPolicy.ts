// PASSWORD_POLICY on macOS (research §7.1): the global account policies from `pwpolicy
// -getaccountpolicies`, parsed as a property list (never grepped), plus a passcode profile's
// minLength/requireAlphanumeric. Every content policy must hold, so the effective minimum length
// is at least the largest minimum any rule allows (passwordRules.ts reads each rule, alternatives
// included: '^$|.{4,}+' allows an empty password). A stock Mac has only
// com.apple.defaultpasswordpolicy.fde, "policyAttributePassword matches '.{4,}+'": 4 characters.
import { defineCheck, type CommandResult, type Evidence } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { parsePlist, plistBool, plistDict, plistInt, plistString, type PlistDict } from './plist';
import { combinedShortest, readContentRule, ruleMinimum, ruleRequires, type ContentRule } from './passwordRules';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';

const PWPOLICY = '/usr/bin/pwpolicy';
const MANAGED_PASSCODE = `${MANAGED_PREFERENCES}/com.apple.mobiledevice.passwordpolicy.plist`;

export interface PasswordPolicyFacts {
  pwpolicy: CommandResult;
  passcodeProfile: PlistFile;
}

interface AccountPolicies {
  contentPolicies: number;
  /** Shortest password the readable rules allow (a lower bound on what the Mac demands); 0 when `^$` is an alternative. */
  minLength?: number;
  /** A password this short passes every rule (computed only when every rule was read). */
  shortestAccepted?: number;
  /** Some rule sets a length of its own (not just character classes or pattern limits). */
  lengthRule: boolean;
  /** Rules that cannot bound the length: character classes, lookaheads only, allowSimple. */
  nonLengthRules: number;
  requiresAlpha: boolean;
  requiresNumeric: boolean;
  requiresSymbol: boolean;
  /** Content policies whose rule this parser does not understand (they may be stricter). */
  unrecognized: number;
  maxFailedLogins?: number;
}

const NO_POLICIES =
  /^(?:There are no account policies for all users\.|No global account policies have been set\.|No accountPolicies set\.?)$/m;
const BANNER = /^(?:Getting global account policies\s*)?$/;

/**
 * Rules a passcode profile adds under `ProfilePayload:<uuid>:<key>`, for when their regular
 * expression is beyond the reader: allowSimple forbids repeated and sequential characters (no
 * length), requireAlphanumeric demands a letter and a digit.
 */
const PROFILE_RULES: Record<string, ContentRule> = {
  allowSimple: { alternatives: [{ min: 0, max: Infinity, requires: [] }], boundsLength: false },
  requireAlphanumeric: {
    alternatives: [
      {
        min: 2,
        max: Infinity,
        requires: [
          { class: 'alpha', count: 1 },
          { class: 'numeric', count: 1 },
        ],
      },
    ],
    boundsLength: false,
  },
};

function profileRule(identifier: string | undefined): ContentRule | undefined {
  const key = /^ProfilePayload:[0-9A-Fa-f-]+:(\w+)$/.exec(identifier ?? '')?.[1];
  return key !== undefined && Object.hasOwn(PROFILE_RULES, key) ? PROFILE_RULES[key] : undefined;
}

export type PwpolicyParse = { state: 'policies'; policies: AccountPolicies } | { state: 'none' } | { state: 'unparseable' };

/** Parses pwpolicy's answer; its "no policies" message may come on either stream. */
export function parsePwpolicy(stdout: string, stderr = ''): PwpolicyParse {
  const start = stdout.search(/<\?xml|<plist/);
  if (start < 0) return NO_POLICIES.test(`${stdout}\n${stderr}`) ? { state: 'none' } : { state: 'unparseable' };
  if (!BANNER.test(stdout.slice(0, start).trim())) return { state: 'unparseable' };
  const parsed = parsePlist(stdout.slice(start));
  const root = parsed.ok ? plistDict(parsed.value) : undefined;
  if (!root) return { state: 'unparseable' };
  if (Object.keys(root).length === 0) return { state: 'none' };

  const content = root.policyCategoryPasswordContent;
  const entries = content === undefined ? [] : Array.isArray(content) ? content.map(plistDict) : undefined;
  if (!entries || entries.some((e) => e === undefined)) return { state: 'unparseable' };
  const policies: AccountPolicies = {
    contentPolicies: entries.length,
    lengthRule: false,
    nonLengthRules: 0,
    requiresAlpha: false,
    requiresNumeric: false,
    requiresSymbol: false,
    unrecognized: 0,
  };
  const rules: ContentRule[] = [];
  const floors: number[] = [];
  for (const entry of entries as PlistDict[]) {
    const rule = readContentRule(plistString(entry.policyContent) ?? '') ?? profileRule(plistString(entry.policyIdentifier));
    if (!rule) {
      policies.unrecognized++;
      // Apple's own parameters name the length of a rule we cannot read: a floor, never a ceiling.
      const params = plistDict(entry.policyParameters) ?? {};
      for (const n of [plistInt(params.minimumLength), plistInt(params.minChars)]) if (n !== undefined) floors.push(n);
      continue;
    }
    rules.push(rule);
    floors.push(ruleMinimum(rule));
    if (rule.boundsLength) policies.lengthRule = true;
    else policies.nonLengthRules++;
    policies.requiresAlpha ||= ruleRequires(rule, ['alpha', 'lower', 'upper']);
    policies.requiresNumeric ||= ruleRequires(rule, ['numeric']);
    policies.requiresSymbol ||= ruleRequires(rule, ['symbol']);
  }
  if (floors.length > 0) policies.minLength = Math.max(...floors);
  if (policies.unrecognized === 0) {
    const shortest = combinedShortest(rules);
    if (shortest !== undefined) policies.shortestAccepted = shortest;
  }
  const auth = root.policyCategoryAuthentication;
  for (const entry of Array.isArray(auth) ? auth : []) {
    const limit = plistInt(plistDict(plistDict(entry)?.policyParameters)?.policyAttributeMaximumFailedAuthentications);
    if (limit !== undefined) policies.maxFailedLogins = Math.min(policies.maxFailedLogins ?? limit, limit);
  }
  return { state: 'policies', policies };
}

export function evaluatePasswordPolicy(facts: PasswordPolicyFacts, policy: Policy) {
  const required = policy.password.minLength;
  const profile = facts.passcodeProfile.state === 'present' ? facts.passcodeProfile.dict : undefined;
  const mdmMin = plistInt(profile?.minLength);
  const mdmAlphanumeric = plistBool(profile?.requireAlphanumeric) === true;
  const run = facts.pwpolicy;
  const parsed: PwpolicyParse = run.error ? { state: 'unparseable' } : parsePwpolicy(run.stdout, run.stderr);
  const local = parsed.state === 'policies' ? parsed.policies : parsed.state === 'none' ? undefined : null;

  const lower = Math.max(local?.minLength ?? 0, mdmMin ?? 0);
  const minLength = local?.minLength !== undefined || mdmMin !== undefined ? lower : undefined;
  const complex = mdmAlphanumeric || (local?.requiresAlpha === true && local.requiresNumeric);
  const evidence: Evidence = {
    source: mdmMin !== undefined && mdmMin > (local?.minLength ?? 0) ? 'mdm' : 'pwpolicy',
    required_min_length: required,
    complexity_required: policy.password.requireComplexity,
    requires_alphanumeric: complex,
    content_policies: local?.contentPolicies ?? 0,
  };
  if (local?.requiresSymbol) evidence.requires_symbol = true;
  if (minLength !== undefined) evidence.min_length = minLength;
  if (mdmMin !== undefined) evidence.mdm_min_length = mdmMin;
  if (local?.nonLengthRules) evidence.non_length_policies = local.nonLengthRules;
  if (local?.maxFailedLogins !== undefined) evidence.max_failed_logins = local.maxFailedLogins;
  const meetsLength = minLength !== undefined && minLength >= required;
  const meetsComplexity = !policy.password.requireComplexity || complex;

  if (local === null) {
    // pwpolicy could not answer: only a profile strong enough on its own can decide.
    if (meetsLength && meetsComplexity) return pass({ ...evidence, rule: 'profile_meets_policy' });
    return unknown(run.error ? commandFailureReason(run) : 'parse_error', { ...evidence, exit_code: run.exitCode });
  }
  if (meetsLength && meetsComplexity) return pass({ ...evidence, rule: 'meets_policy' });
  // A content rule this parser cannot read might be the one that satisfies the policy.
  const unrecognized = local?.unrecognized ?? 0;
  if (unrecognized > 0) return unknown('unrecognized_policy', { ...evidence, unrecognized_policies: unrecognized });
  if (!meetsLength) {
    // FAIL only on a password shown to pass every rule while shorter than required.
    const shortest = Math.max(local === undefined ? 0 : (local.shortestAccepted ?? Infinity), mdmMin ?? 0);
    if (shortest >= required) return unknown('unrecognized_policy', evidence);
    const lengthSet = local?.lengthRule === true || mdmMin !== undefined;
    return fail({ ...evidence, shortest_accepted: shortest, rule: lengthSet ? 'min_length' : 'no_length_policy' });
  }
  return fail({ ...evidence, rule: 'complexity' });
}

export const passwordPolicy = defineCheck({
  key: 'PASSWORD_POLICY',
  platform: 'DARWIN',
  async collect(ctx): Promise<PasswordPolicyFacts> {
    const [pwpolicy, passcodeProfile] = await Promise.all([
      ctx.host.run(PWPOLICY, ['-getaccountpolicies']),
      readPlistFile(ctx, MANAGED_PASSCODE),
    ]);
    return { pwpolicy, passcodeProfile };
  },
  evaluate: (facts, policy) => evaluatePasswordPolicy(facts, policy),
});

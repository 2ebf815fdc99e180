// PASSWORD_POLICY on macOS (research §7.1): the global account policies from `pwpolicy
// -getaccountpolicies`, parsed as a property list (never grepped), plus a passcode profile's
// minLength/requireAlphanumeric. Every content policy must hold, so the effective minimum length
// is the largest one any policy sets. A stock Mac has only com.apple.defaultpasswordpolicy.fde,
// "policyAttributePassword matches '.{4,}+'": 4 characters.
import { defineCheck, type CommandResult, type Evidence, type Verdict } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { parsePlist, plistBool, plistDict, plistInt, plistString, type PlistDict } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';

export const PWPOLICY = '/usr/bin/pwpolicy';
export const MANAGED_PASSCODE = `${MANAGED_PREFERENCES}/com.apple.mobiledevice.passwordpolicy.plist`;

export interface PasswordPolicyFacts {
  pwpolicy: CommandResult;
  passcodeProfile: PlistFile;
}

export interface AccountPolicies {
  contentPolicies: number;
  minLength?: number;
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
/** The whole rule: optional ^, lookaheads, then .{N,} or .{N,M}, optional possessive +, optional $. */
const LENGTH_RULE = /^policyAttributePassword matches '\^?((?:\(\?=[^()]*\))*)\.\{(\d+),\d*\}\+?\$?'$/;
const ALPHA_RULE = /^policyAttributePassword matches '\(\.\*\[(?:a-zA-Z|A-Za-z)\]\.\*\)\{([1-9]\d*),\}\+?'$/;
const NUMERIC_RULE = /^policyAttributePassword matches '\(\.\*\[0-9\]\.\*\)\{([1-9]\d*),\}\+?'$/;
const SYMBOL_RULE = /^policyAttributePassword matches '\(\.\*\[\^a-zA-Z0-9\]\.\*\)\{([1-9]\d*),\}\+?'$/;

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
  const policies: AccountPolicies = { contentPolicies: entries.length, requiresAlpha: false, requiresNumeric: false, requiresSymbol: false, unrecognized: 0 };
  for (const entry of entries as PlistDict[]) {
    const rule = plistString(entry.policyContent) ?? '';
    const params = plistDict(entry.policyParameters) ?? {};
    const lengths = [plistInt(params.minimumLength), plistInt(params.minChars)];
    const length = LENGTH_RULE.exec(rule);
    if (length) lengths.push(Number(length[2]));
    const lookaheads = length?.[1] ?? '';
    const alpha = ALPHA_RULE.test(rule) || /\(\?=\.\*\[(?:a-zA-Z|A-Za-z)\]\)/.test(lookaheads) || (plistInt(params.minimumAlphaCharacters) ?? 0) > 0;
    const numeric = NUMERIC_RULE.test(rule) || /\(\?=\.\*(?:\[0-9\]|\\d)\)/.test(lookaheads) || (plistInt(params.minimumNumericCharacters) ?? 0) > 0;
    const symbol = SYMBOL_RULE.test(rule) || (plistInt(params.minimumSymbolCharacters) ?? 0) > 0;
    const longest = Math.max(...lengths.filter((n): n is number => n !== undefined));
    if (Number.isFinite(longest)) policies.minLength = Math.max(policies.minLength ?? 0, longest);
    policies.requiresAlpha ||= alpha;
    policies.requiresNumeric ||= numeric;
    policies.requiresSymbol ||= symbol;
    if (!Number.isFinite(longest) && !alpha && !numeric && !symbol) policies.unrecognized++;
  }
  const auth = root.policyCategoryAuthentication;
  for (const entry of Array.isArray(auth) ? auth : []) {
    const limit = plistInt(plistDict(plistDict(entry)?.policyParameters)?.policyAttributeMaximumFailedAuthentications);
    if (limit !== undefined) policies.maxFailedLogins = Math.min(policies.maxFailedLogins ?? limit, limit);
  }
  return { state: 'policies', policies };
}

export function evaluatePasswordPolicy(facts: PasswordPolicyFacts, policy: Policy): Verdict {
  const required = policy.password.minLength;
  const profile = facts.passcodeProfile.state === 'present' ? facts.passcodeProfile.dict : undefined;
  const mdmMin = plistInt(profile?.minLength);
  const mdmAlphanumeric = plistBool(profile?.requireAlphanumeric) === true;
  const run = facts.pwpolicy;
  const parsed: PwpolicyParse = run.error ? { state: 'unparseable' } : parsePwpolicy(run.stdout, run.stderr);
  const local = parsed.state === 'policies' ? parsed.policies : parsed.state === 'none' ? undefined : null;

  const minLength = Math.max(local?.minLength ?? 0, mdmMin ?? 0) || undefined;
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
  if ((local?.unrecognized ?? 0) > 0) return unknown('unrecognized_policy', { ...evidence, unrecognized_policies: local!.unrecognized });
  if (minLength === undefined) return fail({ ...evidence, rule: 'no_length_policy' });
  return fail({ ...evidence, rule: meetsLength ? 'complexity' : 'min_length' });
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

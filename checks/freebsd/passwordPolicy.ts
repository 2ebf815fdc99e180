// PASSWORD_POLICY on FreeBSD (research §7.3): passwd(1) changes passwords through the PAM
// "passwd" service, and the base system enforces quality only with pam_passwdqc(8) there
// (commented out by default). login.conf's minpasswordlen and mixpasswordcase are reserved,
// not implemented in the base system (login.conf(5): "superseded by the pam_passwdqc(8) PAM
// module"): they are reported, never counted. The "default" class's passwd_format and
// passwordtime are evidence.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type Evidence, type FileResult } from '../types';
import { fail, fsFailureReason, pass, unknown } from '../verdict';
import { passwdqcConfigFiles, passwdqcMinLength, passwdqcMinText, passwdqcRequiresClasses, passwdqcSettings } from '../passwdqc';
import { capNumber, capString, expandRecord, parseCapDatabase } from './loginConf';
import { resolveChain, type PamEntry, type PamFiles } from './pam';

const LOGIN_CONF = '/etc/login.conf';
const NSSWITCH = '/etc/nsswitch.conf';
const MAX_READ_ROUNDS = 10;

export interface PasswordFacts {
  /** PAM policy files and passwdqc config= files, by path. */
  files: PamFiles;
  loginConf: FileResult;
  nsswitch: FileResult;
}

const isPasswdqc = (e: PamEntry) => /^pam_passwdqc\.so(?:\.\d+)?$/.test(e.module.split('/').at(-1) ?? '');
const configFiles = (entries: PamEntry[]) => entries.filter(isPasswdqc).flatMap((e) => passwdqcConfigFiles(e.options));

async function collectPassword(ctx: CheckContext): Promise<PasswordFacts> {
  const { host } = ctx;
  const files: PamFiles = {};
  const read = async (paths: string[]) => {
    const results = await Promise.all(paths.map((p) => host.readFile(p)));
    paths.forEach((p, i) => (files[p] = results[i]!));
  };
  const [loginConf, nsswitch] = await Promise.all([host.readFile(LOGIN_CONF), host.readFile(NSSWITCH)]);
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const chain = resolveChain(files, 'passwd', 'password');
    if (chain.state === 'incomplete') await read(chain.missing);
    else {
      if (chain.state === 'resolved') await read(configFiles(chain.entries).filter((p) => files[p] === undefined));
      break;
    }
  }
  return { files, loginConf, nsswitch };
}

/** The default login class as getcap resolves it; values for evidence only. */
function loginClassEvidence(loginConf: FileResult): Evidence {
  if (!loginConf.ok) return { login_conf: loginConf.error };
  const fields = expandRecord(parseCapDatabase(loginConf.text), 'default');
  if (!fields) return { login_conf: 'no_default_class' };
  const format = capString(fields, 'passwd_format');
  const minLen = capNumber(fields, 'minpasswordlen');
  const passwordtime = capString(fields, 'passwordtime');
  return {
    login_conf: 'read',
    passwd_format: format !== null && /^[a-z0-9]{1,16}$/.test(format) ? format : format === null ? null : 'other',
    passwordtime: passwordtime !== null && /^[0-9a-z]{1,16}$/i.test(passwordtime) ? passwordtime : passwordtime === null ? null : 'other',
    // Reserved capability: FreeBSD does not enforce it.
    login_conf_minpasswordlen: minLen === null || !Number.isFinite(minLen) ? null : minLen,
    login_conf_minpasswordlen_enforced: false,
  };
}

/** nsswitch.conf's "passwd:" sources: "files" alone means local accounts only. */
function accountSources(nsswitch: FileResult): string[] | null {
  if (!nsswitch.ok) return null;
  const line = nsswitch.text.split('\n').find((l) => /^\s*passwd\s*:/.test(l));
  if (!line) return null;
  return line
    .replace(/^\s*passwd\s*:/, '')
    .replace(/#.*$/, '')
    .replace(/\[[^\]]*\]/g, ' ')
    .trim()
    .split(/\s+/)
    .filter((s) => /^[a-z_]+$/.test(s));
}

const ENFORCING = new Set(['required', 'requisite', 'binding']);

function evaluatePassword(facts: PasswordFacts, policy: Policy) {
  const evidence: Evidence = {
    source: 'pam_passwdqc',
    min_length_required: policy.password.minLength,
    ...loginClassEvidence(facts.loginConf),
  };
  const sources = accountSources(facts.nsswitch);
  if (sources) evidence.account_sources = sources;
  const chain = resolveChain(facts.files, 'passwd', 'password');
  if (chain.state === 'unreadable') return unknown(chain.error === 'include_loop' ? 'parse_error' : fsFailureReason(chain.error), evidence);
  if (chain.state === 'incomplete') return unknown('check_error', evidence);
  const qc = chain.entries.find(isPasswdqc);
  if (!qc) return fail({ ...evidence, enabled: false, rule: 'passwdqc_not_configured' });
  evidence.enabled = true;
  evidence.control = qc.control;
  const settings = passwdqcSettings(qc.options, facts.files);
  if ('error' in settings) return unknown(settings.error, evidence);
  const minLength = passwdqcMinLength(settings);
  Object.assign(evidence, {
    min: passwdqcMinText(settings),
    enforce: settings.enforce,
    effective_min_length: minLength,
    complexity: passwdqcRequiresClasses(settings),
  });
  if (!ENFORCING.has(qc.control)) return fail({ ...evidence, rule: 'passwdqc_not_enforcing' });
  if (settings.enforce === 'none') return fail({ ...evidence, rule: 'enforce_none' });
  if (minLength === null) return unknown('no_password_class_allowed', evidence);
  if (minLength < policy.password.minLength) return fail({ ...evidence, rule: 'min_length' });
  if (policy.password.requireComplexity && !evidence.complexity) return fail({ ...evidence, rule: 'complexity' });
  return pass({ ...evidence, rule: 'passwdqc' });
}

export const passwordPolicyCheck = defineCheck({
  key: 'PASSWORD_POLICY',
  platform: 'FREEBSD',
  collect: collectPassword,
  evaluate: (facts, policy) => evaluatePassword(facts, policy),
});

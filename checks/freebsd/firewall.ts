// FIREWALL_ENABLED on FreeBSD (research §3.3): an inbound packet filter that is enabled and
// blocks by default. pf (pfctl -s info / -s rules), ipfw (net.inet.ip.fw.enable and its rule
// list, whose last rule is the kernel default) and ipfilter (net.inet.ipf.fr_running) can all be
// active; a packet must get through each, so one filter that certainly blocks is enough. A
// filter that is enabled but passes everything ("pass all", firewall_type="open") is a FAIL.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { ipfwDefault, parseIpfwList } from './ipfw';
import { combine, FAMILIES, type DefaultAction, type Family } from './packetFilter';
import {
  parseInterfaceList,
  parsePfRules,
  parsePfStatus,
  parseSkippedInterfaces,
  pfDefault,
  pfInterfaces,
  PF_NOT_LOADED,
  type PfInterfaces,
} from './pf';
import { parseRcVars, rcEvidence, rcProbe } from './rc';
import { interpretSysctl, jailProbe, jailVerdict, readSysctl } from './sysctl';

const PFCTL = '/sbin/pfctl';
const IPFW = '/sbin/ipfw';
const IFCONFIG = '/sbin/ifconfig';

export interface FirewallFacts {
  jailed: CommandResult;
  /** security.jail.vnet, only inside a jail: a vnet jail has its own filters. */
  vnet?: CommandResult;
  pfInfo: CommandResult;
  pfRules?: CommandResult;
  /** `ifconfig -l`, with pf's rules: which interfaces the rules' `on` names stand for. */
  interfaces?: CommandResult;
  /** `pfctl -s Interfaces -v`, with pf's rules: the interfaces `set skip on` leaves unfiltered (not shown by `-s rules`). */
  pfInterfaces?: CommandResult;
  ipfwEnable: CommandResult;
  ipfw6Enable?: CommandResult;
  ipfwList?: CommandResult;
  ipfRunning: CommandResult;
  rc: CommandResult;
}

async function collectFirewall(ctx: CheckContext): Promise<FirewallFacts> {
  const { host } = ctx;
  const [jailed, pfInfo, ipfwEnable, ipfRunning, rc] = await Promise.all([
    jailProbe(ctx),
    host.run(PFCTL, ['-s', 'info']),
    readSysctl(host, 'net.inet.ip.fw.enable'),
    readSysctl(host, 'net.inet.ipf.fr_running'),
    rcProbe(ctx),
  ]);
  const facts: FirewallFacts = { jailed, pfInfo, ipfwEnable, ipfRunning, rc };
  const pending: Promise<unknown>[] = [];
  const jailedValue = interpretSysctl(jailed);
  if (jailedValue.state === 'value' && jailedValue.value === '1') {
    pending.push(readSysctl(host, 'security.jail.vnet').then((r) => (facts.vnet = r)));
  }
  if (!pfInfo.error && pfInfo.exitCode === 0 && parsePfStatus(pfInfo.stdout) === 'enabled') {
    pending.push(host.run(PFCTL, ['-s', 'rules']).then((r) => (facts.pfRules = r)));
    pending.push(host.run(IFCONFIG, ['-l']).then((r) => (facts.interfaces = r)));
    pending.push(host.run(PFCTL, ['-s', 'Interfaces', '-v']).then((r) => (facts.pfInterfaces = r)));
  }
  const ipfw = interpretSysctl(ipfwEnable);
  if (ipfw.state === 'value' && ipfw.value === '1') {
    pending.push(host.run(IPFW, ['list']).then((r) => (facts.ipfwList = r)));
    pending.push(readSysctl(host, 'net.inet6.ip6.fw.enable').then((r) => (facts.ipfw6Enable = r)));
  }
  await Promise.all(pending);
  return facts;
}

/** One filter's contribution: its default per family, or why it could not be read. */
interface FilterView {
  state: string;
  defaults: Record<Family, DefaultAction>;
  reason?: CommandFailureReason | 'ipfilter_not_evaluated';
}

const both = (action: DefaultAction): Record<Family, DefaultAction> => ({ inet: action, inet6: action });

function pfView(facts: FirewallFacts, evidence: Evidence): FilterView {
  const info = facts.pfInfo;
  if (info.error || info.exitCode !== 0) {
    if (!info.error && PF_NOT_LOADED.test(info.stderr)) return { state: 'not_loaded', defaults: both('pass') };
    const reason =
      !info.error && /Permission denied|Operation not permitted/.test(info.stderr) ? 'permission_denied' : commandFailureReason(info);
    return { state: 'unreadable', defaults: both('undetermined'), reason };
  }
  const status = parsePfStatus(info.stdout);
  if (status === null) return { state: 'unreadable', defaults: both('undetermined'), reason: 'parse_error' };
  if (status !== 'enabled') return { state: status, defaults: both('pass') };
  const rules = facts.pfRules;
  if (!rules || rules.error || rules.exitCode !== 0) {
    return { state: 'enabled', defaults: both('undetermined'), reason: rules ? commandFailureReason(rules) : 'check_error' };
  }
  const ruleset = parsePfRules(rules.stdout);
  evidence.pf_rules = ruleset.rules.length;
  evidence.pf_anchors = ruleset.anchors;
  const skipped =
    facts.pfInterfaces && !facts.pfInterfaces.error && facts.pfInterfaces.exitCode === 0
      ? parseSkippedInterfaces(facts.pfInterfaces.stdout)
      : null;
  const interfaces = interfaceView(facts.interfaces, skipped);
  evidence.interfaces_external = interfaces ? interfaces.external.length : null;
  evidence.interfaces_skipped = interfaces && skipped ? interfaces.skipped.length : null;
  return { state: 'enabled', defaults: { inet: pfDefault(ruleset, 'inet', interfaces), inet6: pfDefault(ruleset, 'inet6', interfaces) } };
}

/** The interface list, or undefined when ifconfig failed (rules bound to interfaces then stay "may"). */
function interfaceView(result: CommandResult | undefined, skipped: Set<string> | null): PfInterfaces | undefined {
  if (!result || result.error || result.exitCode !== 0) return undefined;
  const list = parseInterfaceList(result.stdout);
  return list ? pfInterfaces(list, skipped ?? undefined) : undefined;
}

function ipfwView(facts: FirewallFacts, evidence: Evidence): FilterView {
  const enable = interpretSysctl(facts.ipfwEnable);
  if (enable.state === 'absent') return { state: 'not_loaded', defaults: both('pass') };
  if (enable.state === 'error') return { state: 'unreadable', defaults: both('undetermined'), reason: enable.reason };
  if (enable.value === '0') return { state: 'disabled', defaults: both('pass') };
  if (enable.value !== '1') return { state: 'unreadable', defaults: both('undetermined'), reason: 'parse_error' };
  const list = facts.ipfwList;
  if (!list || list.error || list.exitCode !== 0) {
    const reason =
      list && !list.error && /Operation not permitted|Permission denied/.test(list.stderr)
        ? 'permission_denied'
        : list
          ? commandFailureReason(list)
          : 'check_error';
    return { state: 'enabled', defaults: both('undetermined'), reason };
  }
  const ruleset = parseIpfwList(list.stdout);
  if (!ruleset) return { state: 'enabled', defaults: both('undetermined'), reason: 'parse_error' };
  evidence.ipfw_rules = ruleset.rules.length;
  const defaults = { inet: ipfwDefault(ruleset, 'inet'), inet6: ipfwDefault(ruleset, 'inet6') };
  // With net.inet6.ip6.fw.enable=0 ipfw does not see IPv6; a kernel without the OID has no IPv6.
  const v6 = facts.ipfw6Enable ? interpretSysctl(facts.ipfw6Enable) : undefined;
  if (v6?.state === 'value' && v6.value === '0') defaults.inet6 = 'pass';
  else if (v6?.state === 'absent') defaults.inet6 = 'block';
  else if (v6?.state !== 'value' || v6.value !== '1') defaults.inet6 = 'undetermined';
  return { state: 'enabled', defaults };
}

function ipfView(facts: FirewallFacts): FilterView {
  const running = interpretSysctl(facts.ipfRunning);
  if (running.state === 'absent') return { state: 'not_loaded', defaults: both('pass') };
  if (running.state === 'error') return { state: 'unreadable', defaults: both('undetermined'), reason: running.reason };
  // ipfilter's ruleset (ipfstat -io) is not evaluated: a running ipfilter may block anything.
  return running.value === '1'
    ? { state: 'running', defaults: both('undetermined'), reason: 'ipfilter_not_evaluated' }
    : { state: 'disabled', defaults: both('pass') };
}

/** rc.conf's firewall_type as a known word, "file" for a rules file path, or "other". */
function firewallType(value: string | undefined): string | null {
  if (value === undefined) return null;
  const v = value.toLowerCase();
  if (['open', 'client', 'simple', 'closed', 'workstation', 'unknown'].includes(v)) return v;
  return v.startsWith('/') ? 'file' : 'other';
}

function evaluateFirewall(facts: FirewallFacts, policy: Policy) {
  const vnet = facts.vnet ? interpretSysctl(facts.vnet) : undefined;
  if (!(vnet?.state === 'value' && vnet.value === '1')) {
    const jail = jailVerdict(facts.jailed, policy, 'pfctl+ipfw');
    if (jail) return jail;
  }
  const evidence: Evidence = { source: 'pfctl+ipfw+sysctl' };
  const pf = pfView(facts, evidence);
  const ipfw = ipfwView(facts, evidence);
  const ipf = ipfView(facts);
  Object.assign(evidence, { pf: pf.state, ipfw: ipfw.state, ipf: ipf.state });
  const defaults = Object.fromEntries(FAMILIES.map((f) => [f, combine([pf.defaults[f], ipfw.defaults[f], ipf.defaults[f]])])) as Record<
    Family,
    DefaultAction
  >;
  if (pf.state === 'enabled') Object.assign(evidence, { pf_default_inet: pf.defaults.inet, pf_default_inet6: pf.defaults.inet6 });
  if (ipfw.state === 'enabled') Object.assign(evidence, { ipfw_default_inet: ipfw.defaults.inet, ipfw_default_inet6: ipfw.defaults.inet6 });
  Object.assign(evidence, { default_inet: defaults.inet, default_inet6: defaults.inet6 });
  const rc = parseRcVars(facts.rc);
  Object.assign(evidence, {
    rc_pf_enable: rcEvidence(rc, 'pf_enable'),
    rc_firewall_enable: rcEvidence(rc, 'firewall_enable'),
    rc_firewall_type: rc.ok ? firewallType(rc.values.firewall_type) : 'unreadable',
    rc_ipfilter_enable: rcEvidence(rc, 'ipfilter_enable'),
  });

  if (defaults.inet === 'block' && defaults.inet6 === 'block') return pass({ ...evidence, rule: 'default_block' });
  if (defaults.inet === 'pass' || defaults.inet6 === 'pass') {
    // A running ipfilter never lets a family certainly pass (its rules are not read), so only pf and ipfw can be the active one here.
    const active = pf.state === 'enabled' || ipfw.state === 'enabled';
    return fail({ ...evidence, rule: active ? 'default_pass' : 'no_firewall_enabled' });
  }
  const reason = [pf, ipfw, ipf].find((v) => v.reason)?.reason ?? 'undetermined_ruleset';
  return unknown(reason, evidence);
}

export const firewallCheck = defineCheck({
  key: 'FIREWALL_ENABLED',
  platform: 'FREEBSD',
  collect: collectFirewall,
  evaluate: (facts, policy) => evaluateFirewall(facts, policy),
});

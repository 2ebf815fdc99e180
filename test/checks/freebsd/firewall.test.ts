// FREEBSD FIREWALL_ENABLED: how each filter's reading (pf, ipfw, ipfilter) and rc.conf's intent
// turn into the verdict and its evidence, for the answers the recorded fixtures do not cover.
// Command outputs are those of the fixtures in test/fixtures/checks/freebsd/FIREWALL_ENABLED
// (sysctl's "unknown oid", pfctl's status line and "/dev/pf" errors, rc.firewall's ipfw listing);
// "ipfw: socket: Operation not permitted" is what ipfw prints without root (quoted in public
// ipfw tutorials).
import { describe, expect, it } from 'vitest';
import { firewallCheck, type FirewallFacts } from '../../../checks/freebsd/firewall';
import { resolvePolicy } from '../../../checks/policy';
import type { CommandResult } from '../../../checks/types';

const NOW = new Date('2026-11-21T12:00:00Z');
const ok = (stdout: string): CommandResult => ({ exitCode: 0, stdout, stderr: '' });
const failed = (stderr: string, exitCode = 1): CommandResult => ({ exitCode, stdout: '', stderr });
const timedOut: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'timeout' };
const noOid = (name: string) => failed(`sysctl: unknown oid '${name}'\n`);
const sysrc = (lines: string[]) => ({ exitCode: 1, stdout: `${lines.join('\n')}\n`, stderr: '' });

const PF_NOT_LOADED = failed('pfctl: /dev/pf: No such file or directory\n');
const PF_ENABLED = ok('Status: Enabled for 0 days 00:26:05           Debug: Urgent\n');
/** rc.firewall's "workstation" listing (fixture pass-ipfw-workstation-pf-disabled), cut to what decides. */
const IPFW_WORKSTATION = ok(
  [
    '00100 allow ip from any to any via lo0',
    '00200 deny ip from any to 127.0.0.0/8',
    '01100 check-state :default',
    '01300 allow tcp from me to any setup keep-state :default',
    '65535 deny ip from any to any',
  ].join('\n'),
);

/** Nothing loaded (the stock install), rc.conf with every filter off. */
const base = (over: Partial<FirewallFacts> = {}): FirewallFacts => ({
  jailed: ok('0\n'),
  pfInfo: PF_NOT_LOADED,
  ipfwEnable: noOid('net.inet.ip.fw.enable'),
  ipfRunning: noOid('net.inet.ipf.fr_running'),
  rc: sysrc(['pf_enable: NO', 'firewall_enable: NO', 'firewall_type: UNKNOWN', 'ipfilter_enable: NO']),
  ...over,
});
const ipfwOn = (over: Partial<FirewallFacts> = {}) =>
  base({ ipfwEnable: ok('1\n'), ipfw6Enable: ok('1\n'), ipfwList: IPFW_WORKSTATION, ...over });
const judge = (facts: FirewallFacts) => firewallCheck.evaluate(facts, resolvePolicy({}), NOW);

describe('pf', () => {
  it('says why pfctl could not be read', () => {
    expect(judge(base({ pfInfo: timedOut }))).toMatchObject({ status: 'UNKNOWN', evidence: { pf: 'unreadable', reason: 'timeout' } });
    expect(judge(base({ pfInfo: failed('pfctl: /dev/pf: Operation not permitted\n') }))).toMatchObject({
      evidence: { pf: 'unreadable', reason: 'permission_denied' },
    });
    expect(judge(base({ pfInfo: failed('pfctl: DIOCGETSTATUS: Device busy\n') }))).toMatchObject({
      evidence: { pf: 'unreadable', reason: 'parse_error' },
    });
    // An error result is not read for its text: a timeout's partial stderr proves nothing.
    expect(judge(base({ pfInfo: { ...timedOut, stderr: 'pfctl: /dev/pf: No such file or directory\n' } }))).toMatchObject({
      evidence: { pf: 'unreadable', reason: 'timeout' },
    });
    expect(judge(base({ pfInfo: { ...timedOut, stderr: 'pfctl: /dev/pf: Permission denied\n' } }))).toMatchObject({
      evidence: { pf: 'unreadable', reason: 'timeout' },
    });
    expect(judge(base({ pfInfo: ok('No ALTQ support in kernel\n') }))).toMatchObject({
      evidence: { pf: 'unreadable', reason: 'parse_error' },
    });
  });

  it('needs the rules of an enabled pf, and says why they are missing', () => {
    // An enabled pf whose rules are missing reports its own defaults as undetermined.
    const undetermined = { pf_default_inet: 'undetermined', pf_default_inet6: 'undetermined' };
    expect(judge(base({ pfInfo: PF_ENABLED }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { pf: 'enabled', reason: 'check_error', ...undetermined },
    });
    expect(judge(base({ pfInfo: PF_ENABLED, pfRules: timedOut }))).toMatchObject({ evidence: { pf: 'enabled', reason: 'timeout' } });
    expect(judge(base({ pfInfo: PF_ENABLED, pfRules: failed('pfctl: DIOCGETRULES: Device busy\n') }))).toMatchObject({
      evidence: { pf: 'enabled', reason: 'parse_error', ...undetermined },
    });
    expect(judge(base({ pfInfo: PF_ENABLED, pfRules: ok('block drop in all\n') })).evidence).not.toHaveProperty('reason');
  });
});

describe('ipfw', () => {
  it('reads net.inet.ip.fw.enable: absent, unreadable, off, on, or not a switch', () => {
    expect(judge(base({ ipfwEnable: timedOut }))).toMatchObject({ status: 'UNKNOWN', evidence: { ipfw: 'unreadable', reason: 'timeout' } });
    expect(judge(base({ ipfwEnable: ok('0\n') }))).toMatchObject({
      status: 'FAIL',
      evidence: { ipfw: 'disabled', rule: 'no_firewall_enabled' },
    });
    expect(judge(base({ ipfwEnable: ok('2\n') }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { ipfw: 'unreadable', reason: 'parse_error' },
    });
    expect(judge(ipfwOn())).toMatchObject({
      status: 'PASS',
      evidence: { ipfw: 'enabled', ipfw_rules: 5, ipfw_default_inet: 'block', ipfw_default_inet6: 'block', rule: 'default_block' },
    });
  });

  it('says why the rule list is missing', () => {
    expect(judge(ipfwOn({ ipfwList: undefined }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { ipfw: 'enabled', reason: 'check_error', ipfw_default_inet: 'undetermined', ipfw_default_inet6: 'undetermined' },
    });
    expect(judge(ipfwOn({ ipfwList: failed('ipfw: socket: Operation not permitted\n', 71) }))).toMatchObject({
      evidence: { reason: 'permission_denied' },
    });
    expect(judge(ipfwOn({ ipfwList: failed('ipfw: socket: Permission denied\n', 71) }))).toMatchObject({
      evidence: { reason: 'permission_denied' },
    });
    expect(judge(ipfwOn({ ipfwList: { ...timedOut, stderr: 'ipfw: socket: Operation not permitted\n' } }))).toMatchObject({
      evidence: { reason: 'timeout' },
    });
    expect(judge(ipfwOn({ ipfwList: failed('ipfw: retrieving config failed: Protocol not available\n', 71) }))).toMatchObject({
      evidence: { reason: 'parse_error' },
    });
    expect(judge(ipfwOn({ ipfwList: ok('ipfw: retrieving config failed: Protocol not available\n') }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { ipfw: 'enabled', reason: 'parse_error', ipfw_default_inet: 'undetermined', ipfw_default_inet6: 'undetermined' },
    });
  });

  it('takes IPv6 from net.inet6.ip6.fw.enable: off lets IPv6 through, absent means no IPv6, unreadable decides nothing', () => {
    expect(judge(ipfwOn({ ipfw6Enable: ok('0\n') }))).toMatchObject({
      status: 'FAIL',
      evidence: { ipfw_default_inet: 'block', ipfw_default_inet6: 'pass', rule: 'default_pass' },
    });
    expect(judge(ipfwOn({ ipfw6Enable: noOid('net.inet6.ip6.fw.enable') }))).toMatchObject({
      status: 'PASS',
      evidence: { ipfw_default_inet6: 'block' },
    });
    for (const ipfw6Enable of [timedOut, ok('2\n'), undefined]) {
      expect(judge(ipfwOn({ ipfw6Enable }))).toMatchObject({ status: 'UNKNOWN', evidence: { ipfw_default_inet6: 'undetermined' } });
    }
  });
});

describe('ipfilter', () => {
  it('is off at 0, and unreadable with the reason', () => {
    expect(judge(base({ ipfRunning: ok('0\n') }))).toMatchObject({
      status: 'FAIL',
      evidence: { ipf: 'disabled', rule: 'no_firewall_enabled' },
    });
    expect(judge(base({ ipfRunning: timedOut }))).toMatchObject({ status: 'UNKNOWN', evidence: { ipf: 'unreadable', reason: 'timeout' } });
  });

  it('leaves the verdict to a filter that certainly blocks', () => {
    expect(judge(ipfwOn({ ipfRunning: ok('1\n') }))).toMatchObject({ status: 'PASS', evidence: { ipf: 'running', rule: 'default_block' } });
  });
});

describe('the verdict', () => {
  it('fails as "default_pass" when an enabled filter lets a family through, "no_firewall_enabled" when none is on', () => {
    expect(judge(base({ pfInfo: PF_ENABLED, pfRules: ok('pass all flags S/SA keep state\n') }))).toMatchObject({
      status: 'FAIL',
      evidence: { pf: 'enabled', rule: 'default_pass' },
    });
    expect(judge(base({ pfInfo: ok('Status: Disabled                              Debug: Urgent\n') }))).toMatchObject({
      status: 'FAIL',
      evidence: { pf: 'disabled', rule: 'no_firewall_enabled' },
    });
  });

  it('fails when either family certainly passes, and passes only when both are blocked', () => {
    const ipv4Open = ok(['00100 allow ip4 from any to any', '65535 deny ip from any to any'].join('\n'));
    expect(judge(ipfwOn({ ipfwList: ipv4Open }))).toMatchObject({
      status: 'FAIL',
      evidence: { default_inet: 'pass', default_inet6: 'block', rule: 'default_pass' },
    });
  });

  it("reports a filter's own defaults only when that filter is enabled", () => {
    const evidence = judge(base()).evidence;
    for (const key of ['pf_default_inet', 'pf_default_inet6', 'ipfw_default_inet', 'ipfw_default_inet6'])
      expect(evidence).not.toHaveProperty(key);
  });

  it('gives the first filter reason it has, else "undetermined_ruleset"', () => {
    expect(judge(base({ pfInfo: timedOut, ipfwEnable: ok('2\n') }))).toMatchObject({ evidence: { reason: 'timeout' } });
    expect(judge(base({ ipfwEnable: ok('2\n'), ipfRunning: timedOut }))).toMatchObject({ evidence: { reason: 'parse_error' } });
  });

  it('reports the rc.conf intent, firewall_type as a known word, a rules file or "other"', () => {
    const type = (value: string | undefined) =>
      judge(base({ rc: sysrc(value === undefined ? ['pf_enable: NO'] : [`firewall_type: ${value}`]) })).evidence.rc_firewall_type;
    for (const known of ['open', 'client', 'simple', 'closed', 'workstation', 'unknown']) expect(type(known)).toBe(known);
    expect(type('UNKNOWN')).toBe('unknown');
    expect(type('/etc/ipfw.rules')).toBe('file');
    expect(type('myrules')).toBe('other');
    expect(type(undefined)).toBeNull();
    expect(judge(base({ rc: timedOut })).evidence).toMatchObject({
      rc_pf_enable: 'unreadable',
      rc_firewall_enable: 'unreadable',
      rc_firewall_type: 'unreadable',
      rc_ipfilter_enable: 'unreadable',
    });
  });

  it('judges a vnet jail by its own filters, any other jail by policy', () => {
    const jailed = ok('1\n');
    expect(judge(ipfwOn({ jailed, vnet: ok('1\n') }))).toMatchObject({ status: 'PASS', evidence: { rule: 'default_block' } });
    expect(judge(ipfwOn({ jailed, vnet: ok('0\n') }))).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'jail' } });
    expect(judge(ipfwOn({ jailed }))).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'jail' } });
    expect(judge(ipfwOn({ jailed, vnet: timedOut }))).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'jail' } });
  });
});

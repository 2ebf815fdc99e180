// The Linux firewall rule readers: which rules belong to which chain, which chains are followed,
// which family a drop covers, and when the front-ends decide. Each case names the mistake it pins.
import { describe, expect, it } from 'vitest';
import { firewall, type FirewallFacts } from '../../../checks/linux/firewall';
import {
  analyzeIptablesInput,
  analyzeNftRuleset,
  chainOutcome,
  iptablesStep,
  nftStep,
  type Step,
} from '../../../checks/linux/firewallRules';
import { createContext } from '../../../checks/engine';
import { resolvePolicy } from '../../../checks/policy';
import { FakeHost, type HostRecording } from '../../support/fakeHost';

type Expr = Record<string, unknown>;
const ACCEPT: Expr = { accept: null };
const DROP: Expr = { drop: null };
const REJECT: Expr = { reject: { type: 'icmpx', expr: 'admin-prohibited' } };
const COUNTER: Expr = { counter: { packets: 0, bytes: 0 } };
const SSH: Expr = { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: 22 } };
const jump = (target: string): Expr => ({ jump: { target } });
const goto = (target: string): Expr => ({ goto: { target } });

interface ChainSpec {
  family?: string;
  table?: string;
  name: string;
  hook?: string;
  type?: string;
  policy?: string;
  rules?: Expr[][];
}

/** An `nft -j list ruleset` document with the given chains and their rules, in order. */
function ruleset(...chains: ChainSpec[]): string {
  const items: unknown[] = [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }];
  for (const c of chains) {
    const family = c.family ?? 'inet';
    const table = c.table ?? 'filter';
    const chain: Record<string, unknown> = { family, table, name: c.name, handle: 1 };
    if (c.hook) Object.assign(chain, { type: c.type ?? 'filter', hook: c.hook, prio: 0, policy: c.policy ?? 'accept' });
    items.push({ chain });
  }
  for (const c of chains) {
    for (const expr of c.rules ?? [])
      items.push({ rule: { family: c.family ?? 'inet', table: c.table ?? 'filter', chain: c.name, handle: 2, expr } });
  }
  return JSON.stringify({ nftables: items });
}

const filtering = (json: string) => {
  const parsed = analyzeNftRuleset(json);
  if (!parsed.ok) throw new Error('ruleset did not parse');
  return parsed.filtering;
};

describe('nftables: rules bind to their own chain', () => {
  it('an accept-all input chain with a drop in the forward chain does not filter inbound', () => {
    const json = ruleset({ name: 'input', hook: 'input', rules: [[ACCEPT]] }, { name: 'forward', hook: 'forward', rules: [[DROP]] });
    expect(filtering(json)).toEqual({ ipv4: false, ipv6: false, inputChains: 1, inputPolicy: 'accept', inputRules: 1 });
  });

  it('a drop in a same-named chain of another table does not count for this one', () => {
    const json = ruleset({ table: 'a', name: 'input', hook: 'input' }, { table: 'b', name: 'input', rules: [[DROP]] });
    expect(filtering(json)).toMatchObject({ ipv4: false, ipv6: false });
  });

  it('a drop in a same-named chain of another family does not count for this one', () => {
    const json = ruleset({ family: 'ip', name: 'input', hook: 'input' }, { family: 'ip6', name: 'input', rules: [[DROP]] });
    expect(filtering(json)).toMatchObject({ ipv4: false, ipv6: false, inputChains: 1 });
  });

  it("a jump is resolved in the chain's own table only", () => {
    const json = ruleset(
      { table: 'a', name: 'input', hook: 'input', rules: [[jump('refuse')]] },
      { table: 'b', name: 'refuse', rules: [[DROP]] },
    );
    expect(filtering(json)).toMatchObject({ ipv4: false, ipv6: false });
  });

  it("a jump is resolved in the chain's own family only", () => {
    const json = ruleset(
      { family: 'ip', name: 'input', hook: 'input', rules: [[jump('refuse')]] },
      { family: 'ip6', name: 'refuse', rules: [[DROP]] },
    );
    expect(filtering(json)).toMatchObject({ ipv4: false, ipv6: false });
  });

  it('only filter chains on the input hook of ip, ip6 and inet count', () => {
    expect(filtering(ruleset({ name: 'c', hook: 'input', type: 'nat', policy: 'drop' }))).toMatchObject({
      ipv4: false,
      inputChains: 0,
      inputPolicy: null,
    });
    expect(filtering(ruleset({ family: 'netdev', name: 'c', hook: 'input', policy: 'drop' }))).toMatchObject({
      ipv4: false,
      inputChains: 0,
    });
    expect(filtering(ruleset({ family: 'arp', name: 'c', hook: 'input', policy: 'drop' }))).toMatchObject({ ipv4: false, inputChains: 0 });
    expect(filtering(ruleset({ name: 'c', hook: 'output', policy: 'drop' }))).toMatchObject({ ipv4: false, inputChains: 0 });
  });

  it('a chain without a type is a filter chain', () => {
    const json = JSON.stringify({ nftables: [{ chain: { family: 'inet', table: 't', name: 'c', hook: 'input', policy: 'drop' } }] });
    expect(filtering(json)).toEqual({ ipv4: true, ipv6: true, inputChains: 1, inputPolicy: 'drop', inputRules: 0 });
  });
});

describe('nftables: families', () => {
  it('an IPv6-only drop is not IPv4 filtering', () => {
    expect(filtering(ruleset({ family: 'ip6', name: 'input', hook: 'input', policy: 'drop' }))).toEqual({
      ipv4: false,
      ipv6: true,
      inputChains: 1,
      inputPolicy: 'drop',
      inputRules: 0,
    });
  });

  it('an IPv4-only drop is not IPv6 filtering', () => {
    expect(filtering(ruleset({ family: 'ip', name: 'input', hook: 'input', rules: [[REJECT]] }))).toEqual({
      ipv4: true,
      ipv6: false,
      inputChains: 1,
      inputPolicy: 'accept',
      inputRules: 1,
    });
  });

  it('an inet drop covers both', () => {
    expect(filtering(ruleset({ name: 'input', hook: 'input', rules: [[COUNTER, DROP]] }))).toMatchObject({ ipv4: true, ipv6: true });
  });

  it('one filtering base chain among several is enough: an accept ends only its own chain', () => {
    const json = ruleset(
      { table: 'a', name: 'input', hook: 'input', rules: [[ACCEPT]] },
      { table: 'b', name: 'input', hook: 'input', policy: 'drop' },
    );
    expect(filtering(json)).toEqual({ ipv4: true, ipv6: true, inputChains: 2, inputPolicy: 'drop', inputRules: 1 });
  });
});

describe('nftables: rule order and conditions', () => {
  it('an unconditional accept before the drop accepts everything', () => {
    expect(filtering(ruleset({ name: 'input', hook: 'input', policy: 'drop', rules: [[COUNTER, ACCEPT], [DROP]] }))).toMatchObject({
      ipv4: false,
      ipv6: false,
      inputPolicy: 'drop',
    });
  });

  it('conditional accepts before an unconditional drop are a firewall', () => {
    expect(filtering(ruleset({ name: 'input', hook: 'input', rules: [[SSH, ACCEPT], [DROP]] }))).toMatchObject({ ipv4: true, ipv6: true });
  });

  it('a conditional drop alone does not filter', () => {
    expect(filtering(ruleset({ name: 'input', hook: 'input', rules: [[SSH, DROP]] }))).toMatchObject({ ipv4: false });
  });

  it('log and notrack restrict nothing; limit does', () => {
    expect(nftStep([{ log: { prefix: 'x' } }, { notrack: null }, DROP])).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(nftStep([COUNTER, ACCEPT])).toEqual({ kind: 'verdict', verdict: 'accept' });
    expect(nftStep([{ limit: { rate: 5 } }, DROP])).toEqual({ kind: 'other' });
    expect(nftStep([])).toEqual({ kind: 'other' });
    expect(nftStep([COUNTER])).toEqual({ kind: 'other' });
    expect(nftStep([{ return: null }])).toEqual({ kind: 'return' });
    expect(nftStep([COUNTER, jump('x')])).toEqual({ kind: 'jump', target: 'x' });
    expect(nftStep([goto('y')])).toEqual({ kind: 'goto', target: 'y' });
    expect(nftStep([SSH, jump('x')])).toEqual({ kind: 'other' });
    expect(nftStep([{ jump: {} }])).toEqual({ kind: 'other' });
  });
});

describe('nftables: jumps and gotos are followed', () => {
  it('a drop reached through an unconditional jump filters (NixOS-style refuse chain)', () => {
    const json = ruleset(
      {
        name: 'input',
        hook: 'input',
        rules: [
          [SSH, ACCEPT],
          [COUNTER, jump('fw')],
        ],
      },
      { name: 'fw', rules: [[SSH, ACCEPT], [jump('log-refuse')]] },
      { name: 'log-refuse', rules: [[{ log: { prefix: 'refused' } }, jump('refuse')]] },
      { name: 'refuse', rules: [[REJECT]] },
    );
    expect(filtering(json)).toMatchObject({ ipv4: true, ipv6: true, inputPolicy: 'accept' });
  });

  it('a jumped-to chain that accepts everything accepts for the caller', () => {
    const json = ruleset(
      { name: 'input', hook: 'input', policy: 'drop', rules: [[jump('allow')], [DROP]] },
      { name: 'allow', rules: [[ACCEPT]] },
    );
    expect(filtering(json)).toMatchObject({ ipv4: false, ipv6: false });
  });

  it('a jump that falls through continues after the jump', () => {
    const json = ruleset({ name: 'input', hook: 'input', rules: [[jump('empty')], [DROP]] }, { name: 'empty', rules: [[SSH, ACCEPT]] });
    expect(filtering(json)).toMatchObject({ ipv4: true });
  });

  it('a return ends the called chain: its later drop is not reached', () => {
    const json = ruleset({ name: 'input', hook: 'input', rules: [[jump('c')]] }, { name: 'c', rules: [[{ return: null }], [DROP]] });
    expect(filtering(json)).toMatchObject({ ipv4: false });
  });

  it('a goto that falls through ends the calling chain too: the policy decides', () => {
    const fallsThrough = ruleset({ name: 'input', hook: 'input', rules: [[goto('c')], [DROP]] }, { name: 'c', rules: [] });
    expect(filtering(fallsThrough)).toMatchObject({ ipv4: false });
    const withPolicy = ruleset(
      { name: 'input', hook: 'input', policy: 'drop', rules: [[goto('c')], [ACCEPT]] },
      { name: 'c', rules: [[SSH, ACCEPT]] },
    );
    expect(filtering(withPolicy)).toMatchObject({ ipv4: true });
    const drops = ruleset({ name: 'input', hook: 'input', rules: [[goto('c')]] }, { name: 'c', rules: [[DROP]] });
    expect(filtering(drops)).toMatchObject({ ipv4: true });
  });

  it('a conditional jump to a dropping chain does not filter everything', () => {
    const json = ruleset({ name: 'input', hook: 'input', rules: [[SSH, jump('refuse')]] }, { name: 'refuse', rules: [[DROP]] });
    expect(filtering(json)).toMatchObject({ ipv4: false });
  });

  it('a jump to a chain that does not exist, or a loop, proves nothing', () => {
    expect(filtering(ruleset({ name: 'input', hook: 'input', rules: [[jump('missing')]] }))).toMatchObject({ ipv4: false });
    const loop = ruleset(
      { name: 'input', hook: 'input', rules: [[jump('a')]] },
      { name: 'a', rules: [[jump('b')]] },
      { name: 'b', rules: [[jump('a')]] },
    );
    expect(filtering(loop)).toMatchObject({ ipv4: false });
  });
});

describe('chainOutcome', () => {
  const chains = (entries: Record<string, Step[]>) => new Map(Object.entries(entries));
  it('follows exactly as deep as the limit allows', () => {
    const deep: Record<string, Step[]> = {};
    for (let i = 0; i < 17; i++) deep[`c${i}`] = [{ kind: 'jump', target: `c${i + 1}` }];
    deep.c17 = [{ kind: 'verdict', verdict: 'drop' }];
    expect(chainOutcome(chains(deep), 'c1')).toBe('drop');
    expect(chainOutcome(chains(deep), 'c0')).toBe('continue');
  });
  it('skips steps that decide nothing', () => {
    expect(chainOutcome(chains({ a: [{ kind: 'other' }, { kind: 'verdict', verdict: 'accept' }] }), 'a')).toBe('accept');
    expect(chainOutcome(chains({ a: [] }), 'a')).toBe('continue');
  });
});

describe('nftables: malformed input', () => {
  it('is a parse failure, not an empty firewall', () => {
    expect(analyzeNftRuleset('not json')).toEqual({ ok: false });
    expect(analyzeNftRuleset('{"other": []}')).toEqual({ ok: false });
    expect(analyzeNftRuleset('null')).toEqual({ ok: false });
  });
  it('a rule without expressions decides nothing', () => {
    const json = JSON.stringify({
      nftables: [
        { chain: { family: 'inet', table: 't', name: 'i', type: 'filter', hook: 'input', policy: 'drop' } },
        { rule: { family: 'inet', table: 't', chain: 'i' } },
      ],
    });
    expect(filtering(json)).toMatchObject({ ipv4: true });
  });
});

describe('iptables -S', () => {
  it('reads policies and unconditional terminal rules of INPUT', () => {
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-A INPUT -p tcp -m tcp --dport 22 -j DROP\n')).toEqual({
      ok: true,
      policy: 'ACCEPT',
      filters: false,
      rules: 1,
    });
    expect(
      analyzeIptablesInput('-P INPUT ACCEPT\n-A INPUT -i lo -j ACCEPT\n-A INPUT -j REJECT --reject-with icmp-host-prohibited\n'),
    ).toEqual({ ok: true, policy: 'ACCEPT', filters: true, rules: 2 });
    expect(analyzeIptablesInput('-P INPUT DROP\n-A INPUT -j ACCEPT\n')).toMatchObject({ filters: false });
    expect(analyzeIptablesInput('-P INPUT DROP\n')).toEqual({ ok: true, policy: 'DROP', filters: true, rules: 0 });
    expect(analyzeIptablesInput('iptables: No chain/target/match by that name.\n')).toEqual({ ok: false });
  });

  it('a drop in FORWARD does not filter INPUT', () => {
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-P FORWARD DROP\n-A FORWARD -j DROP\n')).toEqual({
      ok: true,
      policy: 'ACCEPT',
      filters: false,
      rules: 0,
    });
  });

  it('follows jumps into user chains (NixOS nixos-fw)', () => {
    const text = [
      '-P INPUT ACCEPT',
      '-N nixos-fw',
      '-N nixos-fw-accept',
      '-N nixos-fw-log-refuse',
      '-N nixos-fw-refuse',
      '-A INPUT -j nixos-fw',
      '-A nixos-fw -i lo -j nixos-fw-accept',
      '-A nixos-fw -j nixos-fw-log-refuse',
      '-A nixos-fw-accept -j ACCEPT',
      '-A nixos-fw-log-refuse -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j LOG --log-prefix "refused connection: " --log-level 6',
      '-A nixos-fw-log-refuse -j nixos-fw-refuse',
      '-A nixos-fw-refuse -j DROP',
    ].join('\n');
    expect(analyzeIptablesInput(text)).toEqual({ ok: true, policy: 'ACCEPT', filters: true, rules: 1 });
    // Without the final refuse the same chains accept everything the policy does.
    expect(analyzeIptablesInput(text.replace('-A nixos-fw -j nixos-fw-log-refuse\n', ''))).toMatchObject({ filters: false });
  });

  it('a goto hands the decision over; RETURN falls back to the policy', () => {
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-N z\n-A INPUT -g z\n-A INPUT -j DROP\n')).toMatchObject({ filters: false });
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-N z\n-A INPUT -g z\n-A z -j REJECT\n')).toMatchObject({ filters: true });
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-N z\n-A INPUT -j z\n-A z -j RETURN\n-A z -j DROP\n')).toMatchObject({ filters: false });
    expect(analyzeIptablesInput('-P INPUT DROP\n-N z\n-A INPUT -j z\n-A z -j RETURN\n')).toMatchObject({ filters: true });
  });

  it('a jump to a name that is not a chain is a target, not a chain', () => {
    expect(iptablesStep('-j DROP', new Set(['INPUT']))).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(iptablesStep('-j REJECT --reject-with icmp-port-unreachable', new Set())).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(iptablesStep('-j ACCEPT', new Set())).toEqual({ kind: 'verdict', verdict: 'accept' });
    expect(iptablesStep('-j RETURN', new Set())).toEqual({ kind: 'return' });
    expect(iptablesStep('-j LOG --log-prefix "x"', new Set())).toEqual({ kind: 'other' });
    expect(iptablesStep('-j NFQUEUE --queue-num 0', new Set())).toEqual({ kind: 'verdict', verdict: 'accept' });
    expect(iptablesStep('-j QUEUE', new Set())).toEqual({ kind: 'verdict', verdict: 'accept' });
    expect(iptablesStep('-j fw', new Set(['fw']))).toEqual({ kind: 'jump', target: 'fw' });
    expect(iptablesStep('-g fw', new Set(['fw']))).toEqual({ kind: 'goto', target: 'fw' });
    expect(iptablesStep('-p tcp', new Set())).toEqual({ kind: 'other' });
  });

  it('a comment restricts nothing; any other match does', () => {
    expect(iptablesStep('-m comment --comment "ufw: drop all" -j DROP', new Set())).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(iptablesStep('-m comment --comment nixos -j DROP', new Set())).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(iptablesStep('-m comment --comment "a \\"quoted\\" one" -j DROP', new Set())).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(iptablesStep('-i eth0 -m comment --comment "x" -j DROP', new Set())).toEqual({ kind: 'other' });
    expect(iptablesStep('! -i lo -j DROP', new Set())).toEqual({ kind: 'other' });
    expect(iptablesStep('-m comment --comment a -m comment --comment "b c" -j DROP', new Set())).toEqual({
      kind: 'verdict',
      verdict: 'drop',
    });
  });

  it("counts only INPUT's rules", () => {
    expect(analyzeIptablesInput('-P INPUT DROP\n-N x\n-A x -j ACCEPT\n-A INPUT -i lo -j ACCEPT\n')).toEqual({
      ok: true,
      policy: 'DROP',
      filters: true,
      rules: 1,
    });
  });
});

describe('FIREWALL_ENABLED verdict', () => {
  const policy = resolvePolicy({});
  const base = (over: Partial<FirewallFacts>): FirewallFacts => ({
    container: { signals: [], machineRoot: true, detected: false },
    nft: { state: 'ok', value: { ipv4: false, ipv6: false, inputChains: 0, inputPolicy: null, inputRules: 0 } },
    legacy: { ipv4: 'not_loaded', ipv6: 'not_loaded' },
    iptablesNft: { ipv4: 'not_read', ipv6: 'not_read' },
    ipv6Enabled: true,
    ufw: 'unavailable',
    firewalld: { state: 'unavailable' },
    ...over,
  });
  const judge = (facts: FirewallFacts) => firewall.evaluate(facts, policy, new Date());

  it('an IPv6-only drop with IPv6 in use is not inbound filtering', () => {
    const v = judge(base({ nft: { state: 'ok', value: { ipv4: false, ipv6: true, inputChains: 1, inputPolicy: 'drop', inputRules: 1 } } }));
    expect(v).toMatchObject({
      status: 'FAIL',
      evidence: { source: 'nftables', rule: 'no_inbound_filtering', ipv4_filtered: false, ipv6_filtered: true },
    });
    expect(v.evidence).not.toHaveProperty('legacy_iptables');
  });

  it('IPv4 filtered and IPv6 open fails; IPv6 off passes', () => {
    const v4 = { state: 'ok' as const, value: { ipv4: true, ipv6: false, inputChains: 1, inputPolicy: 'drop' as const, inputRules: 1 } };
    expect(judge(base({ nft: v4 }))).toMatchObject({ status: 'FAIL', evidence: { rule: 'ipv6_unfiltered' } });
    expect(judge(base({ nft: v4, ipv6Enabled: false }))).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'inbound_filtered', ipv6_enabled: false },
    });
  });

  it('legacy iptables filters a family nftables leaves open', () => {
    const v = judge(base({ legacy: { ipv4: { state: 'ok', value: true }, ipv6: { state: 'ok', value: true } } }));
    expect(v).toMatchObject({ status: 'PASS', evidence: { rule: 'inbound_filtered', legacy_iptables: true } });
    const v6only = judge(base({ legacy: { ipv4: 'not_loaded', ipv6: { state: 'ok', value: true } } }));
    expect(v6only).toMatchObject({ status: 'FAIL', evidence: { rule: 'no_inbound_filtering', legacy_iptables: true } });
    const v4only = judge(base({ legacy: { ipv4: { state: 'ok', value: false }, ipv6: 'not_loaded' } }));
    expect(v4only).toMatchObject({ status: 'FAIL', evidence: { legacy_iptables: true, ipv4_filtered: false } });
  });

  it("an unreadable ruleset is UNKNOWN: an active manager's report is evidence, never the verdict (issue 32)", () => {
    const unreadable = { state: 'unavailable' as const, reason: 'permission_denied' as const };
    const ufw = judge(base({ nft: unreadable, ufw: 'active' }));
    expect(ufw).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_unconfirmed', managers: ['ufw'], ruleset_error: 'permission_denied' },
    });
    expect(ufw.evidence).not.toHaveProperty('rule');
    expect(judge(base({ nft: unreadable, ufw: 'inactive' }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied' },
    });
    const firewalld = judge(base({ nft: unreadable, firewalld: { state: 'running', defaultZone: 'public' } }));
    expect(firewalld).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_unconfirmed', managers: ['firewalld'], default_zone: 'public', ruleset_error: 'permission_denied' },
    });
    expect(firewalld.evidence).not.toHaveProperty('rule');
    const noZone = judge(base({ nft: unreadable, firewalld: { state: 'running' } }));
    expect(noZone).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'manager_unconfirmed' } });
    expect(noZone.evidence).not.toHaveProperty('default_zone');
    expect(judge(base({ nft: { state: 'unavailable', reason: 'command_not_found' }, ufw: 'active' }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_unconfirmed', ruleset_error: 'command_not_found' },
    });
    expect(judge(base({ nft: { state: 'unavailable', reason: 'command_not_found' } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'no_firewall_tooling' },
    });
    const legacyDenied = { state: 'unavailable' as const, reason: 'permission_denied' as const };
    expect(judge(base({ legacy: { ipv4: legacyDenied, ipv6: 'not_loaded' }, ufw: 'active' }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_unconfirmed', ruleset_error: 'legacy_iptables_unreadable' },
    });
  });

  it('without nft, iptables-nft decides when it shows filtering, and is not read as the whole ruleset when it does not', () => {
    const noNft = { state: 'unavailable' as const, reason: 'command_not_found' as const };
    const yes = { state: 'ok' as const, value: true };
    const no = { state: 'ok' as const, value: false };
    expect(judge(base({ nft: noNft, iptablesNft: { ipv4: yes, ipv6: yes }, ufw: 'active' }))).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'inbound_filtered', source: 'iptables-nft', iptables_nft: true, ipv4_filtered: true, ipv6_filtered: true },
    });
    expect(judge(base({ nft: noNft, iptablesNft: { ipv4: yes, ipv6: 'not_read' }, ipv6Enabled: false }))).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'inbound_filtered', iptables_nft: true },
    });
    expect(judge(base({ nft: noNft, iptablesNft: { ipv4: yes, ipv6: no } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'nftables_unreadable', iptables_nft: true, ipv4_filtered: true, ipv6_filtered: false },
    });
    expect(judge(base({ nft: noNft, iptablesNft: { ipv4: no, ipv6: no }, ufw: 'active' }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_unconfirmed', iptables_nft: true },
    });
    const denied = { state: 'unavailable' as const, reason: 'permission_denied' as const };
    const unread = judge(base({ nft: noNft, iptablesNft: { ipv4: denied, ipv6: denied } }));
    expect(unread).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_firewall_tooling', source: 'nftables' } });
    expect(unread.evidence).not.toHaveProperty('iptables_nft');
    expect(judge(base({ nft: noNft, iptablesNft: { ipv4: denied, ipv6: no } })).evidence).toMatchObject({
      reason: 'nftables_unreadable',
      iptables_nft: true,
    });
  });

  it('an unreadable legacy table is not read as open', () => {
    const v = judge(base({ legacy: { ipv4: { state: 'unavailable', reason: 'permission_denied' }, ipv6: 'not_loaded' } }));
    expect(v).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'legacy_iptables_unreadable' } });
  });

  it('a readable ruleset outranks an active front-end: mismatch is UNKNOWN, no input rule at all FAIL, agreement PASS', () => {
    // Input rules this reading does not see filtering (a drop behind a verdict map): UNKNOWN.
    const unrecognised = {
      state: 'ok' as const,
      value: { ipv4: false, ipv6: false, inputChains: 1, inputPolicy: 'accept' as const, inputRules: 3 },
    };
    expect(judge(base({ nft: unrecognised, ufw: 'active' }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_ruleset_mismatch', managers: ['ufw'], input_rules: 3 },
    });
    expect(judge(base({ nft: unrecognised, firewalld: { state: 'running', defaultZone: 'public' } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { managers: ['firewalld'] },
    });
    // The kernel holds no input rule: nothing can drop, whatever ufw or firewalld report.
    expect(judge(base({ ufw: 'active' }))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'manager_rules_not_loaded', managers: ['ufw'], input_rules: 0 },
    });
    const emptyChain = {
      state: 'ok' as const,
      value: { ipv4: false, ipv6: false, inputChains: 2, inputPolicy: 'accept' as const, inputRules: 0 },
    };
    expect(judge(base({ nft: emptyChain, firewalld: { state: 'running', defaultZone: 'public' } }))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'manager_rules_not_loaded', managers: ['firewalld'] },
    });
    // A legacy table may hold what the nftables reading cannot weigh: still UNKNOWN.
    expect(judge(base({ ufw: 'active', legacy: { ipv4: { state: 'ok', value: false }, ipv6: 'not_loaded' } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'manager_ruleset_mismatch' },
    });
    expect(judge(base({ firewalld: { state: 'running', defaultZone: 'trusted' } }))).toMatchObject({
      status: 'FAIL',
      evidence: { source: 'firewalld', default_zone: 'trusted', rule: 'zone_accept_all' },
    });
  });
});

describe('FIREWALL_ENABLED collector', () => {
  const policy = resolvePolicy({});
  const collect = (recording: HostRecording) => firewall.collect(createContext(new FakeHost(recording), policy, new Date()));
  const NFT_ARGV = ['/usr/sbin/nft', '-j', 'list', 'ruleset'];
  const emptyRuleset = { argv: NFT_ARGV, stdout: '{"nftables": [{"metainfo": {"version": "1.0.6"}}]}' };

  it('reads a refused nft as permission_denied, an unparsable one as parse_error', async () => {
    const refused = await collect({ commands: [{ argv: NFT_ARGV, exitCode: 1, stderr: 'Error: Operation not permitted' }] });
    expect(refused.nft).toEqual({ state: 'unavailable', reason: 'permission_denied' });
    const garbled = await collect({ commands: [{ argv: NFT_ARGV, stdout: 'table inet filter {' }] });
    expect(garbled.nft).toEqual({ state: 'unavailable', reason: 'parse_error' });
    const failed = await collect({ commands: [{ argv: NFT_ARGV, exitCode: 1, stderr: 'Error: Could not process rule' }] });
    expect(failed.nft).toEqual({ state: 'unavailable', reason: 'parse_error' });
  });

  it('looks at legacy tables only when their filter table is loaded', async () => {
    const none = await collect({
      commands: [emptyRuleset],
      files: { '/proc/net/ip_tables_names': 'nat\n', '/proc/net/ip6_tables_names': '' },
    });
    expect(none.legacy).toEqual({ ipv4: 'not_loaded', ipv6: 'not_loaded' });
    const missing = await collect({ commands: [emptyRuleset] });
    expect(missing.legacy).toEqual({ ipv4: 'not_loaded', ipv6: 'not_loaded' });
    const unreadable = await collect({ commands: [emptyRuleset], files: { '/proc/net/ip_tables_names': { error: 'permission_denied' } } });
    expect(unreadable.legacy.ipv4).toEqual({ state: 'unavailable', reason: 'command_not_found' });
  });

  it('uses a plain iptables only when -V says legacy, and reads -S of the whole filter table', async () => {
    const files = { '/proc/net/ip_tables_names': 'filter\n' };
    const legacy = await collect({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/iptables', '-V'], stdout: 'iptables v1.8.7 (legacy)\n' },
        { argv: ['/usr/sbin/iptables', '-S'], stdout: '-P INPUT DROP\n' },
      ],
      files,
      stats: { '/usr/sbin/iptables': {} },
    });
    expect(legacy.legacy.ipv4).toEqual({ state: 'ok', value: true });
    const old = await collect({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/iptables', '-V'], stdout: 'iptables v1.4.21\n' },
        { argv: ['/usr/sbin/iptables', '-S'], stdout: '-P INPUT ACCEPT\n' },
      ],
      files,
      stats: { '/usr/sbin/iptables': {} },
    });
    expect(old.legacy.ipv4).toEqual({ state: 'ok', value: false });
    const nftVariant = await collect({
      commands: [emptyRuleset, { argv: ['/usr/sbin/iptables', '-V'], stdout: 'iptables v1.8.9 (nf_tables)\n' }],
      files,
    });
    expect(nftVariant.legacy.ipv4).toEqual({ state: 'unavailable', reason: 'command_not_found' });
    const versionFails = await collect({ commands: [emptyRuleset, { argv: ['/usr/sbin/iptables', '-V'], exitCode: 2 }], files });
    expect(versionFails.legacy.ipv4).toEqual({ state: 'unavailable', reason: 'command_not_found' });
    const denied = await collect({
      commands: [
        emptyRuleset,
        {
          argv: ['/usr/sbin/iptables-legacy', '-S'],
          exitCode: 4,
          stderr: "iptables v1.8.9 (legacy): can't initialize iptables table `filter': Permission denied (you must be root)\n",
        },
      ],
      files,
      stats: { '/usr/sbin/iptables-legacy': {} },
    });
    expect(denied.legacy.ipv4).toEqual({ state: 'unavailable', reason: 'permission_denied' });
    const garbage = await collect({
      commands: [emptyRuleset, { argv: ['/usr/sbin/iptables-legacy', '-S'], stdout: 'nothing\n' }],
      files,
      stats: { '/usr/sbin/iptables-legacy': {} },
    });
    expect(garbage.legacy.ipv4).toEqual({ state: 'unavailable', reason: 'parse_error' });
  });

  it('never runs -S of a plain iptables whose -V does not say legacy: it would read nftables as legacy tables', async () => {
    const files = { '/proc/net/ip_tables_names': 'filter\n' };
    const stats = { '/usr/sbin/iptables': {} };
    const run = async (recording: HostRecording) => {
      const host = new FakeHost(recording);
      const facts = await firewall.collect(createContext(host, policy, new Date()));
      return { legacy: facts.legacy.ipv4, ran: host.commandsRun() };
    };
    // docker-library/docker#443 (an Ubuntu host whose dind container on the host network made
    // legacy tables too): `iptables --version` and `iptables -S` of the host's nf_tables variant,
    // first lines as posted [completed: /proc/net/ip_tables_names listing filter, from the thread's
    // "iptables-legacy tables present" warning].
    const nfTables = await run({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/iptables', '-V'], stdout: 'iptables v1.8.7 (nf_tables)\n' },
        {
          argv: ['/usr/sbin/iptables', '-S'],
          stdout: ['-P INPUT ACCEPT', '-P FORWARD DROP', '-P OUTPUT ACCEPT', '-N DOCKER', '-N DOCKER-USER', '-A FORWARD -j DOCKER-USER'],
        },
      ],
      files,
      stats,
    });
    expect(nfTables.legacy).toEqual({ state: 'unavailable', reason: 'command_not_found' });
    expect(nfTables.ran).not.toContainEqual(['/usr/sbin/iptables', '-S']);
    // An iptables that cannot start (Ubuntu Forums, "xtables install", 2008-09-26: a self-built
    // iptables missing its library) [completed: exit status 127, the dynamic loader's].
    const loaderError =
      'iptables: error while loading shared libraries: libxtables.so.0: cannot open shared object file: No such file or directory\n';
    const broken = await run({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/iptables', '-V'], exitCode: 127, stderr: loaderError },
        { argv: ['/usr/sbin/iptables', '-S'], exitCode: 127, stderr: loaderError },
      ],
      files,
      stats,
    });
    expect(broken.legacy).toEqual({ state: 'unavailable', reason: 'command_not_found' });
    expect(broken.ran).not.toContainEqual(['/usr/sbin/iptables', '-S']);
  });

  it('reads nf_tables through iptables-nft only when the nft tool is missing', async () => {
    const run = async (recording: HostRecording) => {
      const host = new FakeHost(recording);
      const facts = await firewall.collect(createContext(host, policy, new Date()));
      return { view: facts.iptablesNft, ran: host.commandsRun() };
    };
    const dedicated = await run({
      commands: [
        { argv: ['/usr/sbin/iptables-nft', '-S'], stdout: '-P INPUT DROP\n-A INPUT -j ufw-before-input\n' },
        { argv: ['/usr/sbin/ip6tables-nft', '-S'], stdout: '-P INPUT ACCEPT\n' },
      ],
      stats: { '/usr/sbin/iptables-nft': {}, '/usr/sbin/ip6tables-nft': {} },
    });
    expect(dedicated.view).toEqual({ ipv4: { state: 'ok', value: true }, ipv6: { state: 'ok', value: false } });
    // docker-library/docker#443's host: `iptables --version` says nf_tables, and its `-S` (first lines as posted).
    const plain = await run({
      commands: [
        { argv: ['/usr/sbin/iptables', '-V'], stdout: 'iptables v1.8.7 (nf_tables)\n' },
        {
          argv: ['/usr/sbin/iptables', '-S'],
          stdout: ['-P INPUT ACCEPT', '-P FORWARD DROP', '-P OUTPUT ACCEPT', '-N DOCKER', '-N DOCKER-USER', '-A FORWARD -j DOCKER-USER'],
        },
        { argv: ['/usr/sbin/ip6tables', '-V'], stdout: 'ip6tables v1.8.7 (legacy)\n' },
      ],
      stats: { '/usr/sbin/iptables': {}, '/usr/sbin/ip6tables': {} },
    });
    expect(plain.view).toEqual({ ipv4: { state: 'ok', value: false }, ipv6: 'not_read' });
    expect(plain.ran).not.toContainEqual(['/usr/sbin/ip6tables', '-S']);
    const withNft = await run({
      commands: [emptyRuleset, { argv: ['/usr/sbin/iptables-nft', '-S'], stdout: '-P INPUT DROP\n' }],
      stats: { '/usr/sbin/iptables-nft': {} },
    });
    expect(withNft.view).toEqual({ ipv4: 'not_read', ipv6: 'not_read' });
    expect(withNft.ran).toEqual([NFT_ARGV, ['/usr/sbin/ufw', 'status'], ['/usr/bin/firewall-cmd', '--state']]);
  });

  it('reads ufw and firewalld states exactly', async () => {
    const on = await collect({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/ufw', 'status'], stdout: 'Status: active\n\nTo Action From\n' },
        { argv: ['/usr/bin/firewall-cmd', '--state'], stdout: 'running\n' },
        { argv: ['/usr/bin/firewall-cmd', '--get-default-zone'], stdout: 'public\n' },
      ],
    });
    expect(on).toMatchObject({ ufw: 'active', firewalld: { state: 'running', defaultZone: 'public' } });
    const off = await collect({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/ufw', 'status'], stdout: 'Status: inactive\n' },
        // firewalld's src/firewall-cmd.in: print_and_exit("not running", errors.NOT_RUNNING), and
        // command.py prints every status above 1 on stderr.
        { argv: ['/usr/bin/firewall-cmd', '--state'], stderr: 'not running\n', exitCode: 252 },
      ],
    });
    expect(off).toMatchObject({ ufw: 'inactive', firewalld: { state: 'not_running' } });
    const odd = await collect({
      commands: [
        emptyRuleset,
        { argv: ['/usr/sbin/ufw', 'status'], stdout: 'ERROR: You need to be root to run this script\n', exitCode: 1 },
        { argv: ['/usr/bin/firewall-cmd', '--state'], stdout: 'running\n' },
        { argv: ['/usr/bin/firewall-cmd', '--get-default-zone'], stdout: 'bad zone; name\n' },
      ],
    });
    expect(odd).toMatchObject({ ufw: 'unavailable', firewalld: { state: 'running' } });
    expect(odd.firewalld.defaultZone).toBeUndefined();
    // A daemon that failed to apply its configuration: errors.RUNNING_BUT_FAILED (251) [completed:
    // the message, "failed"]. It is neither a running firewall nor a stopped one.
    const failed = await collect({
      commands: [emptyRuleset, { argv: ['/usr/bin/firewall-cmd', '--state'], stderr: 'failed\n', exitCode: 251 }],
    });
    expect(failed.firewalld).toEqual({ state: 'unavailable' });
  });

  it('counts IPv6 in use only on an interface besides loopback', async () => {
    const loOnly = await collect({
      commands: [emptyRuleset],
      files: { '/proc/net/if_inet6': '00000000000000000000000000000001 01 80 10 80       lo\n\n' },
    });
    expect(loOnly.ipv6Enabled).toBe(false);
    const eth = await collect({
      commands: [emptyRuleset],
      files: { '/proc/net/if_inet6': 'fe800000000000000000000000000001 02 40 20 80     eth0\n' },
    });
    expect(eth.ipv6Enabled).toBe(true);
    const none = await collect({ commands: [emptyRuleset] });
    expect(none.ipv6Enabled).toBe(false);
  });
});

// The pf rule reader, word by word. Lines are written as `pfctl -s rules` prints a rule
// (print_rule() and print_fromto() in sbin/pfctl/pfctl_parser.c: action, block policy, direction,
// log, quick, on, family, proto, "all" or from/to, then the options); the words are pf.conf(5)'s.
// Whole recorded rulesets are the FIREWALL_ENABLED fixtures.
import { describe, expect, it } from 'vitest';
import { parsePfRules, pfDefault, pfInterfaces } from '../../../checks/freebsd/pf';

const rules = (...lines: string[]) => parsePfRules(lines.join('\n'));
/** The default for IPv4 when `rule` follows a block-all. */
const afterBlock = (rule: string) => pfDefault(rules('block drop in all', rule), 'inet');

describe('pf options', () => {
  it.each([
    ['pass in proto tcp all'],
    ['pass in from 192.0.2.0/24 to any'],
    ['pass in all user = 1000'],
    ['pass in all group = 1000'],
    ['pass in all tagged ssh'],
    ['pass in all probability 50%'],
    ['pass in all received-on em0'],
    ['pass in all icmp-type echoreq'],
    ['pass in all icmp6-type echoreq'],
    ['pass in all fragment'],
    ['pass in all tos 0x10'],
    ['pass in all prio 3'],
  ])('%s is narrow: the block-all stays the default', (rule) => {
    expect(afterBlock(rule)).toBe('block');
  });

  it.each([
    ['pass in all flags S/SA keep state'],
    ['pass in all flags S/SA modulate state'],
    ['pass in all flags S/SA synproxy state'],
    ['pass in all no state'],
    ['pass in all allow-opts'],
    ['pass in all scrub (no-df max-mss 1440)'],
    ['pass in all label "inbound"'],
    ['pass in all ridentifier 12'],
    ['pass in all queue std'],
    ['pass in all tag inbound'],
    ['pass in all max-mss 1440'],
    ['pass in all dnpipe 1'],
    ['pass in all dnqueue 1'],
    ['pass in all rtable 1'],
    ['pass in all set prio 3'],
    ['pass in all flags S/SA keep state (if-bound)'],
    ['pass in all flags S/SA keep state (max 100, source-track rule)'],
  ])('%s lets every packet in: it overrides the block-all', (rule) => {
    expect(afterBlock(rule)).toBe('pass');
  });

  it('reads an option it does not know as may-match', () => {
    expect(afterBlock('pass in all max-pkt-rate 100/10')).toBe('undetermined');
  });
});

describe('pf rule heads', () => {
  it('reads every block policy, with or without its ICMP code', () => {
    for (const policy of ['drop', 'return', 'return-rst', 'return-icmp', 'return-icmp6', 'return-icmp(port-unr)']) {
      expect(pfDefault(rules(`block ${policy} in all`), 'inet')).toBe('block');
    }
  });

  // pfctl prints a policy's arguments inside its parentheses with spaces (pfctl_parser.c print_rule:
  // " return-rst(ttl %d)", "(%s, %s)" for both ICMP families). Recorded by mischief/luapf
  // pf_test_rules.lua, which compares its rendering with `pfctl -s rules` line by line (OpenBSD's
  // pfctl; FreeBSD's print_rule formats these policies the same way).
  it.each([['block return-rst(ttl 64) in on pair4 proto tcp all'], ['block return-icmp(port-unr, port-unr) in on pair4 all']])(
    'reads a block policy with spaces in its arguments: %s',
    (line) => {
      const [rule] = parsePfRules(line).rules;
      expect(rule).toMatchObject({ action: 'block', on: { name: 'pair4', negated: false } });
      expect(rule?.body.inet).toBe(line.includes('proto tcp') ? 'no' : 'yes');
    },
  );

  it('takes a rule without a direction for both directions', () => {
    expect(pfDefault(rules('block drop all'), 'inet')).toBe('block');
    expect(pfDefault(rules('block drop in all', 'pass all flags S/SA keep state'), 'inet')).toBe('pass');
  });

  it('skips the log options, and still sees quick after them', () => {
    expect(pfDefault(rules('pass in log quick all', 'block drop in all'), 'inet')).toBe('pass');
    expect(pfDefault(rules('pass in log (all) quick all', 'block drop in all'), 'inet')).toBe('pass');
  });

  it('blocks on every external interface or is undetermined where one is', () => {
    const twoNics = pfInterfaces(['em0', 'em1', 'lo0']);
    expect(pfDefault(rules('block drop in all', 'pass in on em1 all max-pkt-rate 100/10'), 'inet', twoNics)).toBe('undetermined');
    // A rule on no interface meets the packet on each one with its body's own "may".
    expect(pfDefault(rules('block drop in all', 'pass in all max-pkt-rate 100/10'), 'inet', twoNics)).toBe('undetermined');
  });

  it('finds the members of a clone group by the whole unit number', () => {
    expect(pfInterfaces(['em0', 'lo0', 'lo10']).members('lo')).toEqual(['lo0', 'lo10']);
  });
});

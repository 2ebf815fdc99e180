// The ipfw rule reader, word by word. Every line is written as `ipfw list` prints a rule: the
// action words of print_action_instruction(), the modifiers log/altq/tag in show_static_rule()'s
// order, then "<proto> from <src> to <dst>" and the options of print_instruction(), all in
// sbin/ipfw/ipfw2.c (freebsd/freebsd-src). Whole recorded listings are the FIREWALL_ENABLED fixtures.
import { describe, expect, it } from 'vitest';
import { ipfwDefault, parseIpfwList, parseIpfwRule } from '../../../checks/freebsd/ipfw';
import type { Family } from '../../../checks/freebsd/packetFilter';

const DENY_ALL = '65535 deny ip from any to any';
const ALLOW_ALL = '65535 allow ip from any to any';
/** The default for `family` when `rule` stands before the kernel's last rule. */
const before = (rule: string, last: string, family: Family = 'inet') => ipfwDefault(parseIpfwList(`${rule}\n${last}\n`)!, family);

describe('ipfw actions, as ipfw prints them', () => {
  it.each([
    ['00100 allow ip from any to any'],
    ['00100 fwd 10.0.0.1,3128 ip from any to any'],
    ['00100 nat 123 ip from any to any'],
    ['00100 pipe 1 ip from any to any'],
    ['00100 queue 1 ip from any to any'],
    ['00100 netgraph 41 ip from any to any'],
  ])('%s lets the packet through', (rule) => {
    expect(before(rule, DENY_ALL)).toBe('pass');
  });

  it.each([
    ['00100 deny ip from any to any'],
    ['00100 reject ip from any to any'],
    ['00100 reset ip from any to any'],
    ['00100 reset6 ip from any to any'],
    ['00100 unreach port ip from any to any'],
    ['00100 unreach6 admin ip from any to any'],
    ['00100 abort ip from any to any'],
    ['00100 abort6 ip from any to any'],
  ])('%s stops the packet', (rule) => {
    expect(before(rule, ALLOW_ALL)).toBe('block');
  });

  it.each([
    ['00050 count ip from any to any'],
    ['00050 check-state :default'],
    ['00050 setfib 1 ip from any to any'],
    ['00050 setdscp af11 ip from any to any'],
    ['00050 setmark 0x1 ip from any to any'],
    ['00050 divert 8668 ip from any to any'],
    ['00050 tee 8668 ip from any to any'],
    ['00050 ngtee 41 ip from any to any'],
  ])('%s lets the next rule decide', (rule) => {
    expect(before(rule, DENY_ALL)).toBe('block');
    expect(before(rule, ALLOW_ALL)).toBe('pass');
  });

  it.each([
    ['00100 skipto 1000 ip from any to any'],
    ['00100 call 1000 ip from any to any'],
    ['00100 return ip from any to any'],
    ['00100 eaction ext ip from any to any'],
    ['00100 nat64lsn nat1 ip from any to any'],
    ['00100 nat64stl nat1 ip from any to any'],
    ['00100 nat64clat clat1 ip from any to any'],
    ['00100 nptv6 npt1 ip from any to any'],
    ['00100 reass ip from any to any'],
  ])('%s hides the outcome of the packets it catches, and only of those', (rule) => {
    expect(before(rule, DENY_ALL)).toBe('undetermined');
    // The same action on a narrow body (the argument read as such, not as the protocol) is passed over.
    expect(before(rule.replace('to any', 'to any out'), DENY_ALL)).toBe('block');
    expect(before(rule.replace('from any', 'from 192.0.2.0/24'), DENY_ALL)).toBe('block');
    expect(before(rule.replace('to any', 'to any via lo0'), DENY_ALL, 'inet6')).toBe('block');
  });

  it('reads aliases ipfw never prints ("pass", "drop") as unknown actions, not as allow/deny', () => {
    expect(before('00100 pass ip from any to any', DENY_ALL)).toBe('undetermined');
    expect(before('00100 drop ip from any to any', ALLOW_ALL)).toBe('undetermined');
  });

  it('makes a probabilistic rule a "may" rule, and keeps its body narrow where it is', () => {
    expect(parseIpfwRule('00100 prob 0.500000 deny ip from any to any')).toEqual({
      action: 'block',
      match: { inet: 'maybe', inet6: 'maybe' },
    });
    expect(parseIpfwRule('00100 prob 0.500000 allow ip6 from any to any')).toEqual({
      action: 'pass',
      match: { inet: 'no', inet6: 'maybe' },
    });
    expect(parseIpfwRule('00100 prob 0.500000 allow ip from 192.0.2.0/24 to any')).toEqual({
      action: 'pass',
      match: { inet: 'no', inet6: 'no' },
    });
    expect(parseIpfwRule('00100 prob 0.500000 allow ip from any to any via lo0')).toEqual({
      action: 'pass',
      match: { inet: 'no', inet6: 'no' },
    });
  });
});

describe('ipfw modifiers between the action and the body', () => {
  it.each([
    ['00100 allow log ip from any to any'],
    ['00100 allow log logamount 10 ip from any to any'],
    ['00100 allow altq web ip from any to any'],
    ['00100 allow tag 5 ip from any to any'],
    ['00100 allow untag 5 ip from any to any'],
    ['00100 allow log logamount 10 altq web tag 5 ip from any to any'],
  ])('%s is still an allow-all', (rule) => {
    expect(before(rule, DENY_ALL)).toBe('pass');
    expect(before(rule, DENY_ALL, 'inet6')).toBe('pass');
  });
});

describe('ipfw rule bodies', () => {
  it('reads the protocol as the families it covers', () => {
    expect(parseIpfwRule('00100 allow ip from any to any')).toMatchObject({ match: { inet: 'yes', inet6: 'yes' } });
    expect(parseIpfwRule('00100 allow all from any to any')).toMatchObject({ match: { inet: 'yes', inet6: 'yes' } });
    expect(parseIpfwRule('00100 allow ip4 from any to any')).toMatchObject({ match: { inet: 'yes', inet6: 'no' } });
    expect(parseIpfwRule('00100 allow ipv4 from any to any')).toMatchObject({ match: { inet: 'yes', inet6: 'no' } });
    expect(parseIpfwRule('00100 allow ip6 from any to any')).toMatchObject({ match: { inet: 'no', inet6: 'yes' } });
    expect(parseIpfwRule('00100 allow ipv6 from any to any')).toMatchObject({ match: { inet: 'no', inet6: 'yes' } });
    expect(parseIpfwRule('00100 allow tcp from any to any')).toMatchObject({ match: { inet: 'no', inet6: 'no' } });
  });

  it('takes "me" for every address of the host, IPv6 included, and "me6" for its IPv6 ones', () => {
    // ip_fw2.c: O_IP_DST_ME tests IPv4 packets against the host's IPv4 addresses and falls
    // through to O_IP6_DST_ME for IPv6 ones.
    expect(parseIpfwRule('00100 allow ip from any to me')).toMatchObject({ match: { inet: 'yes', inet6: 'yes' } });
    expect(before('00100 allow ip6 from any to me', DENY_ALL, 'inet6')).toBe('pass');
    expect(before('00100 deny ip from any to me', ALLOW_ALL, 'inet6')).toBe('block');
    expect(parseIpfwRule('00100 allow ip from any to me6')).toMatchObject({ match: { inet: 'no', inet6: 'yes' } });
  });

  it('passes over rules for some sources or destinations, but not over negations and sets', () => {
    expect(before('00100 allow ip from 192.0.2.0/24 to any', DENY_ALL)).toBe('block');
    expect(before('00100 allow ip from any to 192.0.2.1', DENY_ALL)).toBe('block');
    expect(before('00100 allow ip from me to any', DENY_ALL)).toBe('block');
    // Everything but one network is almost everything.
    expect(before('00100 allow ip from not 192.0.2.0/24 to any', DENY_ALL)).toBe('undetermined');
    expect(before('00100 allow ip from any to not 192.0.2.1', DENY_ALL)).toBe('undetermined');
    expect(before('00100 allow ip from any to { 192.0.2.1 or me }', DENY_ALL)).toBe('undetermined');
    // A source port is printed after the source address: the rule names some packets only.
    expect(before('00100 allow ip from any 53 to any', DENY_ALL)).toBe('block');
  });

  it('does not pass over a body it cannot lay out', () => {
    for (const family of ['inet', 'inet6'] as const) {
      expect(before('00100 allow { ip4 or ip6 } from any to any', DENY_ALL, family)).toBe('undetermined');
      expect(before('00100 allow', DENY_ALL, family)).toBe('undetermined');
      // Cut short: no destination.
      expect(before('00100 allow ip from any', DENY_ALL, family)).toBe('undetermined');
    }
  });

  it('takes lo0, lo1 … and the lo group for loopback, no other name', () => {
    for (const iface of ['lo0', 'lo1', 'lo10', 'lo']) expect(before(`00100 allow ip from any to any via ${iface}`, DENY_ALL)).toBe('block');
    // Renamed interfaces (ifconfig name) that only look like one.
    for (const iface of ['vlo0', 'lo0x']) expect(before(`00100 allow ip from any to any via ${iface}`, DENY_ALL)).toBe('undetermined');
  });

  it.each([
    ['out'],
    ['xmit em0'],
    ['setup'],
    ['established'],
    ['frag'],
    ['dst-port 22'],
    ['src-port 53'],
    ['tcpflags syn,!ack'],
    ['icmptypes 8'],
    ['icmp6types 128,129'],
    ['ipoptions ssrr'],
    ['tcpoptions mss'],
    ['uid root'],
    ['gid wheel'],
    ['jail 1'],
    ['iplen 20'],
    ['ipttl 64'],
    ['ipid 1'],
    ['ipprecedence 1'],
    ['iptos lowdelay'],
    ['dscp af11'],
    ['mac-type 0x0800'],
    ['ext6hdr hopopt'],
    ['flow-id 1'],
    ['diverted-output'],
    ['sockarg'],
    ['in via lo0'],
    ['in recv lo0'],
  ])('an allow narrowed by "%s" is no default', (option) => {
    expect(before(`00100 allow ip from any to any ${option}`, DENY_ALL)).toBe('block');
    expect(before(`00100 allow ip from any to any via em0 ${option}`, DENY_ALL)).toBe('block');
  });

  it.each([
    ['limit src-addr 5 :default'],
    ['tagged 5'],
    ['diverted'],
    ['diverted-loopback'],
    ['record-state :default defer-immediate-action'],
    ['in via em0'],
    ['in recv em0'],
    ['not via lo0'],
    ['{ via em0 or via em1 }'],
    ['{ recv lo0 or recv em0 }'],
    ['verrevpath'],
  ])('an allow with "%s" may or may not catch an unsolicited packet', (option) => {
    expect(before(`00100 allow ip from any to any ${option}`, DENY_ALL)).toBe('undetermined');
  });

  it.each([['in'], ['keep-state :default'], ['record-state :default'], ['// open to all'], ['in // out is // here']])(
    'an allow with "%s" still catches every packet',
    (option) => {
      expect(before(`00100 allow ip from any to any ${option}`, DENY_ALL)).toBe('pass');
    },
  );
});

describe('ipfw listings', () => {
  it('reads the listing only when every line is a numbered rule, and complete only when it ends with 65535', () => {
    expect(parseIpfwList('00100 allow ip from any to any via lo0\n\n65535 deny ip from any to any\n')).toMatchObject({
      complete: true,
      rules: [{ action: 'pass' }, { action: 'block' }],
    });
    expect(parseIpfwList('65535 deny ip from any to any\n00100 allow ip from any to any via lo0\n')).toMatchObject({ complete: false });
    expect(parseIpfwList('100 allow ip from any to any\n65535 deny ip from any to any\n')).toBeNull();
    expect(parseIpfwList('65535 deny ip from any to any\nipfw: retrieving config failed\n')).toBeNull();
    expect(parseIpfwList('')).toEqual({ rules: [], complete: false });
  });

  it('needs the last rule before it vouches for anything', () => {
    expect(ipfwDefault(parseIpfwList('00100 allow ip from any to any\n')!, 'inet')).toBe('undetermined');
  });
});

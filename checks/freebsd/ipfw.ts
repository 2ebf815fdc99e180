// ipfw(8) as `ipfw list` prints it ("00100 allow ip from any to any via lo0", "65535 deny ip
// from any to any"). The first matching rule decides; the last rule, 65535, is the kernel's
// default (deny unless built with IPFIREWALL_DEFAULT_TO_ACCEPT), and rc.firewall's "open" type
// adds "65000 allow ip from any to any" in front of it.
import { FAMILIES, readings, type DefaultAction, type Family, type FilterRule, type Match } from './packetFilter';

const PASS = new Set(['allow', 'accept', 'pass', 'permit', 'fwd', 'forward', 'nat', 'pipe', 'queue', 'netgraph']);
const BLOCK = new Set(['deny', 'drop', 'reject', 'reset', 'reset6', 'unreach', 'unreach6', 'abort', 'abort6']);
/** Actions after which the packet goes on to the next rule (count, tags, divert's reinjection). */
const TRANSPARENT = new Set(['count', 'check-state', 'tag', 'untag', 'setfib', 'setdscp', 'setmark', 'divert', 'tee', 'ngtee']);
const ACTION_ARG = new Set([
  'unreach',
  'unreach6',
  'tag',
  'untag',
  'setfib',
  'setdscp',
  'setmark',
  'divert',
  'tee',
  'ngtee',
  'skipto',
  'call',
  'nat',
  'pipe',
  'queue',
  'netgraph',
  'fwd',
  'forward',
  'eaction',
  'nat64lsn',
  'nat64stl',
  'nat64clat',
  'nptv6',
]);
/** Options that narrow a rule to some packets. */
const NARROWING = new Set([
  'out',
  'setup',
  'established',
  'frag',
  'dst-port',
  'src-port',
  'tcpflags',
  'icmptypes',
  'icmp6types',
  'ipoptions',
  'tcpoptions',
  'uid',
  'gid',
  'jail',
  'lookup',
  'tagged',
  'iplen',
  'ipttl',
  'ipid',
  'ipprecedence',
  'iptos',
  'dscp',
  'mac',
  'mac-type',
  'ext6hdr',
  'flow-id',
  'diverted',
  'diverted-loopback',
  'diverted-output',
  'limit',
  'sockarg',
]);
/** Options that leave the matched set unchanged. */
const NEUTRAL = new Set(['in', 'keep-state', 'record-state', 'defer-action']);

export type IpfwRule = FilterRule | { opaque: true; match: Record<Family, Match> } | { transparent: true };

const FAMILY_PROTO: Record<string, Family[]> = {
  ip: ['inet', 'inet6'],
  all: ['inet', 'inet6'],
  ip4: ['inet'],
  ipv4: ['inet'],
  ip6: ['inet6'],
  ipv6: ['inet6'],
};

function matchOf(tokens: string[]): Record<Family, Match> {
  const none = { inet: 'no', inet6: 'no' } as Record<Family, Match>;
  let i = 0;
  if (tokens[i] === 'log') {
    i++;
    if (tokens[i] === 'logamount') i += 2;
  }
  if (tokens[i] === 'altq') i += 2;
  const families = FAMILY_PROTO[tokens[i] ?? ''];
  if (!families || tokens[i + 1] !== 'from' || tokens[i + 2] !== 'any' || tokens[i + 3] !== 'to') return none;
  const dst = tokens[i + 4];
  if (dst !== 'any' && dst !== 'me' && dst !== 'me6') return none;
  let match: Match = 'yes';
  for (let j = i + 5; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t === '//') break;
    if (t === 'not' || t === '{' || t === 'or') {
      // Negated or alternative options: whatever follows, the rule may or may not catch the packet.
      match = 'maybe';
      break;
    }
    if (NARROWING.has(t)) return none;
    if (t === 'via' || t === 'recv' || t === 'xmit') {
      const iface = tokens[++j] ?? '';
      if (/^lo\d*$/.test(iface)) return none;
      match = 'maybe';
    } else if (t.startsWith(':') || NEUTRAL.has(t)) continue;
    else match = 'maybe';
  }
  const fams = dst === 'me6' ? families.filter((f) => f === 'inet6') : dst === 'me' ? families.filter((f) => f === 'inet') : families;
  return Object.fromEntries(FAMILIES.map((f) => [f, fams.includes(f) ? match : 'no'])) as Record<Family, Match>;
}

/** One `ipfw list` line; null when it is not a numbered rule. */
export function parseIpfwRule(line: string): IpfwRule | null {
  const tokens = line.trim().split(/\s+/);
  if (!/^\d{5}$/.test(tokens[0] ?? '')) return null;
  let i = 1;
  if (tokens[i] === 'set') i += 2;
  let probabilistic = false;
  if (tokens[i] === 'prob') {
    probabilistic = true;
    i += 2;
  }
  const action = tokens[i] ?? '';
  if (TRANSPARENT.has(action)) return { transparent: true };
  const rest = tokens.slice(i + 1 + (ACTION_ARG.has(action) ? 1 : 0));
  let match = matchOf(rest);
  if (probabilistic) match = Object.fromEntries(FAMILIES.map((f) => [f, match[f] === 'no' ? 'no' : 'maybe'])) as Record<Family, Match>;
  if (PASS.has(action)) return { action: 'pass', quick: true, match };
  if (BLOCK.has(action)) return { action: 'block', quick: true, match };
  // A jump (skipto, call, return), another action with its own outcome (eaction, nat64*, nptv6),
  // or one this parser does not know: it may decide anything for the packets it matches.
  return { opaque: true, match };
}

export interface IpfwRuleset {
  rules: IpfwRule[];
  /** The last rule (the kernel default) was seen: the listing is complete. */
  complete: boolean;
}

export function parseIpfwList(stdout: string): IpfwRuleset | null {
  const rules: IpfwRule[] = [];
  let last = '';
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const rule = parseIpfwRule(line);
    if (!rule) return null;
    rules.push(rule);
    last = line.trim().slice(0, 5);
  }
  return { rules, complete: last === '65535' };
}

export function ipfwDefault(ruleset: IpfwRuleset, family: Family): DefaultAction {
  if (!ruleset.complete) return 'undetermined';
  // An opaque rule that may catch the packet ends what can be known: treat it as a rule that
  // may both pass and block, which makes the two readings disagree when it is reached.
  const expanded: FilterRule[] = ruleset.rules.flatMap((r): FilterRule[] => {
    if ('transparent' in r) return [];
    if ('opaque' in r) {
      if (r.match[family] === 'no') return [];
      const maybe = { inet: 'maybe', inet6: 'maybe' } as Record<Family, Match>;
      return [
        { action: 'pass', quick: true, match: maybe },
        { action: 'block', quick: true, match: maybe },
      ];
    }
    return [r];
  });
  return readings(expanded, family, (matching) => matching[0]?.action ?? 'pass');
}

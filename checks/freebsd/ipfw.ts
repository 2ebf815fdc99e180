// ipfw(8) as `ipfw list` prints it ("00100 allow ip from any to any via lo0", "65535 deny ip
// from any to any"). The first matching rule decides; the last rule, 65535, is the kernel's
// default (deny unless built with IPFIREWALL_DEFAULT_TO_ACCEPT), and rc.firewall's "open" type
// adds "65000 allow ip from any to any" in front of it.
//
// The words below are the ones ipfw prints (sbin/ipfw/ipfw2.c, print_action_instruction and
// print_instruction), not every spelling it accepts: a rule added as "pass" or "drop" is listed
// as "allow" or "deny", so an alias in a listing is not ipfw's output and reads as unknown.
import { FAMILIES, LOOPBACK, matchBoth, readings, type DefaultAction, type Family, type FilterRule, type Match } from './packetFilter';

const PASS = new Set(['allow', 'fwd', 'nat', 'pipe', 'queue', 'netgraph']);
const BLOCK = new Set(['deny', 'reject', 'reset', 'reset6', 'unreach', 'unreach6', 'abort', 'abort6']);
/** Actions after which the packet goes on to the next rule (count, divert's reinjection, marks). */
const TRANSPARENT = new Set(['count', 'check-state', 'setfib', 'setdscp', 'setmark', 'divert', 'tee', 'ngtee']);
/** Actions printed with one argument (a number, a name or an address) before the body. */
const ACTION_ARG = new Set([
  'unreach',
  'unreach6',
  'skipto',
  'call',
  'nat',
  'pipe',
  'queue',
  'netgraph',
  'fwd',
  'eaction',
  'nat64lsn',
  'nat64stl',
  'nat64clat',
  'nptv6',
]);
/**
 * Options that narrow a rule to some packets. Not among them: `limit` (the first connections of
 * each source still match), `tagged` and `diverted`/`diverted-loopback` (an earlier rule may tag or
 * divert every inbound packet), `defer-immediate-action` (the rule does not decide at all).
 */
const NARROWING = new Set([
  'out',
  'xmit',
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
  'iplen',
  'ipttl',
  'ipid',
  'ipprecedence',
  'iptos',
  'dscp',
  'mac-type',
  'ext6hdr',
  'flow-id',
  'diverted-output',
  'sockarg',
]);
/** Options that leave the matched set unchanged. */
const NEUTRAL = new Set(['in', 'keep-state', 'record-state']);

export type IpfwRule = FilterRule | { opaque: true; match: Record<Family, Match> } | { transparent: true };

const FAMILY_PROTO: Record<string, Family[]> = {
  ip: ['inet', 'inet6'],
  all: ['inet', 'inet6'],
  ip4: ['inet'],
  ipv4: ['inet'],
  ip6: ['inet6'],
  ipv6: ['inet6'],
};

/** Modifiers ipfw prints between the action and the body, in its order: log, altq, tag. */
function bodyStart(tokens: readonly string[]): number {
  let i = 0;
  if (tokens[i] === 'log') {
    i++;
    if (tokens[i] === 'logamount') i += 2;
  }
  if (tokens[i] === 'altq') i += 2;
  if (tokens[i] === 'tag' || tokens[i] === 'untag') i += 2;
  return i;
}

/** A source or destination: a negation or a set may hold the packet's address; otherwise it is `wide` ("any") or names some addresses only. */
function endpoint(token: string | undefined, wide: boolean): Match {
  if (token === 'not' || token === '{') return 'maybe';
  return wide ? 'yes' : 'no';
}

const NONE: Record<Family, Match> = { inet: 'no', inet6: 'no' };
const UNREADABLE: Record<Family, Match> = { inet: 'maybe', inet6: 'maybe' };

function matchOf(tokens: string[]): Record<Family, Match> {
  const i = bodyStart(tokens);
  // A body not laid out as "<proto> from <src> to <dst>" is not one this reading understands.
  if (tokens[i + 1] !== 'from') return UNREADABLE;
  const to = tokens.indexOf('to', i + 2);
  if (to === -1) return UNREADABLE;
  // Another protocol (tcp, udp, icmp, …) narrows the rule.
  const families = FAMILY_PROTO[tokens[i]!];
  if (!families) return NONE;
  const src = tokens[i + 2];
  const dst = tokens[to + 1];
  // A source is "any" only when nothing (a port) follows it.
  let match = matchBoth(endpoint(src, src === 'any' && to === i + 3), endpoint(dst, dst === 'any' || dst === 'me' || dst === 'me6'));
  for (let j = to + 2; j < tokens.length && match !== 'no'; j++) {
    const t = tokens[j]!;
    if (t === '//') break;
    if (t === 'not' || t === '{') {
      // Negated options or alternatives ("{ … or … }"): the rule may or may not catch the packet.
      match = 'maybe';
      break;
    }
    if (NARROWING.has(t)) match = 'no';
    else if (t === 'via' || t === 'recv') match = LOOPBACK.test(tokens[++j]!) ? 'no' : 'maybe';
    else if (!t.startsWith(':') && !NEUTRAL.has(t)) match = 'maybe';
  }
  // "me" is any address of the host, IPv4 or IPv6 (ip_fw2.c: O_IP_DST_ME falls through to O_IP6_DST_ME); "me6" only IPv6.
  const fams = dst === 'me6' ? families.filter((f) => f === 'inet6') : families;
  return Object.fromEntries(FAMILIES.map((f) => [f, fams.includes(f) ? match : 'no'])) as Record<Family, Match>;
}

/** One `ipfw list` line; null when it is not a numbered rule. */
export function parseIpfwRule(line: string): IpfwRule | null {
  const tokens = line.split(' ');
  if (!/^\d{5}$/.test(tokens[0]!)) return null;
  let i = 1;
  let probabilistic = false;
  if (tokens[i] === 'prob') {
    probabilistic = true;
    i += 2;
  }
  const action = tokens[i]!;
  if (TRANSPARENT.has(action)) return { transparent: true };
  const rest = tokens.slice(i + 1 + (ACTION_ARG.has(action) ? 1 : 0));
  let match = matchOf(rest);
  if (probabilistic) match = Object.fromEntries(FAMILIES.map((f) => [f, match[f] === 'no' ? 'no' : 'maybe'])) as Record<Family, Match>;
  if (PASS.has(action)) return { action: 'pass', match };
  if (BLOCK.has(action)) return { action: 'block', match };
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
  // ipfw prints one rule a line, fields separated by one space (show_static_rule()).
  const lines = stdout.split('\n').filter((line) => line !== '');
  const rules: IpfwRule[] = [];
  for (const line of lines) {
    const rule = parseIpfwRule(line);
    if (!rule) return null;
    rules.push(rule);
  }
  return { rules, complete: lines.at(-1)?.startsWith('65535 ') === true };
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
        { action: 'pass', match: maybe },
        { action: 'block', match: maybe },
      ];
    }
    return [r];
  });
  return readings(expanded, family, (matching) => matching[0]?.action ?? 'pass');
}

// pf(4) as pfctl(8) prints it: `-s info` for the status line, `-s rules` for the loaded filter
// rules in their normalised form ("block drop in all", "pass in quick on lo0 all flags S/SA").
// pf evaluates every rule and the last match wins, except that the first matching `quick` rule
// decides at once; with no match the packet passes.
import { FAMILIES, readings, type DefaultAction, type Family, type FilterRule, type Match } from './packetFilter';

export type PfStatus = 'enabled' | 'disabled' | 'not_loaded' | null;

/** First line of `pfctl -s info`: "Status: Enabled for 3 days 04:21:16  Debug: Urgent" or "Status: Disabled". */
export function parsePfStatus(stdout: string): PfStatus {
  const match = /^Status: (Enabled|Disabled)(?: for \d+ days \d{2}:\d{2}:\d{2})?(?:\s+Debug: \S+)?\s*$/m.exec(stdout);
  return match ? (match[1] === 'Enabled' ? 'enabled' : 'disabled') : null;
}

/** pf.ko not loaded: no /dev/pf (and, on FreeBSD 15, no netlink family). */
export const PF_NOT_LOADED = /^pfctl: (?:\/dev\/pf: No such file or directory|Failed to open netlink)/m;

const TOKEN = /"[^"]*"|\([^)]*\)|\S+/g;
const BLOCK_POLICY = /^(?:drop|return|return-rst|return-icmp6?)(?:\(.*\))?$/;
/** Options that change what happens to a matched packet, not which packets match. */
const NON_MATCHING_WITH_ARG = new Set(['flags', 'label', 'ridentifier', 'queue', 'tag', 'max-mss', 'dnpipe', 'dnqueue', 'rtable']);
const NON_MATCHING = new Set(['all', 'keep', 'modulate', 'synproxy', 'state', 'no', 'allow-opts', 'scrub']);
/** Criteria that narrow a rule to some packets: such a rule is not a default. */
const NARROWING = new Set(['proto', 'from', 'to', 'port', 'user', 'group', 'os', 'tagged', 'probability', 'received-on', 'icmp-type', 'icmp6-type', 'fragment', 'tos', 'prio']);

export interface PfRuleset {
  rules: FilterRule[];
  /** `anchor` lines: their rules are not listed by `pfctl -s rules` and are not evaluated. */
  anchors: number;
}

function interfaceMatch(negated: boolean, name: string): Match {
  const loopback = /^lo\d*$/.test(name);
  if (negated) return loopback ? 'yes' : 'maybe';
  return loopback ? 'no' : 'maybe';
}

/** One printed rule; null for lines that are not pass/block rules (match, scrub, nat, rdr, …). */
export function parsePfRule(line: string): FilterRule | 'anchor' | null {
  const tokens = line.trim().match(TOKEN) ?? [];
  const action = tokens[0];
  if (action === 'anchor') return 'anchor';
  if (action !== 'pass' && action !== 'block') return null;
  let i = 1;
  while (action === 'block' && i < tokens.length && (BLOCK_POLICY.test(tokens[i]!) || tokens[i]!.startsWith('('))) i++;
  let inbound = true;
  if (tokens[i] === 'in' || tokens[i] === 'out') inbound = tokens[i++] === 'in';
  if (tokens[i] === 'log') {
    i++;
    if (tokens[i]?.startsWith('(')) i++;
  }
  const quick = tokens[i] === 'quick';
  if (quick) i++;
  let iface: Match = 'yes';
  if (tokens[i] === 'on') {
    const negated = tokens[i + 1] === '!';
    iface = interfaceMatch(negated, tokens[i + (negated ? 2 : 1)] ?? '');
    i += negated ? 3 : 2;
  }
  let families: Family[] = [...FAMILIES];
  if (tokens[i] === 'inet' || tokens[i] === 'inet6') families = [tokens[i++] as Family];
  let body: Match = inbound ? iface : 'no';
  for (let j = i; j < tokens.length && body !== 'no'; j++) {
    const t = tokens[j]!;
    if (NARROWING.has(t)) body = 'no';
    else if (NON_MATCHING_WITH_ARG.has(t)) j++;
    else if (t === 'set') j += 2; // "set prio 3", "set tos lowdelay"
    else if (!NON_MATCHING.has(t) && !t.startsWith('(')) body = 'maybe';
  }
  const match = Object.fromEntries(FAMILIES.map((f) => [f, families.includes(f) ? body : 'no'])) as Record<Family, Match>;
  return { action, quick, match };
}

export function parsePfRules(stdout: string): PfRuleset {
  const rules: FilterRule[] = [];
  let anchors = 0;
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const rule = parsePfRule(line);
    if (rule === 'anchor') anchors++;
    else if (rule) rules.push(rule);
  }
  return { rules, anchors };
}

/** pf's decision for the matching rules, in order: first quick match, else last match, else pass. */
function pfDecision(matching: FilterRule[]): 'pass' | 'block' {
  return (matching.find((r) => r.quick) ?? matching.at(-1))?.action ?? 'pass';
}

export function pfDefault(ruleset: PfRuleset, family: Family): DefaultAction {
  return readings(ruleset.rules, family, pfDecision);
}

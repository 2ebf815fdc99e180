// pf(4) as pfctl(8) prints it: `-s info` for the status line, `-s rules` for the loaded filter
// rules in their normalised form ("block drop in all", "pass in quick on lo0 all flags S/SA").
// pf evaluates every rule and the last match wins, except that the first matching `quick` rule
// decides at once; with no match the packet passes.
import { FAMILIES, LOOPBACK, matchBoth, readings, type DefaultAction, type Family, type FilterRule, type Match } from './packetFilter';

export type PfStatus = 'enabled' | 'disabled' | 'not_loaded' | null;

/** First line of `pfctl -s info`: "Status: Enabled for 3 days 04:21:16  Debug: Urgent" or "Status: Disabled". */
export function parsePfStatus(stdout: string): PfStatus {
  const match = /^Status: (Enabled|Disabled)(?: for \d+ days \d{2}:\d{2}:\d{2})?(?:\s+Debug: \S+)?\s*$/m.exec(stdout);
  return match ? (match[1] === 'Enabled' ? 'enabled' : 'disabled') : null;
}

/** pf.ko not loaded: no /dev/pf (and, on FreeBSD 15, no netlink family). */
export const PF_NOT_LOADED = /^pfctl: (?:\/dev\/pf: No such file or directory|Failed to open netlink)/m;

// A word with its parenthesised arguments is one token: pfctl prints "return-rst(ttl 64)" and
// "return-icmp(port-unr, port-unr)" with spaces inside the parentheses.
const TOKEN = /"[^"]*"|[^\s("]*\([^)]*\)|\S+/g;
const BLOCK_POLICY = /^(?:drop|return|return-rst|return-icmp6?)(?:\(.*\))?$/;
/** Options that change what happens to a matched packet, not which packets match. */
const NON_MATCHING_WITH_ARG = new Set(['flags', 'label', 'ridentifier', 'queue', 'tag', 'max-mss', 'dnpipe', 'dnqueue', 'rtable']);
const NON_MATCHING = new Set(['all', 'keep', 'modulate', 'synproxy', 'state', 'no', 'allow-opts', 'scrub']);
/**
 * Criteria that narrow a rule to some packets: such a rule is not a default. pfctl prints "to",
 * "port" and "os" only after "from" (print_fromto()), which already narrows.
 */
const NARROWING = new Set([
  'proto',
  'from',
  'user',
  'group',
  'tagged',
  'probability',
  'received-on',
  'icmp-type',
  'icmp6-type',
  'fragment',
  'tos',
  'prio',
]);

/** A pf rule with the interface it is bound to (`on em0`, `on ! lo0`), kept so it can be judged per interface. */
interface PfRule extends FilterRule {
  on?: { name: string; negated: boolean };
  /** What the rule catches on an interface it applies to (its match without the interface). */
  body: Record<Family, Match>;
}

export interface PfRuleset {
  rules: PfRule[];
  /** `anchor` lines: their rules are not listed by `pfctl -s rules` and are not evaluated. */
  anchors: number;
}

function interfaceMatch(negated: boolean, name: string): Match {
  const loopback = LOOPBACK.test(name);
  if (negated) return loopback ? 'yes' : 'maybe';
  return loopback ? 'no' : 'maybe';
}

/** One printed rule; null for lines that are not pass/block rules (match, scrub, nat, rdr, …). */
function parsePfRule(line: string): PfRule | 'anchor' | null {
  const tokens = line.trim().match(TOKEN) ?? [];
  const action = tokens[0];
  if (action === 'anchor') return 'anchor';
  if (action !== 'pass' && action !== 'block') return null;
  let i = 1;
  while (action === 'block' && i < tokens.length && BLOCK_POLICY.test(tokens[i]!)) i++;
  let inbound = true;
  if (tokens[i] === 'in' || tokens[i] === 'out') inbound = tokens[i++] === 'in';
  if (tokens[i] === 'log') {
    i++;
    if (tokens[i]?.startsWith('(')) i++;
  }
  const quick = tokens[i] === 'quick';
  if (quick) i++;
  let on: PfRule['on'];
  if (tokens[i] === 'on') {
    const negated = tokens[i + 1] === '!';
    on = { name: tokens[i + (negated ? 2 : 1)] ?? '', negated };
    i += negated ? 3 : 2;
  }
  let families: Family[] = [...FAMILIES];
  if (tokens[i] === 'inet' || tokens[i] === 'inet6') families = [tokens[i++] as Family];
  let body: Match = inbound ? 'yes' : 'no';
  for (let j = i; j < tokens.length && body !== 'no'; j++) {
    const t = tokens[j]!;
    if (NARROWING.has(t)) body = 'no';
    else if (NON_MATCHING_WITH_ARG.has(t)) j++;
    else if (t === 'set')
      j += 2; // "set prio 3", "set tos lowdelay"
    else if (!NON_MATCHING.has(t) && !t.startsWith('(')) body = 'maybe';
  }
  const bodies = Object.fromEntries(FAMILIES.map((f) => [f, families.includes(f) ? body : 'no'])) as Record<Family, Match>;
  // Without the host's interface list a named interface may or may not be where the packet arrives.
  const iface = on ? interfaceMatch(on.negated, on.name) : 'yes';
  const match = Object.fromEntries(FAMILIES.map((f) => [f, matchBoth(iface, bodies[f])])) as Record<Family, Match>;
  return { action, quick, match, body: bodies, ...(on ? { on } : {}) };
}

export function parsePfRules(stdout: string): PfRuleset {
  const rules: PfRule[] = [];
  let anchors = 0;
  for (const line of stdout.split('\n')) {
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

/**
 * The host's interfaces, from `ifconfig -l`, and what a rule's interface name stands for: a listed
 * interface is itself; an interface name that is not listed (`tun0` while the tunnel is down)
 * exists nowhere and matches nothing (pf keeps such a rule until the interface appears); a name
 * without a unit number is an interface group: `all` is every interface, `lo` (the clone group of
 * lo0) or `pflog` cover no external interface, any other group's members are unknown (a clone
 * group such as `tun` holds only cloned interfaces, `ifconfig … group` adds others).
 */
export interface PfInterfaces {
  /** Interfaces an unsolicited packet from the network can arrive on. */
  external: string[];
  /** External interfaces pf does not filter at all (`set skip on …`): everything passes there. */
  skipped: string[];
  /** The interfaces a rule's name covers; undefined when that cannot be known. */
  members(name: string): readonly string[] | undefined;
}

/** Interfaces that carry no traffic from the network: loopback, pf's log and sync devices, IPsec's enc, USB capture. */
const INTERNAL_INTERFACE = /^(?:lo|pflog|pfsync|enc|usbus)\d+$/;

/**
 * An interface name as the kernel allows it (`ifconfig … name` renames to any string of up to 15
 * characters: `vnet0:3`, `e0b_bastille0`, `ix1.20`), starting with a letter; a word ending in a colon
 * is a tool's message ("ifconfig: …"), not a name.
 */
const INTERFACE_NAME = /^[A-Za-z]\S{0,14}$/;
const isInterfaceName = (n: string) => INTERFACE_NAME.test(n) && !n.endsWith(':');

/** pf's address modifiers, which a printed rule may carry after an interface name (`em0:broadcast`). */
const ADDRESS_MODIFIER = /^(.+):(?:network|broadcast|peer|0)$/;

/** `ifconfig -l`: the interface names on one line; null when the output is not such a line. */
export function parseInterfaceList(stdout: string): string[] | null {
  // An empty output splits into one empty name, which the pattern refuses.
  const names = stdout.trim().split(/\s+/);
  return names.every(isInterfaceName) ? names : null;
}

/**
 * `pfctl -s Interfaces -v`: one line per interface and group pf knows, `(skip)` after those a
 * `set skip on` covers. pf flags each member of a skipped group on its own line, so the interfaces'
 * own lines are enough. `-vv` statistics lines (indented) and ALTQ notices are not names. Null when
 * no line names an interface.
 */
export function parseSkippedInterfaces(stdout: string): Set<string> | null {
  const skipped = new Set<string>();
  let names = 0;
  for (const line of stdout.split('\n')) {
    const m = /^(\S+)( \(skip\))?\s*$/.exec(line);
    if (!m || !isInterfaceName(m[1]!)) continue;
    names++;
    if (m[2]) skipped.add(m[1]!);
  }
  return names > 0 ? skipped : null;
}

export function pfInterfaces(list: readonly string[], skipped: ReadonlySet<string> = new Set()): PfInterfaces {
  const external = list.filter((name) => !INTERNAL_INTERFACE.test(name));
  const members = (name: string): readonly string[] | undefined => {
    if (list.includes(name)) return [name];
    // `on em0:broadcast`: the interface is em0, whatever the modifier selects among its addresses.
    const modified = ADDRESS_MODIFIER.exec(name)?.[1];
    if (modified !== undefined) return members(modified);
    if (name === 'all') return list;
    // A unit number (`tun0`, `vnet0:3`) names one interface, which is not there.
    if (/\d$/.test(name)) return [];
    const clones = list.filter((i) => i.replace(/\d+$/, '') === name);
    return clones.length > 0 && clones.every((i) => INTERNAL_INTERFACE.test(i)) ? clones : undefined;
  };
  return { external, skipped: external.filter((name) => skipped.has(name)), members };
}

/** What a packet arriving on `iface` meets: each rule's match on that interface. */
function rulesOn(rules: readonly PfRule[], iface: string, interfaces: PfInterfaces): FilterRule[] {
  return rules.map((r) => {
    if (!r.on) return { ...r, match: r.body };
    const members = interfaces.members(r.on.name);
    const covered: Match = members === undefined ? 'maybe' : members.includes(iface) !== r.on.negated ? 'yes' : 'no';
    return { ...r, match: Object.fromEntries(FAMILIES.map((f) => [f, matchBoth(covered, r.body[f])])) as Record<Family, Match> };
  });
}

/**
 * pf's default for the family. With the interface list, the packet is followed on every external
 * interface: the default blocks only when it blocks on each of them, and passes when it certainly
 * passes on one, as it does on an interface pf skips.
 */
export function pfDefault(ruleset: PfRuleset, family: Family, interfaces?: PfInterfaces): DefaultAction {
  if (!interfaces || interfaces.external.length === 0) return readings(ruleset.rules, family, pfDecision);
  const perInterface = interfaces.external.map((iface) =>
    interfaces.skipped.includes(iface) ? 'pass' : readings(rulesOn(ruleset.rules, iface, interfaces), family, pfDecision),
  );
  if (perInterface.includes('pass')) return 'pass';
  return perInterface.every((a) => a === 'block') ? 'block' : 'undetermined';
}

// Whether the kernel's packet filter drops unsolicited inbound traffic, read from `nft -j list
// ruleset` and `iptables -S` (the whole filter table). Only the input hook matters: NAT and FORWARD
// chains made by Docker, libvirt or Kubernetes say nothing about inbound protection, and an input
// chain that exists but accepts everything (Debian's default /etc/nftables.conf) is not a firewall.
// Rules bind to their own chain (family, table, name); unconditional jumps and gotos are followed
// into the chains they name (NixOS's nixos-fw, firewalld's zone chains, ufw, CSF, Shorewall), where
// the drop of most front-ends lives.

export interface InputFiltering {
  ipv4: boolean;
  ipv6: boolean;
  /** Base chains on the input hook (all families that see IPv4/IPv6). */
  inputChains: number;
  /** "drop" when some input chain's policy drops, else "accept" (or null without input chains). */
  inputPolicy: 'drop' | 'accept' | null;
  /** Rules in the input chains themselves: 0 means nothing there can drop a packet, whatever a manager says. */
  inputRules: number;
}

/**
 * What a chain does with a packet no conditional rule picked out: accepts it, drops (or rejects)
 * it, or lets it fall through to the caller (the end of a jumped-to chain, `return`).
 */
export type ChainOutcome = 'accept' | 'drop' | 'continue';

/** A chain's rules reduced to what they do unconditionally, in order. */
export type Step =
  { kind: 'verdict'; verdict: 'accept' | 'drop' } | { kind: 'return' } | { kind: 'jump' | 'goto'; target: string } | { kind: 'other' };

/** Chains nested deeper than this are not followed (the kernel itself refuses loops; this guards malformed input). */
const MAX_CALL_DEPTH = 16;

/**
 * Follows `steps` of one chain: the first unconditional verdict decides; a jump decides when the
 * called chain does, else the walk goes on after it; a goto hands the decision to the called chain
 * (falling off its end returns past this chain). Conditional rules were dropped by the reader.
 */
export function chainOutcome(chains: ReadonlyMap<string, readonly Step[]>, name: string, depth = 0): ChainOutcome {
  const steps = chains.get(name);
  if (!steps || depth > MAX_CALL_DEPTH) return 'continue';
  for (const step of steps) {
    if (step.kind === 'verdict') return step.verdict;
    if (step.kind === 'return') return 'continue';
    if (step.kind === 'other') continue;
    const called = chainOutcome(chains, step.target, depth + 1);
    if (step.kind === 'goto' || called !== 'continue') return called;
  }
  return 'continue';
}

type NftExpr = Record<string, unknown>;
interface NftChain {
  family: string;
  table: string;
  name: string;
  hook?: string;
  type?: string;
  policy?: string;
}
interface NftRule {
  family: string;
  table: string;
  chain: string;
  expr?: NftExpr[];
}

/** Statements that do not restrict which packets a rule applies to. */
const NON_MATCHING = new Set(['counter', 'log', 'notrack']);

/** One nft rule as a step: conditional rules (ct state, ports, interfaces, verdict maps) are "other". */
export function nftStep(expr: readonly NftExpr[]): Step {
  const last = expr.at(-1);
  const unconditional = expr.slice(0, -1).every((e) => Object.keys(e).every((k) => NON_MATCHING.has(k)));
  if (!last || !unconditional) return { kind: 'other' };
  if ('accept' in last) return { kind: 'verdict', verdict: 'accept' };
  if ('drop' in last || 'reject' in last) return { kind: 'verdict', verdict: 'drop' };
  if ('return' in last) return { kind: 'return' };
  for (const kind of ['jump', 'goto'] as const) {
    const target = (last[kind] as { target?: unknown } | undefined)?.target;
    if (typeof target === 'string') return { kind, target };
  }
  return { kind: 'other' };
}

export type NftParse = { ok: true; filtering: InputFiltering } | { ok: false };

export function analyzeNftRuleset(json: string): NftParse {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    // Not JSON: `doc` stays undefined, which the shape check below refuses.
  }
  const items = (doc as { nftables?: unknown })?.nftables;
  if (!Array.isArray(items)) return { ok: false };
  const chains: NftChain[] = [];
  // Chain names are unique per table only: a rule belongs to family + table + chain, and a jump
  // names a chain of its own table.
  const tables = new Map<string, Map<string, Step[]>>();
  const tableKey = (family: string, table: string) => JSON.stringify([family, table]);
  for (const item of items as Record<string, unknown>[]) {
    if (item.chain) chains.push(item.chain as NftChain);
    const rule = item.rule as NftRule | undefined;
    if (!rule) continue;
    const id = tableKey(rule.family, rule.table);
    const table = tables.get(id) ?? tables.set(id, new Map()).get(id)!;
    table.set(rule.chain, [...(table.get(rule.chain) ?? []), nftStep(rule.expr ?? [])]);
  }
  const input = chains.filter((c) => c.hook === 'input' && (c.type ?? 'filter') === 'filter' && ['inet', 'ip', 'ip6'].includes(c.family));
  const filtering: InputFiltering = {
    ipv4: false,
    ipv6: false,
    inputChains: input.length,
    inputPolicy: input.length ? 'accept' : null,
    inputRules: 0,
  };
  for (const chain of input) {
    if (chain.policy === 'drop') filtering.inputPolicy = 'drop';
    const table = tables.get(tableKey(chain.family, chain.table)) ?? new Map<string, Step[]>();
    filtering.inputRules += table.get(chain.name)?.length ?? 0;
    const outcome = chainOutcome(table, chain.name);
    if ((outcome === 'continue' ? chain.policy : outcome) !== 'drop') continue;
    if (chain.family !== 'ip6') filtering.ipv4 = true;
    if (chain.family !== 'ip') filtering.ipv6 = true;
  }
  return { ok: true, filtering };
}

export type IptablesParse = { ok: true; policy: string; filters: boolean; rules: number } | { ok: false };

/** Targets that end a packet's walk; any other non-chain target (LOG, MARK, …) lets it go on. */
const IPTABLES_VERDICTS: Record<string, Step> = {
  ACCEPT: { kind: 'verdict', verdict: 'accept' },
  DROP: { kind: 'verdict', verdict: 'drop' },
  REJECT: { kind: 'verdict', verdict: 'drop' },
  RETURN: { kind: 'return' },
  // Handed to a userspace program that decides: not a drop this reading can vouch for.
  NFQUEUE: { kind: 'verdict', verdict: 'accept' },
  QUEUE: { kind: 'verdict', verdict: 'accept' },
};

/** A comment match restricts nothing (`-m comment --comment "nixos-fw"`). */
const COMMENT = /(?:^|\s)-m comment --comment (?:"(?:[^"\\]|\\.)*"|\S+)/g;

/** One `-A CHAIN …` line's matches and target as a step. */
export function iptablesStep(spec: string, chains: ReadonlySet<string>): Step {
  const target = /(?:^|\s)-([jg]) (\S+)(?:\s.*)?$/.exec(spec);
  if (!target) return { kind: 'other' };
  const matches = spec.slice(0, target.index).replace(COMMENT, '').trim();
  if (matches !== '') return { kind: 'other' };
  const name = target[2]!;
  if (chains.has(name)) return { kind: target[1] === 'g' ? 'goto' : 'jump', target: name };
  return IPTABLES_VERDICTS[name] ?? { kind: 'other' };
}

/**
 * `iptables -S` (the filter table): INPUT filters when the walk from INPUT, following
 * unconditional jumps and gotos into user chains, ends in DROP/REJECT, or falls through to a DROP
 * policy. A listing without INPUT's policy line is not iptables output.
 */
export function analyzeIptablesInput(text: string): IptablesParse {
  const lines = text.split('\n').map((l) => l.trim());
  let policy: string | undefined;
  // Jump targets are user chains: iptables refuses a jump to a built-in one.
  const names = new Set<string>();
  for (const line of lines) {
    const p = /^-P INPUT (\S+)$/.exec(line);
    if (p) policy = p[1];
    const created = /^-N (\S+)$/.exec(line);
    if (created) names.add(created[1]!);
  }
  if (!policy) return { ok: false };
  const chains = new Map<string, Step[]>();
  let rules = 0;
  for (const line of lines) {
    const rule = /^-A (\S+) (.*)$/.exec(line);
    if (!rule) continue;
    if (rule[1] === 'INPUT') rules += 1;
    chains.set(rule[1]!, [...(chains.get(rule[1]!) ?? []), iptablesStep(rule[2]!, names)]);
  }
  const outcome = chainOutcome(chains, 'INPUT');
  return { ok: true, policy, filters: outcome === 'continue' ? policy === 'DROP' : outcome === 'drop', rules };
}

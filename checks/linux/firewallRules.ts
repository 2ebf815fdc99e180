// Whether the kernel's packet filter drops unsolicited inbound traffic, read from `nft -j list
// ruleset` and `iptables -S INPUT`. Only the input hook matters: NAT and FORWARD chains made by
// Docker, libvirt or Kubernetes say nothing about inbound protection, and an input chain that
// exists but accepts everything (Debian's default /etc/nftables.conf) is not a firewall.

export interface InputFiltering {
  ipv4: boolean;
  ipv6: boolean;
  /** Base chains on the input hook (all families that see IPv4/IPv6). */
  inputChains: number;
  /** "drop" when some input chain's policy drops, else "accept" (or null without input chains). */
  inputPolicy: 'drop' | 'accept' | null;
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

function verdictOf(expr: NftExpr[]): 'accept' | 'drop' | undefined {
  const last = expr.at(-1);
  if (!last) return undefined;
  if ('accept' in last) return 'accept';
  if ('drop' in last || 'reject' in last) return 'drop';
  return undefined;
}

const isUnconditional = (expr: NftExpr[]) => expr.slice(0, -1).every((e) => Object.keys(e).every((k) => NON_MATCHING.has(k)));

/**
 * A base input chain filters when its policy is drop or when an unconditional drop/reject rule is
 * reached before any unconditional accept. Conditional rules (ct state, ports) are what a firewall
 * is made of and do not decide either way.
 */
function chainFilters(chain: NftChain, rules: NftRule[]): boolean {
  for (const rule of rules) {
    const expr = rule.expr ?? [];
    const verdict = verdictOf(expr);
    if (!verdict || !isUnconditional(expr)) continue;
    return verdict === 'drop';
  }
  return chain.policy === 'drop';
}

export type NftParse = { ok: true; filtering: InputFiltering } | { ok: false };

export function analyzeNftRuleset(json: string): NftParse {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    return { ok: false };
  }
  const items = (doc as { nftables?: unknown })?.nftables;
  if (!Array.isArray(items)) return { ok: false };
  const chains: NftChain[] = [];
  const rules: NftRule[] = [];
  for (const item of items as Record<string, unknown>[]) {
    if (item.chain) chains.push(item.chain as NftChain);
    if (item.rule) rules.push(item.rule as NftRule);
  }
  const input = chains.filter((c) => c.hook === 'input' && (c.type ?? 'filter') === 'filter' && ['inet', 'ip', 'ip6'].includes(c.family));
  const filtering: InputFiltering = { ipv4: false, ipv6: false, inputChains: input.length, inputPolicy: input.length ? 'accept' : null };
  for (const chain of input) {
    if (chain.policy === 'drop') filtering.inputPolicy = 'drop';
    const own = rules.filter((r) => r.family === chain.family && r.table === chain.table && r.chain === chain.name);
    if (!chainFilters(chain, own)) continue;
    if (chain.family !== 'ip6') filtering.ipv4 = true;
    if (chain.family !== 'ip') filtering.ipv6 = true;
  }
  return { ok: true, filtering };
}

export type IptablesParse = { ok: true; policy: string; filters: boolean; rules: number } | { ok: false };

/** `iptables -S INPUT`: "-P INPUT DROP" or an unconditional "-A INPUT -j DROP|REJECT" filters. */
export function analyzeIptablesInput(text: string): IptablesParse {
  let policy: string | undefined;
  let rules = 0;
  let terminal: boolean | undefined;
  for (const line of text.split('\n').map((l) => l.trim())) {
    const p = /^-P INPUT (\S+)$/.exec(line);
    if (p) {
      policy = p[1];
      continue;
    }
    if (!line.startsWith('-A INPUT ')) continue;
    rules += 1;
    const only = /^-A INPUT -j (ACCEPT|DROP|REJECT)(?:\s+--reject-with \S+)?$/.exec(line);
    if (only && terminal === undefined) terminal = only[1] !== 'ACCEPT';
  }
  if (!policy) return { ok: false };
  return { ok: true, policy, filters: terminal ?? policy === 'DROP', rules };
}

// What a packet filter does by default with an unsolicited inbound packet from anywhere, worked
// out from its printed ruleset. Rules either surely match such a packet, surely do not (they
// name a protocol, port, address, …), or may match (an interface we cannot judge, an option we
// do not know). Both filters' outcomes are monotone in those "may" rules, so evaluating the two
// extreme readings bounds every real one: if even the most permissive reading blocks, the
// default certainly blocks; if even the strictest reading passes, it certainly passes.

export type Family = 'inet' | 'inet6';
export const FAMILIES: readonly Family[] = ['inet', 'inet6'];
export type Match = 'yes' | 'no' | 'maybe';

/** A loopback interface (lo0, lo1, …) or the loopback clone group (lo): no unsolicited traffic from the network arrives there. */
export const LOOPBACK = /^lo\d*$/;
/** 'block'/'pass' are certain; 'undetermined' means the readings disagree or a rule hides the answer. */
export type DefaultAction = 'block' | 'pass' | 'undetermined';

export interface FilterRule {
  action: 'pass' | 'block';
  /** pf's `quick`: the first matching quick rule decides. ipfw rules are all decisive and have none. */
  quick?: boolean;
  /** Whether this rule catches an unsolicited inbound packet of the family from anywhere. */
  match: Record<Family, Match>;
}

/** Both conditions of a rule must hold. */
export function matchBoth(a: Match, b: Match): Match {
  if (a === 'no' || b === 'no') return 'no';
  return a === 'yes' && b === 'yes' ? 'yes' : 'maybe';
}

/** The two extreme readings: "may" rules that pass count as matching, "may" rules that block do not (and the reverse). */
export function readings(
  rules: readonly FilterRule[],
  family: Family,
  decide: (matching: FilterRule[]) => 'pass' | 'block',
): DefaultAction {
  const reading = (permissive: boolean) =>
    decide(rules.filter((r) => r.match[family] === 'yes' || (r.match[family] === 'maybe' && (r.action === 'pass') === permissive)));
  const permissive = reading(true);
  const strict = reading(false);
  return permissive === strict ? permissive : 'undetermined';
}

/** Combines the verdicts of several active filters for one family: any certain block protects. */
export function combine(actions: readonly DefaultAction[]): DefaultAction {
  if (actions.includes('block')) return 'block';
  return actions.every((a) => a === 'pass') ? 'pass' : 'undetermined';
}

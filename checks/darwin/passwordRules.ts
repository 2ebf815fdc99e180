// What one pwpolicy content rule demands of a password, read from its regular expression
// (`policyAttributePassword matches '…'`) for PASSWORD_POLICY. Only a small grammar is understood:
// alternatives (`^$|.{4,}+`), anchors, lookaheads `(?=.*[class])`, length items `.{N,}` `.{N,M}`
// `.*` `.+`, and class counts `(.*[class].*){k,}`; anything else leaves the rule unreadable.
// Every alternative then reads as "length in [min, max] and at least k characters of each class".

export type CharClass = 'alpha' | 'lower' | 'upper' | 'numeric' | 'symbol' | 'other';

interface ClassRequirement {
  class: CharClass;
  count: number;
}

interface Alternative {
  /** Shortest length this alternative accepts. */
  min: number;
  /** Longest; Infinity unless anchored at both ends with a bounded item. */
  max: number;
  requires: ClassRequirement[];
}

/** A readable rule: the password must match one of its alternatives. */
export interface ContentRule {
  alternatives: Alternative[];
  /** False when no alternative sets a length of its own (character classes, lookaheads only): the rule cannot bound the length. */
  boundsLength: boolean;
}

const CLASS_NAMES: Record<string, CharClass> = {
  'a-zA-Z': 'alpha',
  'A-Za-z': 'alpha',
  'a-z': 'lower',
  'A-Z': 'upper',
  '0-9': 'numeric',
  '\\d': 'numeric',
  '^a-zA-Z0-9': 'symbol',
  '^A-Za-z0-9': 'symbol',
};

function charClass(body: string): CharClass {
  return CLASS_NAMES[body] ?? 'other';
}

/** Splits on `|` outside parentheses and brackets; null when they do not balance. */
function splitAlternatives(regex: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return null;
    else if (c === '|' && depth === 0) {
      out.push(regex.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0 || inClass) return null;
  out.push(regex.slice(start));
  return out;
}

const CLASS = String.raw`\[(\^?[^\]]+)\]|(\\d)`;
const LOOKAHEAD = new RegExp(String.raw`^\(\?=\.\*(?:${CLASS})\)`);
const CLASS_COUNT = new RegExp(String.raw`^\(\.\*(?:${CLASS})\.\*\)\{(\d+),(\d*)\}[+?]?`);
const LENGTH = /^\.(?:\{(\d+)(,(\d*))?\}|([*+]))[+?]?/;

function readAlternative(text: string): (Alternative & { setsLength: boolean }) | null {
  let rest = text;
  const anchoredStart = rest.startsWith('^');
  if (anchoredStart) rest = rest.slice(1);
  const anchoredEnd = rest.endsWith('$') && !rest.endsWith('\\$');
  if (anchoredEnd) rest = rest.slice(0, -1);
  const requires: ClassRequirement[] = [];
  let consuming: { min: number; max: number } | undefined;
  let setsLength = false;
  while (rest.length > 0) {
    let m: RegExpExecArray | null;
    if ((m = LOOKAHEAD.exec(rest))) {
      requires.push({ class: charClass(m[1] ?? m[2]!), count: 1 });
    } else if ((m = CLASS_COUNT.exec(rest))) {
      if (consuming) return null;
      const count = Number(m[3]);
      requires.push({ class: charClass(m[1] ?? m[2]!), count });
      consuming = { min: count, max: Infinity };
    } else if ((m = LENGTH.exec(rest))) {
      // One consuming item only: a sequence of them is beyond this reader.
      if (consuming) return null;
      if (m[4] !== undefined) consuming = { min: m[4] === '+' ? 1 : 0, max: Infinity };
      else {
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (max < min) return null;
        consuming = { min, max };
        setsLength = true;
      }
    } else return null;
    rest = rest.slice(m[0].length);
  }
  const least = Math.max(consuming?.min ?? 0, ...requires.map((r) => r.count));
  // Unanchored, `.{N,M}` finds N characters inside a longer password: only both anchors cap the length.
  const max = anchoredStart && anchoredEnd ? (consuming?.max ?? 0) : Infinity;
  if (max < least) return null;
  return { min: least, max, requires, setsLength };
}

/** Reads `policyAttributePassword matches '…'`; null for any other content or a regex outside the grammar. */
export function readContentRule(content: string): ContentRule | null {
  const m = /^policyAttributePassword matches '(.*)'$/.exec(content.trim());
  if (!m) return null;
  const parts = splitAlternatives(m[1]!);
  if (!parts) return null;
  const alternatives: Alternative[] = [];
  let boundsLength = false;
  for (const part of parts) {
    const read = readAlternative(part);
    if (!read) return null;
    const { setsLength, ...alternative } = read;
    boundsLength ||= setsLength;
    alternatives.push(alternative);
  }
  return { alternatives, boundsLength };
}

/** The shortest password a rule accepts. */
export function ruleMinimum(rule: ContentRule): number {
  return Math.min(...rule.alternatives.map((a) => a.min));
}

/** A class the rule always demands, whichever alternative the password takes. */
export function ruleRequires(rule: ContentRule, classes: CharClass[]): boolean {
  return rule.alternatives.every((a) => a.requires.some((r) => classes.includes(r.class) && r.count > 0));
}

const MAX_COMBINATIONS = 4096;

/**
 * An upper bound on the shortest password all rules accept together, or undefined when it cannot be
 * shown simply: for one alternative per rule, a password holding every required character (their
 * counts summed) and as long as the longest minimum matches them all if no alternative's maximum is
 * shorter. The least such length over the combinations of alternatives.
 */
export function combinedShortest(rules: ContentRule[]): number | undefined {
  if (rules.reduce((n, r) => n * r.alternatives.length, 1) > MAX_COMBINATIONS) return undefined;
  let best: number | undefined;
  const visit = (i: number, chosen: Alternative[]): void => {
    if (i === rules.length) {
      const characters = chosen.reduce((sum, a) => sum + a.requires.reduce((s, r) => s + r.count, 0), 0);
      const length = Math.max(0, characters, ...chosen.map((a) => a.min));
      if (chosen.every((a) => a.max >= length) && (best === undefined || length < best)) best = length;
      return;
    }
    for (const alternative of rules[i]!.alternatives) visit(i + 1, [...chosen, alternative]);
  };
  visit(0, []);
  return best;
}

// The pwpolicy rule reader: which regexes it understands, what each demands, and the shortest
// password a set of rules accepts together.
import { describe, expect, it } from 'vitest';
import { combinedShortest, readContentRule, ruleMinimum, ruleRequires, type ContentRule } from '../../../checks/darwin/passwordRules';

const rule = (regex: string): ContentRule => {
  const read = readContentRule(`policyAttributePassword matches '${regex}'`);
  if (!read) throw new Error(`unreadable: ${regex}`);
  return read;
};

describe('readContentRule', () => {
  it('reads the length forms Apple and the CIS/mSCP profiles write', () => {
    expect(rule('.{4,}+')).toEqual({ alternatives: [{ min: 4, max: Infinity, requires: [] }], boundsLength: true });
    expect(rule('^.{15,}$')).toEqual({ alternatives: [{ min: 15, max: Infinity, requires: [] }], boundsLength: true });
    expect(rule('^.{8,64}$').alternatives).toEqual([{ min: 8, max: 64, requires: [] }]);
    // Unanchored, .{8,64} matches inside a longer password: no ceiling.
    expect(rule('.{8,64}').alternatives[0]!.max).toBe(Infinity);
    expect(rule('^.{8}$').alternatives[0]).toEqual({ min: 8, max: 8, requires: [] });
  });

  it('takes the minimum over alternatives: ^$|.{4,}+ accepts an empty password', () => {
    const r = rule('^$|.{4,}+');
    expect(r.alternatives).toEqual([
      { min: 0, max: 0, requires: [] },
      { min: 4, max: Infinity, requires: [] },
    ]);
    expect(ruleMinimum(r)).toBe(0);
    expect(r.boundsLength).toBe(true);
  });

  it('classifies character-class rules as unable to bound the length', () => {
    const lower = rule('(.*[a-z].*){1,}+');
    expect(lower).toEqual({ alternatives: [{ min: 1, max: Infinity, requires: [{ class: 'lower', count: 1 }] }], boundsLength: false });
    const lookaheads = rule('^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9]).*$');
    expect(lookaheads.boundsLength).toBe(false);
    expect(lookaheads.alternatives[0]!.requires.map((r) => r.class)).toEqual(['upper', 'lower', 'numeric']);
    expect(ruleMinimum(lookaheads)).toBe(1);
    expect(rule('^(?=.*\\d).{12,}$')).toMatchObject({
      boundsLength: true,
      alternatives: [{ min: 12, requires: [{ class: 'numeric', count: 1 }] }],
    });
    expect(rule('(.*[^a-zA-Z0-9].*){2,}+').alternatives[0]!.requires).toEqual([{ class: 'symbol', count: 2 }]);
  });

  it('refuses anything outside its grammar rather than guess', () => {
    expect(readContentRule("policyAttributePassword matches '^[^ ]{10}[^ ]*$'")).toBeNull();
    expect(readContentRule("policyAttributePassword matches '.{4,}(.*[0-9].*){1,}'")).toBeNull();
    expect(readContentRule("policyAttributePassword matches '^(?!(.)\\1+$).*$'")).toBeNull();
    expect(readContentRule("policyAttributePassword matches '(.{4,}'")).toBeNull();
    expect(readContentRule("policyAttributePassword matches '^.{9,8}$'")).toBeNull();
    expect(readContentRule('policyAttributePassword != policyAttributeRecordName')).toBeNull();
    expect(readContentRule("policyAttributePassword matches '.{4,}+' ")).not.toBeNull();
  });

  it('a class is required only when every alternative requires it', () => {
    expect(ruleRequires(rule('(.*[0-9].*){1,}+'), ['numeric'])).toBe(true);
    expect(ruleRequires(rule('^$|(.*[0-9].*){1,}+'), ['numeric'])).toBe(false);
    expect(ruleRequires(rule('(.*[A-Z].*){1,}+'), ['alpha', 'lower', 'upper'])).toBe(true);
    expect(ruleRequires(rule('(.*[!@#].*){1,}+'), ['symbol'])).toBe(false);
  });
});

describe('combinedShortest', () => {
  it('sums the required characters and takes the longest minimum', () => {
    expect(combinedShortest([rule('.{4,}+')])).toBe(4);
    expect(combinedShortest([rule('.{4,}+'), rule('(.*[a-z].*){1,}+'), rule('(.*[0-9].*){2,}+')])).toBe(4);
    expect(combinedShortest([rule('.{2,}+'), rule('(.*[a-z].*){2,}+'), rule('(.*[0-9].*){2,}+')])).toBe(4);
    expect(combinedShortest([])).toBe(0);
  });

  it('skips an alternative whose ceiling the other rules exceed', () => {
    // ^$ fits alone; beside a rule demanding a digit the empty alternative cannot hold.
    expect(combinedShortest([rule('^$|.{4,}+')])).toBe(0);
    expect(combinedShortest([rule('^$|.{4,}+'), rule('(.*[0-9].*){1,}+')])).toBe(4);
    expect(combinedShortest([rule('^.{8}$'), rule('(.*[0-9].*){9,}+')])).toBeUndefined();
  });

  it('gives up beyond 4096 combinations of alternatives', () => {
    const twoWay = rule('^$|.{1,}+');
    expect(combinedShortest(Array.from({ length: 12 }, () => twoWay))).toBe(0);
    expect(combinedShortest(Array.from({ length: 13 }, () => twoWay))).toBeUndefined();
  });
});

// OS_VERSION over a public collection of real /etc/os-release files (chef/os_release, one file per
// distribution release, copied into test/fixtures/os-release/chef-os_release). Each case's verdict
// and the support dates it rests on were written down from the data set before the check ran
// (chef-os_release.expect.json). Every file is decided PASS or FAIL except the ones listed there
// with the reason they cannot be: rolling releases without package data, appliances without a
// support schedule, and the distributions the data set lacks.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { osVersion } from '../../../checks/linux/osVersion';
import { resolvePolicy } from '../../../checks/policy';
import { createContext } from '../../../checks/engine';
import { FakeHost } from '../../support/fakeHost';

interface CorpusCase {
  file: string;
  status: 'PASS' | 'FAIL' | 'UNKNOWN';
  rule?: string;
  product?: string;
  cycle?: string;
  eol?: string | boolean;
  extendedEnd?: string | boolean;
  derivedFrom?: string;
  why?: string;
}

const root = new URL('../../fixtures/os-release/', import.meta.url);
const corpus = JSON.parse(readFileSync(new URL('chef-os_release.expect.json', root), 'utf8')) as {
  now: string;
  unknownWhy: Record<string, string>;
  cases: CorpusCase[];
};
const now = new Date(corpus.now);
const policy = resolvePolicy({});

async function judge(file: string) {
  const text = readFileSync(new URL(`chef-os_release/${file}`, root), 'utf8');
  const host = new FakeHost({ files: { '/etc/os-release': text } });
  const ctx = createContext(host, policy, now);
  return osVersion.evaluate(await osVersion.collect(ctx), policy, now);
}

describe('OS_VERSION over chef/os_release', () => {
  it.each(corpus.cases.map((c) => [c.file, c] as const))('%s', async (_file, c) => {
    const verdict = await judge(c.file);
    expect(verdict.status).toBe(c.status);
    if (c.status === 'UNKNOWN') {
      expect(Object.keys(corpus.unknownWhy)).toContain(c.why);
      const reasons = c.why?.startsWith('rolling') ? ['update_age_unknown'] : ['unknown_release', 'unrecognized_version'];
      expect(reasons).toContain(verdict.evidence.reason);
      return;
    }
    const evidence: Record<string, unknown> = { rule: c.rule };
    if (c.product) Object.assign(evidence, { product: c.product, cycle: c.cycle, eol: c.eol });
    if (c.extendedEnd !== undefined) evidence.extended_end = c.extendedEnd;
    if (c.derivedFrom) evidence.derived_from = c.derivedFrom;
    expect(verdict.evidence).toMatchObject(evidence);
  });

  it('decides every release that has a published schedule', () => {
    const undecided = corpus.cases.filter((c) => c.status === 'UNKNOWN');
    expect(corpus.cases.length).toBe(155);
    expect(undecided.length).toBeLessThanOrEqual(34);
  });
});

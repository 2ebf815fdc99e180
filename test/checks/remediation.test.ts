// The remediation catalogue stays complete and truthful: every word a check can return (read from
// its code, and seen on every recorded fixture) has an entry for its platform and check, no entry
// exists for a word nothing returns, and the texts rendered from real evidence carry no personal
// data and no holes.
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECK_KEYS, PLATFORMS, type CheckKey, type Platform, type PostureStatus } from '../../src/protocol/schemas';
import { findRemedy, explain, osHintFrom, renderFix, type PlatformRemedies, type Remedy } from '../../checks/remediation';
import { QUALIFYING_RULES, REMEDIATION, explainResult } from '../../checks/remediationCatalogue';
import { listFixtures, runFixture } from '../support/checkFixtures';
import { extractOutcomeWords } from './outcomeWords';

const PERSONAL = [/\/home\/[^/\s"]+/, /\/Users\/[^/\s"]+/, /[A-Za-z]:\\Users\\/, /S-1-5-21-\d+/, /S-1-12-1-\d+/];
const HOLES = /undefined|NaN|\[object|null\b/;

type Triple = `${Platform} ${CheckKey} ${string}`;
const triple = (p: Platform, k: CheckKey, w: string): Triple => `${p} ${k} ${w}`;

interface Observed {
  platform: Platform;
  checkKey: CheckKey;
  name: string;
  status: PostureStatus;
  word: string | null;
  evidence: Record<string, unknown>;
}

/** (platform, check, word) triples with no entry in `catalogues`. */
export function missingEntries(catalogues: Record<Platform, PlatformRemedies>, words: Map<Triple, unknown>): Triple[] {
  return [...words.keys()].filter((t) => {
    const [platform, checkKey, word] = t.split(' ') as [Platform, CheckKey, string];
    return !findRemedy(catalogues[platform], checkKey, word);
  });
}

/** Entries for words nothing returns: a check's own entries, and shared entries no check resolves to. */
export function deadEntries(catalogues: Record<Platform, PlatformRemedies>, words: Map<Triple, unknown>): string[] {
  const dead: string[] = [];
  for (const platform of PLATFORMS) {
    const catalogue = catalogues[platform];
    for (const checkKey of CHECK_KEYS) {
      for (const word of Object.keys(catalogue.checks[checkKey]))
        if (!words.has(triple(platform, checkKey, word))) dead.push(triple(platform, checkKey, word));
    }
    for (const word of Object.keys(catalogue.shared)) {
      const used = CHECK_KEYS.some((k) => words.has(triple(platform, k, word)) && !Object.hasOwn(catalogue.checks[k], word));
      if (!used) dead.push(`${platform} (shared) ${word}`);
    }
  }
  return dead;
}

let observed: Observed[];
/** Every word each check can return: from its code, and from its fixtures. */
let words: Map<Triple, string>;
let extracted: Set<Triple>;

beforeAll(async () => {
  observed = [];
  for (const loaded of listFixtures()) {
    const { verdict } = await runFixture(loaded);
    const value = verdict.status === 'PASS' || verdict.status === 'FAIL' ? verdict.evidence.rule : verdict.evidence.reason;
    observed.push({
      platform: loaded.platform,
      checkKey: loaded.checkKey,
      name: loaded.name,
      status: verdict.status,
      word: typeof value === 'string' ? value : null,
      evidence: verdict.evidence,
    });
  }
  extracted = new Set();
  words = new Map();
  for (const check of extractOutcomeWords()) {
    for (const word of check.words) {
      if (QUALIFYING_RULES.includes(word)) continue;
      extracted.add(triple(check.platform, check.checkKey, word));
      words.set(triple(check.platform, check.checkKey, word), 'code');
    }
  }
  for (const o of observed) if (o.word !== null) words.set(triple(o.platform, o.checkKey, o.word), `fixture ${o.name}`);
}, 120_000);

describe('the word extractor', () => {
  it('finds every check of every platform', () => {
    for (const platform of PLATFORMS) {
      for (const checkKey of CHECK_KEYS)
        expect(
          [...extracted].some((t) => t.startsWith(`${platform} ${checkKey} `)),
          `${platform} ${checkKey}`,
        ).toBe(true);
    }
  });

  it('finds every word a fixture returns (it reads the code the fixtures run)', () => {
    const missed = observed
      .filter((o) => o.word !== null && !extracted.has(triple(o.platform, o.checkKey, o.word)))
      .map((o) => `${triple(o.platform, o.checkKey, o.word!)} (${o.name})`);
    expect(missed).toEqual([]);
  });

  it('every PASS and FAIL carries a rule and every other status a reason', () => {
    expect(observed.filter((o) => o.word === null).map((o) => `${o.platform} ${o.checkKey} ${o.name}`)).toEqual([]);
  });
});

describe('the catalogue', () => {
  it('has an entry for every (platform, check, word) a check can return', () => {
    // On failure: exactly the triples that need an entry (checks/<os>/remediation.ts).
    expect(missingEntries(REMEDIATION, words)).toEqual([]);
  });

  it('has no entry for a word nothing returns', () => {
    expect(deadEntries(REMEDIATION, words)).toEqual([]);
  });

  it('reports a removed entry, a new word without one, and an entry nothing returns, by its triple', () => {
    const linux = REMEDIATION.LINUX;
    const { no_inbound_filtering: _removed, ...firewall } = linux.checks.FIREWALL_ENABLED;
    const without = { ...REMEDIATION, LINUX: { ...linux, checks: { ...linux.checks, FIREWALL_ENABLED: firewall } } };
    const some = new Map(
      [
        triple('LINUX', 'FIREWALL_ENABLED', 'no_inbound_filtering'),
        triple('LINUX', 'FIREWALL_ENABLED', 'inbound_filtered'),
        triple('LINUX', 'TIME_SYNC', 'permission_denied'),
      ].map((t) => [t, 'code']),
    );
    expect(missingEntries(without, some)).toEqual(['LINUX FIREWALL_ENABLED no_inbound_filtering']);
    expect(missingEntries(REMEDIATION, new Map(some).set(triple('DARWIN', 'SCREEN_LOCK', 'brand_new_rule'), 'code'))).toEqual([
      'DARWIN SCREEN_LOCK brand_new_rule',
    ]);
    const dead = new Set(deadEntries(REMEDIATION, words));
    const withoutSyncPending = new Map([...words].filter(([t]) => t !== 'LINUX TIME_SYNC sync_pending'));
    expect(deadEntries(REMEDIATION, withoutSyncPending).filter((d) => !dead.has(d))).toEqual(['LINUX TIME_SYNC sync_pending']);
  });

  it('renders every entry, with and without evidence and policy, into plain text without holes', () => {
    const policies = [{}, { maxIdleSeconds: 900, maxGraceSeconds: 5, minLength: 12, maxSignatureAgeDays: 7 }];
    for (const platform of PLATFORMS) {
      const catalogue = REMEDIATION[platform];
      const entries: Array<[string, string, Remedy]> = [
        ...Object.entries(catalogue.shared).map(([w, r]) => ['(shared)', w, r] as [string, string, Remedy]),
        ...CHECK_KEYS.flatMap((k) => Object.entries(catalogue.checks[k]).map(([w, r]) => [k, w, r] as [string, string, Remedy])),
      ];
      for (const [checkKey, w, remedy] of entries) {
        for (const policy of policies) {
          const ctx = { checkKey: checkKey === '(shared)' ? 'DISK_ENCRYPTION' : checkKey, evidence: {}, policy, os: {} };
          const texts = [
            typeof remedy.summary === 'function' ? remedy.summary(ctx) : remedy.summary,
            renderFix(remedy.fix, ctx),
            typeof remedy.admin === 'function' ? remedy.admin(ctx) : remedy.admin,
          ];
          for (const text of texts) {
            expect(text.trim().length, `${platform} ${checkKey} ${w}`).toBeGreaterThan(5);
            expect(text, `${platform} ${checkKey} ${w}`).not.toMatch(HOLES);
          }
          expect(texts[0], `${platform} ${checkKey} ${w}: the summary is one line`).not.toContain('\n');
        }
      }
    }
  });
});

describe('texts from recorded evidence', () => {
  it('every fixture result gets its own entry, filled from its evidence, with no personal data', () => {
    for (const o of observed) {
      const os = osHintFrom(
        observed
          .filter((x) => x.platform === o.platform && x.checkKey === 'OS_VERSION')
          .slice(0, 1)
          .map((x) => ({ check_key: 'OS_VERSION', evidence: x.evidence })),
      );
      const e = explainResult(o.platform, { check_key: o.checkKey, status: o.status, evidence: o.evidence }, { os });
      const label = `${o.platform} ${o.checkKey} ${o.name}`;
      expect(e.generic, label).toBe(false);
      for (const text of [e.summary, e.fix, e.admin]) {
        expect(text, label).not.toMatch(HOLES);
        for (const pattern of PERSONAL) expect(text, label).not.toMatch(pattern);
      }
    }
  });

  it('quotes the facts that decided and the policy that judged', () => {
    const idle = observed.find((o) => o.platform === 'LINUX' && o.checkKey === 'SCREEN_LOCK' && o.word === 'idle_too_long')!;
    expect(explainResult('LINUX', { check_key: 'SCREEN_LOCK', status: 'FAIL', evidence: idle.evidence }).summary).toBe(
      'Your screen locks after 30 minutes of inactivity; your organization requires 15 minutes or less.',
    );
    // Without the limit in the evidence, the policy that judged fills it in.
    const { max_idle_seconds: _limit, ...evidence } = idle.evidence;
    expect(
      explainResult('LINUX', { check_key: 'SCREEN_LOCK', status: 'FAIL', evidence }, { policy: { maxIdleSeconds: 600 } }).summary,
    ).toBe('Your screen locks after 30 minutes of inactivity; your organization requires 10 minutes or less.');
    expect(explainResult('LINUX', { check_key: 'SCREEN_LOCK', status: 'FAIL', evidence }).summary).toBe(
      'Your screen locks after 30 minutes of inactivity.',
    );
  });

  it("picks the steps for the device's release and desktop when it can tell, and shows every variant otherwise", () => {
    const firewall = { check_key: 'FIREWALL_ENABLED', status: 'FAIL' as const, evidence: { rule: 'no_inbound_filtering' } };
    const debian = explainResult('LINUX', firewall, { os: { product: 'debian', version: '12.11' } }).fix;
    expect(debian).toMatch(/^Debian, Ubuntu: install and turn on ufw/);
    expect(debian).not.toContain('dnf');
    const unknownDistro = explainResult('LINUX', firewall).fix;
    expect(unknownDistro).toContain('Debian, Ubuntu:');
    expect(unknownDistro).toContain('Fedora, RHEL:');
    const mac = (version: string) =>
      explainResult(
        'DARWIN',
        { check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'filevault_off' } },
        { os: { product: 'macos', version } },
      ).fix;
    expect(mac('14.6')).toMatch(/^macOS 13 and later: Apple menu > System Settings > Privacy & Security > FileVault/);
    expect(mac('12.7')).toMatch(/^macOS 12 and earlier: Apple menu > System Preferences > Security & Privacy > FileVault/);
    const kde = explainResult('LINUX', {
      check_key: 'SCREEN_LOCK',
      status: 'FAIL',
      evidence: { rule: 'lock_disabled', desktop: 'kde' },
    }).fix;
    expect(kde).toMatch(/^KDE Plasma: System Settings > Screen Locking/);
  });

  it('gives generic texts, never an error, for a word, check or platform it does not know', () => {
    const newer = explainResult('LINUX', { check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'from_a_newer_agent' } });
    expect(newer).toMatchObject({ word: 'from_a_newer_agent', generic: true, summary: 'This check fails.' });
    expect(explainResult('PLAN9', { check_key: 'SCREEN_LOCK', status: 'UNKNOWN', evidence: { reason: 'permission_denied' } }).generic).toBe(
      true,
    );
    expect(explainResult('LINUX', { check_key: 'CUSTOM_CHECK', status: 'PASS', evidence: {} })).toMatchObject({
      word: null,
      generic: true,
    });
    // An inherited property name is not an entry.
    expect(explain(REMEDIATION.LINUX, { check_key: 'TIME_SYNC', status: 'FAIL', evidence: { rule: 'constructor' } }).generic).toBe(true);
  });
});

// The remediation catalogue stays complete and truthful. Completeness against the code is the
// compiler's: each catalogue's entries are typed by its checks' words (PlatformCatalogue), so a
// missing or extra word fails `tsc`, as the @ts-expect-error lines below pin. Here: every result
// the evaluators give on the recorded fixtures has its own entry, and the texts rendered from real
// evidence carry no personal data and no holes.
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECK_KEYS, PLATFORMS, type CheckKey, type Platform, type PostureStatus } from '../../src/protocol/schemas';
import { linuxRemediation } from '../../checks/linux/remediation';
import { explain, osHintFrom, passing, releaseRemedies, renderFix, type PlatformCatalogue, type Remedy } from '../../checks/remediation';
import type { Check } from '../../checks/types';
import { REMEDIATION, explainResult } from '../../checks/remediationCatalogue';
import { listFixtures, runFixture } from '../support/checkFixtures';

const PERSONAL = [/\/home\/[^/\s"]+/, /\/Users\/[^/\s"]+/, /[A-Za-z]:\\Users\\/, /S-1-5-21-\d+/, /S-1-12-1-\d+/];
const HOLES = /undefined|NaN|\[object|null\b/;

interface Observed {
  platform: Platform;
  checkKey: CheckKey;
  name: string;
  status: PostureStatus;
  word: string | null;
  evidence: Record<string, unknown>;
}

let observed: Observed[];

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
}, 120_000);

describe('the catalogue', () => {
  it('is typed by the words its checks return: a missing or an extra word does not compile', () => {
    type FirewallEntries = (typeof linuxRemediation.checks)['FIREWALL_ENABLED'];
    const { no_inbound_filtering: _removed, ...withoutOne } = linuxRemediation.checks.FIREWALL_ENABLED;
    // @ts-expect-error: no entry for no_inbound_filtering, a word the Linux firewall check returns
    const missing: FirewallEntries = withoutOne;
    const extra: FirewallEntries = {
      ...linuxRemediation.checks.FIREWALL_ENABLED,
      // @ts-expect-error: an entry for a word the check does not return
      from_a_newer_agent: passing('A word no Linux firewall verdict carries.'),
    };
    // The shared entries explain their words for every check: a check's own entry for one is extra too.
    const overridden: FirewallEntries = {
      ...linuxRemediation.checks.FIREWALL_ENABLED,
      // @ts-expect-error: permission_denied is the platform's shared entry
      permission_denied: linuxRemediation.shared.permission_denied,
    };
    // A check whose words are typed plain string would accept any entries: its catalogue refuses them all.
    type LooseCheck = Check<unknown, string, 'FIREWALL_ENABLED'>;
    const loose: PlatformCatalogue<readonly [LooseCheck], 'timeout'>['checks']['FIREWALL_ENABLED'] = {
      // @ts-expect-error: no word of a check typed string can be listed
      anything: passing('Any word at all.'),
    };
    // The compiler is the judge (tsc fails on an unused @ts-expect-error); at run time the values are what they say.
    expect(Object.keys(missing)).not.toContain('no_inbound_filtering');
    expect(Object.keys(extra)).toContain('from_a_newer_agent');
    expect(Object.keys(overridden)).toContain('permission_denied');
    expect(Object.keys(loose)).toEqual(['anything']);
  });

  it('catches a release word an OS_VERSION check stopped returning, though spread entries escape the extra-key check', () => {
    type OsVersionWords = keyof (typeof linuxRemediation.checks)['OS_VERSION'];
    // The Linux check returns every word of the shared release rule: the call compiles.
    const complete = releaseRemedies<OsVersionWords>('upgrade', 'upgrade the fleet');
    // @ts-expect-error: a check that no longer returns extended_support_not_accepted leaves its entry extra
    const stale = releaseRemedies<Exclude<OsVersionWords, 'extended_support_not_accepted'>>('upgrade', 'upgrade the fleet');
    expect(Object.keys(complete)).toEqual(Object.keys(stale));
    expect(Object.keys(complete)).toContain('extended_support_not_accepted');
  });

  it('every PASS and FAIL on the recorded fixtures carries a rule and every other status a reason', () => {
    expect(observed.filter((o) => o.word === null).map((o) => `${o.platform} ${o.checkKey} ${o.name}`)).toEqual([]);
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

  it('says how long ago unattended-upgrade last completed an install run, not when its log was written', () => {
    const stale = { rule: 'not_run_recently', last_run_age_days: 0, last_install_age_days: 11, max_run_age_days: 3 };
    expect(explainResult('LINUX', { check_key: 'AUTO_UPDATE', status: 'FAIL', evidence: stale }).summary).toBe(
      'Automatic updates are configured, but unattended-upgrades last completed an install run 11 days ago (at most 3 days expected): updates are not being installed.',
    );
    const timer = { rule: 'not_run_recently', job: 'dnf-automatic.timer', last_run_age_days: 9, max_run_age_days: 3 };
    expect(explainResult('LINUX', { check_key: 'AUTO_UPDATE', status: 'FAIL', evidence: timer }).summary).toBe(
      'Automatic updates are configured, but dnf-automatic.timer last ran 9 days ago (at most 3 days expected): updates are not being installed.',
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
    // RHCOS (ID_LIKE="rhel fedora") is upgraded with its OpenShift cluster, not with dnf or Leapp.
    const eol = {
      check_key: 'OS_VERSION',
      status: 'FAIL' as const,
      evidence: { rule: 'eol', product: 'rhcos', version: '4.3', eol: '2020-10-27' },
    };
    const rhcos = explainResult('LINUX', eol, { os: { product: 'rhcos', idLike: ['rhel', 'fedora'] } });
    expect(rhcos.summary).toBe('Rhcos 4.3 no longer receives security updates (support ended on 2020-10-27).');
    expect(rhcos.fix).toMatch(/^Red Hat Enterprise Linux CoreOS: RHCOS is upgraded with its OpenShift cluster/);
    expect(rhcos.fix).not.toContain('Leapp');
    expect(explainResult('LINUX', eol, { os: { product: 'rhel', version: '8.10' } }).fix).toMatch(/^Fedora, RHEL: /);
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

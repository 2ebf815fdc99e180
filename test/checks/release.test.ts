// OS_VERSION's shared rule: numeric version comparison and the lifecycle evaluation order.
import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '../../checks/policy';
import type { LifecycleData } from '../../checks/lifecycleTable';
import { compareVersions, judgeRelease, type ExtendedSupport, type Release } from '../../checks/release';

describe('compareVersions', () => {
  it('compares numeric segments, not text', () => {
    expect(compareVersions('14.10', '14.6.1')).toBe(1);
    expect(compareVersions('14.6.1', '14.10')).toBe(-1);
    expect(compareVersions('12.11', '12')).toBe(1);
    expect(compareVersions('24.04', '24.04.0')).toBe(0);
    expect(compareVersions('9.5', '9.10')).toBe(-1);
    expect(compareVersions('10.0.26100', '10.0.22631')).toBe(1);
  });
});

const now = new Date('2026-11-21T12:00:00Z');
const policy = (override: Record<string, unknown> = {}) =>
  resolvePolicy({
    ...override,
    osVersion: {
      lifecycle: {
        demo: [
          { cycle: '1', eol: '2025-01-01', extendedEnd: '2027-01-01', latest: '1.5', latestReleaseDate: '2026-01-01' },
          { cycle: '2', eol: false },
          { cycle: '0', eol: '2024-01-01', extendedEnd: '2025-06-01' },
        ],
      },
      ...((override.osVersion as object) ?? {}),
    },
  });
const release = (cycle: string, version: string): Release => ({ product: 'demo', cycle, version, facts: { extra: 'fact' } });
const builtIn: LifecycleData = {
  dataset: { name: 'endoflife.date', repository: 'https://example.invalid', commit: 'c'.repeat(40), committedAt: '2026-08-22' },
  sources: { demo: ['products/demo.md'] },
  products: {
    demo: [
      { cycle: '3', releaseDate: '2024-01-01', eol: false },
      { cycle: '2', releaseDate: '2023-01-01', eol: '2026-01-01' },
      { cycle: '1', releaseDate: '2022-01-01', eol: true, extendedEnd: true },
    ],
  },
};
const lts = (accepted: boolean): ExtendedSupport => ({ name: 'Demo LTS', setting: 'osVersion.acceptExtendedSupport.debianLts', accepted });

describe('judgeRelease', () => {
  it('FAILs below the minimum first (rule minimum)', () => {
    const v = judgeRelease(release('2', '2.1'), { minimum: '2.10' }, policy(), now, builtIn);
    expect(v).toMatchObject({ status: 'FAIL', evidence: { rule: 'minimum', minimum: '2.10', extra: 'fact' } });
  });

  it('FAILs past the end of regular support: eol without an extension setting, extended_support_not_accepted with one', () => {
    expect(judgeRelease(release('1', '1.5'), {}, policy(), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol', eol: '2025-01-01', extended_end: '2027-01-01' },
    });
    expect(judgeRelease(release('1', '1.5'), { extendedSupport: lts(false) }, policy(), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: {
        rule: 'extended_support_not_accepted',
        eol: '2025-01-01',
        extended_end: '2027-01-01',
        extended_support: 'Demo LTS',
        extended_support_setting: 'osVersion.acceptExtendedSupport.debianLts',
        extended_support_accepted: false,
      },
    });
    expect(judgeRelease(release('1', '1.5'), { extendedSupport: lts(true) }, policy(), now, builtIn)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'extended_support', extended_support_accepted: true },
    });
    expect(judgeRelease(release('0', '0.9'), { extendedSupport: lts(true) }, policy(), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'extended_eol' },
    });
  });

  it('honours the grace period after the end of life', () => {
    const lenient = policy({ osVersion: { graceDaysAfterEol: 700 } });
    expect(judgeRelease(release('1', '1.5'), {}, lenient, now, builtIn).status).toBe('PASS');
  });

  it('FAILs a lagging patch level only when maxPatchLagDays is set (rule patch_lag)', () => {
    expect(judgeRelease(release('1', '1.2'), { extendedSupport: lts(true) }, policy(), now, builtIn).status).toBe('PASS');
    const strict = policy({ osVersion: { maxPatchLagDays: 30 } });
    expect(judgeRelease(release('1', '1.2'), { extendedSupport: lts(true) }, strict, now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'patch_lag', latest: '1.5' },
    });
    expect(judgeRelease(release('1', '1.5'), { extendedSupport: lts(true) }, strict, now, builtIn).status).toBe('PASS');
  });

  it('PASSes a cycle with no announced end', () => {
    expect(judgeRelease(release('2', '2.3'), {}, policy(), now, builtIn)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'supported', eol: false },
    });
  });

  it('reports an unknown release as UNKNOWN, or FAIL when the policy says so', () => {
    expect(judgeRelease(release('7', '7.0'), {}, policy(), now, builtIn)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release' },
    });
    expect(judgeRelease(release('7', '7.0'), {}, policy({ osVersion: { unknownRelease: 'FAIL' } }), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'unknown_release' },
    });
  });

  it('judges by the built-in table when the policy gives none, and says which data set it checked', () => {
    const plain = resolvePolicy({});
    expect(judgeRelease(release('2', '2.0'), {}, plain, now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol', eol: '2026-01-01', lifecycle_checked_at: '2026-08-22' },
    });
    expect(judgeRelease(release('2', '2.0'), {}, policy(), now, builtIn).evidence.lifecycle_checked_at).toBe('policy');
  });

  it('FAILs an end that passed without a date (eol true), extended support included', () => {
    expect(judgeRelease(release('1', '1.0'), { extendedSupport: lts(true) }, resolvePolicy({}), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'extended_eol', eol: true, extended_end: true },
    });
  });

  it('FAILs a release older than every listed one once the oldest has ended (rule older_than_table)', () => {
    expect(judgeRelease(release('0', '0.9'), {}, resolvePolicy({}), now, builtIn)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'older_than_table', oldest_listed: '1', oldest_eol: true },
    });
    // While the oldest listed release is still supported an older one may be too: not decided.
    const open: LifecycleData = { ...builtIn, products: { demo: [{ cycle: '5', eol: false }] } };
    expect(judgeRelease(release('4', '4.0'), {}, resolvePolicy({}), now, open).status).toBe('UNKNOWN');
  });

  it('PASSes a newer release only when the cadence says one is due and its major is within the due steps (newer_than_table)', () => {
    // Yearly releases, newest 2024-01-01: by 2026-11 two are due.
    expect(judgeRelease(release('4', '4.0'), {}, resolvePolicy({}), now, builtIn)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'newer_than_table', newest_listed: '3', due_releases: 2 },
    });
    expect(judgeRelease(release('5', '5.0'), {}, resolvePolicy({}), now, builtIn).status).toBe('PASS');
    expect(judgeRelease(release('6', '6.0'), {}, resolvePolicy({}), now, builtIn)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', newest_listed: '3' },
    });
    // Not yet due: a number the data set's pattern says cannot have been released.
    expect(judgeRelease(release('4', '4.0'), {}, resolvePolicy({}), new Date('2024-06-01T00:00:00Z'), builtIn).status).toBe('UNKNOWN');
    // A product whose newest release is always supported (macOS) needs no cadence.
    expect(judgeRelease(release('9', '9.0'), { newestAlwaysSupported: true }, resolvePolicy({}), now, builtIn).evidence.rule).toBe(
      'newer_than_table',
    );
  });
});

describe('compareVersions: the separators and text segments', () => {
  it('splits on dots, hyphens and underscores', () => {
    expect(compareVersions('1-10', '1-9')).toBe(1);
    expect(compareVersions('1_10', '1_9')).toBe(1);
    expect(compareVersions('1-10', '1.10')).toBe(0);
  });

  it('pads the shorter side with zeros, either side', () => {
    expect(compareVersions('24.04.0', '24.04')).toBe(0);
    expect(compareVersions('24.04', '24.04.0')).toBe(0);
  });

  it('compares as numbers only segments of digits alone', () => {
    // Number() reads "1e3" as 1000 and "0x10" as 16: as text they sort before "999" and "9".
    expect(compareVersions('1e3', '999')).toBe(-1);
    expect(compareVersions('999', '1e3')).toBe(1);
    expect(compareVersions('0x10', '9')).toBe(-1);
  });

  it('compares a text segment against a number as text, never as NaN', () => {
    expect(compareVersions('1.a', '1.2')).toBe(1);
    expect(compareVersions('1.2', '1.a')).toBe(-1);
    expect(compareVersions('14.1-RELEASE-p10', '14.1-RELEASE-p9')).toBe(-1);
  });
});

describe('judgeRelease: edges', () => {
  const plain = resolvePolicy({});
  const table = (rows: LifecycleData['products'][string]): LifecycleData => ({ ...builtIn, products: { demo: rows } });

  it('passes a version equal to the minimum', () => {
    expect(judgeRelease(release('2', '2.10'), { minimum: '2.10' }, policy(), now, builtIn).evidence.rule).toBe('supported');
  });

  it("judges by the server's data set when the policy carries one, and says which", () => {
    const served: LifecycleData = {
      ...builtIn,
      dataset: { ...builtIn.dataset, committedAt: '2026-11-01' },
      products: { demo: [{ cycle: '2', eol: false }] },
    };
    const withServed = { ...plain, osVersion: { ...plain.osVersion, lifecycleData: served } };
    expect(judgeRelease(release('2', '2.0'), {}, withServed, now, builtIn)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'supported', lifecycle_checked_at: '2026-11-01' },
    });
  });

  it("uses the release's own end of support only for a cycle the table lacks, and only a date", () => {
    const own = (ownEnd: string, cycle = '9') => judgeRelease(release(cycle, `${cycle}.0`), { ownEnd }, plain, now, builtIn);
    expect(own('2027-06-30')).toMatchObject({ status: 'PASS', evidence: { rule: 'supported', eol: '2027-06-30', eol_source: 'release' } });
    expect(own('2026-11-21')).toMatchObject({ status: 'FAIL', evidence: { rule: 'eol', eol: '2026-11-21', eol_source: 'release' } });
    expect(own('2026-11-22').status).toBe('PASS');
    // The table's row wins over the release's own date; a malformed date is no date.
    expect(own('2030-01-01', '2').evidence).toMatchObject({ rule: 'eol', eol: '2026-01-01' });
    expect(own('2030-01-01', '2').evidence).not.toHaveProperty('eol_source');
    expect(own('June 2027').evidence).toMatchObject({ reason: 'unknown_release' });
    expect(own('2027-06-30x').evidence).toMatchObject({ reason: 'unknown_release' });
    expect(own('x2027-06-30').evidence).toMatchObject({ reason: 'unknown_release', rule: 'unknown_release' });
    // Grace counts for it too.
    const lenient = resolvePolicy({ osVersion: { graceDaysAfterEol: 30 } });
    expect(judgeRelease(release('9', '9.0'), { ownEnd: '2026-11-01' }, lenient, now, builtIn).status).toBe('PASS');
  });

  it('ends support at the start of the end day, grace days after it', () => {
    const onTheDay = table([{ cycle: '5', eol: '2026-11-21' }]);
    expect(judgeRelease(release('5', '5.0'), {}, plain, now, onTheDay).evidence.rule).toBe('eol');
    const dayAfter = table([{ cycle: '5', eol: '2026-11-22' }]);
    expect(judgeRelease(release('5', '5.0'), {}, plain, now, dayAfter)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'supported', eol: '2026-11-22', extended_end: null },
    });
    const graced = resolvePolicy({ osVersion: { graceDaysAfterEol: 1 } });
    expect(judgeRelease(release('5', '5.0'), {}, graced, new Date('2026-11-22T00:00:00Z'), onTheDay).evidence.rule).toBe('eol');
    expect(judgeRelease(release('5', '5.0'), {}, graced, new Date('2026-11-21T23:59:59Z'), onTheDay).status).toBe('PASS');
  });

  it('finds the oldest listed release wherever the table lists it', () => {
    const unordered = table([
      { cycle: '1', eol: '2020-01-01' },
      { cycle: '3', eol: false },
    ]);
    expect(judgeRelease(release('0', '0.1'), {}, plain, now, unordered)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'older_than_table', oldest_listed: '1' },
    });
  });

  it('leaves undecided a release between listed ones, or equal to one under another spelling', () => {
    const gap = table([
      { cycle: '1', eol: '2020-01-01' },
      { cycle: '3', eol: false },
    ]);
    expect(judgeRelease(release('2', '2.0'), {}, plain, now, gap)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', rule: 'unknown_release' },
    });
    // "1.0" compares equal to the oldest "1" and "3.0" to the newest "3": neither older nor newer.
    expect(judgeRelease(release('1.0', '1.0'), {}, plain, now, builtIn).evidence.reason).toBe('unknown_release');
    const same = judgeRelease(release('3.0', '3.0'), {}, plain, now, builtIn);
    expect(same.evidence.reason).toBe('unknown_release');
    expect(same.evidence).not.toHaveProperty('newest_listed');
  });

  it('answers unknown_release for a product the table lacks', () => {
    expect(judgeRelease({ product: 'nowhere', cycle: '1', version: '1' }, {}, plain, now, builtIn)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', product: 'nowhere' },
    });
  });

  it('names no extension when the cycle has no extended end, whatever the rules offer', () => {
    const v = judgeRelease(release('2', '2.0'), { extendedSupport: lts(true) }, plain, now, builtIn);
    expect(v).toMatchObject({ status: 'FAIL', evidence: { rule: 'eol', extended_end: null } });
    expect(v.evidence).not.toHaveProperty('extended_support');
  });

  it('FAILs an older release from the oldest listed end, extended end first', () => {
    const ended = table([{ cycle: '3', eol: '2020-01-01' }]);
    expect(judgeRelease(release('2', '2.0'), {}, plain, now, ended)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'older_than_table', oldest_listed: '3', oldest_eol: '2020-01-01' },
    });
    const extended = table([{ cycle: '3', eol: '2020-01-01', extendedEnd: '2030-01-01' }]);
    expect(judgeRelease(release('2', '2.0'), {}, plain, now, extended).evidence.reason).toBe('unknown_release');
    const extensionOver = table([{ cycle: '3', eol: '2020-01-01', extendedEnd: '2025-01-01' }]);
    expect(judgeRelease(release('2', '2.0'), {}, plain, now, extensionOver).evidence).toMatchObject({ oldest_eol: '2025-01-01' });
  });

  it('judges the patch level only against a dated latest release, after the allowed lag', () => {
    const strict = resolvePolicy({ osVersion: { maxPatchLagDays: 30 } });
    const lagging = (latestReleaseDate?: string) =>
      judgeRelease(
        release('5', '5.1'),
        {},
        strict,
        now,
        table([{ cycle: '5', eol: false, latest: '5.3', ...(latestReleaseDate ? { latestReleaseDate } : {}) }]),
      );
    expect(lagging('2026-10-22')).toMatchObject({ status: 'FAIL', evidence: { rule: 'patch_lag', latest: '5.3' } });
    expect(lagging('2026-10-23')).toMatchObject({ status: 'PASS', evidence: { rule: 'supported', latest: '5.3' } });
    // The lag ends at the start of its last day.
    const atMidnight = new Date('2026-11-21T00:00:00Z');
    const table5 = table([{ cycle: '5', eol: false, latest: '5.3', latestReleaseDate: '2026-10-22' }]);
    expect(judgeRelease(release('5', '5.1'), {}, strict, atMidnight, table5).evidence.rule).toBe('patch_lag');
    expect(lagging().evidence).not.toHaveProperty('latest');
    expect(lagging().status).toBe('PASS');
  });
});

describe('judgeRelease: a cycle newer than the table', () => {
  const plain = resolvePolicy({});
  const data = (rows: LifecycleData['products'][string]): LifecycleData => ({ ...builtIn, products: { demo: rows } });
  const newer = (cycle: string, rows: LifecycleData['products'][string], at = now) =>
    judgeRelease(release(cycle, cycle), {}, plain, at, data(rows));

  it('names the newest listed cycle when the product is always current', () => {
    expect(judgeRelease(release('9', '9.0'), { newestAlwaysSupported: true }, plain, now, builtIn)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'newer_than_table', newest_listed: '3' },
    });
  });

  it('needs two dated releases, the newest among them, and a cadence above zero', () => {
    expect(newer('4', [{ cycle: '3', releaseDate: '2020-01-01', eol: false }]).evidence.reason).toBe('unknown_release');
    expect(
      newer('4', [
        { cycle: '3', eol: false },
        { cycle: '2', releaseDate: '2019-01-01', eol: false },
        { cycle: '1', releaseDate: '2018-01-01', eol: false },
      ]).evidence.reason,
    ).toBe('unknown_release');
    expect(
      newer('4', [
        { cycle: '3', releaseDate: '2020-01-01', eol: false },
        { cycle: '2', releaseDate: '2020-01-01', eol: false },
      ]).evidence.reason,
    ).toBe('unknown_release');
    // Two dated releases a year apart, and undated rows ignored: due by now.
    expect(
      newer('4', [
        { cycle: '3', releaseDate: '2025-01-01', eol: false },
        { cycle: '2', releaseDate: '2024-01-01', eol: false },
        { cycle: '1', eol: false },
      ]),
    ).toMatchObject({ status: 'PASS', evidence: { rule: 'newer_than_table', due_releases: 1 } });
  });

  it('counts due releases from the median gap of the last seven releases', () => {
    // Eight releases 1000 days apart, then six yearly ones: the last seven give a 365-day gap (two
    // due by now since 2024-01-01), all fifteen would give 1000 days (one due).
    const day = (n: number) => new Date(Date.parse('2024-01-01T00:00:00Z') - n * 86_400_000).toISOString().slice(0, 10);
    const offsets = [...[6, 5, 4, 3, 2, 1].map((k) => k * 365), ...[1, 2, 3, 4, 5, 6, 7, 8].map((k) => 6 * 365 + k * 1000)];
    const rows = [0, ...offsets].map((offset, i) => ({ cycle: String(15 - i), releaseDate: day(offset), eol: false as const }));
    expect(newer('17', rows)).toMatchObject({ status: 'PASS', evidence: { newest_listed: '15', due_releases: 2 } });
    expect(newer('18', rows).evidence.reason).toBe('unknown_release');
  });

  it('takes the upper middle gap when there is an even number of gaps', () => {
    // Gaps 100 and 400 days: the median taken is 400, so one release is due 400 days after the newest.
    const rows = [
      { cycle: '1', releaseDate: '2025-01-01', eol: false as const },
      { cycle: '2', releaseDate: '2026-02-05', eol: false as const },
      { cycle: '3', releaseDate: '2026-05-16', eol: false as const },
    ];
    expect(newer('4', rows, new Date('2027-06-20T00:00:00Z'))).toMatchObject({ status: 'PASS', evidence: { due_releases: 1 } });
    expect(newer('4', rows, new Date('2026-11-21T00:00:00Z')).evidence.reason).toBe('unknown_release');
  });

  it('never passes a cycle without a leading number', () => {
    expect(
      newer('x4', [
        { cycle: '3', releaseDate: '2020-01-01', eol: false },
        { cycle: '2', releaseDate: '2019-01-01', eol: false },
      ]).evidence.reason,
    ).toBe('unknown_release');
  });
});

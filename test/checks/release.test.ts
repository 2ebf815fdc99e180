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

// OS_VERSION's shared rule: numeric version comparison and the lifecycle evaluation order.
import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '../../checks/policy';
import { compareVersions, judgeRelease, type Release } from '../../checks/release';

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

describe('judgeRelease', () => {
  it('FAILs below the minimum first (rule minimum)', () => {
    const v = judgeRelease(release('2', '2.1'), { minimum: '2.10' }, policy(), now);
    expect(v).toMatchObject({ status: 'FAIL', evidence: { rule: 'minimum', minimum: '2.10', extra: 'fact' } });
  });

  it('FAILs past the end of regular support (rule eol) unless extended support is accepted', () => {
    expect(judgeRelease(release('1', '1.5'), {}, policy(), now)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol', eol: '2025-01-01', extended_end: '2027-01-01' },
    });
    expect(judgeRelease(release('1', '1.5'), { acceptExtendedSupport: true }, policy(), now)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'extended_support', extended_support_accepted: true },
    });
    expect(judgeRelease(release('0', '0.9'), { acceptExtendedSupport: true }, policy(), now)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'extended_eol' },
    });
  });

  it('honours the grace period after the end of life', () => {
    const lenient = policy({ osVersion: { graceDaysAfterEol: 700 } });
    expect(judgeRelease(release('1', '1.5'), {}, lenient, now).status).toBe('PASS');
  });

  it('FAILs a lagging patch level only when maxPatchLagDays is set (rule patch_lag)', () => {
    expect(judgeRelease(release('1', '1.2'), { acceptExtendedSupport: true }, policy(), now).status).toBe('PASS');
    const strict = policy({ osVersion: { maxPatchLagDays: 30 } });
    expect(judgeRelease(release('1', '1.2'), { acceptExtendedSupport: true }, strict, now)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'patch_lag', latest: '1.5' },
    });
    expect(judgeRelease(release('1', '1.5'), { acceptExtendedSupport: true }, strict, now).status).toBe('PASS');
  });

  it('PASSes a cycle with no announced end', () => {
    expect(judgeRelease(release('2', '2.3'), {}, policy(), now)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'supported', eol: false },
    });
  });

  it('reports an unknown release as UNKNOWN, or FAIL when the policy says so', () => {
    expect(judgeRelease(release('7', '7.0'), {}, policy(), now)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release' },
    });
    expect(judgeRelease(release('7', '7.0'), {}, policy({ osVersion: { unknownRelease: 'FAIL' } }), now)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'unknown_release' },
    });
  });
});

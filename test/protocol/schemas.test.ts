// The wire schemas' own rules, independent of any server.
import { describe, expect, test } from 'vitest';
import {
  Credential,
  EnrollRequest,
  HeartbeatRequest,
  MAX_EVIDENCE_DEPTH,
  MAX_RESULTS_PER_REQUEST,
  PostureResult,
  PosturesRequest,
  Rfc3339,
} from '../../src/protocol/schemas';

const valid = { check_key: 'OS_VERSION', status: 'PASS', observed_at: '2026-01-01T00:00:00Z' } as const;

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) value = { d: value };
  return value;
}

describe('wire schemas', () => {
  test('credentials are exactly 96 hex characters', () => {
    expect(Credential.safeParse('aB'.repeat(48)).success).toBe(true);
    for (const bad of ['a'.repeat(95), 'a'.repeat(97), 'g'.repeat(96), ` ${'a'.repeat(95)}`])
      expect(Credential.safeParse(bad).success).toBe(false);
  });

  test('RFC 3339 times need an offset', () => {
    for (const good of ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.123456+05:30', '2024-02-29T23:59:59-08:00'])
      expect(Rfc3339.safeParse(good).success).toBe(true);
    for (const bad of ['2026-01-01T00:00:00', '2026-01-01', '2025-02-29T00:00:00Z', 'now', '1700000000'])
      expect(Rfc3339.safeParse(bad).success).toBe(false);
  });

  test('unknown fields are stripped, not refused', () => {
    expect(EnrollRequest.parse({ token: 'x', extra: 1 })).toEqual({ token: 'x' });
    const heartbeat = { hardware_uuid: 'u', hostname: 'h', platform: 'LINUX', os_version: 'o', agent_version: 'a', uptime: 3 };
    expect(HeartbeatRequest.parse(heartbeat)).not.toHaveProperty('uptime');
  });

  test(`evidence is an object nesting at most ${MAX_EVIDENCE_DEPTH} levels`, () => {
    expect(PostureResult.safeParse({ ...valid, evidence: nested(MAX_EVIDENCE_DEPTH) }).success).toBe(true);
    expect(PostureResult.safeParse({ ...valid, evidence: nested(MAX_EVIDENCE_DEPTH + 1) }).success).toBe(false);
    expect(PostureResult.safeParse({ ...valid, evidence: { list: [[1, [2]]] } }).success).toBe(true);
    for (const evidence of [[], null, 'x', 1, true]) expect(PostureResult.safeParse({ ...valid, evidence }).success).toBe(false);
  });

  test(`a batch holds 0 to ${MAX_RESULTS_PER_REQUEST} results`, () => {
    expect(PosturesRequest.safeParse({ results: [] }).success).toBe(true);
    expect(PosturesRequest.safeParse({ results: Array(MAX_RESULTS_PER_REQUEST).fill(valid) }).success).toBe(true);
    expect(PosturesRequest.safeParse({ results: Array(MAX_RESULTS_PER_REQUEST + 1).fill(valid) }).success).toBe(false);
  });
});

// The cycle runner: concurrency, per-check timeouts, isolation of failures, the evidence cap and
// the per-cycle shared probes. The checks here are small test checks exercising the engine.
import { describe, expect, it } from 'vitest';
import { runChecks } from '../../checks/engine';
import { DEFAULT_POLICY, resolvePolicy } from '../../checks/policy';
import { defineCheck, type Check, type CheckContext } from '../../checks/types';
import { capEvidence, commandFailureReason, containersModeVerdict, EVIDENCE_LIMITS, fsFailureReason, pass } from '../../checks/verdict';
import { Rfc3339 } from '../../src/protocol/schemas';
import { FakeHost } from '../support/fakeHost';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const options = { host: new FakeHost(), policy: DEFAULT_POLICY };

function delayed(key: Check['key'], ms: number): Check {
  return defineCheck({
    key,
    platform: 'LINUX',
    collect: async () => {
      await sleep(ms);
      return { waited: ms };
    },
    evaluate: (facts) => pass({ ...facts, rule: 'waited' }),
  });
}

describe('runChecks', () => {
  it('runs checks concurrently and returns them in order as posture results', async () => {
    const started = Date.now();
    const results = await runChecks(
      [delayed('DISK_ENCRYPTION', 300), delayed('SCREEN_LOCK', 300), delayed('FIREWALL_ENABLED', 300)],
      options,
    );
    expect(Date.now() - started).toBeLessThan(800);
    expect(results.map((r) => r.check_key)).toEqual(['DISK_ENCRYPTION', 'SCREEN_LOCK', 'FIREWALL_ENABLED']);
    for (const r of results) {
      expect(r.status).toBe('PASS');
      expect(r.evidence).toEqual({ waited: 300, rule: 'waited' });
      expect(Rfc3339.safeParse(r.observed_at).success).toBe(true);
    }
  });

  it('turns a check that exceeds its timeout into UNKNOWN timeout without delaying the others', async () => {
    const hanging = defineCheck({
      key: 'TIME_SYNC',
      platform: 'LINUX',
      collect: () => new Promise<never>(() => {}),
      evaluate: () => pass({ rule: 'never' }),
    });
    const started = Date.now();
    const results = await runChecks([hanging, delayed('OS_VERSION', 10)], { ...options, checkTimeoutMs: 150 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(results[0]).toMatchObject({ check_key: 'TIME_SYNC', status: 'UNKNOWN', evidence: { reason: 'timeout', timeout_ms: 150 } });
    expect(results[1]).toMatchObject({ check_key: 'OS_VERSION', status: 'PASS' });
  });

  it('isolates a check that throws: UNKNOWN check_error carrying the error class only', async () => {
    const throwsInCollect = defineCheck({
      key: 'AUTO_UPDATE',
      platform: 'LINUX',
      collect: (): Promise<never> => Promise.reject(new TypeError('cannot read /home/alice/.config/secret')),
      evaluate: () => pass({ rule: 'never' }),
    });
    const throwsInEvaluate = defineCheck({
      key: 'PASSWORD_POLICY',
      platform: 'LINUX',
      collect: () => Promise.resolve({}),
      evaluate: () => {
        throw new RangeError('bad');
      },
    });
    const results = await runChecks([throwsInCollect, delayed('REMOTE_LOGIN', 5), throwsInEvaluate], options);
    expect(results[0]).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'check_error', error: 'TypeError' } });
    expect(JSON.stringify(results[0])).not.toContain('/home/alice');
    expect(results[1]).toMatchObject({ check_key: 'REMOTE_LOGIN', status: 'PASS' });
    expect(results[2]).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'check_error', error: 'RangeError' } });
  });

  it('caps the evidence of every result', async () => {
    const noisy = defineCheck({
      key: 'MALWARE_PROTECTION',
      platform: 'LINUX',
      collect: () => Promise.resolve({}),
      evaluate: () =>
        pass({
          text: 'x'.repeat(5_000),
          items: Array.from({ length: 500 }, (_, i) => i),
          nested: { a: { b: { c: { d: { e: 1 } } } } },
          rule: 'noisy',
        }),
    });
    const [result] = await runChecks([noisy], options);
    expect(Buffer.byteLength(JSON.stringify(result!.evidence))).toBeLessThanOrEqual(EVIDENCE_LIMITS.totalBytes);
  });

  it('runs a shared probe once per cycle for all checks that ask for it', async () => {
    let runs = 0;
    const probe = (ctx: CheckContext) =>
      ctx.shared('test.probe', async () => {
        runs += 1;
        await sleep(20);
        return 42;
      });
    const user = (key: Check['key']) =>
      defineCheck({ key, platform: 'LINUX', collect: probe, evaluate: (v) => pass({ v, rule: 'probed' }) });
    const results = await runChecks([user('DISK_ENCRYPTION'), user('FIREWALL_ENABLED'), user('TIME_SYNC')], options);
    expect(runs).toBe(1);
    expect(results.every((r) => r.evidence?.v === 42)).toBe(true);
    await runChecks([user('DISK_ENCRYPTION')], options);
    expect(runs).toBe(2);
  });
});

describe('capEvidence', () => {
  it('cuts strings, arrays and depth, and falls back to scalars above the total size', () => {
    const capped = capEvidence({ s: 'y'.repeat(300), list: Array.from({ length: 60 }, () => 'v'), deep: { a: { b: { c: { d: 1 } } } } });
    expect((capped.s as string).length).toBe(EVIDENCE_LIMITS.stringLength + 1);
    expect(capped.list).toHaveLength(EVIDENCE_LIMITS.arrayItems + 1);
    expect((capped.list as string[]).at(-1)).toBe('+10 more');
    expect(capped.deep).toEqual({ a: { b: { c: '[depth limit]' } } });
    const huge = capEvidence({ keep: 1, flag: true, blob: Array.from({ length: 50 }, () => 'z'.repeat(200)) });
    expect(huge).toEqual({ truncated: true, keep: 1, flag: true });
  });
});

describe('failure reasons', () => {
  it('maps command and file failures to the shared vocabulary', () => {
    expect(commandFailureReason({ exitCode: null, stdout: '', stderr: '', error: 'not_found' })).toBe('command_not_found');
    expect(commandFailureReason({ exitCode: null, stdout: '', stderr: '', error: 'timeout' })).toBe('timeout');
    expect(commandFailureReason({ exitCode: null, stdout: '', stderr: '', error: 'permission_denied' })).toBe('permission_denied');
    expect(commandFailureReason({ exitCode: 2, stdout: '', stderr: '' })).toBe('parse_error');
    expect(fsFailureReason('permission_denied')).toBe('permission_denied');
    expect(fsFailureReason('not_found')).toBe('not_found');
  });
});

describe('containers mode', () => {
  it("gives the policy's verdict for host-level controls in a container or jail, naming the rule", () => {
    expect(containersModeVerdict(DEFAULT_POLICY, 'jail', { virtualization: 'jail' })).toEqual({
      status: 'UNKNOWN',
      evidence: { reason: 'jail', virtualization: 'jail', rule: 'containers_mode' },
    });
    expect(containersModeVerdict(resolvePolicy({ containers: { mode: 'NOT_APPLICABLE' } }), 'container', {})).toEqual({
      status: 'NOT_APPLICABLE',
      evidence: { reason: 'container', rule: 'containers_mode' },
    });
  });
});

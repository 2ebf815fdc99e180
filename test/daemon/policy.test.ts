// The server policy reaching a real agent daemon (docs/agent.md and docs/server.md, "Policy"): the
// real server (heartbeat every second) behind the fault proxy, policies set with the real admin CLI,
// results read back from the server. This machine's own checks run: the OS_VERSION assertions need
// a Debian release the lifecycle data knows, as the harness is (Debian 12).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linuxLifecycle } from '../../checks/linux/lifecycle';
import type { PostureView } from '../../src/server/admin';
import type { PolicyChangeView } from '../../src/server/policy';
import { runAgent, daemonEnv, enrollNewDevice, runtimeStatus, stopDaemon, until, type RunningDaemon } from '../support/agent';
import { deviceDetails } from '../support/daemonWire';
import { daemonTestbed, startServerBehindProxy } from '../support/daemonTestbed';
import { parseJson } from '../support/json';
import { runServerCli, type RunningServer } from '../support/server';

const testbed = daemonTestbed(['--heartbeat-interval', '1', '--posture-interval', '2']);

async function setPolicy(target: RunningServer, org: string, document: unknown): Promise<void> {
  const file = join(target.dir, `policy-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(document));
  await runServerCli(['policy', 'set', '--db', target.dbPath, '--org', org, '--file', file]);
}

/** The device's results by check key from the newest report the server holds that satisfies `accept`. */
async function reportWhere(
  target: RunningServer,
  deviceId: string,
  accept: (results: Map<string, PostureView>) => boolean,
): Promise<Map<string, PostureView>> {
  return until(
    async () => {
      const { postures } = await deviceDetails(target, deviceId);
      const reports = new Map<string, Map<string, PostureView>>();
      for (const p of [...postures].sort((a, b) => b.id - a.id)) {
        const report = reports.get(p.correlation_id) ?? new Map<string, PostureView>();
        if (!report.has(p.check_key)) report.set(p.check_key, p);
        reports.set(p.correlation_id, report);
      }
      return [...reports.values()].find((r) => r.size >= 9 && accept(r));
    },
    (found) => found !== undefined,
    90_000,
    'a posture report as expected',
  ) as Promise<Map<string, PostureView>>;
}

const disabled = (r: Map<string, PostureView>) => r.get('FIREWALL_ENABLED')?.evidence?.reason === 'disabled_by_policy';

describe('a policy set on the server', () => {
  it('changes the next cycle: a threshold, a disabled check and Debian LTS accepted, judged with the server’s lifecycle data', async () => {
    const { deviceId, org } = await testbed.enrollNewDevice();
    testbed.startDaemon();
    const before = await reportWhere(testbed.server, deviceId, () => true);
    expect(disabled(before)).toBe(false);
    expect(before.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(8);
    const os = before.get('OS_VERSION')!;
    expect(os.evidence).toMatchObject({ product: 'debian', rule: 'extended_support_not_accepted' });
    expect((await runtimeStatus(testbed.stateDir)).policy).toMatchObject({ source: 'server', version: 0, lifecycle_version: 0 });

    // A newer lifecycle data set: this release out of regular support, its LTS running.
    const cycle = String(os.evidence?.cycle);
    const products = { ...linuxLifecycle.products, debian: [{ cycle, eol: '2026-01-01', extendedEnd: '2031-06-30' }] };
    const file = join(testbed.server.dir, 'lifecycle.json');
    writeFileSync(
      file,
      JSON.stringify({ LINUX: { ...linuxLifecycle, dataset: { ...linuxLifecycle.dataset, committedAt: '2026-11-02' }, products } }),
    );
    await runServerCli(['lifecycle', 'import', file, '--db', testbed.server.dbPath]);
    await setPolicy(testbed.server, org, {
      password: { minLength: 3 },
      checks: { disabled: ['FIREWALL_ENABLED'] },
      osVersion: { acceptExtendedSupport: { debianLts: true } },
    });

    const after = await reportWhere(testbed.server, deviceId, disabled);
    expect(after.get('FIREWALL_ENABLED')).toMatchObject({ status: 'NOT_APPLICABLE', evidence: { reason: 'disabled_by_policy' } });
    expect(after.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(3);
    expect(after.get('OS_VERSION')).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'extended_support', lifecycle_checked_at: '2026-11-02' },
    });
    // Nothing the disabled check would have collected was sent.
    expect(Object.keys(after.get('FIREWALL_ENABLED')!.evidence ?? {})).toEqual(['reason']);

    const status = await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => (s.policy as { version?: number } | undefined)?.version === 1,
    );
    expect(status.policy).toMatchObject({ source: 'server', version: 1, lifecycle_version: 1 });
    const shown = await runAgent(['status', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(shown.stdout).toMatch(/\nPolicy: +server version 1, fetched \S+ \(lifecycle data version 1 from the server\)\n/);

    const { stdout } = await runServerCli(['policy', 'history', '--db', testbed.server.dbPath, '--org', org, '--json']);
    expect(parseJson<PolicyChangeView[]>(stdout)).toMatchObject([{ version: 1, changed: ['checks', 'osVersion', 'password'] }]);
    // Fetched once per version announced, not at every heartbeat.
    expect(testbed.proxy.seen('policy').length).toBeLessThanOrEqual(3);
  });

  it('judges `device-agent check` too, once the agent holds it; check says which policy it used', async () => {
    const { org } = await testbed.enrollNewDevice();
    await setPolicy(testbed.server, org, { password: { minLength: 3 }, checks: { disabled: ['FIREWALL_ENABLED'] } });
    const once = await runAgent(['run', '--once', '--state-dir', testbed.stateDir], { env: daemonEnv() });
    expect(once.code, once.stderr).toBe(0);
    expect(existsSync(join(testbed.stateDir, 'server-policy.json'))).toBe(true);
    type Checked = { check_key: string; status: string; evidence?: Record<string, unknown>; policy: Record<string, unknown> };
    const check = async (args: string[]) => {
      const run = await runAgent(['check', '--only', 'FIREWALL_ENABLED,PASSWORD_POLICY', ...args], { env: daemonEnv() });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout;
    };
    const byKey = (text: string) => new Map(parseJson<Checked[]>(text).map((r) => [r.check_key, r]));

    const served = byKey(await check(['--json', '--state-dir', testbed.stateDir]));
    expect(served.get('FIREWALL_ENABLED')).toMatchObject({ status: 'NOT_APPLICABLE', evidence: { reason: 'disabled_by_policy' } });
    expect(served.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(3);
    expect(served.get('PASSWORD_POLICY')?.policy).toMatchObject({
      source: 'server',
      version: 1,
      lifecycle_version: expect.any(Number) as number,
    });
    // (The lifecycle data: the built-in set, or the one an earlier test imported into the shared server.)
    expect(await check(['--state-dir', testbed.stateDir])).toMatch(
      /\nPolicy: server version 1, fetched \S+ \([^)]*lifecycle data[^)]*\)\n$/,
    );

    // Another state directory (none here): the local policy, as before.
    const local = byKey(await check(['--json', '--state-dir', join(testbed.stateDir, '..', 'no-state')]));
    expect(local.get('FIREWALL_ENABLED')?.evidence?.reason).not.toBe('disabled_by_policy');
    expect(local.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(8);
    expect(local.get('PASSWORD_POLICY')?.policy).toEqual({ source: 'default' });

    // A stored policy this agent cannot apply (changed on disk): the local one judges, and check says why.
    const file = join(testbed.stateDir, 'server-policy.json');
    const stored = parseJson<{ response: { policy: unknown } }>(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...stored, response: { ...stored.response, policy: { password: { minLength: -1 } } } }));
    const refused = byKey(await check(['--json', '--state-dir', testbed.stateDir]));
    expect(refused.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(8);
    expect(refused.get('PASSWORD_POLICY')?.policy).toEqual({
      source: 'default',
      note: 'the stored server policy cannot be applied (invalid policy at password.minLength: Too small: expected number to be >0)',
    });
  });

  it('is refused when the agent cannot apply it (one line; the previous one stays) and not fetched again until another version', async () => {
    const { deviceId, org } = await testbed.enrollNewDevice();
    await setPolicy(testbed.server, org, { checks: { disabled: ['FIREWALL_ENABLED'] } });
    const daemon = testbed.startDaemon();
    await reportWhere(testbed.server, deviceId, disabled);
    // What a newer server could send: a setting value this agent does not accept.
    testbed.proxy.add({
      route: 'policy',
      fault: { kind: 'rewrite', transform: (body) => ({ ...(body as object), policy: { password: { minLength: -1 } } }) },
    });
    await setPolicy(testbed.server, org, { checks: { disabled: ['FIREWALL_ENABLED', 'TIME_SYNC'] } });
    const refused = await until(
      () => daemon.lines.filter((l) => l.event === 'policy_refused'),
      (lines) => lines.length === 1,
    );
    expect(refused[0]).toMatchObject({ level: 'error', policy_version: expect.stringMatching(/^2\.\d+$/) as string });
    expect(refused[0]!.msg).toBe(
      'server policy version 2 refused, the current policy stays: invalid policy at password.minLength: Too small: expected number to be >0',
    );
    const fetches = testbed.proxy.seen('policy').length;
    const t0 = Date.now();
    await testbed.proxy.waitFor((r) => r.filter((x) => x.route === 'heartbeat' && x.at > t0).length >= 3);
    expect(testbed.proxy.seen('policy').length).toBe(fetches);
    const latest = await reportWhere(testbed.server, deviceId, (r) => [...r.values()].every((p) => Date.parse(p.received_at) > t0));
    expect(disabled(latest)).toBe(true);
    expect(latest.get('TIME_SYNC')?.evidence?.reason).not.toBe('disabled_by_policy');
  });

  it('retries a failing fetch with backoff, and a 401 on the policy route wipes the key like any other', async () => {
    const { deviceId, org } = await testbed.enrollNewDevice();
    await setPolicy(testbed.server, org, { checks: { disabled: ['FIREWALL_ENABLED'] } });
    testbed.proxy.add({
      route: 'policy',
      fault: { kind: 'answer', status: 503, body: { error: 'internal_error', message: 'down' } },
      times: 2,
    });
    const daemon = testbed.startDaemon();
    await reportWhere(testbed.server, deviceId, disabled);
    const attempts = testbed.proxy.seen('policy');
    expect(attempts.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(daemon.lines.filter((l) => l.event === 'policy_fetch_failed')).toHaveLength(2);
    expect(existsSync(join(testbed.stateDir, 'server-policy.json'))).toBe(true);

    testbed.proxy.add({ route: 'policy', fault: { kind: 'answer', status: 401, body: { error: 'unauthorized', message: 'revoked' } } });
    await setPolicy(testbed.server, org, {});
    await until(
      () => runtimeStatus(testbed.stateDir),
      (s) => s.daemon_state === 'revoked',
    );
    expect(existsSync(join(testbed.stateDir, 'api-key'))).toBe(false);
    expect(existsSync(join(testbed.stateDir, 'server-policy.json'))).toBe(false);
    expect((await runtimeStatus(testbed.stateDir)).reason).toContain('401 on /policy');
  });
});

describe('a server without the policy extension', () => {
  it('is never asked for a policy: the local policy file applies, as before', async () => {
    const plain = await startServerBehindProxy(['--no-policy', '--heartbeat-interval', '1', '--posture-interval', '2']);
    let daemon: RunningDaemon | undefined;
    try {
      const { deviceId } = await enrollNewDevice(plain.server, testbed.stateDir, plain.proxy.url);
      const local = join(testbed.stateDir, '..', 'local-policy.json');
      writeFileSync(local, JSON.stringify({ checks: { disabled: ['FIREWALL_ENABLED'] }, password: { minLength: 5 } }));
      daemon = testbed.startDaemon({ DEVICE_AGENT_POLICY: local });
      const report = await reportWhere(plain.server, deviceId, disabled);
      expect(report.get('PASSWORD_POLICY')?.evidence?.min_length_required).toBe(5);
      await plain.proxy.waitFor((r) => r.filter((x) => x.route === 'heartbeat').length >= 3);
      expect(plain.proxy.requests.map((r) => r.route).filter((route) => !['heartbeat', 'postures', 'enroll'].includes(route))).toEqual([]);
      expect((await runtimeStatus(testbed.stateDir)).policy).toEqual({ source: 'local', file: local });
      expect(existsSync(join(testbed.stateDir, 'server-policy.json'))).toBe(false);
    } finally {
      if (daemon) await stopDaemon(daemon);
      await plain.stop();
    }
  });
});

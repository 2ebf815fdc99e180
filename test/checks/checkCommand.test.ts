// `device-agent check` explains its results: the built CLI run for real on this machine, and the
// rendering on recorded results.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../checks/policy';
import { osHintFrom, policyValues } from '../../checks/remediation';
import { explainResult } from '../../checks/remediationCatalogue';
import { renderExplanations, wrap } from '../../src/cli/commands/check';
import { currentPlatform } from '../../src/platform/current';
import type { PostureResult } from '../../src/protocol/schemas';

const CLI = path.resolve('dist/device-agent.cjs');

function cli(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, DEVICE_AGENT_POLICY: '' },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

type Explained = PostureResult & { summary: string; fix: string; admin: string; policy: unknown };

describe('device-agent check on this machine', () => {
  let json: ReturnType<typeof cli>;
  let human: ReturnType<typeof cli>;
  let explained: ReturnType<typeof cli>;
  let results: Explained[];
  beforeAll(() => {
    json = cli(['check', '--json']);
    results = JSON.parse(json.stdout) as Explained[];
    human = cli(['check']);
    explained = cli(['check', '--explain']);
  }, 120_000);

  it('--json adds summary, fix and admin to each result, from the catalogue', () => {
    expect(json.code).toBe(0);
    for (const r of results) {
      const e = explainResult(currentPlatform(), r, { policy: policyValues(DEFAULT_POLICY), os: osHintFrom(results) });
      expect(Object.keys(r)).toEqual(['check_key', 'status', 'evidence', 'observed_at', 'summary', 'fix', 'admin', 'policy']);
      // No agent state here (nor a policy file): the built-in defaults judged (test/daemon/policy.test.ts: a server's).
      expect(r.policy).toEqual({ source: 'default' });
      expect(e.generic).toBe(false);
      expect({ summary: r.summary, fix: r.fix, admin: r.admin }).toEqual({ summary: e.summary, fix: e.fix, admin: e.admin });
    }
  });

  it('prints, below the table, the summary and the fix of every result that is not PASS, and not of PASS ones', () => {
    expect(human.code).toBe(0);
    const [table, ...rest] = human.stdout.split('\n\n');
    expect(table!.split('\n')).toHaveLength(results.length + 1);
    const below = rest.join('\n\n').replace(/\n\s+/g, ' ');
    for (const r of results) {
      const header = `${r.check_key}  ${r.status} (${String(r.evidence?.rule ?? r.evidence?.reason)})`;
      if (r.status === 'PASS') {
        expect(below).not.toContain(header);
        continue;
      }
      expect(below).toContain(header);
      expect(below).toContain(r.summary);
      if (r.status === 'FAIL') expect(below).toContain(`How to fix: ${r.fix.split('\n')[0]!.split(' ').slice(0, 6).join(' ')}`);
    }
    // The admin's fleet-wide text is for --json and the console, not the person at the keyboard.
    for (const r of results.filter((x) => x.status === 'FAIL')) expect(below).not.toContain(r.admin);
    expect(human.stdout.endsWith('\n\nPolicy: built-in defaults\n')).toBe(true);
  });

  it('--explain explains PASS results too', () => {
    const below = explained.stdout.split('\n\n').slice(1).join('\n\n').replace(/\n\s+/g, ' ');
    for (const r of results.filter((x) => x.status === 'PASS')) expect(below).toContain(r.summary);
  });
});

describe('rendering', () => {
  it('wraps at 100 columns without ever splitting a `command`', () => {
    const command = '`sudo apt install ufw && sudo ufw default deny incoming && sudo ufw allow OpenSSH && sudo ufw enable`';
    const text = wrap(`Debian, Ubuntu: install and turn on ufw: ${command} (drop the OpenSSH line if nobody logs in remotely).`, '    ');
    for (const line of text.split('\n')) expect(line.startsWith('    ')).toBe(true);
    expect(text.split('\n').some((l) => l.trim() === command || l.includes(command))).toBe(true);
    expect(
      text
        .split('\n')
        .filter((l) => !l.includes(command))
        .every((l) => l.length <= 100),
    ).toBe(true);
  });

  it('explains a recorded FAIL with the steps for the release the OS_VERSION result names', () => {
    const results: PostureResult[] = [
      {
        check_key: 'FIREWALL_ENABLED',
        status: 'FAIL',
        evidence: { rule: 'no_inbound_filtering', ipv6_enabled: true },
        observed_at: '2026-11-24T12:00:00Z',
      },
      {
        check_key: 'OS_VERSION',
        status: 'PASS',
        evidence: { rule: 'supported', product: 'fedora', version: '42' },
        observed_at: '2026-11-24T12:00:00Z',
      },
    ];
    const os = { product: 'fedora', version: '42' };
    const text = renderExplanations(
      results,
      results.map((r) => explainResult('LINUX', r, { os })),
      false,
    );
    expect(text).toContain('FIREWALL_ENABLED  FAIL (no_inbound_filtering)');
    expect(text).toContain('Fedora, RHEL: `sudo dnf install firewalld && sudo systemctl enable --now firewalld`');
    expect(text).not.toContain('apt install');
    expect(text).not.toContain('OS_VERSION');
  });
});

// The server renders the agent's remediation catalogue beside stored results: `device show` (JSON
// and human) and the fleet view `device failing`, on evidence recorded from real checks, posted
// over HTTP to the real server. A word the catalogue does not know gets generic texts, not an error.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { explainResult } from '../../checks/remediationCatalogue';
import { runServerCli, startServer, type RunningServer } from '../support/server';
import { enrolledDevice, postures, result } from './client';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

// Evidence as this Debian 12 machine's `device-agent check --json` reports it.
const FIREWALL_FAIL = {
  check_key: 'FIREWALL_ENABLED',
  status: 'FAIL' as const,
  evidence: {
    source: 'nftables',
    managers: [],
    ufw: 'unavailable',
    firewalld: 'unavailable',
    ipv6_enabled: true,
    input_chains: 0,
    input_policy: null,
    ipv4_filtered: false,
    ipv6_filtered: false,
    rule: 'no_inbound_filtering',
  },
};
const OS_EOL = {
  check_key: 'OS_VERSION',
  status: 'FAIL' as const,
  evidence: {
    product: 'debian',
    cycle: '12',
    version: '12.11',
    source: 'os-release',
    id: 'debian',
    version_id: '12',
    eol: '2026-06-10',
    rule: 'eol',
  },
};

describe('device show', () => {
  test("--json: each result carries its summary, fix and admin texts, for the device's release", async () => {
    const device = await enrolledDevice(server, { org: 'remedy-show' });
    await postures(server, device.apiKey, {
      results: [
        result(OS_EOL),
        result(FIREWALL_FAIL),
        result({ check_key: 'TIME_SYNC', status: 'PASS', evidence: { rule: 'synchronized' } }),
      ],
    });
    const shown = await server.showDevice(device.deviceId);
    const firewall = shown.postures.find((p: { check_key: string }) => p.check_key === 'FIREWALL_ENABLED');
    const expected = explainResult('LINUX', FIREWALL_FAIL, { os: { product: 'debian', version: '12.11' } });
    expect(firewall?.remediation).toEqual({
      word: 'no_inbound_filtering',
      summary: expected.summary,
      fix: expected.fix,
      admin: expected.admin,
      generic: false,
    });
    expect(firewall?.remediation.fix).toMatch(/^Debian, Ubuntu: install and turn on ufw/);
    expect(firewall?.remediation.fix).not.toContain('dnf');
    expect(shown.postures.find((p: { check_key: string }) => p.check_key === 'OS_VERSION')?.remediation.summary).toBe(
      'Debian 12.11 no longer receives security updates (support ended on 2026-06-10).',
    );
  });

  test('human output: the latest result of each check, with how to fix it on the device and for the fleet', async () => {
    const device = await enrolledDevice(server, { org: 'remedy-human' });
    await postures(server, device.apiKey, {
      results: [
        result({ ...FIREWALL_FAIL, evidence: { ...FIREWALL_FAIL.evidence }, observed_at: '2026-01-02T03:04:05.000Z' }),
        result({ check_key: 'TIME_SYNC', status: 'PASS', evidence: { rule: 'synchronized' } }),
      ],
    });
    const { stdout } = await runServerCli(['device', 'show', device.deviceId, '--db', server.dbPath]);
    const latest = stdout.slice(stdout.indexOf('Latest result of each check:'));
    const expected = explainResult('LINUX', FIREWALL_FAIL);
    expect(latest).toContain(
      `FIREWALL_ENABLED  FAIL (no_inbound_filtering), failing since 2026-01-02 03:04:05 UTC\n  ${expected.summary}\n  On the device:\n`,
    );
    expect(latest).toContain(`  For the fleet:\n    ${expected.admin}`);
    expect(latest).toContain('TIME_SYNC  PASS (synchronized)\n  The clock is kept in sync with a network time source.');
    expect(latest).not.toMatch(/TIME_SYNC[^]*On the device/);
  });

  test('a word, check or status from a newer agent gets generic texts, never an error', async () => {
    const device = await enrolledDevice(server, { org: 'remedy-newer' });
    const sent = await postures(server, device.apiKey, {
      results: [
        result({
          check_key: 'FIREWALL_ENABLED',
          status: 'FAIL',
          evidence: { rule: 'rule_of_a_newer_agent' },
          observed_at: '2026-01-02T03:04:05.000Z',
        }),
        result({ check_key: 'CUSTOM_VENDOR_CHECK', status: 'UNKNOWN', evidence: { reason: 'vendor_reason' } }),
        result({ check_key: 'SCREEN_LOCK', status: 'PASS', evidence: {} }),
      ],
    });
    expect(sent.status).toBe(204);
    const shown = await server.showDevice(device.deviceId);
    expect(shown.postures.map((p: { remediation: object }) => p.remediation)).toEqual([
      expect.objectContaining({ word: 'rule_of_a_newer_agent', generic: true, summary: 'This check fails.' }),
      expect.objectContaining({ word: 'vendor_reason', generic: true, summary: 'The agent could not decide this check.' }),
      expect.objectContaining({ word: null, generic: true, summary: 'This check passes.' }),
    ]);
    const { stdout } = await runServerCli(['device', 'show', device.deviceId, '--db', server.dbPath]);
    expect(stdout).toContain('FIREWALL_ENABLED  FAIL (rule_of_a_newer_agent), failing since 2026-01-02 03:04:05 UTC\n  This check fails.');
  });
});

describe('device failing', () => {
  test('counts the devices whose latest result fails, per check and rule, with the fleet-wide fix', async () => {
    const org = 'remedy-fleet';
    const a = await enrolledDevice(server, { org, hardwareUuid: 'aaaaaaaa-1111-4111-8111-111111111111' });
    const b = await enrolledDevice(server, { org, hardwareUuid: 'bbbbbbbb-2222-4222-8222-222222222222' });
    const c = await enrolledDevice(server, { org, hardwareUuid: 'cccccccc-3333-4333-8333-333333333333' });
    await postures(server, a.apiKey, { results: [result(FIREWALL_FAIL), result(OS_EOL)] });
    await postures(server, b.apiKey, { results: [result(FIREWALL_FAIL)] });
    // c failed, then fixed it: only its latest result counts.
    await postures(server, c.apiKey, { results: [result({ ...FIREWALL_FAIL, observed_at: new Date(Date.now() - 60_000).toISOString() })] });
    await postures(server, c.apiKey, {
      results: [result({ check_key: 'FIREWALL_ENABLED', status: 'PASS', evidence: { rule: 'inbound_filtered' } })],
    });

    const failures: unknown = JSON.parse((await runServerCli(['device', 'failing', '--db', server.dbPath, '--org', org, '--json'])).stdout);
    const firewall = explainResult('LINUX', { check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'no_inbound_filtering' } });
    expect(failures).toEqual([
      {
        platform: 'LINUX',
        check_key: 'FIREWALL_ENABLED',
        word: 'no_inbound_filtering',
        devices: [a.deviceId, b.deviceId].sort(),
        hostnames: ['test-host', 'test-host'],
        summary: firewall.summary,
        admin: firewall.admin,
        generic: false,
      },
      expect.objectContaining({ platform: 'LINUX', check_key: 'OS_VERSION', word: 'eol', devices: [a.deviceId] }),
    ]);
    const { stdout } = await runServerCli(['device', 'failing', '--db', server.dbPath, '--org', org]);
    expect(stdout).toContain(
      `2 devices fail FIREWALL_ENABLED (LINUX, no_inbound_filtering): ${firewall.summary}\n  How to fix: ${firewall.admin}`,
    );
    expect(stdout).toContain('1 device fails OS_VERSION (LINUX, eol)');
    // Hostnames beside the ids.
    expect(stdout).toContain(`  Devices: test-host (${a.deviceId})\n`);
  });
});

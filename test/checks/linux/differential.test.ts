// Differential tests: change the machine, see the verdict change. Each runs inside a private
// network and mount namespace (unshare), so the host's firewall and listening sockets are
// untouched: /proc/net/tcp and the nftables ruleset are per network namespace. CI installs
// nftables and openssh-server (.ci/run); where a tool is missing, or the kernel or a sandbox
// refuses namespaces, the test is skipped with the reason in its name.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PostureResult } from '../../../src/protocol/schemas';
import { anyString } from '../../support/matchers';
import { requireTools } from '../../support/requireTools';
import { findTool } from '../../support/systemTools';

const firewall = requireTools(['unshare', 'nft'], 'FIREWALL_ENABLED follows the kernel ruleset');
const remoteLogin = requireTools(['unshare', 'sshd'], 'REMOTE_LOGIN follows listening sockets');
const where = (tool: string): string => findTool(tool) ?? tool;
const UNSHARE = where('unshare');
const NFT = where('nft');
const SSHD = where('sshd');
const CLI = path.resolve('dist/device-agent.cjs');
const dir = mkdtempSync(path.join(tmpdir(), 'check-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a shell script in fresh network + mount namespaces; $NODE and $CLI point at the agent. */
function inNamespace(script: string) {
  return spawnSync(UNSHARE, ['--net', '--mount', '/bin/sh', '-c', script], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NODE: process.execPath, CLI, DEVICE_AGENT_POLICY: '' },
  });
}

/** Why namespaced tests cannot run here, or null when they can (detected, not guessed). */
function refusal(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  const probe = inNamespace('true');
  if (probe.status !== 0) return `unshare refused: ${(probe.stderr || probe.error?.message || 'no namespaces').trim().split('\n')[0]}`;
  return null;
}

function onlyResult(stdout: string): PostureResult {
  const results = JSON.parse(stdout) as PostureResult[];
  expect(results).toHaveLength(1);
  return results[0]!;
}

const nftRefusal = (() => {
  if (firewall.skip) return null;
  const reason = refusal();
  if (reason) return reason;
  const listing = inNamespace(`${NFT} list ruleset`);
  return listing.status === 0 ? null : `nftables unavailable in the kernel: ${listing.stderr.trim().split('\n')[0]}`;
})();

describe.skipIf(firewall.skip)(firewall.title, () => {
  it.skipIf(nftRefusal !== null)(`an inbound drop policy turns FAIL into PASS${nftRefusal ? ` (skipped: ${nftRefusal})` : ''}`, (ctx) => {
    const check = '"$NODE" "$CLI" check --json --only FIREWALL_ENABLED';
    const before = inNamespace(check);
    expect(before.status, before.stderr).toBe(0);
    const baseline = onlyResult(before.stdout);
    if (baseline.evidence?.container === true) return ctx.skip('running in a container: FIREWALL_ENABLED follows containers.mode');
    expect(baseline).toMatchObject({ status: 'FAIL', evidence: { rule: 'no_inbound_filtering', input_chains: 0 } });

    const rules = path.join(dir, 'drop-input.nft');
    writeFileSync(
      rules,
      [
        'table inet filter {',
        '  chain input {',
        '    type filter hook input priority filter; policy drop;',
        '    ct state established,related accept',
        '    iif "lo" accept',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const after = inNamespace(`${NFT} -f '${rules}' && ${check}`);
    expect(after.status, after.stderr).toBe(0);
    expect(onlyResult(after.stdout)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'inbound_filtered', input_policy: 'drop', ipv4_filtered: true, ipv6_filtered: true },
    });
  });

  it.skipIf(nftRefusal !== null)(
    `Debian's default accept-all /etc/nftables.conf ruleset stays FAIL${nftRefusal ? ` (skipped: ${nftRefusal})` : ''}`,
    (ctx) => {
      const rules = path.join(dir, 'debian-default.nft');
      writeFileSync(
        rules,
        [
          'flush ruleset',
          'table inet filter {',
          '\tchain input {',
          '\t\ttype filter hook input priority filter;',
          '\t}',
          '\tchain forward {',
          '\t\ttype filter hook forward priority filter;',
          '\t}',
          '}',
          '',
        ].join('\n'),
      );
      const run = inNamespace(`${NFT} -f '${rules}' && "$NODE" "$CLI" check --json --only FIREWALL_ENABLED`);
      expect(run.status, run.stderr).toBe(0);
      const result = onlyResult(run.stdout);
      if (result.evidence?.container === true) return ctx.skip('running in a container: FIREWALL_ENABLED follows containers.mode');
      expect(result).toMatchObject({ status: 'FAIL', evidence: { input_chains: 1, input_policy: 'accept' } });
    },
  );

  it.skipIf(nftRefusal !== null)(
    `a drop reached only through jumps (NixOS's nixos-fw layout) is followed: PASS, and FAIL once the final jump is gone${nftRefusal ? ` (skipped: ${nftRefusal})` : ''}`,
    (ctx) => {
      const rules = path.join(dir, 'jumps.nft');
      const chains = (final: string) =>
        [
          'flush ruleset',
          'table ip filter {',
          '  chain nixos-fw-refuse { counter drop; }',
          '  chain nixos-fw-log-refuse { meta pkttype != unicast jump nixos-fw-refuse; jump nixos-fw-refuse; }',
          '  chain nixos-fw-accept { counter accept; }',
          `  chain nixos-fw { iifname "lo" jump nixos-fw-accept; ct state established,related jump nixos-fw-accept; tcp dport 22 jump nixos-fw-accept; ${final} }`,
          '  chain INPUT { type filter hook input priority filter; policy accept; counter jump nixos-fw; }',
          '  chain FORWARD { type filter hook forward priority filter; policy drop; }',
          '}',
          '',
        ].join('\n');
      const check = '"$NODE" "$CLI" check --json --only FIREWALL_ENABLED';
      writeFileSync(rules, chains('jump nixos-fw-log-refuse;'));
      const filtered = inNamespace(`${NFT} -f '${rules}' && ${check}`);
      expect(filtered.status, filtered.stderr).toBe(0);
      const result = onlyResult(filtered.stdout);
      if (result.evidence?.container === true) return ctx.skip('running in a container: FIREWALL_ENABLED follows containers.mode');
      // An ip table covers IPv4 only; the namespace's loopback-only IPv6 is not exposure.
      expect(result).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'inbound_filtered', input_policy: 'accept', ipv4_filtered: true, ipv6_filtered: false, ipv6_enabled: false },
      });
      writeFileSync(rules, chains(''));
      const open = inNamespace(`${NFT} -f '${rules}' && ${check}`);
      expect(open.status, open.stderr).toBe(0);
      expect(onlyResult(open.stdout)).toMatchObject({ status: 'FAIL', evidence: { rule: 'no_inbound_filtering', ipv4_filtered: false } });
    },
  );
});

const sshRefusal = (() => {
  if (remoteLogin.skip) return null;
  const reason = refusal();
  if (reason) return reason;
  const keys = ['ed25519', 'ecdsa', 'rsa'].some((k) => existsSync(`/etc/ssh/ssh_host_${k}_key`));
  return keys ? null : 'no SSH host keys in /etc/ssh';
})();

describe.skipIf(remoteLogin.skip)(remoteLogin.title, () => {
  it.skipIf(sshRefusal !== null)(
    `an sshd started in the namespace turns PASS into FAIL, on 22 and on a port known only by its owner${sshRefusal ? ` (skipped: ${sshRefusal})` : ''}`,
    () => {
      const check = '"$NODE" "$CLI" check --json --only REMOTE_LOGIN';
      const before = inNamespace(check);
      expect(before.status, before.stderr).toBe(0);
      expect(onlyResult(before.stdout)).toMatchObject({ status: 'PASS', evidence: { ssh_listening: false } });

      // sshd needs its privilege-separation directory: a tmpfs /run private to this mount namespace.
      const script = [
        'set -e',
        'mount -t tmpfs tmpfs /run',
        'mkdir -m 755 /run/sshd',
        `${SSHD} -D -p 22 -p 2222 -o PidFile=none &`,
        'pid=$!',
        "trap 'kill $pid 2>/dev/null' EXIT",
        'i=0',
        // Wait until sshd listens (0016 = port 22 in /proc/net/tcp, LISTEN = 0A): up to a minute on a busy machine.
        "until grep -q ':0016 00000000:0000 0A' /proc/net/tcp; do i=$((i+1)); [ $i -lt 1200 ] || exit 3; sleep 0.05; done",
        check,
      ].join('\n');
      const after = inNamespace(script);
      expect(after.status, after.stderr).toBe(0);
      const result = onlyResult(after.stdout);
      expect(result).toMatchObject({
        status: 'FAIL',
        evidence: {
          rule: 'remote_login_exposed',
          ssh_listening: true,
          ssh_bind: 'any',
          ssh_ports: [22, 2222],
          ssh_socket_activated: false,
        },
      });
      // Run as root, the check maps sockets to sshd and reads `sshd -T`.
      if (process.getuid?.() === 0)
        expect(result.evidence).toMatchObject({
          owner_mapping: 'complete',
          password_authentication: anyString(),
          permit_root_login: anyString(),
        });
    },
  );
});

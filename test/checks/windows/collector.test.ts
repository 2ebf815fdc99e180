// The Windows collectors on a FakeHost: a full cycle of the nine checks starts exactly one
// PowerShell process with the exact arguments, reads only structured output, and a failure of one
// section (or of PowerShell itself) turns into UNKNOWN with a reason, never a guess.
import { describe, expect, it } from 'vitest';
import { runChecks } from '../../../checks/engine';
import { DEFAULT_POLICY, resolvePolicy } from '../../../checks/policy';
import { loadChecks } from '../../../checks/registry';
import { POWERSHELL, powershellArgs } from '../../../checks/windows/powershell';
import { PROBE_SCRIPT, PROBE_SERVICES, PROBE_TIMEOUT_MS, REGISTRY_READS } from '../../../checks/windows/probe';
import { SSHD_CONFIG } from '../../../checks/windows/remoteLogin';
import type { PostureResult } from '../../../src/protocol/schemas';
import { FakeHost, type RecordedCommand } from '../../support/fakeHost';
import { baselineProbe, err, probeStdout, type ProbeDocument } from './probeDocument';

const PROBE_ARGV = [POWERSHELL, '-NoProfile', '-NonInteractive', '-Command', PROBE_SCRIPT];
const NOW = new Date('2026-11-21T12:00:00Z');

async function cycle(probe: Omit<RecordedCommand, 'argv'>, policy = DEFAULT_POLICY, files: Record<string, string> = {}) {
  const host = new FakeHost({ commands: [{ argv: PROBE_ARGV, ...probe }], files });
  const results = await runChecks(await loadChecks('WINDOWS'), { host, policy, now: () => NOW });
  const byKey = Object.fromEntries(results.map((r) => [r.check_key, r])) as Record<string, PostureResult>;
  return { host, byKey, results };
}

const machine = (change: (doc: ProbeDocument) => void = () => {}) => {
  const doc = baselineProbe();
  change(doc);
  return { stdout: probeStdout(doc) };
};

describe('Windows collectors', () => {
  it('registers the nine official checks', async () => {
    const keys = (await loadChecks('WINDOWS')).map((c) => c.key).sort();
    expect(keys).toEqual([
      'AUTO_UPDATE',
      'DISK_ENCRYPTION',
      'FIREWALL_ENABLED',
      'MALWARE_PROTECTION',
      'OS_VERSION',
      'PASSWORD_POLICY',
      'REMOTE_LOGIN',
      'SCREEN_LOCK',
      'TIME_SYNC',
    ]);
  });

  it('runs one PowerShell process per cycle, with the exact argv, for all nine checks', async () => {
    const { host, byKey } = await cycle(machine());
    expect(host.calls).toEqual([
      { kind: 'run', target: POWERSHELL, args: powershellArgs(PROBE_SCRIPT), options: { timeoutMs: PROBE_TIMEOUT_MS } },
    ]);
    expect(host.commandsRun()).toEqual([PROBE_ARGV]);
    // The stock laptop: everything but the screen lock (sleeps after 30 min on AC), the local password
    // policy (length 0) and updating: its settings install updates, but it still has the November 2025 one.
    expect(Object.fromEntries(Object.entries(byKey).map(([k, r]) => [k, r.status]))).toEqual({
      DISK_ENCRYPTION: 'PASS',
      SCREEN_LOCK: 'FAIL',
      FIREWALL_ENABLED: 'PASS',
      TIME_SYNC: 'PASS',
      OS_VERSION: 'PASS',
      AUTO_UPDATE: 'FAIL',
      PASSWORD_POLICY: 'FAIL',
      REMOTE_LOGIN: 'PASS',
      MALWARE_PROTECTION: 'PASS',
    });
  });

  it('starts powershell.exe from its absolute path with -NoProfile -NonInteractive -Command', () => {
    expect(POWERSHELL).toBe('C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(powershellArgs('x')).toEqual(['-NoProfile', '-NonInteractive', '-Command', 'x']);
  });

  describe('the probe script', () => {
    it('uses structured sources only, never translated tool output', () => {
      for (const source of [
        'Get-NetFirewallProfile -PolicyStore ActiveStore',
        'root/SecurityCenter2',
        "Get-SecurityCenterProducts 'AntiVirusProduct'",
        "Get-SecurityCenterProducts 'FirewallProduct'",
        'Get-MpComputerStatus',
        'root/CIMV2/Security/MicrosoftVolumeEncryption -ClassName Win32_EncryptableVolume',
        'GetProtectionStatus',
        'GetConversionStatus',
        'GetKeyProtectorType',
        'Win32_PowerSettingDataIndex',
        "'secedit.exe') /export /mergedpolicy /areas SECURITYPOLICY /cfg $inf /quiet",
        // Its labels and dates are translated: the check reads only the numbers, by line position.
        "'w32tm.exe') /query /status /verbose",
        "ProviderName = 'Microsoft-Windows-Time-Service'; Id = 35, 37, 36, 47, 129, 134",
        'Get-CimInstance -ClassName Win32_Volume',
        "[ADSI]('WinNT://' + [Environment]::MachineName)",
        "OpenBaseKey('Users', 'Registry64')",
        'ConvertTo-Json -InputObject $Document -Depth 10 -Compress',
      ]) {
        expect(PROBE_SCRIPT).toContain(source);
      }
      expect(PROBE_SCRIPT).not.toMatch(/netsh|manage-bde|net accounts|powercfg|Get-BitLockerVolume/i);
      expect(PROBE_SCRIPT.split(/w32tm\.exe/i)).toHaveLength(2);
    });

    it('holds no double quote, so Windows command-line quoting never has to carry one', () => {
      expect(PROBE_SCRIPT).not.toContain('"');
      expect(PROBE_SCRIPT.length).toBeLessThan(30_000); // CreateProcess command lines stop at 32767 characters
    });

    it('reads exactly the registry keys the baseline document (and so every fixture) holds', () => {
      expect(Object.keys(baselineProbe().registry)).toEqual(Object.keys(REGISTRY_READS));
      expect(PROBE_SCRIPT).toContain(
        "  rdpPolicy = @('SOFTWARE\\Policies\\Microsoft\\Windows NT\\Terminal Services', 'fDenyTSConnections', 'UserAuthentication')\n",
      );
      expect(PROBE_SCRIPT).toContain(`@(${PROBE_SERVICES.map((s) => `'${s}'`).join(', ')})`);
    });

    it('keeps the user hives it reads to HKU (the agent runs as SYSTEM; HKCU would be its own hive)', () => {
      expect(PROBE_SCRIPT).toContain("($sid + '\\Software\\Policies\\Microsoft\\Windows\\Control Panel\\Desktop')");
      expect(PROBE_SCRIPT).toContain("($sid + '\\Control Panel\\Desktop')");
      expect(PROBE_SCRIPT).not.toMatch(/HKCU|CurrentUser/);
    });
  });

  it('gives every check the same UNKNOWN reason when PowerShell cannot run', async () => {
    for (const [failure, reason] of [
      [{ error: 'not_found' }, 'command_not_found'],
      [{ error: 'timeout' }, 'timeout'],
      [{ error: 'permission_denied' }, 'permission_denied'],
      [{ exitCode: 1, stderr: 'Der Befehl wurde nicht gefunden.' }, 'check_error'],
      [{ stdout: 'Zugriff verweigert' }, 'parse_error'],
      [{ stdout: '{"schema":2}' }, 'parse_error'],
    ] as const) {
      const { results } = await cycle(failure);
      expect(results).toHaveLength(9);
      for (const r of results) expect(r, JSON.stringify(failure)).toMatchObject({ status: 'UNKNOWN', evidence: { reason } });
    }
  });

  it('keeps a failed section to the checks that need it', async () => {
    const { byKey } = await cycle(
      machine((doc) => {
        doc.bitlocker = err('cim_AccessDenied');
        doc.antivirusProducts = err('cim_Failed');
      }),
    );
    expect(byKey.DISK_ENCRYPTION).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied', probe_error: 'cim_AccessDenied' },
    });
    expect(byKey.FIREWALL_ENABLED?.status).toBe('PASS');
    expect(byKey.MALWARE_PROTECTION).toMatchObject({ status: 'PASS', evidence: { source: 'defender', security_center: 'unreadable' } });
  });

  it('reads a byte-order mark and ASCII-escaped product names (the script escapes non-ASCII)', async () => {
    const doc = baselineProbe();
    doc.antivirusProducts = { ok: true, value: [{ displayName: 'Sécurité Pro', productState: 266240 }] };
    const stdout = `\uFEFF${JSON.stringify(doc).replace('Sécurité', 'S\\u00e9curit\\u00e9')}\r\n`;
    const { byKey } = await cycle({ stdout });
    expect(byKey.MALWARE_PROTECTION).toMatchObject({
      status: 'PASS',
      evidence: { product: 'Sécurité Pro', rule: 'third_party_antivirus' },
    });
  });

  it('reads sshd_config only when sshd runs and the policy accepts a hardened SSH server', async () => {
    const sshd = (doc: ProbeDocument) =>
      (doc.services as { value: unknown[] }).value.push({ Name: 'sshd', Start: 2, Triggered: false, State: 'Running' });
    const strict = await cycle(machine(sshd));
    expect(strict.host.calls.filter((c) => c.kind === 'readFile')).toEqual([]);
    expect(strict.byKey.REMOTE_LOGIN).toMatchObject({ status: 'FAIL', evidence: { rule: 'sshd_running' } });

    const lenient = resolvePolicy({ remoteLogin: { allowSshIfHardened: true } });
    const hardened = await cycle(machine(sshd), lenient, { [SSHD_CONFIG]: 'PasswordAuthentication yes\r\n' });
    expect(hardened.host.calls.filter((c) => c.kind === 'readFile').map((c) => c.target)).toEqual([SSHD_CONFIG]);
    expect(hardened.byKey.REMOTE_LOGIN).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'sshd_accepts_passwords', ssh_password_authentication: true },
    });

    const missing = await cycle(machine(sshd), lenient);
    expect(missing.byKey.REMOTE_LOGIN).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'not_found' } });
  });

  it('never ships SIDs, user paths or raw output in evidence', async () => {
    const { results } = await cycle(
      machine((doc) => {
        doc.userHives = {
          ok: true,
          value: [
            {
              Sid: 'S-1-5-21-1004336348-1177238915-682003330-1001',
              Policy: null,
              User: {
                ScreenSaveActive: '1',
                ScreenSaverIsSecure: '1',
                ScreenSaveTimeOut: '300',
                'SCRNSAVE.EXE': 'C:\\Users\\jdoe\\saver.scr',
              },
            },
            { Sid: 'S-1-12-1-3814935716-1223345834-2837654098-1925438221', Policy: null, User: { ScreenSaveActive: '0' } },
          ],
        };
      }),
    );
    const text = JSON.stringify(results.map((r) => r.evidence));
    expect(text).not.toMatch(/S-1-5-21|S-1-12-1|Users\\\\|jdoe|Administrator|time\.windows\.com/);
  });
});

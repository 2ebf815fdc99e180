// Each DARWIN collector asks for exactly the commands and files its evaluator needs: absolute
// paths, exact arguments, per-user reads in the console user's launchd session, nothing more.
import { describe, expect, it } from 'vitest';
import { createContext, runChecks } from '../../../checks/engine';
import { resolvePolicy, type PolicyOverride } from '../../../checks/policy';
import { checks } from '../../../checks/darwin/index';
import type { Check } from '../../../checks/types';
import { FakeHost, type HostRecording } from '../../support/fakeHost';

const NOW = new Date('2026-11-21T12:00:00Z');
const byKey = (key: string): Check => {
  const check = checks.find((c) => c.key === key);
  if (!check) throw new Error(`no DARWIN ${key}`);
  return check;
};

async function collect(key: string, recording: HostRecording, policy: PolicyOverride = {}) {
  const host = new FakeHost(recording);
  const resolved = resolvePolicy(policy);
  const facts = await byKey(key).collect(createContext(host, resolved, NOW));
  return { host, facts, verdict: byKey(key).evaluate(facts, resolved, NOW) };
}

const files = (host: FakeHost) => host.calls.filter((c) => c.kind === 'readFile').map((c) => c.target);
const runs = (host: FakeHost) => host.calls.filter((c) => c.kind === 'run');

const CONSOLE_ALICE = [
  '<dictionary> {',
  '  GID : 20',
  '  Name : alice',
  '  SessionInfo : <array> {',
  '    0 : <dictionary> {',
  '      kCGSSessionOnConsoleKey : TRUE',
  '      kCGSSessionUserIDKey : 501',
  '    }',
  '  }',
  '  UID : 501',
  '}',
];

it('registers the nine official checks for DARWIN, once each', () => {
  expect(checks.map((c) => c.key).sort()).toEqual([
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
  expect(checks.every((c) => c.platform === 'DARWIN')).toBe(true);
});

describe('DISK_ENCRYPTION', () => {
  it('runs fdesetup status and nothing else', async () => {
    const { host } = await collect('DISK_ENCRYPTION', {
      commands: [{ argv: ['/usr/bin/fdesetup', 'status'], stdout: 'FileVault is On.\n' }],
    });
    expect(host.calls).toEqual([{ kind: 'run', target: '/usr/bin/fdesetup', args: ['status'] }]);
  });
});

describe('SCREEN_LOCK', () => {
  it('finds the console user with scutil, then reads per-user settings as that user', async () => {
    const { host } = await collect('SCREEN_LOCK', { commands: [{ argv: ['/usr/sbin/scutil'], stdout: CONSOLE_ALICE }] });
    const calls = runs(host);
    expect(calls[0]).toEqual({ kind: 'run', target: '/usr/sbin/scutil', args: [], options: { input: 'show State:/Users/ConsoleUser\n' } });
    // In the user's launchd session, as the user: a bare uid switch would keep root's session.
    const asUser = ['asuser', '501', '/usr/bin/sudo', '-n', '-u', '#501'];
    expect(calls).toContainEqual({
      kind: 'run',
      target: '/bin/launchctl',
      args: [...asUser, '/usr/sbin/sysadminctl', '-screenLock', 'status'],
    });
    expect(calls).toContainEqual({
      kind: 'run',
      target: '/bin/launchctl',
      args: [...asUser, '/usr/bin/defaults', '-currentHost', 'read', 'com.apple.screensaver', 'idleTime'],
    });
    // Display sleep is a system setting: read as the agent, not as the user.
    expect(calls).toContainEqual({ kind: 'run', target: '/usr/bin/pmset', args: ['-g', 'custom'] });
    expect(calls).toHaveLength(4);
    expect(files(host)).toEqual([
      '/Library/Managed Preferences/alice/com.apple.screensaver.plist',
      '/Library/Managed Preferences/com.apple.screensaver.plist',
    ]);
  });

  it('reads nothing per-user when nobody is at the console', async () => {
    const { host, verdict } = await collect('SCREEN_LOCK', {
      commands: [{ argv: ['/usr/sbin/scutil'], stdout: ['<dictionary> {', '  GID : 0', '  Name : loginwindow', '  UID : 0', '}'] }],
    });
    expect(host.calls).toHaveLength(1);
    expect(verdict).toEqual({ status: 'UNKNOWN', evidence: { reason: 'no_console_user', console: 'login_window' } });
  });

  it('never puts the console user name into evidence', async () => {
    const { verdict } = await collect('SCREEN_LOCK', {
      commands: [
        { argv: ['/usr/sbin/scutil'], stdout: CONSOLE_ALICE },
        {
          argv: ['/bin/launchctl', 'asuser', '501', '/usr/bin/sudo', '-n', '-u', '#501', '/usr/sbin/sysadminctl', '-screenLock', 'status'],
          stderr: 'screenLock delay is immediate\n',
        },
        {
          argv: [
            '/bin/launchctl',
            'asuser',
            '501',
            '/usr/bin/sudo',
            '-n',
            '-u',
            '#501',
            '/usr/bin/defaults',
            '-currentHost',
            'read',
            'com.apple.screensaver',
            'idleTime',
          ],
          stdout: '300\n',
        },
      ],
    });
    // pmset is missing, but the 5-minute screen saver alone is within the 15-minute limit.
    expect(verdict.status).toBe('PASS');
    expect(JSON.stringify(verdict.evidence)).not.toMatch(/alice|501/);
  });
});

describe('FIREWALL_ENABLED', () => {
  it('asks socketfilterfw for all three states in one run and reads only the firewall profile', async () => {
    const { host } = await collect('FIREWALL_ENABLED', {});
    expect(host.commandsRun()).toEqual([
      ['/usr/libexec/ApplicationFirewall/socketfilterfw', '--getglobalstate', '--getstealthmode', '--getblockall'],
    ]);
    expect(files(host)).toEqual(['/Library/Managed Preferences/com.apple.security.firewall.plist']);
  });
});

describe('TIME_SYNC', () => {
  it('asks systemsetup, the profile and the time server, and measures the offset with sntp by default', async () => {
    const { host } = await collect('TIME_SYNC', {
      commands: [
        { argv: ['/usr/sbin/systemsetup', '-getusingnetworktime'], stdout: 'Network Time: On\n' },
        { argv: ['/usr/sbin/systemsetup', '-getnetworktimeserver'], stdout: 'Network Time Server: time.apple.com\n' },
      ],
    });
    expect(host.commandsRun()).toEqual([
      ['/usr/sbin/systemsetup', '-getusingnetworktime'],
      ['/usr/sbin/systemsetup', '-getnetworktimeserver'],
      ['/usr/bin/sntp', '-t', '2', 'time.apple.com'],
    ]);
    // sntp waits 2 s per address; the runner stops it after 6 s whatever happens.
    expect(runs(host).find((c) => c.target === '/usr/bin/sntp')).toEqual({
      kind: 'run',
      target: '/usr/bin/sntp',
      args: ['-t', '2', 'time.apple.com'],
      options: { timeoutMs: 6000 },
    });
    expect(files(host)).toEqual(['/Library/Managed Preferences/com.apple.applicationaccess.plist']);
  });

  it("asks Homebrew's chronyc (Apple silicon prefix, then Intel's) when Network Time is not On", async () => {
    const off = { argv: ['/usr/sbin/systemsetup', '-getusingnetworktime'], stdout: 'Network Time: Off\n' };
    const { host, verdict } = await collect('TIME_SYNC', { commands: [off] });
    expect(host.commandsRun()).toEqual([
      ['/usr/sbin/systemsetup', '-getusingnetworktime'],
      ['/usr/sbin/systemsetup', '-getnetworktimeserver'],
      ['/opt/homebrew/bin/chronyc', '-n', 'tracking'],
      ['/usr/local/bin/chronyc', '-n', 'tracking'],
    ]);
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'network_time_off' } });
    const intel = await collect('TIME_SYNC', {
      commands: [off, { argv: ['/usr/local/bin/chronyc', '-n', 'tracking'], stdout: 'Stratum         : 3\nLeap status     : Normal\n' }],
    });
    expect(intel.verdict).toMatchObject({
      status: 'PASS',
      evidence: { source: 'chronyc', rule: 'chrony_synchronized', network_time: false },
    });
  });

  it('never hands sntp a server name with anything after the name', async () => {
    const { host } = await collect('TIME_SYNC', {
      commands: [
        { argv: ['/usr/sbin/systemsetup', '-getusingnetworktime'], stdout: 'Network Time: On\n' },
        { argv: ['/usr/sbin/systemsetup', '-getnetworktimeserver'], stdout: 'Network Time Server: time.apple.com -S\n' },
      ],
    });
    expect(host.commandsRun().some(([command]) => command === '/usr/bin/sntp')).toBe(false);
  });

  it('never hands sntp a server name that looks like an option', async () => {
    const { host, verdict } = await collect(
      'TIME_SYNC',
      {
        commands: [
          { argv: ['/usr/sbin/systemsetup', '-getusingnetworktime'], stdout: 'Network Time: On\n' },
          { argv: ['/usr/sbin/systemsetup', '-getnetworktimeserver'], stdout: 'Network Time Server: -S\n' },
        ],
      },
      { timeSync: { maxOffsetSeconds: 2 } },
    );
    expect(host.commandsRun().some(([command]) => command === '/usr/bin/sntp')).toBe(false);
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'time_server_unknown', systemsetup_server: 'unusable_name' } });
  });
});

describe('OS_VERSION', () => {
  it('runs sw_vers without arguments', async () => {
    const { host } = await collect('OS_VERSION', {});
    expect(host.commandsRun()).toEqual([['/usr/bin/sw_vers']]);
  });
});

describe('AUTO_UPDATE', () => {
  it('reads the DDM state, managed and system Software Update files and sw_vers; plutil converts only a binary one', async () => {
    const system = '/Library/Preferences/com.apple.SoftwareUpdate.plist';
    const { host } = await collect('AUTO_UPDATE', {
      files: {
        [system]: 'bplist00\u00d8',
        '/Library/Managed Preferences/com.apple.SoftwareUpdate.plist': '<?xml version="1.0"?><plist version="1.0"><dict/></plist>',
      },
    });
    expect(files(host).sort()).toEqual([
      '/Library/Managed Preferences/com.apple.SoftwareUpdate.plist',
      system,
      '/var/db/softwareupdate/SoftwareUpdateDDMStatePersistence.plist',
    ]);
    expect(host.commandsRun().sort()).toEqual([['/usr/bin/plutil', '-convert', 'xml1', '-o', '-', system], ['/usr/bin/sw_vers']]);
  });
});

describe('PASSWORD_POLICY', () => {
  it('runs pwpolicy -getaccountpolicies and reads the passcode profile', async () => {
    const { host } = await collect('PASSWORD_POLICY', {});
    expect(host.commandsRun()).toEqual([['/usr/bin/pwpolicy', '-getaccountpolicies']]);
    expect(files(host)).toEqual(['/Library/Managed Preferences/com.apple.mobiledevice.passwordpolicy.plist']);
  });
});

describe('REMOTE_LOGIN', () => {
  const disabledBlock = (state: string) => ['disabled services = {', `\t"com.openssh.sshd" => ${state}`, '}'];

  const NETSTAT = ['/usr/sbin/netstat', '-an', '-p', 'tcp'];

  it("asks launchd, and netstat where launchd's sockets listen, when launchd answers", async () => {
    const { host } = await collect('REMOTE_LOGIN', {
      commands: [{ argv: ['/bin/launchctl', 'print-disabled', 'system'], stdout: disabledBlock('disabled') }],
    });
    expect(host.commandsRun()).toEqual([['/bin/launchctl', 'print-disabled', 'system'], NETSTAT]);
    expect(files(host)).toEqual(['/Library/Application Support/Apple/Remote Desktop/RemoteManagement.launchd']);
  });

  it('asks launchd whether sshd is loaded when the override database has no line for it', async () => {
    const noLine = { commands: [{ argv: ['/bin/launchctl', 'print-disabled', 'system'], stdout: ['disabled services = {', '}'] }] };
    const { host, verdict } = await collect('REMOTE_LOGIN', noLine);
    expect(host.commandsRun()).toEqual([
      ['/bin/launchctl', 'print-disabled', 'system'],
      NETSTAT,
      ['/bin/launchctl', 'print', 'system/com.openssh.sshd'],
    ]);
    // No answer from launchd about the service: not "off".
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'command_not_found' } });
  });

  it('falls back to systemsetup only when launchd gives no answer', async () => {
    const { host } = await collect('REMOTE_LOGIN', {});
    expect(host.commandsRun()).toEqual([
      ['/bin/launchctl', 'print-disabled', 'system'],
      NETSTAT,
      ['/usr/sbin/systemsetup', '-getremotelogin'],
    ]);
  });

  it('reads the effective sshd configuration only when SSH is on and hardened SSH is acceptable', async () => {
    const on = { commands: [{ argv: ['/bin/launchctl', 'print-disabled', 'system'], stdout: disabledBlock('enabled') }] };
    expect((await collect('REMOTE_LOGIN', on)).host.commandsRun()).not.toContainEqual(['/usr/sbin/sshd', '-G']);
    const allowed = await collect('REMOTE_LOGIN', on, { remoteLogin: { allowSshIfHardened: true } });
    expect(allowed.host.commandsRun()).toContainEqual(['/usr/sbin/sshd', '-G']);
    expect(allowed.verdict).toMatchObject({ status: 'UNKNOWN', evidence: { step: 'sshd_config' } });
    const off = { commands: [{ argv: ['/bin/launchctl', 'print-disabled', 'system'], stdout: disabledBlock('disabled') }] };
    expect((await collect('REMOTE_LOGIN', off, { remoteLogin: { allowSshIfHardened: true } })).host.commandsRun()).toHaveLength(2);
  });
});

describe('MALWARE_PROTECTION', () => {
  const legacy = '/Library/Apple/System/Library/CoreServices/XProtect.bundle/Contents/Info.plist';
  const current = '/var/protected/xprotect/XProtect.bundle/Contents/Info.plist';
  const info = (version: string) =>
    `<?xml version="1.0"?><plist version="1.0"><dict><key>CFBundleShortVersionString</key><string>${version}</string></dict></plist>`;

  it('asks spctl, reads both XProtect copies and the remediator, and stats only the copies present (no stat process)', async () => {
    const { host, verdict } = await collect('MALWARE_PROTECTION', {
      files: { [legacy]: info('5272') },
      stats: { [legacy]: { mtime: '2026-11-09T12:00:00Z' } },
    });
    expect(host.commandsRun().sort()).toEqual([['/usr/bin/sw_vers'], ['/usr/sbin/spctl', '--status']]);
    expect(host.calls.filter((c) => c.kind === 'stat').map((c) => c.target)).toEqual([legacy]);
    expect(verdict.evidence).toMatchObject({ xprotect_location: 'library_apple', signature_age_days: 12, max_signature_age_days: 30 });
    expect(files(host).sort()).toEqual(
      [
        '/Library/Apple/System/Library/CoreServices/XProtect.app/Contents/Info.plist',
        legacy,
        '/Library/Managed Preferences/com.apple.SoftwareUpdate.plist',
        '/Library/Preferences/com.apple.SoftwareUpdate.plist',
        '/var/db/softwareupdate/SoftwareUpdateDDMStatePersistence.plist',
        current,
      ].sort(),
    );
  });

  it('keeps a copy its stat cannot date, judged undatable', async () => {
    const { verdict } = await collect('MALWARE_PROTECTION', {
      commands: [{ argv: ['/usr/sbin/spctl', '--status'], stdout: 'assessments enabled\n', exitCode: 0 }],
      files: { [legacy]: info('5272') },
    });
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'signature_age_unknown', xprotect_version: '5272' } });
  });

  it("runs a required product's tool besides, one process per product, and none by default", async () => {
    const { host } = await collect('MALWARE_PROTECTION', {}, { malware: { requiredAgents: { DARWIN: ['crowdstrike', 'falcon-sensor'] } } });
    expect(host.commandsRun().sort()).toEqual([
      ['/Applications/Falcon.app/Contents/Resources/falconctl', 'stats'],
      ['/usr/bin/sw_vers'],
      ['/usr/sbin/spctl', '--status'],
    ]);
  });
});

describe('one cycle over all nine checks', () => {
  it('runs shared probes once: the console user and the Software Update files', async () => {
    const host = new FakeHost({ commands: [{ argv: ['/usr/sbin/scutil'], stdout: CONSOLE_ALICE }] });
    const results = await runChecks(checks, { host, policy: resolvePolicy({}), now: () => NOW });
    expect(results.map((r) => r.check_key)).toHaveLength(9);
    expect(host.commandsRun().filter(([command]) => command === '/usr/sbin/scutil')).toHaveLength(1);
    expect(files(host).filter((f) => f === '/Library/Preferences/com.apple.SoftwareUpdate.plist')).toHaveLength(1);
    expect(host.commandsRun().filter(([command]) => command === '/usr/bin/sw_vers')).toHaveLength(1);
    for (const call of host.calls) expect(call.target.startsWith('/')).toBe(true);
    // Nothing was recorded except the console user: no check may conclude PASS from missing answers.
    for (const result of results) expect(result.status).not.toBe('PASS');
  });
});

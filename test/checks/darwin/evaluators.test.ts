// Edge cases of the DARWIN parsers and evaluators not worth a whole fixture: look-alike strings,
// conflicting sources, malformed values. Every evaluator is pure, so these need no host.
import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '../../../checks/policy';
import type { CommandResult } from '../../../checks/types';
import { evaluateFileVault, parseFdesetupStatus } from '../../../checks/darwin/diskEncryption';
import { evaluateFirewall, parseSocketfilterfw } from '../../../checks/darwin/firewall';
import { evaluateMalwareProtection, parseSpctlStatus, type MalwareFacts } from '../../../checks/darwin/malwareProtection';
import { evaluateOsVersion } from '../../../checks/darwin/osVersion';
import { evaluatePasswordPolicy, parsePwpolicy } from '../../../checks/darwin/passwordPolicy';
import { parseConsoleUser, type PlistFile } from '../../../checks/darwin/probes';
import { evaluateRemoteLogin, parsePrintDisabled } from '../../../checks/darwin/remoteLogin';
import {
  evaluateScreenLock,
  parseDefaultsInteger,
  parsePmsetCustom,
  parseScreenLockStatus,
  type ScreenLockFacts,
} from '../../../checks/darwin/screenLock';
import { evaluateAutoUpdate } from '../../../checks/darwin/autoUpdate';
import { resolveSetting } from '../../../checks/darwin/softwareUpdate';
import { parseSwVers } from '../../../checks/darwin/swVers';
import { evaluateTimeSync } from '../../../checks/darwin/timeSync';
import { objectContaining } from '../../support/matchers';

const policy = resolvePolicy({});
const NOW = new Date('2026-11-21T12:00:00Z');
const ok = (stdout: string, stderr = '', exitCode = 0): CommandResult => ({ exitCode, stdout, stderr });
const missing: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'not_found' };
const absent: PlistFile = { state: 'absent' };
const present = (dict: Record<string, unknown>): PlistFile => ({ state: 'present', dict: dict as never });

describe('FileVault', () => {
  it('refuses to PASS beside a line it does not know, but still FAILs on "Off"', () => {
    expect(evaluateFileVault(ok('FileVault is On.\nSomething new in macOS 27.\n'), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_output', unrecognized_lines: [2] },
    });
    expect(evaluateFileVault(ok('\nFileVault is On, and more.\n'), policy).evidence.unrecognized_lines).toEqual([2]);
    expect(evaluateFileVault(ok('FileVault is Off.\nSomething new in macOS 27.\n'), policy).status).toBe('FAIL');
  });

  it('reads bare and decorated conversion lines', () => {
    expect(parseFdesetupStatus('Encryption in progress\n')).toMatchObject({ filevault: 'on', conversion: 'encrypting' });
    expect(parseFdesetupStatus('FileVault is On.\nEncryption in progress: Percent completed = 34.2\n')).toMatchObject({ percent: 34.2 });
    expect(parseFdesetupStatus('FileVault is On.\nEncryption in progress: Percent completed = 250\n')?.percent).toBeUndefined();
    expect(parseFdesetupStatus('Error: unable to determine status.\n')).toBeNull();
    // A substring is not a state: "FileVault is Onboarding" is no answer.
    expect(parseFdesetupStatus('FileVault is Onboarding.\n')).toBeNull();
  });

  it('keeps the deferred user name out of evidence and fails on a non-zero exit', () => {
    const verdict = evaluateFileVault(ok("FileVault is Off.\nDeferred enablement appears to be active for user 'jdoe'.\n"), policy);
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { conversion: 'deferred' } });
    expect(JSON.stringify(verdict.evidence)).not.toContain('jdoe');
    expect(evaluateFileVault(ok('FileVault is On.\n', '', 1), policy)).toMatchObject({ status: 'UNKNOWN', evidence: { exit_code: 1 } });
  });
});

describe('FileVault: the On/Off token decides, not the sentence around it', () => {
  it.each([
    ['FileVault is Off, but needs to be restarted to finish.', 'FAIL', 'filevault_off'],
    ['FileVault is On, but needs to be restarted to finish.', 'FAIL', 'restart_pending'],
    ["FileVault is Off.\nDeferred enablement appears to be active for user 'jdoe'", 'FAIL', 'deferred'],
    ['Deferred enablement appears to be active for user.', 'FAIL', 'deferred'],
    ['FileVault is Off.\nDeferred enablement appears to be active for user "david".', 'FAIL', 'deferred'],
    ['FileVault is Off', 'FAIL', 'filevault_off'],
    ['FileVault is Off, something Apple adds in a later release.', 'FAIL', 'filevault_off'],
  ])('%j -> %s %s', (stdout, status, rule) => {
    const verdict = evaluateFileVault(ok(`${stdout}\n`), policy);
    expect(verdict).toMatchObject({ status, evidence: { rule } });
  });

  it('never PASSes an On whose sentence goes on in words it does not know', () => {
    expect(evaluateFileVault(ok('FileVault is On, but something new.\n'), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_output' },
    });
  });
});

describe('console user (scutil)', () => {
  const session = (uid: number, onConsole: boolean) => [
    '    0 : <dictionary> {',
    `      kCGSSessionOnConsoleKey : ${onConsole ? 'TRUE' : 'FALSE'}`,
    `      kCGSSessionUserIDKey : ${uid}`,
    '    }',
  ];
  const dictionary = (name: string, uid: number, sessions: string[] = [], gid: number | null = 20) =>
    [
      '<dictionary> {',
      ...(gid === null ? [] : [`  GID : ${gid}`]),
      `  Name : ${name}`,
      '  SessionInfo : <array> {',
      ...sessions,
      '  }',
      `  UID : ${uid}`,
      '}',
    ].join('\n');

  it('takes the session on screen and the outer GID', () => {
    expect(parseConsoleUser(dictionary('bob', 502, session(502, true)))).toEqual({ state: 'user', name: 'bob', uid: 502, gid: 20 });
  });

  it('is not sure while fast user switching shows two different users', () => {
    expect(parseConsoleUser(dictionary('bob', 502, session(501, true)))).toEqual({ state: 'none', why: 'ambiguous' });
  });

  it("treats root and system accounts (Setup Assistant's _mbsetupuser) as nobody", () => {
    expect(parseConsoleUser(dictionary('_mbsetupuser', 248))).toEqual({ state: 'none', why: 'system_account' });
    expect(parseConsoleUser(dictionary('root', 0))).toEqual({ state: 'none', why: 'system_account' });
  });

  it('refuses output it cannot read', () => {
    expect(parseConsoleUser('')).toEqual({ state: 'unreadable', reason: 'parse_error' });
    expect(parseConsoleUser(dictionary('bob', 502, [], null))).toEqual({ state: 'unreadable', reason: 'parse_error' });
  });
});

describe('screen lock', () => {
  it('parses sysadminctl lines with and without the log prefix, fractional seconds included', () => {
    expect(parseScreenLockStatus('screenLock delay is immediate')).toEqual({ lock: 'immediate', graceSeconds: 0 });
    expect(parseScreenLockStatus('2026-09-26 sysadminctl[1:2] screenLock delay is 300 seconds')).toEqual({
      lock: 'delay',
      graceSeconds: 300,
    });
    expect(parseScreenLockStatus('screenLock delay is 300.000000 seconds')).toEqual({ lock: 'delay', graceSeconds: 300 });
    expect(parseScreenLockStatus('sysadminctl[123:4f] screenLock is off\n')).toEqual({ lock: 'off' });
  });

  it.each([
    '',
    'permission denied',
    'screenLock delay is -2 seconds',
    'screenLock delay is 300 secondsOops',
    'screenLock is offline',
    'screenLock delay is immediate\nscreenLock is off',
  ])('refuses %j', (text) => {
    expect(parseScreenLockStatus(text)).toBeNull();
  });

  it('reads defaults: a number, "does not exist", or nothing usable', () => {
    expect(parseDefaultsInteger(ok('600\n'))).toEqual({ state: 'set', seconds: 600 });
    expect(parseDefaultsInteger(ok('', 'The domain/default pair of (com.apple.screensaver, idleTime) does not exist\n', 1))).toEqual({
      state: 'absent',
    });
    expect(parseDefaultsInteger(ok('', 'some other error\n', 1))).toEqual({ state: 'unreadable' });
    expect(parseDefaultsInteger(ok('600.5\n'))).toEqual({ state: 'unreadable' });
  });

  it('reads pmset sections per power source (a Mac mini has only AC)', () => {
    expect(parsePmsetCustom('AC Power:\n displaysleep         10\n sleep                1\n')).toEqual([{ power: 'ac', minutes: 10 }]);
    expect(parsePmsetCustom('UPS Power:\n displaysleep 3\nAC Power:\n displaysleep 0\n')).toEqual([
      { power: 'ups', minutes: 3 },
      { power: 'ac', minutes: 0 },
    ]);
    expect(parsePmsetCustom('displaysleep 10\n')).toBeNull();
  });

  const user = { state: 'user', name: 'alice', uid: 501, gid: 20 } as const;
  const facts = (over: Partial<ScreenLockFacts>): ScreenLockFacts => ({
    user,
    lock: ok('', 'screenLock delay is immediate\n'),
    idleTime: ok('600\n'),
    managedUser: absent,
    managedComputer: absent,
    pmset: ok('Battery Power:\n displaysleep 2\nAC Power:\n displaysleep 10\n'),
    ...over,
  });

  it('decides on the screen saver alone when pmset cannot answer, and only then', () => {
    expect(evaluateScreenLock(facts({ pmset: missing }), policy).status).toBe('PASS');
    expect(evaluateScreenLock(facts({ pmset: missing, idleTime: ok('3600\n') }), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'idle_time_unknown' },
    });
  });

  it('fails only the power source that is over the limit', () => {
    const verdict = evaluateScreenLock(
      facts({ idleTime: ok('0\n'), pmset: ok('Battery Power:\n displaysleep 5\nAC Power:\n displaysleep 0\n') }),
      policy,
    );
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'idle_time', over_limit_power: ['ac'] } });
  });

  it("uses the profile's grace period over sysadminctl and the user's profile over the computer's", () => {
    const managed = evaluateScreenLock(
      facts({
        lock: ok('', 'screenLock delay is 300 seconds\n'),
        managedUser: present({ askForPasswordDelay: 0 }),
        managedComputer: present({ askForPasswordDelay: 60, idleTime: 300 }),
      }),
      policy,
    );
    expect(managed).toMatchObject({
      status: 'PASS',
      evidence: { source: 'mdm', grace_seconds: 0, screensaver_from: 'mdm', screensaver_idle_seconds: 300 },
    });
  });

  it('reports a per-user command that could not run (agent not root) as that reason', () => {
    const denied: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'permission_denied' };
    expect(evaluateScreenLock(facts({ lock: denied }), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'permission_denied' },
    });
  });
});

describe('firewall', () => {
  it('takes "Firewall is enabled." without a number as state 1 (older releases)', () => {
    expect(parseSocketfilterfw('Firewall is enabled.\n').globalState).toBe(1);
  });

  it('never reads "enabled" in the block-all or stealth lines as the firewall state', () => {
    const facts = { socketfilterfw: ok('Firewall has block all state set to enabled.\nFirewall stealth mode is on\n'), managed: absent };
    expect(evaluateFirewall(facts)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error', stealth: true, block_all: true },
    });
  });

  it('lets the live state decide whatever the profile asks', () => {
    expect(
      evaluateFirewall({ socketfilterfw: ok('Firewall is enabled. (State = 1)\n'), managed: present({ EnableFirewall: false }) }),
    ).toMatchObject({ status: 'PASS', evidence: { rule: 'firewall_on', enable_firewall: false, managed: true } });
    expect(
      evaluateFirewall({ socketfilterfw: ok('Firewall is disabled. (State = 0)\n'), managed: present({ EnableFirewall: true }) }),
    ).toMatchObject({ status: 'FAIL', evidence: { rule: 'firewall_off', enable_firewall: true, managed: true } });
  });

  it('never decides from the profile alone: without the state it is UNKNOWN with the profile as evidence (issue 32)', () => {
    const refusal = ok('Firewall settings cannot be modified from command line on managed Mac computers.\n');
    for (const enable of [true, false]) {
      expect(evaluateFirewall({ socketfilterfw: refusal, managed: present({ EnableFirewall: enable }) })).toEqual({
        status: 'UNKNOWN',
        evidence: { reason: 'managed_refused', source: 'socketfilterfw', managed: true, enable_firewall: enable },
      });
      expect(evaluateFirewall({ socketfilterfw: missing, managed: present({ EnableFirewall: enable }) })).toEqual({
        status: 'UNKNOWN',
        evidence: { reason: 'command_not_found', source: 'socketfilterfw', managed: true, enable_firewall: enable },
      });
    }
    expect(evaluateFirewall({ socketfilterfw: ok(''), managed: present({ EnableStealthMode: true }) })).toEqual({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error', source: 'socketfilterfw', managed: true },
    });
  });
});

describe('firewall: the (State = N) number decides whatever sentence carries it', () => {
  const run = (stdout: string) => evaluateFirewall({ socketfilterfw: ok(stdout), managed: absent });

  it('reads the strictest setting, worded without "enabled"', () => {
    expect(
      run(
        'Firewall is blocking all non-essential incoming connections. (State = 2)\nFirewall stealth mode is on\nFirewall is blocking all non-essential incoming connections.\n',
      ),
    ).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'firewall_on', global_state: 2, block_all: true, stealth: true },
    });
  });

  it('a sentence Apple rewords still gives its number; without a number only enabled/disabled count', () => {
    expect(parseSocketfilterfw('Firewall is something else now. (State = 0)\n').globalState).toBe(0);
    expect(parseSocketfilterfw('Firewall is blocking all non-essential incoming connections.\n')).toMatchObject({ blockAll: true });
    expect(parseSocketfilterfw('Firewall is blocking all non-essential incoming connections.\n').globalState).toBeUndefined();
    expect(parseSocketfilterfw('Firewall is enabled. (State = 7)\n').globalState).toBeUndefined();
  });
});

describe('firewall: whole lines only (pins the anchors and every getter)', () => {
  it('reads nothing from a line with text before or after the known sentence', () => {
    for (const line of [
      'Note: Firewall is enabled. (State = 1)',
      'Firewall is enabled. (State = 1) (cached)',
      'Old Firewall is enabled.',
    ]) {
      expect(parseSocketfilterfw(`${line}\n`).globalState, line).toBeUndefined();
    }
    for (const line of ['xFirewall stealth mode is on', 'Firewall stealth mode is on!'])
      expect(parseSocketfilterfw(line).stealth, line).toBeUndefined();
    for (const line of ['Old Firewall has block all state set to enabled.', 'Firewall has block all state set to enabled. really']) {
      expect(parseSocketfilterfw(line).blockAll, line).toBeUndefined();
    }
    for (const line of [
      'Error: Firewall settings cannot be modified from command line on managed Mac computers.',
      'Firewall settings cannot be modified from command line on managed Mac computers. Use a profile.',
    ]) {
      expect(parseSocketfilterfw(line).refusedAsManaged, line).toBe(false);
    }
  });

  it('reads padded lines, and every getter after the state line', () => {
    expect(parseSocketfilterfw('')).toEqual({ refusedAsManaged: false });
    expect(
      parseSocketfilterfw(
        '  Firewall is enabled. (State = 1)  \nFirewall stealth mode is on\nFirewall has block all state set to enabled.\n',
      ),
    ).toEqual({
      refusedAsManaged: false,
      globalState: 1,
      stealth: true,
      blockAll: true,
    });
    expect(parseSocketfilterfw('Firewall is disabled. (State = 0)\nStealth mode enabled\nBlock all ENABLED!\n')).toMatchObject({
      globalState: 0,
      stealth: true,
      blockAll: true,
    });
    expect(
      parseSocketfilterfw('Firewall is enabled.\nFirewall stealth mode is off\nFirewall has block all state set to disabled.\n'),
    ).toMatchObject({
      globalState: 1,
      stealth: false,
      blockAll: false,
    });
    expect(parseSocketfilterfw('Firewall is disabled.\n').globalState).toBe(0);
    expect(parseSocketfilterfw('Firewall settings cannot be modified from command line on managed Mac computers.\n').refusedAsManaged).toBe(
      true,
    );
  });

  it('names socketfilterfw as the source when it could not decide', () => {
    const refused = evaluateFirewall({
      socketfilterfw: ok('Firewall settings cannot be modified from command line on managed Mac computers.\n'),
      managed: absent,
    });
    expect(refused).toEqual({ status: 'UNKNOWN', evidence: { reason: 'managed_refused', managed: false, source: 'socketfilterfw' } });
    expect(evaluateFirewall({ socketfilterfw: ok('Firewall stealth mode is on\n'), managed: absent })).toEqual({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error', managed: false, stealth: true, source: 'socketfilterfw' },
    });
  });
});

describe('time sync', () => {
  const server = ok('Network Time Server: time.apple.com\n');
  const measured = (sntp: CommandResult) => ({ server, sntp });
  const on = (sntp: CommandResult) => ({ usingNetworkTime: ok('Network Time: On\n'), managed: absent, offset: measured(sntp) });

  it('reads only the exact On/Off tokens', () => {
    const facts = {
      usingNetworkTime: ok('Network Time: Onward\n'),
      managed: absent,
      offset: measured(ok('+0.1 +/- 0.01 time.apple.com 17.253.4.125\n')),
    };
    expect(evaluateTimeSync(facts, policy)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error' } });
  });

  it('a profile forcing automatic time does not hide an explicit Off', () => {
    const facts = {
      usingNetworkTime: ok('Network Time: Off\n'),
      managed: present({ forceAutomaticDateAndTime: true }),
      offset: { server },
    };
    expect(evaluateTimeSync(facts, policy)).toMatchObject({ status: 'FAIL', evidence: { managed: true } });
  });

  it('network time on is judged by the measured offset, against 270 s when the policy sets none (issue 32)', () => {
    // Recorded on a Mac whose clock was 5.47 days off (blog of 2026-06-30, search-tool file id 55610981878).
    expect(evaluateTimeSync(on(ok('+472987.781619 +/- 0.022394 133.243.238.163 133.243.238.163\n')), policy)).toMatchObject({
      status: 'FAIL',
      evidence: { network_time: true, offset_s: 472987.781619, max_offset_s: 270, max_offset_from: 'default', rule: 'offset' },
    });
    // The same Mac minutes later, after sntp had stepped the clock once.
    expect(evaluateTimeSync(on(ok('+2.018556 +/- 0.021909 ntp.nict.jp 133.243.238.243\n')), policy)).toMatchObject({
      status: 'PASS',
      evidence: { offset_s: 2.018556, rule: 'offset_within_limit' },
    });
    expect(evaluateTimeSync(on(ok('-270.000000 +/- 0.02 time.apple.com 17.253.4.125\n')), policy).status).toBe('PASS');
    expect(evaluateTimeSync(on(ok('-270.000001 +/- 0.02 time.apple.com 17.253.4.125\n')), policy).status).toBe('FAIL');
    const strict = resolvePolicy({ timeSync: { maxOffsetSeconds: 2 } });
    expect(evaluateTimeSync(on(ok('+2.018556 +/- 0.021909 ntp.nict.jp 133.243.238.243\n')), strict)).toMatchObject({
      status: 'FAIL',
      evidence: { max_offset_s: 2, max_offset_from: 'policy', rule: 'offset' },
    });
  });

  it('sntp failing is UNKNOWN with what failed, never in sync', () => {
    // usnistgov/macos_security#275 (macOS 13.4, Jamf's log folds the repeats: "[message repeats 4 times]").
    const timeout = ok(`${'sntp: Exchange failed: Timeout\n'.repeat(5)}sntp: Clock select failed\n`, '', 1);
    expect(evaluateTimeSync(on(timeout), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'time_server_unreachable', sntp_error: 'timeout', network_time: true, max_offset_s: 270 },
    });
    // The blog's Mac before its DNS was repaired (search-tool file id 55610981878).
    const dns = ok('', 'sntp: Exchange failed: DNS lookup failure\nsntp_exchange {\n        result: 1 (DNS lookup failure)\n}\n', 1);
    expect(evaluateTimeSync(on(dns), policy)).toMatchObject({
      evidence: { reason: 'time_server_unreachable', sntp_error: 'dns_lookup_failure' },
    });
    const kod = ok('sntp: Exchange failed: Kiss of death\nsntp_exchange {\n        result: 8 (Kiss of death)\n}\n');
    expect(evaluateTimeSync(on(kod), policy)).toMatchObject({ evidence: { sntp_error: 'kiss_of_death' } });
    expect(evaluateTimeSync(on(ok('sntp: Exchange failed: Something new\n')), policy)).toMatchObject({ evidence: { sntp_error: 'other' } });
    expect(evaluateTimeSync(on(ok('')), policy)).toMatchObject({
      evidence: { reason: 'time_server_unreachable', sntp_error: 'no_offset_line' },
    });
    // Stopped by the runner: the server did not answer in time.
    const killed: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'timeout' };
    expect(evaluateTimeSync(on(killed), policy)).toMatchObject({ evidence: { reason: 'time_server_unreachable', sntp_error: 'timeout' } });
    expect(evaluateTimeSync(on(missing), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'command_not_found', measured_by: 'sntp' },
    });
    const spawn: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'spawn_failed' };
    expect(evaluateTimeSync(on(spawn), policy)).toMatchObject({ evidence: { reason: 'check_error', measured_by: 'sntp' } });
  });

  it('without a usable server name nothing is measured: UNKNOWN time_server_unknown, with why', () => {
    const facts = (serverRun: CommandResult) => ({
      usingNetworkTime: ok('Network Time: On\n'),
      managed: absent,
      offset: { server: serverRun },
    });
    expect(evaluateTimeSync(facts(ok('Network Time Server: -S\n')), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'time_server_unknown', systemsetup_server: 'unusable_name' },
    });
    expect(evaluateTimeSync(facts(ok('You need administrator access to run this tool... exiting!\n')), policy)).toMatchObject({
      evidence: { reason: 'time_server_unknown', systemsetup_server: 'permission_denied' },
    });
  });

  it('a profile forcing automatic time is measured like "On"', () => {
    const facts = {
      usingNetworkTime: ok('You need administrator access to run this tool... exiting!\n'),
      managed: present({ forceAutomaticDateAndTime: true }),
      offset: measured(ok('+0.000906 +/- 0.022017 ntp.nict.jp 133.243.238.243\n')),
    };
    expect(evaluateTimeSync(facts, policy)).toMatchObject({
      status: 'PASS',
      evidence: {
        source: 'mdm',
        managed: true,
        network_time: true,
        systemsetup: 'permission_denied',
        offset_s: 0.000906,
        rule: 'offset_within_limit',
      },
    });
  });

  // rockstor/rockstor-core#2098 (the PASS fixture pass-homebrew-chrony-network-time-off).
  const ROCKSTOR_TRACKING = [
    'Reference ID    : 55C7D664 (85.199.214.100)',
    'Stratum         : 2',
    'Ref time (UTC)  : Fri Dec 13 19:38:44 2019',
    'System time     : 0.000052616 seconds slow of NTP time',
    'Last offset     : -0.000193872 seconds',
    'Leap status     : Normal',
  ].join('\n');
  const chronyOff = (tracking: CommandResult, managed: PlistFile = absent) => ({
    usingNetworkTime: ok('Network Time: Off\n'),
    managed,
    offset: { server },
    chrony: tracking,
  });

  it("chrony's measured offset against a limit the policy sets: within → PASS, above → FAIL offset, to the microsecond", () => {
    const limit = (max: number) => resolvePolicy({ timeSync: { maxOffsetSeconds: max } });
    expect(evaluateTimeSync(chronyOff(ok(ROCKSTOR_TRACKING)), limit(0.000052616))).toEqual({
      status: 'PASS',
      evidence: {
        managed: false,
        source: 'chronyc',
        network_time: false,
        synchronized: true,
        stratum: 2,
        max_offset_s: 0.000052616,
        offset_s: -0.000052616,
        rule: 'chrony_synchronized',
      },
    });
    expect(evaluateTimeSync(chronyOff(ok(ROCKSTOR_TRACKING)), limit(0.000052615))).toMatchObject({
      status: 'FAIL',
      evidence: { offset_s: -0.000052616, max_offset_s: 0.000052615, rule: 'offset' },
    });
    expect(evaluateTimeSync(chronyOff(ok(ROCKSTOR_TRACKING)), policy)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'chrony_synchronized' },
    });
  });

  it('a chronyc that failed is not read: Off decides (FAIL network_time_off); the profile flag is reported as it is', () => {
    // chronyc's answer when chronyd is not running.
    expect(evaluateTimeSync(chronyOff(ok('506 Cannot talk to daemon\n', '', 1)), policy)).toEqual({
      status: 'FAIL',
      evidence: { managed: false, source: 'systemsetup', network_time: false, rule: 'network_time_off' },
    });
    expect(evaluateTimeSync(chronyOff(ok(ROCKSTOR_TRACKING), present({ forceAutomaticDateAndTime: false })), policy)).toMatchObject({
      evidence: { managed: false },
    });
  });

  it('reads only Apple\'s sntp line ("<offset> +/- <error> <server> <address>"), not ntp.org\'s date-first one', () => {
    // ntp.org sntp's documented default line (its man page); /usr/bin/sntp on macOS is Apple's.
    expect(evaluateTimeSync(on(ok('1996-10-15 20:17:25.123 (+0800) +4.567 +/- 0.089 host 192.0.2.1 s2\n')), policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'time_server_unreachable', sntp_error: 'no_offset_line' },
    });
  });

  it("chrony's own synchronised state decides beside Off; only a limit the policy sets is held against its offset", () => {
    const facts = {
      usingNetworkTime: ok('Network Time: Off\n'),
      managed: absent,
      offset: { server },
      chrony: ok('Stratum         : 3\nLeap status     : Normal\n'),
    };
    expect(evaluateTimeSync(facts, policy)).toMatchObject({ status: 'PASS', evidence: { rule: 'chrony_synchronized' } });
    expect(evaluateTimeSync(facts, resolvePolicy({ timeSync: { maxOffsetSeconds: 1 } }))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'offset_unknown' },
    });
  });
});

describe('OS version', () => {
  it('parses sw_vers with a Rapid Security Response suffix', () => {
    expect(
      parseSwVers('ProductName:\tmacOS\nProductVersion:\t13.3.1\nProductVersionExtra:\t(a)\nBuildVersion:\t22E772610a\n'),
    ).toMatchObject({
      cycle: '13',
      productVersionExtra: '(a)',
      buildVersion: '22E772610a',
    });
  });

  it('refuses products that are not macOS and versions it cannot compare', () => {
    expect(parseSwVers('ProductName:\tiPhone OS\nProductVersion:\t17.5\n')).toBeNull();
    expect(parseSwVers('ProductName:\tmacOS\nProductVersion:\t15.beta\n')).toBeNull();
    expect(evaluateOsVersion(ok('ProductName:\tmacOS\n'), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_version' },
    });
  });

  it('a major newer than the lifecycle table is the current release: supported, minimum still applies', () => {
    expect(evaluateOsVersion(ok('ProductName:\tmacOS\nProductVersion:\t27.0\nBuildVersion:\t26A100\n'), policy, NOW)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'newer_than_table', cycle: '27', newest_listed: '26' },
    });
    const strict = resolvePolicy({ osVersion: { minimum: { DARWIN: '27.1' } } });
    expect(evaluateOsVersion(ok('ProductName:\tmacOS\nProductVersion:\t27.0\n'), strict, NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'minimum' },
    });
  });

  it('an old release is judged by its own row, which the data set keeps for every Mac OS X release: FAIL eol, not unknown', () => {
    const noFloor = resolvePolicy({ osVersion: { minimum: { DARWIN: '10.0' } } });
    expect(evaluateOsVersion(ok('ProductName:\tMac OS X\nProductVersion:\t10.12.6\nBuildVersion:\t16G29\n'), noFloor, NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol', cycle: '10.12', eol: '2019-10-01' },
    });
  });
});

describe('Software Update settings', () => {
  const swVers = (version: string) => ok(`ProductName:\tmacOS\nProductVersion:\t${version}\nBuildVersion:\t24A335\n`);
  const allOn = { AutomaticDownload: true, AutomaticallyInstallMacOSUpdates: true, CriticalUpdateInstall: true, ConfigDataInstall: true };
  // Within 45 days of the built-in data set (2026-08-22), so that an up-to-date release can PASS.
  const AUGUST = new Date('2026-08-29T12:00:00Z');

  it('no longer requires automatic checking from macOS 15, which removed its switch', () => {
    const system = present({ ...allOn, AutomaticCheckEnabled: false });
    expect(evaluateAutoUpdate({ managed: absent, system, swVers: swVers('15.7.9') }, policy, AUGUST)).toMatchObject({
      status: 'PASS',
      evidence: { check_switch_removed: true, disabled_keys: [] },
    });
    expect(evaluateAutoUpdate({ managed: absent, system, swVers: swVers('14.8.9') }, policy, AUGUST)).toMatchObject({
      status: 'FAIL',
      evidence: { disabled_keys: ['AutomaticCheckEnabled'], check_switch_removed: false },
    });
    // Release unknown: the switch may still exist, so it still counts.
    expect(evaluateAutoUpdate({ managed: absent, system, swVers: missing }, policy, AUGUST).status).toBe('FAIL');
  });

  it("a DDM declaration's AlwaysOn (1) is in force over the files; another value is not read as on or off", () => {
    const ddm = (settings: Record<string, unknown>) =>
      present({ SUCorePersistedStatePolicyFields: { SUCoreDDMDeclarationGlobalSettings: settings } });
    const facts = {
      managed: absent,
      system: present({ AutomaticDownload: false }),
      ddm: ddm({ automaticallyDownload: 1 }),
      swVers: missing,
    };
    expect(resolveSetting(facts, 'AutomaticDownload')).toEqual({ value: true, from: 'ddm' });
    expect(resolveSetting({ ...facts, ddm: ddm({ automaticallyDownload: 2 }) }, 'AutomaticDownload')).toEqual({
      value: null,
      from: 'ddm',
      reason: 'ddm_setting_unrecognized',
    });
    expect(resolveSetting({ ...facts, ddm: ddm({ automaticallyInstallSystemAndSecurityUpdates: 1 }) }, 'ConfigDataInstall')).toEqual({
      value: true,
      from: 'ddm',
    });
    expect(resolveSetting({ ...facts, ddm: ddm({}) }, 'AutomaticDownload')).toEqual({ value: false, from: 'system' });
  });

  it('accepts the integers 0/1 that `defaults write -int` leaves, and refuses strings', () => {
    const facts = { managed: absent, system: present({ AutomaticDownload: 0, AutomaticCheckEnabled: 'yes' }), swVers: missing };
    expect(resolveSetting(facts, 'AutomaticDownload')).toEqual({ value: false, from: 'system' });
    expect(resolveSetting(facts, 'AutomaticCheckEnabled')).toEqual({ value: null, from: 'system', reason: 'parse_error' });
  });

  it('cannot decide while the profile file is unreadable, even if the local file looks fine', () => {
    const facts = {
      managed: { state: 'unreadable', reason: 'permission_denied' } as PlistFile,
      system: present({}),
      swVers: swVers('26.6.2'),
    };
    expect(evaluateAutoUpdate(facts, policy, AUGUST)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'permission_denied' } });
  });
});

describe("AUTO_UPDATE: the installed release against its line's newest (issue 32, effect over intent)", () => {
  const swVers = (version: string) => ok(`ProductName:\tmacOS\nProductVersion:\t${version}\n`);
  const on = (version: string | CommandResult) => ({
    managed: absent,
    system: present({
      AutomaticCheckEnabled: true,
      AutomaticDownload: true,
      AutomaticallyInstallMacOSUpdates: true,
      CriticalUpdateInstall: true,
      ConfigDataInstall: true,
    }),
    swVers: typeof version === 'string' ? swVers(version) : version,
  });
  const at = (iso: string) => new Date(iso);
  // Built-in data set (endoflife.date, 2026-08-22): 26 latest 26.6.2 of 2026-08-17; 45 days later is 2026-10-01.

  it('the newest release of its line installed: PASS up_to_date, with both versions and the date', () => {
    expect(evaluateAutoUpdate(on('26.6.2'), policy, at('2026-08-29T12:00:00Z'))).toEqual({
      status: 'PASS',
      evidence: objectContaining({
        installed_version: '26.6.2',
        cycle: '26',
        latest: '26.6.2',
        latest_released: '2026-08-17',
        max_pending_days: 45,
        lifecycle_checked_at: '2026-08-22',
        rule: 'up_to_date',
      }),
    });
  });

  it('a newer release out longer than maxPendingDays and not installed: FAIL update_pending, to the day', () => {
    expect(evaluateAutoUpdate(on('26.5'), policy, at('2026-10-01T00:00:00Z'))).toMatchObject({
      status: 'FAIL',
      evidence: { installed_version: '26.5', latest: '26.6.2', latest_released: '2026-08-17', pending_days: 45, rule: 'update_pending' },
    });
    expect(evaluateAutoUpdate(on('26.5'), policy, at('2026-09-30T23:59:59Z'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'update_pending_recent', pending_days: 44, latest: '26.6.2' },
    });
    const tight = resolvePolicy({ autoUpdate: { maxPendingDays: 10 } });
    expect(evaluateAutoUpdate(on('26.5'), tight, at('2026-08-27T00:00:00Z'))).toMatchObject({
      status: 'FAIL',
      evidence: { max_pending_days: 10, pending_days: 10, rule: 'update_pending' },
    });
  });

  it('a newer release that is recent is not a PASS: an earlier one the Mac lacks may have waited longer', () => {
    // Judged before the table's newest release came out: the days pending are never negative.
    expect(evaluateAutoUpdate(on('26.5'), policy, at('2026-08-10T00:00:00Z'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'update_pending_recent', pending_days: 0 },
    });
  });

  it('download-only accepted by policy: the settings pass, the installed release still decides', () => {
    const downloadOnly = resolvePolicy({ autoUpdate: { acceptDownloadOnly: true } });
    // Only the install switch stops being required; automatic download still is.
    const noDownload = { ...on('15.7.9'), system: present({ AutomaticDownload: false, AutomaticallyInstallMacOSUpdates: false }) };
    expect(evaluateAutoUpdate(noDownload, downloadOnly, at('2026-08-29T12:00:00Z'))).toMatchObject({
      status: 'FAIL',
      evidence: { disabled_keys: ['AutomaticDownload'], rule: 'required_setting_off' },
    });
    expect(evaluateAutoUpdate(on('15.6'), downloadOnly, NOW)).toMatchObject({
      status: 'FAIL',
      evidence: { accept_download_only: true, latest: '15.7.9', rule: 'update_pending' },
    });
  });

  it("newer than the data set: a patch above its line's latest, or a major above every line (PASS newer_than_table)", () => {
    expect(evaluateAutoUpdate(on('26.7'), policy, NOW)).toMatchObject({
      status: 'PASS',
      evidence: { latest: '26.6.2', rule: 'newer_than_table' },
    });
    expect(evaluateAutoUpdate(on('27.1'), policy, NOW)).toMatchObject({
      status: 'PASS',
      evidence: { cycle: '27', newest_listed: '26', rule: 'newer_than_table' },
    });
  });

  it('a release the data set cannot place is UNKNOWN, never a PASS from the switches', () => {
    // SYSTEM_VERSION_COMPAT's "10.16": between 10.15 and 11, in no line.
    expect(evaluateAutoUpdate(on('10.16'), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', cycle: '10.16' },
    });
    expect(evaluateAutoUpdate(on(missing), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'command_not_found', version_source: 'sw_vers' },
    });
    expect(evaluateAutoUpdate(on(ok('', '', 1)), policy, NOW)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error' } });
    expect(evaluateAutoUpdate(on(ok('ProductName:\tmacOS\n')), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_version', version_source: 'sw_vers' },
    });
  });

  it('the newest known release while the data set is older than maxPendingDays: UNKNOWN lifecycle_data_outdated, unless the line ended', () => {
    expect(evaluateAutoUpdate(on('26.6.2'), policy, at('2026-10-06T00:00:00Z'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'lifecycle_data_outdated', lifecycle_checked_at: '2026-08-22' },
    });
    expect(evaluateAutoUpdate(on('26.6.2'), policy, at('2026-10-05T23:59:59Z')).status).toBe('PASS');
    // macOS 13 ended on 2025-09-15: no release can come after 13.7.8.
    expect(evaluateAutoUpdate(on('13.7.8'), policy, NOW)).toMatchObject({ status: 'PASS', evidence: { rule: 'up_to_date' } });
  });

  it("the server's data set replaces the built-in one; a line still patched until a date counts as patched until that day", () => {
    const served = structuredClone(policy);
    served.osVersion.lifecycleData = {
      dataset: {
        name: 'endoflife.date',
        repository: 'https://github.com/endoflife-date/endoflife.date',
        commit: 'c0ffee',
        committedAt: '2025-01-01',
      },
      sources: { macos: ['products/macos.md'] },
      products: { macos: [{ cycle: '13', eol: '2025-09-15', latest: '13.7.8', latestReleaseDate: '2025-08-20' }] },
    };
    expect(evaluateAutoUpdate(on('13.7.8'), served, at('2025-09-14T23:59:59Z'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'lifecycle_data_outdated', lifecycle_checked_at: '2025-01-01' },
    });
    expect(evaluateAutoUpdate(on('13.7.8'), served, at('2025-09-15T00:00:00Z'))).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'up_to_date' },
    });
  });

  it("a policy's own lifecycle table is taken as current; a line without `latest` is UNKNOWN", () => {
    const own = resolvePolicy({
      osVersion: {
        lifecycle: {
          macos: [
            { cycle: '26', eol: false, latest: '26.6.2', latestReleaseDate: '2026-08-17' },
            { cycle: '15', eol: false },
          ],
        },
      },
    });
    expect(evaluateAutoUpdate(on('26.6.2'), own, at('2027-06-01T00:00:00Z'))).toMatchObject({
      status: 'PASS',
      evidence: { lifecycle_checked_at: 'policy', rule: 'up_to_date' },
    });
    expect(evaluateAutoUpdate(on('15.7.9'), own, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'latest_release_unknown', cycle: '15' },
    });
    const noDate = resolvePolicy({ osVersion: { lifecycle: { macos: [{ cycle: '15', eol: false, latest: '15.7.9' }] } } });
    expect(evaluateAutoUpdate(on('15.7.9'), noDate, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'latest_release_unknown' },
    });
    // The newest line is found by number, not by the table's order.
    const unordered = resolvePolicy({
      osVersion: {
        lifecycle: {
          macos: [
            { cycle: '14', eol: false },
            { cycle: '26', eol: false },
          ],
        },
      },
    });
    expect(evaluateAutoUpdate(on('15.7.9'), unordered, NOW)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'unknown_release' } });
    expect(evaluateAutoUpdate(on('27.1'), unordered, NOW)).toMatchObject({ status: 'PASS', evidence: { newest_listed: '26' } });
    const empty = resolvePolicy({ osVersion: { lifecycle: { macos: [] } } });
    expect(evaluateAutoUpdate(on('26.6.2'), empty, NOW)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'unknown_release' } });
  });
});

describe('password policy', () => {
  const xml = (content: string, params = '') =>
    `Getting global account policies\n<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>policyCategoryPasswordContent</key><array><dict><key>policyContent</key><string>${content}</string>${params}</dict></array></dict></plist>\n`;

  it('reads the anchored lookahead form with a minChars parameter', () => {
    const parsed = parsePwpolicy(
      xml(
        "policyAttributePassword matches '^(?=.*[0-9]).{12,}$'",
        '<key>policyParameters</key><dict><key>minChars</key><integer>12</integer></dict>',
      ),
    );
    expect(parsed).toEqual({
      state: 'policies',
      policies: objectContaining({ minLength: 12, requiresNumeric: true, requiresAlpha: false, unrecognized: 0 }),
    });
  });

  it('knows the "no policies" messages on either stream, and nothing else', () => {
    expect(parsePwpolicy('No global account policies have been set.\n')).toEqual({ state: 'none' });
    expect(parsePwpolicy('', 'There are no account policies for all users.\n')).toEqual({ state: 'none' });
    expect(parsePwpolicy('Getting global account policies\n')).toEqual({ state: 'unparseable' });
    expect(parsePwpolicy(`Error: something\n${xml("policyAttributePassword matches '.{8,}+'")}`)).toEqual({ state: 'unparseable' });
  });

  it('a length hidden in the description text does not count: only the rule does', () => {
    const parsed = parsePwpolicy(
      xml(
        "policyAttributePassword matches '.{4,}+'",
        '<key>policyContentDescription</key><dict><key>en</key><string>At least 12 characters.</string></dict>',
      ),
    );
    expect(parsed).toMatchObject({ policies: { minLength: 4 } });
  });

  it("computes the minimum over alternatives: '^$|.{4,}+' accepts an empty password", () => {
    const verdict = evaluatePasswordPolicy(
      { pwpolicy: ok(xml("policyAttributePassword matches '^$|.{4,}+'")), passcodeProfile: absent },
      policy,
    );
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'min_length', min_length: 0, shortest_accepted: 0 } });
  });

  it('rules that cannot bound the length (character classes, lookaheads only) do not turn a clear FAIL into UNKNOWN', () => {
    const rules = [
      "policyAttributePassword matches '.{6,}+'",
      "policyAttributePassword matches '(.*[a-z].*){1,}+'",
      "policyAttributePassword matches '^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9]).*$'",
    ];
    const body = rules.map((r) => `<dict><key>policyContent</key><string>${r}</string></dict>`).join('');
    const stdout = `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>policyCategoryPasswordContent</key><array>${body}</array></dict></plist>\n`;
    expect(evaluatePasswordPolicy({ pwpolicy: ok(stdout), passcodeProfile: absent }, policy)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'min_length', min_length: 6, shortest_accepted: 6, non_length_policies: 2, requires_alphanumeric: true },
    });
  });

  it('a profile rule known by its key (allowSimple) cannot bound the length; an unknown one still can', () => {
    const entry = (id: string) =>
      `<dict><key>policyContent</key><string>policyAttributePassword matches '^(?!(.)\\1+$).*$'</string><key>policyIdentifier</key><string>${id}</string></dict>`;
    const stdout = (id: string) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>policyCategoryPasswordContent</key><array><dict><key>policyContent</key><string>policyAttributePassword matches '.{4,}+'</string></dict>${entry(id)}</array></dict></plist>\n`;
    expect(
      evaluatePasswordPolicy(
        { pwpolicy: ok(stdout('ProfilePayload:2e42cfb6-c259-45c5-8660-39da3a427b55:allowSimple')), passcodeProfile: absent },
        policy,
      ),
    ).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'min_length', shortest_accepted: 4, non_length_policies: 1 },
    });
    expect(evaluatePasswordPolicy({ pwpolicy: ok(stdout('Custom rule')), passcodeProfile: absent }, policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unrecognized_policy' },
    });
  });

  it("a passcode profile requiring alphanumeric satisfies complexity; a weaker profile never lowers pwpolicy's minimum", () => {
    const facts = {
      pwpolicy: ok(xml("policyAttributePassword matches '.{12,}+'")),
      passcodeProfile: present({ minLength: 6, requireAlphanumeric: true }),
    };
    expect(evaluatePasswordPolicy(facts, resolvePolicy({ password: { requireComplexity: true } }))).toMatchObject({
      status: 'PASS',
      evidence: { source: 'pwpolicy', min_length: 12, mdm_min_length: 6, requires_alphanumeric: true },
    });
  });
});

describe('remote login', () => {
  it('without an override line, a service launchd has loaded is Remote Login on', () => {
    const noLine = ok('disabled services = {\n}\n');
    const loaded = ok(
      'system/com.openssh.sshd = {\n\tactive count = 0\n\tpath = (submitted by smd[541])\n\ttype = Submitted\n\tstate = not running\n}\n',
    );
    const base = { printDisabled: noLine, remoteManagement: { ok: false as const, error: 'not_found' as const } };
    expect(evaluateRemoteLogin({ ...base, printService: loaded }, policy)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'ssh_enabled', source: 'launchd_service' },
    });
    expect(
      evaluateRemoteLogin(
        { ...base, printService: ok('', 'Bad request.\nCould not find service "com.openssh.sshd" in domain for system\n', 113) },
        policy,
      ),
    ).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'ssh_disabled', source: 'launchd_service' },
    });
    // Another label's answer, or any other exit status, is no answer.
    expect(evaluateRemoteLogin({ ...base, printService: ok('system/com.openssh.sshd-agent = {\n}\n') }, policy).status).toBe('UNKNOWN');
    expect(evaluateRemoteLogin({ ...base, printService: ok('', 'Unrecognized target specifier.\n', 64) }, policy).status).toBe('UNKNOWN');
  });

  it('reads only the "disabled services" block', () => {
    const text = [
      'disabled services = {',
      '\t"com.apple.ftpd" => disabled',
      '}',
      'login item associations = {',
      '\t"com.openssh.sshd" => enabled',
      '}',
    ].join('\n');
    expect(parsePrintDisabled(text)?.has('com.openssh.sshd')).toBe(false);
    expect(parsePrintDisabled('disabled services = {\n\t"com.openssh.sshd" => enabled\n')).toBeNull();
    expect(parsePrintDisabled('Could not print disabled services\n')).toBeNull();
  });

  it('an unknown state word is no answer', () => {
    expect(parsePrintDisabled('disabled services = {\n\t"com.openssh.sshd" => maybe\n}\n')?.has('com.openssh.sshd')).toBe(false);
  });

  describe("where launchd's sockets listen (netstat -an -p tcp)", () => {
    const header =
      'Active Internet connections (including servers)\nProto Recv-Q Send-Q  Local Address          Foreign Address        (state)    \n';
    const row = (proto: string, local: string, foreign: string, state: string) =>
      `${proto.padEnd(6)}     0      0  ${local.padEnd(22)} ${foreign.padEnd(22)} ${state}\n`;
    // Rows as captured on macOS 26.6.2 with Remote Login and Screen Sharing on (a public recorded-probe test file).
    const everyAddress = ok(
      header +
        row('tcp46', '*.3283', '*.*', 'LISTEN     ') +
        row('tcp4', '127.0.0.1.631', '*.*', 'LISTEN     ') +
        row('tcp6', '::1.631', '*.*', 'LISTEN     ') +
        row('tcp4', '*.5900', '*.*', 'LISTEN     ') +
        row('tcp6', '*.5900', '*.*', 'LISTEN     ') +
        row('tcp4', '*.22', '*.*', 'LISTEN     ') +
        row('tcp6', '*.22', '*.*', 'LISTEN     ') +
        row('tcp4', '192.168.7.42.62875', '203.0.113.24.443', 'CLOSE_WAIT '),
    );
    const loopbackOnly = ok(
      header +
        row('tcp4', '127.0.0.1.22', '*.*', 'LISTEN') +
        row('tcp6', '::1.22', '*.*', 'LISTEN') +
        row('tcp4', '127.0.0.1.22', '127.0.0.1.56642', 'ESTABLISHED'),
    );
    const enabled = {
      printDisabled: ok('disabled services = {\n\t"com.openssh.sshd" => enabled\n}\n'),
      remoteManagement: { ok: false as const, error: 'not_found' as const },
    };

    it('passes Remote Login whose port-22 sockets are all on loopback, and still fails one on every address', () => {
      expect(evaluateRemoteLogin({ ...enabled, netstat: loopbackOnly }, policy)).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'loopback_only', ssh: 'enabled', ssh_listening: 'loopback', screen_sharing_listening: 'none' },
      });
      expect(evaluateRemoteLogin({ ...enabled, netstat: everyAddress }, policy)).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'ssh_enabled', ssh_listening: 'network', screen_sharing_listening: 'network' },
      });
    });

    it('one reachable socket beside a loopback one is exposure', () => {
      const mixed = ok(header + row('tcp4', '127.0.0.1.22', '*.*', 'LISTEN') + row('tcp6', '*.22', '*.*', 'LISTEN'));
      expect(evaluateRemoteLogin({ ...enabled, netstat: mixed }, policy)).toMatchObject({
        status: 'FAIL',
        evidence: { ssh_listening: 'network' },
      });
    });

    it("keeps today's verdict when netstat cannot be read, prints no table, or shows nothing on port 22", () => {
      for (const netstat of [
        { exitCode: null, stdout: '', stderr: '', error: 'not_found' as const },
        ok('', 'netstat: sysctl: net.inet.tcp.pcblist_n: Operation not permitted\n', 1),
        ok('tcp4 garbage\n'),
        ok(header + 'tcp4       0      0  127.0.0.1.22\n'),
      ]) {
        const verdict = evaluateRemoteLogin({ ...enabled, netstat }, policy);
        expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'ssh_enabled' } });
        expect(verdict.evidence).not.toHaveProperty('ssh_listening');
      }
      expect(evaluateRemoteLogin({ ...enabled, netstat: ok(header + row('tcp4', '*.5900', '*.*', 'LISTEN')) }, policy)).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'ssh_enabled', ssh_listening: 'none' },
      });
    });
  });

  it('reports Remote Management content other than "enabled" as unknown evidence, not false', () => {
    const verdict = evaluateRemoteLogin(
      {
        printDisabled: ok('disabled services = {\n}\n'),
        printService: ok('', '', 113),
        remoteManagement: { ok: true, text: 'disabled\n' },
      },
      policy,
    );
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { remote_management: null } });
  });
});

describe('malware protection', () => {
  const info = (version: string): PlistFile => present({ CFBundleShortVersionString: version });
  const base = (over: Partial<MalwareFacts>): MalwareFacts => ({
    spctl: ok('assessments enabled\n'),
    bundles: [],
    remediator: absent,
    softwareUpdate: { managed: absent, system: present({}), swVers: missing },
    ...over,
  });
  const fresh = Date.parse('2026-11-18T21:53:58Z');

  it('judges the /var/protected copy (in force from macOS 15) even when the CoreServices copy is newer', () => {
    const stale = NOW.getTime() - 90 * 86_400_000;
    const verdict = evaluateMalwareProtection(
      base({
        bundles: [
          { location: 'var_protected', info: info('5272'), mtimeMs: stale },
          { location: 'library_apple', info: info('10000'), mtimeMs: fresh },
        ],
      }),
      policy,
      NOW,
    );
    expect(verdict).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'signature_age', xprotect_version: '5272', xprotect_location: 'var_protected', coreservices_version: '10000' },
    });
  });

  it('falls back to the CoreServices copy only where no /var/protected copy exists (macOS 14 and older)', () => {
    const verdict = evaluateMalwareProtection(
      base({
        bundles: [
          { location: 'var_protected', info: absent },
          { location: 'library_apple', info: info('5272'), mtimeMs: fresh },
        ],
      }),
      policy,
      NOW,
    );
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { xprotect_location: 'library_apple' } });
    expect(verdict.evidence.coreservices_version).toBeUndefined();
  });

  it('is UNKNOWN when no copy can be read or dated', () => {
    expect(evaluateMalwareProtection(base({ bundles: [{ location: 'library_apple', info: absent }] }), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'xprotect_missing' },
    });
    expect(evaluateMalwareProtection(base({ bundles: [{ location: 'library_apple', info: info('5272') }] }), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'signature_age_unknown' },
    });
    expect(
      evaluateMalwareProtection(base({ bundles: [{ location: 'library_apple', info: info('latest'), mtimeMs: fresh }] }), policy, NOW),
    ).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error' },
    });
  });

  it("judges XProtect against its own age limit, not Defender's signature age", () => {
    const copy = (days: number) =>
      base({ bundles: [{ location: 'var_protected', info: info('5330'), mtimeMs: NOW.getTime() - days * 86_400_000 }] });
    expect(evaluateMalwareProtection(copy(20), policy, NOW)).toMatchObject({
      status: 'PASS',
      evidence: { signature_age_days: 20, max_signature_age_days: 30 },
    });
    expect(evaluateMalwareProtection(copy(31), policy, NOW)).toMatchObject({ status: 'FAIL', evidence: { rule: 'signature_age' } });
    const strict = resolvePolicy({ malware: { xprotectMaxAgeDays: 14, maxSignatureAgeDays: 60 } });
    expect(evaluateMalwareProtection(copy(20), strict, NOW)).toMatchObject({ status: 'FAIL', evidence: { max_signature_age_days: 14 } });
  });

  it('reads Gatekeeper from the text, whatever the exit code', () => {
    expect(parseSpctlStatus('assessments disabled\n')).toBe(false);
    expect(parseSpctlStatus('assessments enabled\n')).toBe(true);
    expect(parseSpctlStatus('assessments are enabled and more\n')).toBeUndefined();
    expect(parseSpctlStatus('assessments enabled and more\n')).toBeUndefined();
    expect(parseSpctlStatus('no assessments enabled\n')).toBeUndefined();
    expect(evaluateMalwareProtection(base({ spctl: ok('Usage: spctl …\n') }), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'parse_error', step: 'gatekeeper' },
    });
    expect('gatekeeper' in evaluateMalwareProtection(base({ spctl: missing }), policy, NOW).evidence).toBe(false);
  });

  it('takes only whole dotted numbers as versions, and the /var/protected copy wherever it is listed', () => {
    const judged = (bundle: string, remediator = '112', core = '10000') =>
      evaluateMalwareProtection(
        base({
          bundles: [
            { location: 'library_apple', info: info(core), mtimeMs: fresh },
            { location: 'var_protected', info: info(bundle), mtimeMs: fresh },
          ],
          remediator: info(remediator),
        }),
        policy,
        NOW,
      );
    expect(judged('5.272')).toMatchObject({
      status: 'PASS',
      evidence: { xprotect_version: '5.272', xprotect_location: 'var_protected', remediator_version: '112', coreservices_version: '10000' },
    });
    for (const odd of ['v5272', '5272x', '5.x'])
      expect(judged(odd)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error' } });
    for (const odd of ['v112', '112x', '1.x', 'abc']) {
      expect(judged('5272', odd).evidence.remediator_version).toBeUndefined();
      expect(judged('5272', '112', odd).evidence.coreservices_version).toBeUndefined();
    }
    expect(judged('5272', '1.12', '10.52').evidence).toMatchObject({ remediator_version: '1.12', coreservices_version: '10.52' });
  });

  it('passes data exactly as old as the limit, and says which step an undecided setting stopped at', () => {
    const aged = (days: number, over: Partial<MalwareFacts> = {}) =>
      base({ bundles: [{ location: 'var_protected', info: info('5330'), mtimeMs: NOW.getTime() - days * 86_400_000 }], ...over });
    expect(evaluateMalwareProtection(aged(30), policy, NOW)).toMatchObject({ status: 'PASS', evidence: { signature_age_days: 30 } });
    expect(evaluateMalwareProtection(aged(30, { spctl: missing }), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { step: 'gatekeeper' },
    });
    expect(
      evaluateMalwareProtection(
        aged(3, { softwareUpdate: { managed: absent, system: present({ ConfigDataInstall: 'yes' }), swVers: missing } }),
        policy,
        NOW,
      ),
    ).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error', step: 'config_data_install', signature_age_days: 3 } });
    expect(evaluateMalwareProtection(base({ bundles: [{ location: 'library_apple', info: info('5272') }] }), policy, NOW)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'signature_age_unknown', step: 'signature_age', xprotect_version: '5272' },
    });
  });
});

// Edge cases of the FREEBSD parsers and evaluators that do not need a whole fixture: getcap's
// rules for login.conf, sockstat columns, freebsd-version strings, pf/ipfw rule readings,
// zpool layouts, crontab command lines, look-alike strings. All pure: no host.
import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '../../../checks/policy';
import type { CommandResult } from '../../../checks/types';
import { parseCrontab, shellWords, simpleCommands } from '../../../checks/freebsd/crontab';
import { updateJobsOf, type UpdateJobs } from '../../../checks/freebsd/autoUpdate';
import { ipfwDefault, parseIpfwList, parseIpfwRule } from '../../../checks/freebsd/ipfw';
import { capNumber, capString, decodeCapString, expandRecord, parseCapDatabase } from '../../../checks/freebsd/loginConf';
import { evaluateOsVersion, normalizeMinimum } from '../../../checks/freebsd/osVersion';
import { parsePamFile, resolveChain } from '../../../checks/freebsd/pam';
import {
  parseInterfaceList,
  parsePfRules,
  parsePfStatus,
  parseSkippedInterfaces,
  pfDefault,
  pfInterfaces,
} from '../../../checks/freebsd/pf';
import { parseProcessTable } from '../../../checks/freebsd/processes';
import { parseRcVars, rcEnabled } from '../../../checks/freebsd/rc';
import { isLoopbackAddress } from '../../../checks/loopback';
import { parseSockstat } from '../../../checks/freebsd/sockstat';
import { isGeliProvider, parseGeliStatus, parseMountTable, parseZpoolStatus, rootEntry } from '../../../checks/freebsd/storage';
import { interpretSysctl } from '../../../checks/freebsd/sysctl';
import { parseChronyc, parseNtpctl, parseNtpq } from '../../../checks/freebsd/timeSync';
import { interpretVersions, parseFreebsdVersion } from '../../../checks/freebsd/version';
import { parseResources, parseXsTime, parseXsetTimeout, xscreensaverSettings } from '../../../checks/freebsd/xsession';

const ok = (stdout: string, extra: Partial<CommandResult> = {}): CommandResult => ({ exitCode: 0, stdout, stderr: '', ...extra });
const failed = (stderr: string, exitCode = 1): CommandResult => ({ exitCode, stdout: '', stderr });
const NOW = new Date('2026-11-21T12:00:00Z');

describe('login.conf (getcap semantics)', () => {
  const db = parseCapDatabase(
    [
      '# comment line',
      'default:\\',
      '\t:passwd_format=sha512:\\',
      '#\t:minpasswordlen=10:\\',
      '\t:passwordtime=90d:\\',
      '\t:umask=022:',
      '',
      '#disabled:\\',
      '#\t:minpasswordlen=99:',
      'strict|Strict users:\\',
      '\t:passwordtime@:\\',
      '\t:minpasswordlen#12:\\',
      '\t:tc=default:',
      'sep:\\',
      '\t:welcome=a\\cb\\:',
    ].join('\n'),
  );

  it('joins continuations and treats a "#" inside a continued record as part of it, as getcap does', () => {
    const fields = expandRecord(db, 'default')!;
    expect(capString(fields, 'passwd_format')).toBe('sha512');
    // The "#\t:minpasswordlen=10:\" line continues the record: getcap sees the capability.
    expect(capNumber(fields, 'minpasswordlen')).toBe(10);
  });

  it('skips whole records that are commented out', () => {
    expect(expandRecord(db, 'disabled')).toBeNull();
    expect(db.some((r) => r.fields.some((f) => f.includes('=99')))).toBe(false);
  });

  it('finds records by any name, prefers the first occurrence, honours cap@ and tc=', () => {
    const fields = expandRecord(db, 'Strict users')!;
    expect(capNumber(fields, 'minpasswordlen')).toBe(12);
    expect(capString(fields, 'passwordtime')).toBeNull();
    expect(capString(fields, 'passwd_format')).toBe('sha512');
  });

  it('never matches a capability by prefix or substring', () => {
    const fields = expandRecord(parseCapDatabase('default:\\\n\t:minpasswordlength=20:\\\n\t:xminpasswordlen=20:'), 'default')!;
    expect(capNumber(fields, 'minpasswordlen')).toBeNull();
  });

  it('decodes getcap escapes', () => {
    expect(decodeCapString('a\\cb')).toBe('a:b');
    expect(decodeCapString('\\101^A')).toBe('A\x01');
    expect(capNumber(['openfiles=infinity'], 'openfiles')).toBe(Infinity);
    expect(capNumber(['umask=022'], 'umask')).toBe(0o22);
  });

  it('stops a tc= loop', () => {
    const loop = parseCapDatabase('a:\\\n\t:tc=b:\nb:\\\n\t:tc=a:');
    expect(() => expandRecord(loop, 'a')).not.toThrow();
  });
});

describe('PAM and pam_passwdqc', () => {
  it('ignores commented lines and comments after a word', () => {
    expect(parsePamFile('#password requisite pam_passwdqc.so\npassword required pam_unix.so nullok # trailing\n')).toEqual([
      { facility: 'password', control: 'required', module: 'pam_unix.so', options: ['nullok'] },
    ]);
  });

  it('falls back to the "other" service when passwd has no password chain', () => {
    const files = {
      '/etc/pam.d/passwd': { ok: true as const, text: 'auth required pam_unix.so\n' },
      '/etc/pam.d/other': { ok: true as const, text: 'password requisite pam_passwdqc.so\n' },
    };
    const chain = resolveChain(files, 'passwd', 'password');
    expect(chain).toMatchObject({ state: 'resolved', entries: [{ module: 'pam_passwdqc.so' }] });
  });
});

describe('sockstat', () => {
  const table = parseSockstat(
    [
      'USER     COMMAND    PID   FD PROTO  LOCAL ADDRESS         FOREIGN ADDRESS      ',
      'root     sshd       815   4  tcp6   *:22                  *:*',
      'root     sshd       815   5  tcp4   192.0.2.10:22         *:*',
      'root     sshd       812   3  tcp6   ::1:22                *:*',
      'root     unbound    760   6  tcp6   fe80::1%lo0:53        *:*',
      '?        ?          ?     ?  tcp4   *:2222                *:*',
    ].join('\n'),
  )!;

  it('parses the seven columns, the port after the last colon and unknown owners', () => {
    expect(table.unparsedLines).toEqual([]);
    expect(table.sockets.map((s) => [s.command, s.address, s.port])).toEqual([
      ['sshd', '*', 22],
      ['sshd', '192.0.2.10', 22],
      ['sshd', '::1', 22],
      ['unbound', 'fe80::1%lo0', 53],
      ['?', '*', 2222],
    ]);
  });

  it('tells loopback from reachable addresses', () => {
    expect(table.sockets.map((s) => isLoopbackAddress(s.address))).toEqual([false, false, true, true, false]);
    expect(['::ffff:127.0.0.1', '::ffff:10.0.0.1', '127.0.1.1', '1.127.0.0'].map(isLoopbackAddress)).toEqual([true, false, true, false]);
  });

  it('refuses output without the header and numbers the rows it cannot read', () => {
    expect(parseSockstat('root sshd 815 4 tcp4 *:22 *:*')).toBeNull();
    const header = 'USER     COMMAND    PID   FD PROTO  LOCAL ADDRESS         FOREIGN ADDRESS';
    expect(parseSockstat(`${header}\nroot sshd 815 4 tcp4 *:22 *:*\n\nroot my daemon 1 2 tcp4 *:1 *:*`)!.unparsedLines).toEqual([4]);
  });
});

describe('freebsd-version', () => {
  it('parses release, patch, stable, current and pre-release names', () => {
    expect(parseFreebsdVersion('14.1-RELEASE-p5')).toMatchObject({ major: 14, minor: 1, branch: 'RELEASE', patch: 5 });
    expect(parseFreebsdVersion('13.2-RELEASE')).toMatchObject({ patch: 0 });
    expect(parseFreebsdVersion('14.2-STABLE')).toMatchObject({ branch: 'STABLE' });
    expect(parseFreebsdVersion('15.0-RC2')).toMatchObject({ branch: 'RC2' });
    expect(parseFreebsdVersion('14.1-RELEASE-p5-CUSTOM')).toBeNull();
    expect(parseFreebsdVersion('FreeBSD 14.1')).toBeNull();
  });

  it('needs exactly the lines it asked for', () => {
    expect(interpretVersions({ kru: ok('14.1-RELEASE\n14.1-RELEASE\n') })).toEqual({ ok: false, reason: 'parse_error' });
    expect(
      interpretVersions({ kru: failed('freebsd-version: unable to locate kernel'), ru: ok('14.1-RELEASE-p1\n14.1-RELEASE-p2\n') }),
    ).toMatchObject({
      ok: true,
      installedKernel: null,
      userland: '14.1-RELEASE-p2',
    });
  });

  it('compares patch levels numerically (p10 after p9) and accepts several minimum spellings', () => {
    expect(normalizeMinimum('14.4-RELEASE-p10')).toBe('14.4.10');
    expect(normalizeMinimum('14.4')).toBe('14.4');
    expect(normalizeMinimum('fourteen')).toBeNull();
    const policy = resolvePolicy({ osVersion: { minimum: { FREEBSD: '14.4-RELEASE-p10' } } });
    const p9 = evaluateOsVersion({ kru: ok('14.4-RELEASE-p9\n14.4-RELEASE-p9\n14.4-RELEASE-p9\n') }, policy, NOW);
    const p10 = evaluateOsVersion({ kru: ok('14.4-RELEASE-p10\n14.4-RELEASE-p10\n14.4-RELEASE-p10\n') }, policy, NOW);
    expect([p9.status, p10.status]).toEqual(['FAIL', 'PASS']);
  });

  it('says which policy field is malformed', () => {
    const verdict = evaluateOsVersion(
      { kru: ok('14.4-RELEASE\n14.4-RELEASE\n14.4-RELEASE\n') },
      resolvePolicy({ osVersion: { minimum: { FREEBSD: 'latest' } } }),
      NOW,
    );
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'invalid_policy', policy_field: 'osVersion.minimum.FREEBSD' } });
  });
});

describe('FreeBSD lifecycle', () => {
  const kru = (v: string) => ({ kru: ok(`${v}\n${v}\n${v}\n`) });

  it('gives 14.4 and 15.1 their planned ends instead of an open end', () => {
    expect(evaluateOsVersion(kru('14.4-RELEASE-p5'), resolvePolicy({}), new Date('2026-11-21T12:00:00Z'))).toMatchObject({
      status: 'PASS',
      evidence: { eol: '2026-12-31' },
    });
    expect(evaluateOsVersion(kru('14.4-RELEASE-p5'), resolvePolicy({}), new Date('2027-04-01T12:00:00Z'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol' },
    });
    expect(evaluateOsVersion(kru('15.1-RELEASE'), resolvePolicy({}), new Date('2027-06-01T12:00:00Z'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'eol', eol: '2027-03-31' },
    });
  });

  it('does not pass a point release the table does not hold', () => {
    expect(evaluateOsVersion(kru('14.6-RELEASE'), resolvePolicy({}), new Date('2027-04-01T12:00:00Z'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release' },
    });
  });
});

describe('pf', () => {
  const rules = (...lines: string[]) => parsePfRules(lines.join('\n'));

  it('reads the status line exactly, not "Enabled" anywhere', () => {
    expect(parsePfStatus('Status: Enabled for 0 days 00:26:05           Debug: Urgent\n')).toBe('enabled');
    expect(parsePfStatus('Status: Disabled                              Debug: None\n')).toBe('disabled');
    expect(parsePfStatus('Interface Stats for em0 Enabled\n')).toBeNull();
  });

  it('lets the last matching rule win unless an earlier rule is quick', () => {
    expect(pfDefault(rules('block drop in all', 'pass in all flags S/SA keep state'), 'inet')).toBe('pass');
    expect(pfDefault(rules('pass in all', 'block drop in all'), 'inet')).toBe('block');
    expect(pfDefault(rules('block drop in quick all', 'pass in all'), 'inet')).toBe('block');
    expect(pfDefault(rules('block drop out all'), 'inet')).toBe('pass');
  });

  it('does not take narrow rules, loopback rules or other families for a default', () => {
    expect(pfDefault(rules('block drop in all', 'pass in quick on lo0 all', 'pass in proto tcp from any to any port = 22'), 'inet')).toBe(
      'block',
    );
    expect(pfDefault(rules('block drop in all', 'pass in inet6 all'), 'inet')).toBe('block');
    expect(pfDefault(rules('block drop in all', 'pass in inet6 all'), 'inet6')).toBe('pass');
    expect(pfDefault(rules('block return in log (all) on ! lo0 all'), 'inet6')).toBe('block');
  });

  it('reads "set prio" as an action, "prio" as a criterion, unknown options as may-match', () => {
    expect(pfDefault(rules('block drop in all', 'pass in all set prio 3'), 'inet')).toBe('pass');
    expect(pfDefault(rules('block drop in all', 'pass in all prio 3'), 'inet')).toBe('block');
    expect(pfDefault(rules('block drop in all', 'pass in all once-upon-a-time'), 'inet')).toBe('undetermined');
  });

  it('counts anchors it cannot see into', () => {
    expect(rules('anchor "blacklistd/*" in on em0 all', 'block drop in all').anchors).toBe(1);
  });

  describe('rules bound to interfaces, with the interface list', () => {
    const host = pfInterfaces(['em0', 'em1', 'lo0', 'pflog0', 'enc0', 'usbus0']);
    const onlyEm0 = pfInterfaces(['em0', 'lo0', 'pflog0']);

    it('reads `ifconfig -l` and keeps loopback, pflog, enc and usbus out of the external interfaces', () => {
      expect(parseInterfaceList('em0 em1 lo0 pflog0 enc0 usbus0\n')).toEqual(['em0', 'em1', 'lo0', 'pflog0', 'enc0', 'usbus0']);
      expect(parseInterfaceList('ix0 ix1 ix1.20 e0b_bastille0 lo0\n')).toEqual(['ix0', 'ix1', 'ix1.20', 'e0b_bastille0', 'lo0']);
      expect(parseInterfaceList('em0 lo0 0bad\n')).toBeNull();
      expect(pfInterfaces(['igb0', 'pfsync0', 'lo1', 'bastille0', 'wlan0']).external).toEqual(['igb0', 'bastille0', 'wlan0']);
      // Whole names only: a renamed or longer interface is not internal because it contains one.
      expect(pfInterfaces(['lo10', 'vlo0', 'lo0x', 'em0']).external).toEqual(['vlo0', 'lo0x', 'em0']);
      expect(parseInterfaceList('em0  lo0\t pflog0\n')).toEqual(['em0', 'lo0', 'pflog0']);
      expect(parseInterfaceList('em0 lo0 ifconfig:\n')).toBeNull();
      expect(parseInterfaceList('ifconfig: illegal option -- l\n')).toBeNull();
      expect(parseInterfaceList('\n')).toBeNull();
      expect(host.external).toEqual(['em0', 'em1']);
    });

    it('blocks only when every external interface blocks, and passes when one certainly passes', () => {
      expect(pfDefault(rules('block drop in on em0 all'), 'inet', onlyEm0)).toBe('block');
      expect(pfDefault(rules('block drop in on em0 all'), 'inet', host)).toBe('pass');
      expect(pfDefault(rules('block drop in on em0 all', 'block drop in on em1 all'), 'inet', host)).toBe('block');
      expect(pfDefault(rules('block drop in on ! lo0 all'), 'inet6', host)).toBe('block');
      expect(pfDefault(rules('block drop in all', 'pass in on em1 all'), 'inet', host)).toBe('pass');
      expect(pfDefault(rules('block drop in all', 'pass in on ! em0 all'), 'inet', host)).toBe('pass');
      expect(pfDefault(rules('block drop in all', 'pass in on ! em0 all'), 'inet', onlyEm0)).toBe('block');
    });

    it('treats an interface that does not exist as matching nothing, and loopback groups as internal', () => {
      expect(pfDefault(rules('block drop in all', 'pass in quick on tun0 all'), 'inet', onlyEm0)).toBe('block');
      expect(pfDefault(rules('block drop in on tun0 all'), 'inet', onlyEm0)).toBe('pass');
      expect(pfDefault(rules('block drop in all', 'pass in quick on lo all'), 'inet', onlyEm0)).toBe('block');
      expect(pfDefault(rules('pass in all', 'block drop in on all all'), 'inet', onlyEm0)).toBe('block');
    });

    it('leaves a group it cannot resolve undetermined, without the list falls back to may-match', () => {
      expect(pfDefault(rules('block drop in all', 'pass in on wan all'), 'inet', onlyEm0)).toBe('undetermined');
      expect(pfInterfaces(['em0', 'lo0', 'lo1']).members('lo')).toEqual(['lo0', 'lo1']);
      expect(pfInterfaces(['em0', 'lo0', 'tun0']).members('tun')).toBeUndefined();
      expect(pfInterfaces(['em0', 'lo0']).members('wg0peers')).toBeUndefined();
      expect(pfInterfaces(['em0', 'lo0']).members('tun0')).toEqual([]);
      expect(pfDefault(rules('block drop in all', 'pass in on tun all'), 'inet', pfInterfaces(['em0', 'tun0']))).toBe('undetermined');
      expect(pfDefault(rules('block drop in on em0 all'), 'inet')).toBe('undetermined');
      expect(pfDefault(rules('block drop in on em0 all'), 'inet', pfInterfaces(['lo0']))).toBe('undetermined');
    });

    it('reads `set skip on` from `pfctl -s Interfaces -v`: a skipped external interface passes everything, a skipped loopback changes nothing', () => {
      // nymtech/nym-vpn-client#3441: `pfctl -s Interfaces -v -i lo0` printed "lo0 (skip)".
      expect(parseSkippedInterfaces('lo0 (skip)\n')).toEqual(new Set(['lo0']));
      // A recorded macOS pfctl listing, trimmed (ALTQ notices first, a group line, one skipped interface), and -vv statistics lines.
      const listing = 'No ALTQ support in kernel\nALTQ related functions disabled\nALL\nanpi0\nbridge100\nen0\nlo0 (skip)\nutun0\n';
      expect(parseSkippedInterfaces(listing)).toEqual(new Set(['lo0']));
      expect(parseSkippedInterfaces('em0 (skip)\n\tCleared:     Thu Jan  1 00:00:00 1970\n\tReferences:  0\nlo0\n')).toEqual(
        new Set(['em0']),
      );
      // Nothing skipped is an answer, not an unreadable listing: nymtech/nym-vpn-client#3441,
      // `pfctl -s Interfaces -v -i lo0` prints "lo0 (skip)" while skipped and the same line without
      // "(skip)" once not [completed: that second output, as the pull request describes it].
      expect(parseSkippedInterfaces('lo0\n')).toEqual(new Set());
      expect(parseSkippedInterfaces('pfctl: /dev/pf: Permission denied\n')).toBeNull();
      const blockAll = rules('block drop in all');
      expect(pfDefault(blockAll, 'inet', pfInterfaces(['em0', 'lo0'], new Set(['lo0'])))).toBe('block');
      expect(pfInterfaces(['em0', 'lo0'], new Set(['em0', 'lo0'])).skipped).toEqual(['em0']);
      expect(pfDefault(blockAll, 'inet', pfInterfaces(['em0', 'lo0'], new Set(['em0'])))).toBe('pass');
      expect(pfDefault(blockAll, 'inet6', pfInterfaces(['em0', 'wg0', 'lo0'], new Set(['wg0'])))).toBe('pass');
    });

    it('reads interface names as the kernel allows them: a colon in a name or a modifier after it leaves the rest decided', () => {
      // A VNET jail's renamed interface and a rule bound to it, beside the external em0.
      const jailHost = parseInterfaceList('em0 lo0 vnet0:3 pflog0\n');
      expect(jailHost).toEqual(['em0', 'lo0', 'vnet0:3', 'pflog0']);
      const jailView = pfInterfaces(jailHost!);
      expect(jailView.external).toEqual(['em0', 'vnet0:3']);
      expect(pfDefault(rules('block drop in all', 'pass in quick on vnet0:3 proto tcp from any to any port = 22'), 'inet', jailView)).toBe(
        'block',
      );
      expect(pfDefault(rules('block drop in on em0 all', 'pass in quick on vnet0:3 all'), 'inet', jailView)).toBe('pass');
      // pf's address modifiers after an interface name select its addresses, never another interface.
      expect(onlyEm0.members('em0:broadcast')).toEqual(['em0']);
      expect(onlyEm0.members('em0:network')).toEqual(['em0']);
      expect(onlyEm0.members('em1:peer')).toEqual([]);
      expect(pfDefault(rules('block drop in all', 'pass in on em0:broadcast proto udp from any to any port = 67'), 'inet', onlyEm0)).toBe(
        'block',
      );
      expect(pfDefault(rules('block drop in all', 'pass in quick on em0:broadcast all'), 'inet', onlyEm0)).toBe('pass');
      // An interface that is not there matches nothing, colon or not.
      expect(pfDefault(rules('block drop in all', 'pass in quick on vnet0:3 all'), 'inet', onlyEm0)).toBe('block');
      expect(parseSkippedInterfaces('em0\nvnet0:3 (skip)\nlo0 (skip)\n')).toEqual(new Set(['vnet0:3', 'lo0']));
      expect(parseInterfaceList('em0 averyveryverylongname0\n')).toBeNull();
    });

    it('keeps the rule body: a narrow rule on the interface is still narrow', () => {
      expect(pfDefault(rules('block drop in on em0 all', 'pass in on em0 proto tcp from any to any port = 22'), 'inet', onlyEm0)).toBe(
        'block',
      );
      expect(pfDefault(rules('block drop in on em0 inet6 all'), 'inet', onlyEm0)).toBe('pass');
      expect(pfDefault(rules('block drop out on em0 all'), 'inet', onlyEm0)).toBe('pass');
    });
  });
});

describe('ipfw', () => {
  const list = (...lines: string[]) => parseIpfwList(lines.join('\n'))!;

  it('takes the first matching rule and ignores loopback, narrow and outbound rules', () => {
    const rs = list(
      '00100 allow ip from any to any via lo0',
      '00200 allow tcp from any to me dst-port 22 in',
      '00300 allow ip from any to any out',
      '65535 deny ip from any to any',
    );
    expect(ipfwDefault(rs, 'inet')).toBe('block');
    expect(ipfwDefault(list('65000 allow ip from any to any', '65535 deny ip from any to any'), 'inet')).toBe('pass');
    expect(ipfwDefault(list('65535 allow ip from any to any'), 'inet6')).toBe('pass');
  });

  it('treats count/check-state as transparent and jumps as unknowable', () => {
    expect(ipfwDefault(list('00050 count ip from any to any', '01100 check-state :default', '65535 deny ip from any to any'), 'inet')).toBe(
      'block',
    );
    expect(ipfwDefault(list('00050 skipto 1000 ip from any to any in', '65535 deny ip from any to any'), 'inet')).toBe('undetermined');
  });

  it('handles per-family protocols, "to me", interfaces and negations', () => {
    expect(ipfwDefault(list('00100 allow ip6 from any to any', '65535 deny ip from any to any'), 'inet')).toBe('block');
    expect(ipfwDefault(list('00100 allow ip6 from any to any', '65535 deny ip from any to any'), 'inet6')).toBe('pass');
    expect(ipfwDefault(list('00100 deny ip from any to me', '65535 allow ip from any to any'), 'inet')).toBe('block');
    expect(ipfwDefault(list('00100 allow ip from any to any via em0', '65535 deny ip from any to any'), 'inet')).toBe('undetermined');
    expect(ipfwDefault(list('00100 allow ip from any to any not via lo0', '65535 deny ip from any to any'), 'inet')).toBe('undetermined');
  });

  it('needs the complete listing, ending with rule 65535', () => {
    expect(ipfwDefault(list('00100 deny ip from any to any'), 'inet')).toBe('undetermined');
    expect(parseIpfwList('ipfw: retrieving config failed: Protocol not available')).toBeNull();
    expect(parseIpfwRule('00100 prob 0.5 deny ip from any to any')).toMatchObject({ action: 'block', match: { inet: 'maybe' } });
  });
});

describe('storage', () => {
  it('parses mount -p lines and takes the last mount on /', () => {
    const table = parseMountTable(
      '/dev/md0\t\t/\t\t\tufs\tro\t\t1 1\nzroot/ROOT/default\t/\t\t\tzfs\trw,noatime,nfsv4acls \t0 0\n/my dir\t/mnt\tufs\trw\t2 2\n',
    );
    expect(rootEntry(table)).toEqual({ source: 'zroot/ROOT/default', mountpoint: '/', fstype: 'zfs' });
    expect(table.unparsed).toBe(1);
  });

  it('recognises GELI providers, including partitions made on top of one, but not look-alikes', () => {
    expect(['/dev/ada0p3.eli', 'gpt/zfs0.eli', '/dev/ada0.elip2', '/dev/ada0.elis1a'].every(isGeliProvider)).toBe(true);
    expect(['/dev/ada0p3', '/dev/eli0', '/dev/gpt/deli', '/dev/ada0p3.eli.nop', '/dev/gpt/eli'].some(isGeliProvider)).toBe(false);
  });

  it('reads leaves of mirrors, logs, cache and spares, and missing devices by their last path', () => {
    const pools = parseZpoolStatus(
      [
        '  pool: tank',
        ' state: DEGRADED',
        'config:',
        '',
        '\tNAME                      STATE     READ WRITE CKSUM',
        '\ttank                      DEGRADED     0     0     0',
        '\t  mirror-0                DEGRADED     0     0     0',
        '\t    /dev/ada1p1.eli       ONLINE       0     0     0',
        '\t    9876543210123456789   UNAVAIL      0     0     0  was /dev/ada2p1.eli',
        '\tlogs',
        '\t  /dev/nvd0p1.eli         ONLINE       0     0     0',
        '\tcache',
        '\t  /dev/nvd0p2             ONLINE       0     0     0',
        '\tspares',
        '\t  /dev/ada3p1.eli         AVAIL',
        '',
        'errors: No known data errors',
      ].join('\n'),
    );
    expect(pools.get('tank')).toEqual({
      leaves: ['/dev/ada1p1.eli', '/dev/ada2p1.eli', '/dev/nvd0p1.eli', '/dev/nvd0p2', '/dev/ada3p1.eli'],
      unrecognized: 0,
    });
  });

  it('reads geli status tables, an empty one (class loaded, no provider) and refuses other text', () => {
    expect(parseGeliStatus('            Name  Status  Components\ngpt/external.eli  ACTIVE  gpt/external\n')).toEqual([
      { name: 'gpt/external.eli', status: 'ACTIVE', component: 'gpt/external' },
    ]);
    expect(parseGeliStatus('')).toEqual([]);
    expect(parseGeliStatus('something else\n')).toBeNull();
  });
});

describe('crontab and command lines', () => {
  it('separates schedule, user, cron options and command', () => {
    expect(parseCrontab('SHELL=/bin/sh\n# c\n@daily root -n freebsd-update cron\n*/5 * * * * root  /bin/echo  "a  b"\n', true)).toEqual({
      commands: ['freebsd-update cron', '/bin/echo  "a  b"'],
      environment: { SHELL: '/bin/sh' },
    });
    expect(parseCrontab('0 3 * * * freebsd-update cron\n', false).commands).toEqual(['freebsd-update cron']);
  });

  it('splits on operators outside quotes only', () => {
    expect(shellWords('a "b;c" && d | e; f')).toEqual([
      'a',
      'b;c',
      { operator: '&&' },
      'd',
      { operator: '|' },
      'e',
      { operator: ';' },
      'f',
    ]);
  });

  it('unwraps env, nice, lockf, daemon and sh -c', () => {
    expect(
      simpleCommands("/usr/bin/lockf -t 0 /tmp/u.lock sh -c 'nice -n 10 env ASSUME_ALWAYS_YES=yes /usr/local/sbin/pkg upgrade'"),
    ).toEqual([{ argv: ['pkg', 'upgrade'], env: { ASSUME_ALWAYS_YES: 'yes' } }]);
  });

  const jobs = (line: string, env: Record<string, string> = {}): UpdateJobs => {
    const j: UpdateJobs = { baseFetch: false, baseInstall: false, pkgUpgrade: null, otherRoots: 0 };
    updateJobsOf(line, env, j);
    return j;
  };

  it('tells fetching from installing, and this host from another root', () => {
    expect(jobs('freebsd-update cron')).toMatchObject({ baseFetch: true, baseInstall: false });
    expect(jobs('freebsd-update --not-running-from-cron fetch install')).toMatchObject({ baseFetch: true, baseInstall: true });
    expect(jobs('freebsd-update -t admin@example.org cron')).toMatchObject({ baseFetch: true, baseInstall: false });
    expect(jobs('freebsd-update -j www fetch install')).toMatchObject({ baseFetch: false, otherRoots: 1 });
    expect(jobs('echo freebsd-update install')).toMatchObject({ baseInstall: false });
  });

  it('counts pkg upgrade only when it cannot stop at a prompt, and -F as download only', () => {
    expect(jobs('pkg upgrade').pkgUpgrade).toBeNull();
    expect(jobs('pkg upgrade -y').pkgUpgrade).toBe('install');
    expect(jobs('pkg upgrade', { ASSUME_ALWAYS_YES: 'YES' }).pkgUpgrade).toBe('install');
    expect(jobs('pkg -o ASSUME_ALWAYS_YES=yes upgrade').pkgUpgrade).toBe('install');
    expect(jobs('pkg upgrade -Fy').pkgUpgrade).toBe('fetch');
    expect(jobs('pkg upgrade -ny').pkgUpgrade).toBeNull();
    expect(jobs('pkg -j www upgrade -y')).toMatchObject({ pkgUpgrade: null, otherRoots: 1 });
    expect(jobs('pkg update && pkg audit -F').pkgUpgrade).toBeNull();
  });
});

describe('time daemons', () => {
  it('reads ntpq variables, leap alarm and stratum 16 as not synchronised', () => {
    expect(
      parseNtpq(ok('associd=0 status=0615 leap_none, sync_ntp, 1 event, clock_sync,\nleap=00, stratum=2,\noffset=0.834\n')),
    ).toMatchObject({ synced: true, stratum: 2, offsetSeconds: 0.000834 });
    expect(parseNtpq(ok('leap=11, stratum=16, offset=0.000\n'))).toMatchObject({ synced: false });
    expect(parseNtpq(ok('leap=00, stratum=16\n'))).toMatchObject({ synced: false });
    expect(parseNtpq(ok('status=0615 leap_none, sync_ntp\n'))).toMatchObject({ reason: 'parse_error' });
    expect(parseNtpq(failed('ntpq: read: Connection refused'))).toMatchObject({ reason: 'daemon_not_answering' });
  });

  it('reads ntpctl without mistaking "unsynced" for "synced"', () => {
    expect(parseNtpctl(ok('0/4 peers valid, clock unsynced\n'))).toMatchObject({ synced: false });
    expect(parseNtpctl(ok('4/4 peers valid, clock synced, stratum 2\n'))).toMatchObject({ synced: true, stratum: 2 });
    expect(parseNtpctl(ok('1/1 sensors valid, clock unsynced, clock offset is 12.345ms\n'))).toMatchObject({ synced: false });
    expect(parseNtpctl(ok('no peers and no sensors configured\n'))).toMatchObject({ reason: 'parse_error' });
  });

  it('reads chronyc CSV by its leap status field', () => {
    expect(
      parseChronyc(
        ok('50505300,PPS,1,1776153600.123456,0.000000015,0.000000021,0.000000034,-1.234,0.001,0.015,0.000000000,0.000015000,16.0,Normal\n'),
      ),
    ).toMatchObject({ synced: true, stratum: 1, offsetSeconds: 1.5e-8 });
    expect(parseChronyc(ok('A,B,3,Normal\n'))).toMatchObject({ reason: 'parse_error' });
    expect(parseChronyc(failed('506 Cannot talk to daemon'))).toMatchObject({ reason: 'daemon_not_answering' });
    expect(parseNtpctl(failed('ntpctl: connect: /var/run/ntpd.sock: No such file or directory'))).toMatchObject({
      reason: 'daemon_not_answering',
    });
  });
});

describe('small readers', () => {
  it('sysctl: value, absent OID, failure', () => {
    expect(interpretSysctl(ok('1\n'))).toEqual({ state: 'value', value: '1' });
    expect(interpretSysctl(failed("sysctl: unknown oid 'net.inet.ip.fw.enable'"))).toEqual({ state: 'absent' });
    expect(interpretSysctl({ exitCode: null, stdout: '', stderr: '', error: 'not_found' })).toEqual({
      state: 'error',
      reason: 'command_not_found',
    });
  });

  it('sysrc: known variables only, unknown ones skipped with exit 1', () => {
    expect(parseRcVars({ exitCode: 1, stdout: 'ntpd_enable: YES\nsomething_else: YES\n', stderr: '' })).toEqual({
      ok: true,
      values: { ntpd_enable: 'YES' },
    });
    expect(parseRcVars(failed('sysrc: Exiting due to previous syntax errors'))).toEqual({ ok: false, reason: 'parse_error' });
    expect([rcEnabled('YES'), rcEnabled('on'), rcEnabled('NO'), rcEnabled('yes please'), rcEnabled(undefined)]).toEqual([
      true,
      true,
      false,
      'invalid',
      undefined,
    ]);
  });

  it('ps: uid and command names with blanks', () => {
    expect(parseProcessTable(ok('    0 crypto returns 0\n 1001 xscreensaver\n'))).toEqual({
      ok: true,
      processes: [
        { uid: 0, comm: 'crypto returns 0' },
        { uid: 1001, comm: 'xscreensaver' },
      ],
    });
    expect(parseProcessTable(ok(''))).toEqual({ ok: false, reason: 'parse_error' });
  });

  it('ps: a table without root processes hides other users (see_other_uids=0), it is not a full table', () => {
    expect(parseProcessTable(ok(' 1001 csh\n 1001 ps\n'))).toEqual({ ok: false, reason: 'process_table_partial' });
    expect(parseProcessTable(ok('    0 init\n 1001 ps\n'))).toMatchObject({ ok: true });
  });

  it('XScreenSaver times, booleans, user values over defaults, "mode: off"', () => {
    expect([parseXsTime('0:10:00'), parseXsTime('5:30'), parseXsTime('10'), parseXsTime('soon')]).toEqual([600, 330, 600, null]);
    const user = parseResources('lock:\t\tTrue\nmode:\t\toff\n');
    const defaults = parseResources('*timeout:\t\t0:10:00\n*lockTimeout:\t\t0:00:00\n*lock:\t\t\tFalse\n');
    expect(xscreensaverSettings(user, defaults)).toEqual({ locks: false, idleSeconds: 600, graceSeconds: 0 });
    expect(xscreensaverSettings(parseResources('lock: True\n'), defaults)).toEqual({ locks: true, idleSeconds: 600, graceSeconds: 0 });
    expect(xscreensaverSettings(parseResources('lock: maybe\n'), defaults)).toBeNull();
  });

  it('xset q: only the Screen Saver section timeout', () => {
    expect(
      parseXsetTimeout(
        'Screen Saver:\n  prefer blanking:  yes    allow exposures:  yes\n  timeout:  0    cycle:  600\nDPMS (Energy Star):\n  Standby: 600    Suspend: 600    Off: 600\n',
      ),
    ).toBe(0);
    expect(parseXsetTimeout('DPMS (Energy Star):\n  timeout:  600    cycle:  600\n')).toBeNull();
  });
});

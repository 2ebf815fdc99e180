// Focused tests of the Linux parsers whose edge cases matter beyond the fixtures.
import { describe, expect, it } from 'vitest';
import { chainOf, layerFromDmUuid, protection, type BlockNode } from '../../../checks/linux/blockDevices';
import { judgeContainer } from '../../../checks/linux/container';
import { parseGsettings, parseKconfigGroup, parseXfconfChannel } from '../../../checks/linux/desktopLock';
import { analyzeIptablesInput, analyzeNftRuleset } from '../../../checks/linux/firewallRules';
import { parseMountInfo, rootMount } from '../../../checks/linux/mounts';
import { describeOs, parseOsRelease } from '../../../checks/linux/osRelease';
import { tokenizePamLine } from '../../../checks/linux/pamStack';
import { parsePwqualityConf } from '../../../checks/linux/passwordPolicy';
import { classify } from '../../../checks/linux/remoteLogin';
import { classifyAddress, addressBytes, parseProcNetTcp } from '../../../checks/linux/sockets';
import { applyListenStream } from '../../../checks/linux/sshConfig';
import { parseTimedatectl } from '../../../checks/linux/timeSync';
import { parseAptPeriodic, periodicOn } from '../../../checks/linux/autoUpdate';
import { readJson } from '../../support/json';

describe('os-release', () => {
  it('handles quoting and escapes as os-release(5) allows', () => {
    const r = parseOsRelease('NAME="A \\"quoted\\" name"\nID=\'arch\'\n# comment\nVERSION_ID=3.20.3\nID_LIKE="Ubuntu  Debian"\n');
    expect(r).toMatchObject({ name: 'A "quoted" name', id: 'arch', versionId: '3.20.3', idLike: ['ubuntu', 'debian'] });
  });

  it('writes the OS as a person would, refining the cycle with the point release', () => {
    const debian = parseOsRelease('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\nID=debian\n', '12.11\n');
    expect(describeOs(debian)).toBe('Debian GNU/Linux 12.11 (bookworm)');
    const testing = parseOsRelease('PRETTY_NAME="Debian GNU/Linux trixie/sid"\nID=debian\n', 'trixie/sid\n');
    expect(describeOs(testing)).toBe('Debian GNU/Linux trixie/sid');
    const ubuntu = parseOsRelease(
      'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nVERSION_ID="24.04"\nVERSION="24.04.1 LTS (Noble Numbat)"\nID=ubuntu\n',
    );
    expect(describeOs(ubuntu)).toBe('Ubuntu 24.04.1 LTS');
    const alpine = parseOsRelease('PRETTY_NAME="Alpine Linux v3.20"\nVERSION_ID=3.20.3\nID=alpine\n');
    expect(describeOs(alpine)).toBe('Alpine Linux v3.20.3');
    expect(describeOs(parseOsRelease('PRETTY_NAME="Arch Linux"\nID=arch\n'))).toBe('Arch Linux');
    expect(describeOs(parseOsRelease('NAME="Foo"\nVERSION="7"\nID=foo\n'))).toBe('Foo 7');
    expect(describeOs(undefined, '6.1.0-26-amd64')).toBe('Linux 6.1.0-26-amd64');
  });
});

describe('mountinfo', () => {
  it('decodes octal escapes and picks the last mount stacked on /', () => {
    const mounts = parseMountInfo(
      [
        '20 1 8:1 / / rw - ext4 /dev/sda1 rw',
        '30 20 8:2 / /mnt/with\\040space rw shared:2 - xfs /dev/sda2 rw',
        '40 20 0:50 / / rw - overlay overlay rw',
      ].join('\n'),
    );
    expect(mounts[1]).toMatchObject({ target: '/mnt/with space', fstype: 'xfs', major: 8, minor: 2 });
    expect(rootMount(mounts)).toMatchObject({ fstype: 'overlay' });
  });

  it('tells a machine root from a container root whatever the markers say', () => {
    const vm = parseMountInfo('27 1 254:0 / / rw,relatime - ext4 /dev/vda rw')[0];
    expect(judgeContainer(['dockerenv'], vm)).toEqual({ signals: ['dockerenv'], machineRoot: true, detected: false });
    const bind = parseMountInfo('50 40 8:2 /var/lib/machines/web / rw - ext4 /dev/sda2 rw')[0];
    expect(judgeContainer(['container_manager'], bind).detected).toBe(true);
    expect(judgeContainer([], bind).detected).toBe(false);
  });
});

describe('block devices', () => {
  const node = (type: BlockNode['type'], below: BlockNode[] = [], cryptType?: string): BlockNode => ({
    name: type,
    type,
    below,
    ...(cryptType ? { cryptType } : {}),
  });

  it('names dm layers from their uuid prefix', () => {
    expect(layerFromDmUuid('CRYPT-LUKS2-abc-name')).toEqual({ type: 'crypt', cryptType: 'LUKS2' });
    expect(layerFromDmUuid('CRYPT-PLAIN-swap')).toEqual({ type: 'crypt', cryptType: 'PLAIN' });
    expect(layerFromDmUuid('CRYPT-VERITY-abc-root')).toEqual({ type: 'verity' });
    expect(layerFromDmUuid('CRYPT-INTEGRITY-abc')).toEqual({ type: 'integrity' });
    expect(layerFromDmUuid('LVM-abc')).toEqual({ type: 'lvm' });
    expect(layerFromDmUuid('part1-mpath-abc')).toEqual({ type: 'part' });
    expect(layerFromDmUuid('')).toEqual({ type: 'dm' });
  });

  it('requires every leg of a multi-device root to be encrypted', () => {
    const luks = (d: string) => node('crypt', [node('part', [node('disk')])], d);
    expect(protection(node('raid', [luks('LUKS2'), luks('LUKS2')]))).toBe('encrypted');
    expect(protection(node('raid', [luks('LUKS2'), node('part', [node('disk')])]))).toBe('plain');
    expect(protection(node('lvm', [node('crypt', [node('lvm', [node('disk')])], 'LUKS2')]))).toBe('encrypted');
    expect(protection(node('loop'))).toBe('unknown');
    expect(chainOf(node('lvm', [luks('LUKS1')]))).toEqual(['lvm', 'crypt', 'part', 'disk']);
  });
});

describe('/proc/net/tcp', () => {
  it('reads LISTEN rows with host-order addresses', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:46A0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 38257 1 0 100 0 0 10 0',
      '   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1620 1 0 100 0 0 10 0',
      '   2: 0F02000A:0016 0102000A:C350 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0 100 0 0 10 0',
    ].join('\n');
    expect(parseProcNetTcp(text, 4, true)).toEqual({
      listeners: [
        { family: 4, port: 18080, bind: 'loopback', inode: 38257 },
        { family: 4, port: 2024, bind: 'any', inode: 1620 },
      ],
      unreadableLines: [],
    });
  });

  it('numbers the rows it cannot read instead of skipping them', () => {
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
    const row = '   0: 0100007F:46A0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 38257 1 0 100 0 0 10 0';
    const text = [header, row, '   1: cut short', '', row.replace('0100007F', '7F'), row.replace(' 0A ', ' ?? ')].join('\n');
    expect(parseProcNetTcp(text, 4, true).unreadableLines).toEqual([3, 5, 6]);
    // A row that is readable and not LISTEN is simply not a listener.
    expect(parseProcNetTcp([header, row.replace(' 0A ', ' 01 ')].join('\n'), 4, true)).toEqual({ listeners: [], unreadableLines: [] });
  });

  it('classifies IPv6 loopback, v4-mapped and global addresses', () => {
    expect(classifyAddress(addressBytes('00000000000000000000000001000000', true))).toBe('loopback');
    expect(classifyAddress(addressBytes('0000000000000000FFFF00000100007F', true))).toBe('loopback');
    expect(classifyAddress(addressBytes('000080FE00000000FF00FC0001000000', true))).toBe('specific');
    expect(classifyAddress(addressBytes('00000000000000000000000000000000', true))).toBe('any');
    expect(classifyAddress(addressBytes('7F000001', false))).toBe('loopback');
  });

  it('counts configured SSH ports only for sshd, an activator or an unknown owner', () => {
    const ports = new Set([2024]);
    expect(classify({ port: 2024, bind: 'any' }, ports)).toBe('ssh');
    expect(classify({ port: 2024, bind: 'any', owner: 'systemd' }, ports)).toBe('ssh');
    expect(classify({ port: 2024, bind: 'any', owner: 'process_api' }, ports)).toBeUndefined();
    expect(classify({ port: 22, bind: 'any', owner: 'process_api' }, ports)).toBe('ssh');
    expect(classify({ port: 40022, bind: 'any', owner: 'dropbear' }, ports)).toBe('ssh');
    expect(classify({ port: 5901, bind: 'any' }, ports)).toBe('vnc');
  });
});

describe('ssh configuration', () => {
  it('applies ListenStream= in order, an empty value resetting the list', () => {
    expect(applyListenStream([], '[Socket]\nListenStream=22\nAccept=no\n')).toEqual([22]);
    expect(
      applyListenStream([22], '[Socket]\nListenStream=\nListenStream=0.0.0.0:2222\nListenStream=[::]:2223\nListenStream=/run/x.sock\n'),
    ).toEqual([2222, 2223]);
    expect(applyListenStream([22], '[Unit]\nListenStream=99\n')).toEqual([22]);
  });
});

describe('firewall rules', () => {
  const recorded = (name: string) =>
    readJson<{ host: { commands: { stdout: string }[] } }>(`test/fixtures/checks/linux/FIREWALL_ENABLED/${name}.json`).host.commands[0]
      ?.stdout ?? '';

  it('does not take an input chain that accepts everything for a firewall', () => {
    expect(analyzeNftRuleset(recorded('debian-default-nftables-conf'))).toEqual({
      ok: true,
      filtering: { ipv4: false, ipv6: false, inputChains: 1, inputPolicy: 'accept', inputRules: 0 },
    });
    expect(analyzeNftRuleset(recorded('nftables-terminal-reject'))).toMatchObject({ ok: true, filtering: { ipv4: true, ipv6: true } });
    expect(analyzeNftRuleset('not json')).toEqual({ ok: false });
    expect(analyzeNftRuleset('{"other": []}')).toEqual({ ok: false });
  });

  it('reads iptables -S INPUT policies and unconditional terminal rules', () => {
    expect(analyzeIptablesInput('-P INPUT ACCEPT\n-A INPUT -p tcp -m tcp --dport 22 -j DROP\n')).toEqual({
      ok: true,
      policy: 'ACCEPT',
      filters: false,
      rules: 1,
    });
    expect(
      analyzeIptablesInput('-P INPUT ACCEPT\n-A INPUT -i lo -j ACCEPT\n-A INPUT -j REJECT --reject-with icmp-host-prohibited\n'),
    ).toMatchObject({ filters: true });
    expect(analyzeIptablesInput('-P INPUT DROP\n-A INPUT -j ACCEPT\n')).toMatchObject({ filters: false });
    expect(analyzeIptablesInput('iptables: No chain/target/match by that name.\n')).toEqual({ ok: false });
  });
});

describe('time sync outputs', () => {
  it('reads exact tokens only', () => {
    expect(parseTimedatectl('NTP=yes\nNTPSynchronized=no\nCanNTP=yes\n')).toEqual({ synchronized: false, ntpEnabled: true });
    expect(parseTimedatectl('System clock synchronized: yes\n              NTP service: inactive\n')).toEqual({
      synchronized: true,
      ntpEnabled: false,
    });
    expect(parseTimedatectl('NTPSynchronized=maybe\n')).toBeUndefined();
  });
});

describe('APT periodic settings', () => {
  it('reads each key and its interval forms', () => {
    expect(
      parseAptPeriodic('APT::Periodic "";\nAPT::Periodic::Update-Package-Lists "1";\nAPT::Periodic::Unattended-Upgrade "always";\n'),
    ).toEqual({
      'Update-Package-Lists': '1',
      'Unattended-Upgrade': 'always',
    });
    expect([
      periodicOn('0'),
      periodicOn(''),
      periodicOn(undefined),
      periodicOn('1'),
      periodicOn('always'),
      periodicOn('7d'),
      periodicOn('yes'),
    ]).toEqual([false, false, false, true, true, true, 'unknown']);
  });
});

describe('desktop lock settings', () => {
  it('parses gsettings, KConfig and xfconf formats', () => {
    expect(parseGsettings("org.gnome.desktop.session idle-delay uint32 300\norg.gnome.desktop.session session-name 'gnome'\n")).toEqual({
      'org.gnome.desktop.session.idle-delay': '300',
      'org.gnome.desktop.session.session-name': "'gnome'",
    });
    expect(parseKconfigGroup('[Daemon]\nAutolock[$i]=false\nTimeout=10\n[Greeter]\nTimeout=1\n', 'Daemon')).toEqual({
      Autolock: 'false',
      Timeout: '10',
    });
    expect(
      parseXfconfChannel(
        '<channel name="c"><property name="lock" type="empty"><property name="enabled" type="bool" value="false"/></property><property name="x" type="int" value="3"/></channel>',
      ),
    ).toEqual({
      '/lock/enabled': 'false',
      '/x': '3',
    });
  });
});

describe('PAM and pwquality syntax', () => {
  it('keeps bracketed controls in one token and reads pwquality.conf with or without "="', () => {
    expect(tokenizePamLine('password [success=1 default=ignore] pam_unix.so obscure yescrypt')).toEqual([
      'password',
      '[success=1 default=ignore]',
      'pam_unix.so',
      'obscure',
      'yescrypt',
    ]);
    expect(parsePwqualityConf('minlen = 12\nminclass 3\nenforce_for_root\n# dcredit = -1\n')).toEqual({
      minlen: '12',
      minclass: '3',
      enforce_for_root: '',
    });
  });
});

// Each FREEBSD collector asks for exactly the commands and files its evaluator needs: absolute
// paths, exact arguments, per-user commands in the session user's uid/gid, shared probes once
// per cycle, and nothing the policy does not call for.
import { describe, expect, it } from 'vitest';
import { createContext, runChecks } from '../../../checks/engine';
import { resolvePolicy, type PolicyOverride } from '../../../checks/policy';
import { checks } from '../../../checks/freebsd/index';
import { pkgCacheDir } from '../../../checks/freebsd/autoUpdate';
import { WAZUH_STATE_EXAMPLE } from '../../support/wazuhState';
import type { Check } from '../../../checks/types';
import { FakeHost, type HostCall, type HostRecording } from '../../support/fakeHost';
import { listFixtures, runFixture } from '../../support/checkFixtures';

const NOW = new Date('2026-11-21T12:00:00Z');
const byKey = (key: string): Check => {
  const check = checks.find((c) => c.key === key);
  if (!check) throw new Error(`no FREEBSD ${key}`);
  return check;
};

async function collect(key: string, recording: HostRecording, policy: PolicyOverride = {}) {
  const host = new FakeHost(recording);
  const resolved = resolvePolicy(policy);
  const facts = await byKey(key).collect(createContext(host, resolved, NOW));
  return { host, verdict: byKey(key).evaluate(facts, resolved, NOW) };
}

const argvs = (host: FakeHost) => host.commandsRun();
const reads = (host: FakeHost, kind: HostCall['kind'] = 'readFile') => host.calls.filter((c) => c.kind === kind).map((c) => c.target);

const JAILED = ['/sbin/sysctl', '-n', 'security.jail.jailed'];
const SYSRC = [
  '/usr/sbin/sysrc',
  '-i',
  'pf_enable',
  'firewall_enable',
  'firewall_type',
  'ipfilter_enable',
  'ntpd_enable',
  'ntpdate_enable',
  'chronyd_enable',
  'openntpd_enable',
  'sshd_enable',
];
const PS = ['/bin/ps', '-ax', '-o', 'uid=', '-o', 'comm='];
const ps = (rows: [number, string][]) => ({ argv: PS, stdout: rows.map(([uid, comm]) => `${String(uid).padStart(5)} ${comm}`) });
const ZFS_ROOT = 'zroot/ROOT/default\t/\t\t\tzfs\trw,noatime,nfsv4acls \t0 0\n';

it('registers the nine official checks for FREEBSD, once each', () => {
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
  expect(checks.every((c) => c.platform === 'FREEBSD')).toBe(true);
});

describe('DISK_ENCRYPTION', () => {
  it('reads mount -p and geli status, then the root pool and dataset only for a ZFS root', async () => {
    const { host } = await collect('DISK_ENCRYPTION', { commands: [{ argv: ['/sbin/mount', '-p'], stdout: ZFS_ROOT }] });
    expect(argvs(host)).toEqual([
      JAILED,
      ['/sbin/mount', '-p'],
      ['/sbin/geli', 'status'],
      ['/sbin/zpool', 'status', '-P', 'zroot'],
      ['/sbin/zfs', 'get', '-H', '-o', 'name,property,value', 'encryption,keystatus', 'zroot/ROOT/default'],
    ]);
  });

  it('asks nothing of ZFS for a UFS root', async () => {
    const { host } = await collect('DISK_ENCRYPTION', {
      commands: [{ argv: ['/sbin/mount', '-p'], stdout: '/dev/ada0p2\t\t/\t\t\tufs\trw\t\t1 1\n' }],
    });
    expect(argvs(host).map((a) => a[0])).toEqual(['/sbin/sysctl', '/sbin/mount', '/sbin/geli']);
  });

  it('with scope all_local asks each pool once and every mounted dataset', async () => {
    const mounts = ZFS_ROOT + 'zroot/home\t\t/home\t\t\tzfs\trw,noatime,nfsv4acls \t0 0\ntank/data\t\t/data\t\t\tzfs\trw,noatime \t0 0\n';
    const { host } = await collect(
      'DISK_ENCRYPTION',
      { commands: [{ argv: ['/sbin/mount', '-p'], stdout: mounts }] },
      { diskEncryption: { scope: 'all_local' } },
    );
    expect(argvs(host)).toContainEqual(['/sbin/zpool', 'status', '-P', 'zroot', 'tank']);
    expect(argvs(host)).toContainEqual([
      '/sbin/zfs',
      'get',
      '-H',
      '-o',
      'name,property,value',
      'encryption,keystatus',
      'zroot/ROOT/default',
      'zroot/home',
      'tank/data',
    ]);
  });
});

describe('SCREEN_LOCK', () => {
  const DESKTOP: [number, string][] = [
    [0, 'init'],
    [0, 'Xorg'],
    [1001, 'xinit'],
    [1001, 'i3'],
  ];
  const PASSWD = 'root:*:0:0:Charlie &:/root:/bin/sh\nalice:*:1001:1002:Alice:/home/alice:/bin/sh\n';

  it('reads only the process table on a machine without a display server', async () => {
    const { host } = await collect('SCREEN_LOCK', {
      commands: [
        ps([
          [0, 'init'],
          [0, 'sshd'],
        ]),
      ],
    });
    expect(host.calls).toEqual([{ kind: 'run', target: '/bin/ps', args: PS.slice(1) }]);
  });

  it("reads the xscreensaver user's own preferences as that user, and the port's defaults", async () => {
    const { host } = await collect('SCREEN_LOCK', {
      commands: [ps([...DESKTOP, [1001, 'xscreensaver']])],
      files: { '/etc/passwd': PASSWD },
    });
    expect(reads(host).sort()).toEqual(
      ['/etc/passwd', '/usr/local/lib/X11/app-defaults/XScreenSaver', '/usr/local/share/X11/app-defaults/XScreenSaver'].sort(),
    );
    expect(host.calls.filter((c) => c.kind === 'run').slice(1)).toEqual([
      {
        kind: 'run',
        target: '/bin/cat',
        args: ['/home/alice/.xscreensaver'],
        options: { user: { uid: 1001, gid: 1002 }, env: { HOME: '/home/alice' } },
      },
    ]);
  });

  it("runs xset q as the xss-lock user, on the one local display, with that user's X authority", async () => {
    const { host } = await collect('SCREEN_LOCK', {
      commands: [
        ps([...DESKTOP, [1001, 'xss-lock']]),
        {
          argv: ['/usr/local/bin/xset', 'q'],
          stdout: 'Screen Saver:\n  prefer blanking:  yes    allow exposures:  yes\n  timeout:  300    cycle:  600\n',
        },
      ],
      files: { '/etc/passwd': PASSWD },
      dirs: { '/tmp/.X11-unix': ['X0'] },
    });
    const xset = host.calls.find((c) => c.target === '/usr/local/bin/xset');
    expect(xset).toEqual({
      kind: 'run',
      target: '/usr/local/bin/xset',
      args: ['q'],
      options: { user: { uid: 1001, gid: 1002 }, env: { DISPLAY: ':0', XAUTHORITY: '/home/alice/.Xauthority', HOME: '/home/alice' } },
    });
  });

  it('does not guess a display when several X servers run', async () => {
    const { host, verdict } = await collect('SCREEN_LOCK', {
      commands: [ps([...DESKTOP, [1001, 'xss-lock']])],
      files: { '/etc/passwd': PASSWD },
      dirs: { '/tmp/.X11-unix': ['X0', 'X1'] },
    });
    expect(argvs(host).map((a) => a[0])).not.toContain('/usr/local/bin/xset');
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_single_display' } });
  });
});

describe('FIREWALL_ENABLED', () => {
  const pfEnabled = { argv: ['/sbin/pfctl', '-s', 'info'], stdout: 'Status: Enabled for 0 days 00:26:05           Debug: Urgent\n' };

  it('reads pf status, the ipfw and ipfilter switches and rc.conf intent; rules only for enabled filters', async () => {
    const { host } = await collect('FIREWALL_ENABLED', { commands: [pfEnabled] });
    expect(argvs(host)).toEqual([
      JAILED,
      ['/sbin/pfctl', '-s', 'info'],
      ['/sbin/sysctl', '-n', 'net.inet.ip.fw.enable'],
      ['/sbin/sysctl', '-n', 'net.inet.ipf.fr_running'],
      SYSRC,
      ['/sbin/pfctl', '-s', 'rules'],
      ['/sbin/ifconfig', '-l'],
      ['/sbin/pfctl', '-s', 'Interfaces', '-v'],
    ]);
  });

  it('judges interface-bound rules on the listed interfaces only when ifconfig answered cleanly', async () => {
    const noOid = (name: string) => ({ argv: ['/sbin/sysctl', '-n', name], stderr: `sysctl: unknown oid '${name}'\n`, exitCode: 1 });
    const rules = [
      { argv: ['/sbin/pfctl', '-s', 'rules'], stdout: 'block drop in on em0 all\n' },
      noOid('net.inet.ip.fw.enable'),
      noOid('net.inet.ipf.fr_running'),
    ];
    const listed = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 lo0\n' }],
    });
    expect(listed.verdict).toMatchObject({
      status: 'PASS',
      evidence: { interfaces_external: 1, pf_default_inet: 'block', rule: 'default_block' },
    });
    const failed = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 lo0\n', exitCode: 1 }],
    });
    expect(failed.verdict).toMatchObject({
      status: 'UNKNOWN',
      evidence: { interfaces_external: null, pf_default_inet: 'undetermined', reason: 'undetermined_ruleset' },
    });
    const twoNics = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 em1 lo0\n' }],
    });
    expect(twoNics.verdict).toMatchObject({
      status: 'FAIL',
      evidence: { interfaces_external: 2, pf_default_inet: 'pass', rule: 'default_pass' },
    });
    // `set skip on em0` is invisible in `pfctl -s rules`: em0 is not filtered at all.
    const skip = (listing: string, exitCode = 0) => ({ argv: ['/sbin/pfctl', '-s', 'Interfaces', '-v'], stdout: listing, exitCode });
    const em0Skipped = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 lo0\n' }, skip('all\nem0 (skip)\nlo\nlo0\n')],
    });
    expect(em0Skipped.verdict).toMatchObject({
      status: 'FAIL',
      evidence: { interfaces_skipped: 1, pf_default_inet: 'pass', pf_default_inet6: 'pass', rule: 'default_pass' },
    });
    const lo0Skipped = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 lo0\n' }, skip('all\nem0\nlo (skip)\nlo0 (skip)\n')],
    });
    expect(lo0Skipped.verdict).toMatchObject({ status: 'PASS', evidence: { interfaces_skipped: 0, rule: 'default_block' } });
    const unread = await collect('FIREWALL_ENABLED', {
      commands: [pfEnabled, ...rules, { argv: ['/sbin/ifconfig', '-l'], stdout: 'em0 lo0\n' }, skip('', 1)],
    });
    expect(unread.verdict).toMatchObject({ status: 'PASS', evidence: { interfaces_skipped: null } });
  });

  it('asks for no rules of a filter that is not loaded, disabled or off, and nothing about vnet outside a jail', async () => {
    const noOid = (name: string) => ({ argv: ['/sbin/sysctl', '-n', name], stderr: `sysctl: unknown oid '${name}'\n`, exitCode: 1 });
    const first = [
      JAILED,
      ['/sbin/pfctl', '-s', 'info'],
      ['/sbin/sysctl', '-n', 'net.inet.ip.fw.enable'],
      ['/sbin/sysctl', '-n', 'net.inet.ipf.fr_running'],
      SYSRC,
    ];
    const notLoaded = await collect('FIREWALL_ENABLED', {
      commands: [
        { argv: ['/sbin/pfctl', '-s', 'info'], stderr: 'pfctl: /dev/pf: No such file or directory\n', exitCode: 1 },
        noOid('net.inet.ip.fw.enable'),
      ],
    });
    expect(argvs(notLoaded.host)).toEqual(first);
    const off = await collect('FIREWALL_ENABLED', {
      commands: [
        { argv: JAILED, stdout: '0\n' },
        { argv: ['/sbin/pfctl', '-s', 'info'], stdout: 'Status: Disabled                              Debug: Urgent\n' },
        { argv: ['/sbin/sysctl', '-n', 'net.inet.ip.fw.enable'], stdout: '0\n' },
      ],
    });
    expect(argvs(off.host)).toEqual(first);
  });

  it('keeps the vnet answer: a vnet jail is judged by its own ipfw', async () => {
    const { verdict } = await collect('FIREWALL_ENABLED', {
      commands: [
        { argv: JAILED, stdout: '1\n' },
        { argv: ['/sbin/sysctl', '-n', 'security.jail.vnet'], stdout: '1\n' },
        { argv: ['/sbin/pfctl', '-s', 'info'], stderr: 'pfctl: /dev/pf: No such file or directory\n', exitCode: 1 },
        { argv: ['/sbin/sysctl', '-n', 'net.inet.ip.fw.enable'], stdout: '1\n' },
        { argv: ['/sbin/sysctl', '-n', 'net.inet6.ip6.fw.enable'], stdout: '1\n' },
        { argv: ['/sbin/ipfw', 'list'], stdout: '00100 allow ip from any to any via lo0\n65535 deny ip from any to any\n' },
      ],
    });
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { ipfw: 'enabled', rule: 'default_block' } });
  });

  it('lists ipfw rules and its IPv6 switch when ipfw is enabled, and asks about vnet inside a jail', async () => {
    const { host } = await collect('FIREWALL_ENABLED', {
      commands: [
        { argv: JAILED, stdout: '1\n' },
        { argv: ['/sbin/sysctl', '-n', 'net.inet.ip.fw.enable'], stdout: '1\n' },
      ],
    });
    expect(argvs(host)).toContainEqual(['/sbin/ipfw', 'list']);
    expect(argvs(host)).toContainEqual(['/sbin/sysctl', '-n', 'net.inet6.ip6.fw.enable']);
    expect(argvs(host)).toContainEqual(['/sbin/sysctl', '-n', 'security.jail.vnet']);
    expect(argvs(host)).not.toContainEqual(['/sbin/pfctl', '-s', 'rules']);
    expect(argvs(host)).not.toContainEqual(['/sbin/ifconfig', '-l']);
  });
});

describe('TIME_SYNC', () => {
  it('queries ntpq only when ntpd runs, and the boot time to judge a fresh daemon', async () => {
    const { host } = await collect('TIME_SYNC', {
      commands: [
        ps([
          [0, 'init'],
          [123, 'ntpd'],
        ]),
      ],
    });
    expect(argvs(host)).toEqual([
      JAILED,
      PS,
      SYSRC,
      ['/usr/bin/ntpq', '-n', '-c', 'rv 0 leap,stratum,offset'],
      ['/sbin/sysctl', '-n', 'kern.boottime'],
    ]);
  });

  it('asks OpenNTPD with ntpctl when openntpd_enable is set, and chrony with chronyc', async () => {
    const { host } = await collect('TIME_SYNC', {
      commands: [
        ps([
          [0, 'ntpd'],
          [349, 'chronyd'],
        ]),
        { argv: SYSRC, stdout: 'openntpd_enable: YES\n' },
      ],
    });
    expect(argvs(host)).toContainEqual(['/usr/local/sbin/ntpctl', '-s', 'status']);
    expect(argvs(host)).toContainEqual(['/usr/local/bin/chronyc', '-c', 'tracking']);
    expect(argvs(host)).not.toContainEqual(['/usr/bin/ntpq', '-n', '-c', 'rv 0 leap,stratum,offset']);
  });

  it('never runs `service … status`, whose exit code misleads (research §11 #14)', async () => {
    const { host } = await collect('TIME_SYNC', { commands: [ps([[0, 'init']])] });
    expect(argvs(host).map((a) => a[0])).not.toContain('/usr/sbin/service');
  });
});

describe('OS_VERSION', () => {
  it('asks freebsd-version for kernel, running kernel and userland at once', async () => {
    const { host } = await collect('OS_VERSION', {
      commands: [{ argv: ['/bin/freebsd-version', '-kru'], stdout: '14.4-RELEASE\n14.4-RELEASE\n14.4-RELEASE\n' }],
    });
    expect(argvs(host)).toEqual([['/bin/freebsd-version', '-kru']]);
  });
});

describe('AUTO_UPDATE', () => {
  it("reads the system crontab, root's crontab and every cron.d file, and asks pkg whether the base is packaged", async () => {
    const { host } = await collect('AUTO_UPDATE', { dirs: { '/etc/cron.d': [], '/usr/local/etc/cron.d': ['pkg-upgrade', '.hidden'] } });
    expect(argvs(host)).toEqual([JAILED, ['/usr/local/sbin/pkg', 'info', '-e', 'FreeBSD-runtime'], ['/bin/freebsd-version', '-kru']]);
    expect(reads(host, 'readDir')).toEqual(['/etc/cron.d', '/usr/local/etc/cron.d']);
    expect(reads(host)).toEqual(['/var/db/freebsd-update/tag', '/etc/crontab', '/var/cron/tabs/root', '/usr/local/etc/cron.d/pkg-upgrade']);
    expect(reads(host, 'stat')).toEqual(['/var/db/freebsd-update/tag', '/var/db/pkg/local.sqlite']);
  });

  it('runs freebsd-version once per cycle for OS_VERSION and AUTO_UPDATE', async () => {
    const host = new FakeHost({});
    const policy = resolvePolicy({});
    const results = await runChecks(
      checks.filter((c) => c.key === 'OS_VERSION' || c.key === 'AUTO_UPDATE'),
      { host, policy, now: () => NOW },
    );
    expect(results.map((r) => r.check_key).sort()).toEqual(['AUTO_UPDATE', 'OS_VERSION']);
    expect(argvs(host).filter((argv) => argv[0] === '/bin/freebsd-version')).toEqual([['/bin/freebsd-version', '-kru']]);
  });

  // The effect of an installing job. freebsd-update's tag has the format freebsd-update.sh's
  // fetch_tag checks (`freebsd-update|<arch>|<release>|<patch>|<64 hex>|<10 digits>`); no public
  // recording of a machine's tag was found (docs/checks.md, audit table), so its values are test
  // inputs. The versions are freebsd/poudriere#1277's machine: userland 14.1-RELEASE-p8, installed
  // kernel 14.1-RELEASE-p7 (a patch level that did not touch the kernel); its running kernel is not
  // recorded and is taken to be the installed one.
  describe('judged by what the job installed', () => {
    const TAG = '/var/db/freebsd-update/tag';
    const tag = (release: string, patch: number) => `freebsd-update|amd64|${release}|${patch}|${'5e'.repeat(32)}|1767225600\n`;
    const POUDRIERE_1277 = '14.1-RELEASE-p7\n14.1-RELEASE-p7\n14.1-RELEASE-p8\n';
    const judge = async (opts: { tag?: string; fetched?: string; versions?: string; pkgbase?: boolean; pkgDb?: string; name?: string }) => {
      const recorded = listFixtures().find(
        (f) =>
          f.platform === 'FREEBSD' &&
          f.checkKey === 'AUTO_UPDATE' &&
          f.name ===
            (opts.name ??
              (opts.pkgbase
                ? 'unknown-pkgbase-pkg-upgrade-no-database-time'
                : 'unknown-root-crontab-fetch-and-install-no-effect-recorded')),
      )!;
      const host = recorded.fixture.host;
      const commands = [...(host.commands ?? [])];
      if (opts.versions !== undefined) commands.push({ argv: ['/bin/freebsd-version', '-kru'], stdout: opts.versions });
      const files = { ...host.files, ...(opts.tag !== undefined ? { [TAG]: opts.tag } : {}) };
      const stats = {
        ...host.stats,
        ...(opts.fetched ? { [TAG]: { mtime: opts.fetched } } : {}),
        ...(opts.pkgDb ? { '/var/db/pkg/local.sqlite': { mtime: opts.pkgDb } } : {}),
      };
      return (await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...host, commands, files, stats } } })).verdict;
    };

    it('passes when the newest patch level fetched is installed (kernel or userland) and the fetch is recent', async () => {
      expect(await judge({ tag: tag('14.1-RELEASE', 8), fetched: '2026-11-21T03:12:00Z', versions: POUDRIERE_1277 })).toMatchObject({
        status: 'PASS',
        evidence: {
          rule: 'installs',
          fetched_release: '14.1-RELEASE',
          fetched_patch: 8,
          installed_userland: '14.1-RELEASE-p8',
          installed_kernel: '14.1-RELEASE-p7',
          installed_patch: 8,
          last_fetch: '2026-11-21T03:12:00.000Z',
          last_fetch_age_days: 0,
          max_fetch_age_days: 45,
        },
      });
    });

    it('fails a fetched patch level left uninstalled, and a fetch older than autoUpdate.maxPendingDays', async () => {
      expect(await judge({ tag: tag('14.1-RELEASE', 9), fetched: '2026-11-21T03:12:00Z', versions: POUDRIERE_1277 })).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'fetched_not_installed', fetched_patch: 9, installed_patch: 8 },
      });
      expect(await judge({ tag: tag('14.1-RELEASE', 8), fetched: '2026-10-06T03:12:00Z', versions: POUDRIERE_1277 })).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'not_run_recently', last_fetch_age_days: 46 },
      });
      expect((await judge({ tag: tag('14.1-RELEASE', 8), fetched: '2026-10-07T12:00:00Z', versions: POUDRIERE_1277 })).status).toBe('PASS');
    });

    it('is UNKNOWN, in its own words, when the effect cannot be read', async () => {
      const reason = async (opts: Parameters<typeof judge>[0]) => (await judge(opts)).evidence.reason;
      const fetched = '2026-11-21T03:12:00Z';
      expect(await reason({ fetched, versions: POUDRIERE_1277 })).toBe('no_fetch_recorded');
      expect(await reason({ tag: { error: 'permission_denied' } as never, versions: POUDRIERE_1277 })).toBe('permission_denied');
      expect(await reason({ tag: 'freebsd-update|amd64|14.1-RELEASE|x|\n', fetched, versions: POUDRIERE_1277 })).toBe('parse_error');
      expect(await reason({ tag: tag('14.1-RELEASE', 8), versions: POUDRIERE_1277 })).toBe('no_fetch_recorded');
      // Upgraded to 14.2 since the last fetch: the tag speaks of another release.
      expect(await reason({ tag: tag('14.0-RELEASE', 8), fetched, versions: POUDRIERE_1277 })).toBe('fetched_other_release');
      expect(await reason({ tag: tag('14.1-RELEASE', 8), fetched })).toBe('version_unreadable');
      expect(await reason({ tag: tag('14.1-RELEASE', 8), fetched, versions: '14.1-RELEASE-p7\n14.1-RELEASE-p7\n14.1-RELEASE-px\n' })).toBe(
        'version_unreadable',
      );
    });

    it('judges an accepted fetch-only job by the date of its last fetch', async () => {
      const name = 'unknown-fetch-only-accepted-no-fetch-record';
      expect(await judge({ name, tag: tag('14.1-RELEASE', 9), fetched: '2026-11-21T03:12:00Z' })).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'fetch_only_accepted', mode: 'fetch_only', last_fetch_age_days: 0 },
      });
      expect(await judge({ name, tag: tag('14.1-RELEASE', 9), fetched: '2026-10-06T03:12:00Z' })).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'not_run_recently', mode: 'fetch_only' },
      });
    });

    // `pkg upgrade -F` accepted by policy (issue 32: before, PASS from the crontab). No recording of
    // a pkg cache with its times was found (docs/checks.md, audit table): the names follow pkg's
    // cache naming (`<name>-<version>~<hash>.pkg` beside the `<name>-<version>.pkg` link), the
    // times are test inputs.
    describe("an accepted pkgbase fetch-only job, by what it left in pkg's cache", () => {
      const CRON = { '/usr/local/etc/cron.d/pkg-fetch': '0\t5\t*\t*\t*\troot\t/usr/local/sbin/pkg upgrade -F -y\n' };
      const recording = (
        over: { conf?: string; dir?: string; listing?: string[] | { error: 'permission_denied' }; stats?: Record<string, string> } = {},
      ) => {
        const dir = over.dir ?? '/var/cache/pkg';
        return {
          commands: [
            { argv: JAILED, stdout: '0\n' },
            { argv: ['/usr/local/sbin/pkg', 'info', '-e', 'FreeBSD-runtime'], exitCode: 0 },
          ],
          files: { ...CRON, ...(over.conf !== undefined ? { '/usr/local/etc/pkg.conf': over.conf } : {}) },
          dirs: { '/etc/cron.d': [], '/usr/local/etc/cron.d': ['pkg-fetch'], ...(over.listing ? { [dir]: over.listing } : {}) },
          stats: Object.fromEntries(Object.entries(over.stats ?? {}).map(([name, mtime]) => [`${dir}/${name}`, { mtime }])),
        } as HostRecording;
      };
      const accepted = { autoUpdate: { acceptDownloadOnly: true } };
      const CACHE = {
        listing: [
          '.pkg-tmp',
          'FreeBSD-runtime-15.0p2.pkg',
          'FreeBSD-runtime-15.0p2~8f1c2d.pkg',
          'FreeBSD-ssh-15.0p1~77ab01.pkg',
          'packagesite.pkg.tmp',
        ],
        stats: {
          'FreeBSD-runtime-15.0p2.pkg': '2026-11-12T09:00:00Z',
          'FreeBSD-runtime-15.0p2~8f1c2d.pkg': '2026-11-12T09:00:00Z',
          'FreeBSD-ssh-15.0p1~77ab01.pkg': '2026-10-01T09:00:00Z',
        },
      };

      it('passes when the newest fetched package is within autoUpdate.maxPendingDays, fails when older', async () => {
        const { host, verdict } = await collect('AUTO_UPDATE', recording(CACHE), accepted);
        expect(verdict).toMatchObject({
          status: 'PASS',
          evidence: {
            rule: 'fetch_only_accepted',
            mode: 'fetch_only',
            package_cache: '/var/cache/pkg',
            cached_packages: 3,
            newest_cached_package: '2026-11-12T09:00:00.000Z',
            newest_cached_package_age_days: 9,
            max_fetch_age_days: 45,
          },
        });
        expect(reads(host, 'stat').filter((p) => p.startsWith('/var/cache/pkg/'))).toEqual([
          '/var/cache/pkg/FreeBSD-runtime-15.0p2.pkg',
          '/var/cache/pkg/FreeBSD-runtime-15.0p2~8f1c2d.pkg',
          '/var/cache/pkg/FreeBSD-ssh-15.0p1~77ab01.pkg',
        ]);
        const old = { listing: ['FreeBSD-ssh-15.0p1~77ab01.pkg'], stats: { 'FreeBSD-ssh-15.0p1~77ab01.pkg': '2026-10-06T11:00:00Z' } };
        expect((await collect('AUTO_UPDATE', recording(old), accepted)).verdict).toMatchObject({
          status: 'FAIL',
          evidence: { rule: 'no_recent_package_fetch', newest_cached_package_age_days: 46, max_fetch_age_days: 45 },
        });
        const edge = { listing: ['FreeBSD-ssh-15.0p1~77ab01.pkg'], stats: { 'FreeBSD-ssh-15.0p1~77ab01.pkg': '2026-10-07T12:00:00Z' } };
        expect((await collect('AUTO_UPDATE', recording(edge), accepted)).verdict.status).toBe('PASS');
      });

      it("follows pkg.conf's PKG_CACHEDIR", async () => {
        const conf = '# local\nPKG_CACHEDIR = "/usr/local/pkgcache";\nAUTOCLEAN = false;\n';
        const { verdict } = await collect('AUTO_UPDATE', recording({ ...CACHE, conf, dir: '/usr/local/pkgcache' }), accepted);
        expect(verdict).toMatchObject({ status: 'PASS', evidence: { package_cache: '/usr/local/pkgcache', cached_packages: 3 } });
      });

      it("reads PKG_CACHEDIR in pkg.conf's UCL forms, else the default", () => {
        const conf = (text: string) => pkgCacheDir({ ok: true, text });
        expect(conf('PKG_CACHEDIR = "/a/b";\n')).toBe('/a/b');
        expect(conf('  PKG_CACHEDIR: /c # moved\n')).toBe('/c');
        expect(conf('PKG_CACHEDIR=/d\n')).toBe('/d');
        expect(conf('#PKG_CACHEDIR = "/e";\nPKG_DBDIR = "/f";\n')).toBe('/var/cache/pkg');
        expect(conf('PKG_CACHEDIR = "relative";\n')).toBe('/var/cache/pkg');
        expect(pkgCacheDir({ ok: false, error: 'not_found' })).toBe('/var/cache/pkg');
      });

      it('is UNKNOWN without a dated package, and says why', async () => {
        const reason = async (over: Parameters<typeof recording>[0]) =>
          (await collect('AUTO_UPDATE', recording(over), accepted)).verdict.evidence;
        expect(await reason({})).toMatchObject({ reason: 'no_package_fetched', package_cache: '/var/cache/pkg' });
        expect(await reason({ listing: ['.pkg-tmp'] })).toMatchObject({ reason: 'no_package_fetched', cached_packages: 0 });
        expect(await reason({ listing: ['FreeBSD-ssh-15.0p1~77ab01.pkg'], stats: {} })).toMatchObject({
          reason: 'no_package_fetched',
          cached_packages: 0,
        });
        expect(await reason({ listing: { error: 'permission_denied' } })).toMatchObject({ reason: 'permission_denied' });
      });

      it('reads the cache only where it decides: pkgbase, download-only accepted', async () => {
        const { host, verdict } = await collect('AUTO_UPDATE', recording(CACHE));
        expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'fetch_only' } });
        expect(reads(host, 'readDir')).not.toContain('/var/cache/pkg');
        expect(reads(host)).not.toContain('/usr/local/etc/pkg.conf');
      });
    });

    it("judges a pkgbase job by when pkg's database last changed", async () => {
      expect(await judge({ pkgbase: true, pkgDb: '2026-11-20T04:00:00Z' })).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'installs', package_database: '/var/db/pkg/local.sqlite', packages_changed_age_days: 1 },
      });
      expect(await judge({ pkgbase: true, pkgDb: '2026-09-01T04:00:00Z' })).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'no_recent_install', packages_changed_age_days: 81 },
      });
    });
  });
});

describe('PASSWORD_POLICY', () => {
  it('follows includes and passwdqc config files, falling back to /usr/local/etc/pam.d', async () => {
    const { host, verdict } = await collect('PASSWORD_POLICY', {
      files: {
        '/etc/pam.d/passwd': 'password include common-password\n',
        '/usr/local/etc/pam.d/common-password': 'password requisite pam_passwdqc.so config=/usr/local/etc/passwdqc.conf\n',
        '/usr/local/etc/passwdqc.conf': '# site policy\nmin=disabled,disabled,disabled,disabled,14\nenforce=everyone\n',
      },
    });
    expect(reads(host)).toEqual([
      '/etc/login.conf',
      '/etc/nsswitch.conf',
      '/etc/pam.d/passwd',
      '/etc/pam.d/common-password',
      '/usr/local/etc/pam.d/common-password',
      '/usr/local/etc/passwdqc.conf',
    ]);
    expect(argvs(host)).toEqual([]);
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { effective_min_length: 14, enforce: 'everyone' } });
  });
});

describe('REMOTE_LOGIN', () => {
  it('reads listening TCP sockets, the process table and sshd_enable; sshd -T only when the policy may accept hardened SSH', async () => {
    const plain = await collect('REMOTE_LOGIN', {});
    expect(argvs(plain.host)).toEqual([['/usr/bin/sockstat', '-4', '-6', '-l', '-P', 'tcp'], PS, SYSRC]);
    const hardened = await collect('REMOTE_LOGIN', {}, { remoteLogin: { allowSshIfHardened: true } });
    expect(argvs(hardened.host)).toContainEqual(['/usr/sbin/sshd', '-T']);
  });
});

describe('REMOTE_LOGIN with sockstat rows it cannot read', () => {
  const recorded = (name: string) => listFixtures().find((f) => f.platform === 'FREEBSD' && f.name === name)!;
  // A row sockstat might print in a form the parser does not know (a command name with a blank).
  const withUnreadableRow = async (name: string) => {
    const loaded = recorded(name);
    const commands = loaded.fixture.host.commands!.map((c) => {
      if (c.argv[0] !== '/usr/bin/sockstat') return c;
      const stdout = Array.isArray(c.stdout) ? c.stdout.join('\n') : (c.stdout ?? '');
      return { ...c, stdout: `${stdout.replace(/\n$/, '')}\nroot     my daemon  900   4  tcp4   *:8022                *:*\n` };
    });
    const { verdict } = await runFixture({ ...loaded, fixture: { ...loaded.fixture, host: { ...loaded.fixture.host, commands } } });
    return verdict;
  };

  it('keeps a FAIL the readable rows show, naming the unread line', async () => {
    const verdict = await withUnreadableRow('fail-sshd-listening');
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'listening' } });
    expect(verdict.evidence.unrecognized_lines).toHaveLength(1);
  });

  it('never PASSes on the rows it could read alone', async () => {
    for (const name of ['pass-sshd-loopback-only', 'pass-sshd-not-enabled', 'fail-running-enabled-socket-not-visible']) {
      expect(await withUnreadableRow(name)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'unrecognized_lines' } });
    }
  });
});

describe('MALWARE_PROTECTION with ClamAV', () => {
  it("dates ClamAV's signatures in the port's /var/db/clamav: a running freshclam is not enough", async () => {
    const loaded = listFixtures().find((f) => f.platform === 'FREEBSD' && f.name === 'clamav-running')!;
    const withStats = async (stats: Record<string, { mtime: string }>) =>
      (await runFixture({ ...loaded, fixture: { ...loaded.fixture, host: { ...loaded.fixture.host, stats } } })).verdict;
    expect(await withStats({ '/var/db/clamav/daily.cvd': { mtime: '2026-11-10T09:00:00Z' } })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'signatures_outdated', signature_age_days: 11, max_signature_age_days: 7 },
    });
    // The newer of the two forms counts.
    expect(
      await withStats({
        '/var/db/clamav/daily.cvd': { mtime: '2026-11-10T09:00:00Z' },
        '/var/db/clamav/daily.cld': { mtime: '2026-11-19T09:00:00Z' },
      }),
    ).toMatchObject({ status: 'PASS', evidence: { signature_age_days: 2 } });
    expect(await withStats({})).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'signatures_unreadable' } });
  });
});

describe('MALWARE_PROTECTION with Wazuh', () => {
  // The security/wazuh-agent port installs under WAZUHPREFIX /var/ossec (freebsd/freebsd-ports
  // security/wazuh-agent/Makefile, 4.3.9) and its wazuh-agentd writes the state file there.
  const STATE = '/var/ossec/var/run/wazuh-agentd.state';
  const judge = async (state: string | { error: 'permission_denied' } | undefined, agents = ['wazuh-agent', 'osquery']) =>
    (
      await collect(
        'MALWARE_PROTECTION',
        {
          commands: [
            ps([
              [0, 'wazuh-agentd'],
              [0, 'osqueryd'],
              [0, 'clamd'],
              [26, 'freshclam'],
            ]),
          ],
          files: state === undefined ? {} : { [STATE]: state },
          stats: { '/var/db/clamav/daily.cld': { mtime: '2026-11-20T09:00:00Z' } },
        },
        { malware: { requiredAgents: { FREEBSD: agents } } },
      )
    ).verdict;
  const withStatus = (status: string) => WAZUH_STATE_EXAMPLE.replace("status='connected'", `status='${status}'`);

  it('judges a required Wazuh agent by its state file, never by wazuh-agentd running (issue 32)', async () => {
    expect(await judge(WAZUH_STATE_EXAMPLE)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'agents_running', wazuh: { status: 'connected' }, judged_by_process: ['osquery'] },
    });
    expect(await judge(withStatus('disconnected'))).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disconnected', wazuh: { status: 'disconnected' } },
    });
    expect(await judge(withStatus('pending'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_connecting', agent: 'wazuh-agent', wazuh: { status: 'pending' } },
    });
    expect(await judge(undefined)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', agent: 'wazuh-agent', health_error: 'not_found' },
    });
    expect(await judge({ error: 'permission_denied' })).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', health_error: 'permission_denied' },
    });
    expect(await judge(withStatus('unknown'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', fields_unread: ['status'] },
    });
  });

  it('lets outdated ClamAV signatures and a disconnected Wazuh both FAIL, and an unreadable state only after them', async () => {
    expect(await judge(withStatus('disconnected'), ['wazuh-agent', 'clamav'])).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disconnected' },
    });
    expect(await judge(undefined, ['wazuh-agent', 'clamav'])).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', signature_age_days: 1 },
    });
    expect(await judge(WAZUH_STATE_EXAMPLE, ['wazuh-agent', 'clamav'])).toMatchObject({
      status: 'PASS',
      evidence: { signature_age_days: 1, wazuh: { status: 'connected' } },
    });
  });
});

describe('MALWARE_PROTECTION', () => {
  it('touches nothing unless the policy requires an agent', async () => {
    const none = await collect('MALWARE_PROTECTION', {});
    expect(none.host.calls).toEqual([]);
    const required = await collect('MALWARE_PROTECTION', {}, { malware: { requiredAgents: { FREEBSD: ['clamav'] } } });
    expect(argvs(required.host)).toEqual([PS]);
  });
});

it('runs the shared probes (process table, jail state, rc.conf) once per cycle for all nine checks', async () => {
  const host = new FakeHost({
    commands: [
      ps([
        [0, 'init'],
        [0, 'sshd'],
        [123, 'ntpd'],
      ]),
    ],
  });
  const results = await runChecks(checks, {
    host,
    policy: resolvePolicy({ malware: { requiredAgents: { FREEBSD: ['clamav'] } } }),
    now: () => NOW,
  });
  expect(results).toHaveLength(9);
  const count = (argv: string[]) => argvs(host).filter((a) => a.join(' ') === argv.join(' ')).length;
  expect(count(PS)).toBe(1);
  expect(count(JAILED)).toBe(1);
  expect(count(SYSRC)).toBe(1);
  for (const argv of argvs(host)) expect(argv[0]!.startsWith('/')).toBe(true);
});

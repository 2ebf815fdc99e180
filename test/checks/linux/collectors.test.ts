// What the Linux collectors ask the machine, on recorded hosts: per-user settings are read in the
// user's context, headless hosts never consult gsettings, and tools that cannot answer are not run.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../checks/engine';
import { autoUpdate, periodicDays } from '../../../checks/linux/autoUpdate';
import { resolvePolicy } from '../../../checks/policy';
import { loadChecks } from '../../../checks/registry';
import { FakeHost } from '../../support/fakeHost';
import { listFixtures, runFixture, type LoadedFixture } from '../../support/checkFixtures';

const fixture = (checkKey: string, name: string): LoadedFixture => {
  const found = listFixtures().find((f) => f.platform === 'LINUX' && f.checkKey === checkKey && f.name === name);
  if (!found) throw new Error(`fixture ${checkKey}/${name} missing`);
  return found;
};

it("the registry's Linux checks each name LINUX as their platform", async () => {
  const checks = await loadChecks('LINUX');
  expect(checks.map((c) => c.key)).toContain('FIREWALL_ENABLED');
  expect(checks.every((c) => c.platform === 'LINUX')).toBe(true);
});

describe('SCREEN_LOCK collector', () => {
  it('never runs gsettings on a headless host, where it would print schema defaults', async () => {
    const { verdict, host } = await runFixture(fixture('SCREEN_LOCK', 'debian-headless-gsettings-defaults'));
    expect(verdict.status).toBe('NOT_APPLICABLE');
    expect(host.commandsRun()).toEqual([]);
  });

  it("runs gsettings as the session user with that user's runtime directory and bus, and keeps the user out of the evidence", async () => {
    const { verdict, host } = await runFixture(fixture('SCREEN_LOCK', 'ubuntu-gnome-grace-too-long'));
    const runs = host.calls.filter((c) => c.kind === 'run');
    expect(runs).toHaveLength(2);
    for (const call of runs) {
      expect(call.target).toBe('/usr/bin/gsettings');
      expect(call.options?.user).toEqual({ uid: 1000, gid: 1000 });
      expect(call.options?.env).toEqual({
        HOME: '/home/alice',
        XDG_RUNTIME_DIR: '/run/user/1000',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      });
    }
    const evidence = JSON.stringify(verdict.evidence);
    expect(evidence).not.toMatch(/alice|\/home|1000/);
  });

  it('reads KDE settings from files without spawning anything', async () => {
    const { host } = await runFixture(fixture('SCREEN_LOCK', 'kde-autolock-off'));
    expect(host.commandsRun()).toEqual([]);
    expect(host.calls.some((c) => c.kind === 'readFile' && c.target === '/home/alice/.config/kscreenlockerrc')).toBe(true);
  });
});

describe('collectors skip what cannot answer', () => {
  it('TIME_SYNC does not ask timedatectl when systemd is not PID 1', async () => {
    const { host } = await runFixture(fixture('TIME_SYNC', 'debian-no-systemd-no-daemon'));
    expect(host.commandsRun()).toEqual([]);
  });

  it('AUTO_UPDATE reads the cron scheduler, not systemd timers, without systemd', async () => {
    const { host } = await runFixture(fixture('AUTO_UPDATE', 'debian-not-installed-no-systemd'));
    expect(host.commandsRun().map((a) => a[0])).toEqual(['/usr/bin/dpkg-query', '/usr/bin/apt-config']);
  });

  it('REMOTE_LOGIN asks sshd for its settings only when SSH is reachable', async () => {
    expect((await runFixture(fixture('REMOTE_LOGIN', 'debian-no-ssh-listener'))).host.commandsRun()).toEqual([]);
    expect((await runFixture(fixture('REMOTE_LOGIN', 'sshd-listening-any'))).host.commandsRun()).toEqual([['/usr/sbin/sshd', '-T']]);
  });

  it('DISK_ENCRYPTION walks sysfs without any command for a dm-crypt root', async () => {
    expect((await runFixture(fixture('DISK_ENCRYPTION', 'ubuntu-lvm-on-luks'))).host.commandsRun()).toEqual([]);
  });
});

describe('SCREEN_LOCK on XFCE', () => {
  it("judges xfce4-screensaver's settings only while it runs", async () => {
    const loaded = fixture('SCREEN_LOCK', 'debian-xfce-sysvinit');
    const withProcs = async (pids: string[], files: Record<string, string> = {}) => {
      const host = {
        ...loaded.fixture.host,
        dirs: { ...loaded.fixture.host.dirs, '/proc': pids },
        files: { ...loaded.fixture.host.files, ...files },
      };
      return (await runFixture({ ...loaded, fixture: { ...loaded.fixture, host } })).verdict;
    };
    // The variation under test, not a recording: the recorded session plus a locker process as
    // xfce4-session's autostart starts it (its comm cut to 15 characters by the kernel).
    const locker = { '/proc/1530/comm': 'xfce4-screensav', '/proc/1530/cmdline': 'xfce4-screensaver\0' };
    expect(await withProcs(['1', '980', '1402', '1510', '1530'], locker)).toMatchObject({
      status: 'PASS',
      evidence: { locker_running: true },
    });
    expect(await withProcs(['1', '980', '1402', '1510'])).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'locker_not_running', locker_running: false },
    });
    // Without PID 1 the table is not complete: a locker not seen may still run.
    expect(await withProcs(['980', '1402', '1510'])).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'process_table_incomplete' } });
  });
});

describe('REMOTE_LOGIN with /proc/net/tcp rows it cannot read', () => {
  const withUnreadableRow = async (name: string) => {
    const loaded = fixture('REMOTE_LOGIN', name);
    const files = { ...loaded.fixture.host.files };
    const tcp = files['/proc/net/tcp'];
    const text = Array.isArray(tcp) ? tcp.join('\n') : (tcp as string);
    files['/proc/net/tcp'] = `${text.replace(/\n$/, '')}\n   9: cut short\n`;
    const { verdict } = await runFixture({ ...loaded, fixture: { ...loaded.fixture, host: { ...loaded.fixture.host, files } } });
    return verdict;
  };

  it('keeps the exposure the readable rows show, and never PASSes beside a row it could not read', async () => {
    const exposed = await withUnreadableRow('sshd-listening-any');
    expect(exposed).toMatchObject({ status: 'FAIL', evidence: { rule: 'remote_login_exposed' } });
    expect(exposed.evidence.unrecognized_lines).toEqual({ tcp: [expect.any(Number)] });
    for (const name of ['debian-no-ssh-listener', 'sshd-loopback-only', 'ssh-hardened-allowed']) {
      expect(await withUnreadableRow(name)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'unrecognized_lines' } });
    }
  });
});

/**
 * The parts an installed unattended-upgrades is judged on, each recorded: the debian-sysvinit-cron
 * fixture (Debian 12 without systemd, cron running apt-compat); `apt-config dump APT::Periodic
 * Unattended-Upgrade` with Debian's packaged 20auto-upgrades and 50unattended-upgrades in place
 * (test/fixtures/apt/README.md); this machine's APT lists (Debian 12, test/fixtures/apt/debian-12-lists).
 * A test input joined from recordings, not a fixture (no single machine recorded all of it).
 */
function installedOnDebian(log: string | null = '2026-11-21T06:25:11Z'): LoadedFixture {
  const base = fixture('AUTO_UPDATE', 'debian-sysvinit-cron');
  const apt = (file: string) => readFileSync(new URL(`../../fixtures/apt/${file}`, import.meta.url), 'utf8');
  const listing = apt('debian-12-lists/listing.txt').split('\n').filter(Boolean);
  const lists = Object.fromEntries(
    listing.filter((f) => f.endsWith('InRelease')).map((f) => [`/var/lib/apt/lists/${f}`, apt(`debian-12-lists/${f}`)]),
  );
  const dump = apt('debian-unattended-upgrades-2.9.1+nmu3-default.apt-config-dump');
  const host = base.fixture.host;
  return {
    ...base,
    fixture: {
      ...base.fixture,
      host: {
        ...host,
        files: { ...host.files, ...lists },
        dirs: { ...host.dirs, '/var/lib/apt/lists': listing },
        commands: host.commands!.map((c) => (c.argv[0] === '/usr/bin/apt-config' ? { ...c, stdout: dump } : c)),
        // An install run writes its log and, at its end, unattended-upgrade's stamp.
        stats: { ...host.stats, ...(log ? { [UU_LOG]: { mtime: log }, [UU_INSTALL_STAMP]: { mtime: log } } : {}) },
      },
    },
  };
}

const UU_LOG = '/var/log/unattended-upgrades/unattended-upgrades.log';
const UU_INSTALL_STAMP = '/var/lib/apt/periodic/unattended-upgrades-stamp';

describe('AUTO_UPDATE collector', () => {
  // openEuler's os-release as chef/os_release @ 198876e records it: ID=openEuler, no ID_LIKE.
  const openEuler = readFileSync(new URL('../../fixtures/os-release/chef-os_release/openeuler', import.meta.url), 'utf8');
  const judge = async (stats: Record<string, object>) => {
    const host = new FakeHost({ files: { '/etc/os-release': openEuler }, stats });
    const policy = resolvePolicy({});
    const now = new Date('2026-11-21T12:00:00Z');
    return { host, verdict: autoUpdate.evaluate(await autoUpdate.collect(createContext(host, policy, now)), policy, now) };
  };

  it('judges a distribution whose family it does not know by the package manager installed, and says so', async () => {
    const { verdict } = await judge({ '/usr/bin/dnf': {} });
    expect(verdict.evidence).toMatchObject({ source: 'dnf', detected_by: '/usr/bin/dnf' });
    expect(verdict.evidence.reason).not.toBe('package_manager_unknown');
  });

  it("reads unattended-upgrades' dpkg state by dpkg-query(1)'s words, not one string", async () => {
    const recorded = installedOnDebian();
    const withStatus = async (status: string) => {
      const commands = recorded.fixture.host.commands!.map((c) => (c.argv[0] === '/usr/bin/dpkg-query' ? { ...c, stdout: status } : c));
      const { verdict } = await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, commands } } });
      return verdict;
    };
    // Held, or selected for removal but not removed yet: installed, and working.
    expect((await withStatus('hold ok installed')).status).toBe('PASS');
    expect((await withStatus('deinstall ok installed')).status).toBe('PASS');
    for (const status of [
      'install ok unpacked',
      'install ok half-configured',
      'install reinstreq half-installed',
      'install ok triggers-pending',
    ]) {
      expect(await withStatus(status)).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'package_state_transitional', package_state: status },
      });
    }
    expect(await withStatus('deinstall ok config-files')).toMatchObject({ status: 'FAIL', evidence: { rule: 'not_installed' } });
    expect(await withStatus('install ok something-new')).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'parse_error' } });
  });

  it("judges by the package manager installed, the distribution's family only choosing among several", async () => {
    const osRelease = (name: string) => readFileSync(new URL(`../../fixtures/os-release/chef-os_release/${name}`, import.meta.url), 'utf8');
    const judgeOn = async (release: string, stats: Record<string, object>) => {
      const host = new FakeHost({ files: { '/etc/os-release': osRelease(release) }, stats });
      const policy = resolvePolicy({});
      const now = new Date('2026-11-21T12:00:00Z');
      return autoUpdate.evaluate(await autoUpdate.collect(createContext(host, policy, now)), policy, now).evidence;
    };
    // Mageia 9 (ID_LIKE="mandriva fedora") with apt-get beside dnf: its family picks dnf.
    expect(await judgeOn('mageia_9', { '/usr/bin/apt-get': {}, '/usr/bin/dnf': {} })).toMatchObject({
      source: 'dnf',
      detected_by: '/usr/bin/dnf',
    });
    // Ubuntu whose apt is gone and dnf is there: what is installed decides.
    expect(await judgeOn('ubuntu_2404', { '/usr/bin/dnf': {} })).toMatchObject({ source: 'dnf', detected_by: '/usr/bin/dnf' });
    // Nothing found: the family's manager is asked, and its own tools answer (here: not there).
    const none = await judgeOn('ubuntu_2404', {});
    expect(none).toMatchObject({ source: 'apt' });
    expect(none.detected_by).toBeUndefined();
    // A directory where the program should be is not the program.
    expect(await judgeOn('ubuntu_2404', { '/usr/bin/apt-get': { isDirectory: true }, '/sbin/apk': {} })).toMatchObject({ source: 'apk' });
  });

  it('needs unattended-upgrades to have completed an install run within its period, not only to be configured', async () => {
    const recorded = installedOnDebian(null);
    const withLog = async (mtime: string | undefined, now: string, stamp = mtime) => {
      const stats = { ...recorded.fixture.host.stats };
      if (mtime) stats[UU_LOG] = { mtime };
      else delete stats[UU_LOG];
      if (stamp) stats[UU_INSTALL_STAMP] = { mtime: stamp };
      else delete stats[UU_INSTALL_STAMP];
      const { verdict } = await runFixture({
        ...recorded,
        fixture: { ...recorded.fixture, now, host: { ...recorded.fixture.host, stats } },
      });
      return verdict;
    };
    // Unattended-Upgrade "1": a daily run, late by at most two more days.
    expect(await withLog('2026-11-18T06:25:11Z', '2026-11-21T12:00:00Z')).toMatchObject({
      status: 'PASS',
      evidence: { last_run_age_days: 3, last_install_age_days: 3, max_run_age_days: 3 },
    });
    expect(await withLog('2026-11-17T06:25:11Z', '2026-11-21T12:00:00Z')).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'not_run_recently', last_install_age_days: 4, max_run_age_days: 3 },
    });
    expect(await withLog(undefined, '2026-11-21T12:00:00Z')).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_run_recorded' } });
    // Download-only runs (apt-daily.service) write the log too, never the stamp: a fresh log alone is no install.
    expect(await withLog('2026-11-21T06:25:11Z', '2026-11-21T12:00:00Z', '')).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'no_install_recorded', last_run_age_days: 0 },
    });
    // Install runs stopped completing (the stamp is old) while the log goes on: FAIL by the stamp's age.
    expect(await withLog('2026-11-21T06:25:11Z', '2026-11-21T12:00:00Z', '2026-11-10T06:25:11Z')).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'not_run_recently', last_run_age_days: 0, last_install_age_days: 11 },
    });
  });

  describe("what unattended-upgrades may install, against the archives this machine's lists fetch", () => {
    const judge = async (change: (host: LoadedFixture['fixture']['host']) => LoadedFixture['fixture']['host'], log?: string | null) => {
      const recorded = installedOnDebian(log);
      return runFixture({ ...recorded, fixture: { ...recorded.fixture, host: change(recorded.fixture.host) } });
    };
    const withPatterns =
      (...patterns: string[]) =>
      (host: LoadedFixture['fixture']['host']) => ({
        ...host,
        commands: host.commands!.map((c) =>
          c.argv[0] === '/usr/bin/apt-config'
            ? {
                ...c,
                stdout: [
                  'APT::Periodic::Update-Package-Lists "1";',
                  'APT::Periodic::Unattended-Upgrade "1";',
                  ...patterns.map((p) => `Unattended-Upgrade::Origins-Pattern:: "${p}";`),
                ],
              }
            : c,
        ),
      });

    it("passes Debian's packaged patterns on this machine's lists, naming what is allowed, in one apt-config run", async () => {
      const { verdict, host } = await judge((h) => h);
      expect(verdict).toMatchObject({
        status: 'PASS',
        evidence: {
          rule: 'unattended_upgrades',
          allowed_origins: [
            'origin=Debian,codename=bookworm,label=Debian',
            'origin=Debian,codename=bookworm,label=Debian-Security',
            'origin=Debian,codename=bookworm-security,label=Debian-Security',
          ],
          archives_allowed: ['Debian/oldstable-security', 'Debian/oldstable'],
        },
      });
      expect(host.commandsRun().filter((argv) => argv[0] === '/usr/bin/apt-config')).toEqual([
        ['/usr/bin/apt-config', 'dump', 'APT::Periodic', 'Unattended-Upgrade'],
      ]);
    });

    it('fails when nothing fetched is allowed, run or not, naming patterns and archives', async () => {
      const { verdict } = await judge(withPatterns('origin=Raspbian,codename=${distro_codename},label=Raspbian'), null);
      expect(verdict).toMatchObject({
        status: 'FAIL',
        evidence: {
          rule: 'allowed_origins_not_fetched',
          allowed_origins: ['origin=Raspbian,codename=bookworm,label=Raspbian'],
          archives_fetched: ['Debian/oldstable-security', 'Debian/oldstable-updates', 'Debian/oldstable'],
          archives_not_allowed: ['Debian/oldstable-security', 'Debian/oldstable-updates', 'Debian/oldstable'],
        },
      });
    });

    it('fails when the security archive fetched is not allowed', async () => {
      const { verdict } = await judge(withPatterns('origin=Debian,codename=${distro_codename},label=Debian'));
      expect(verdict).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'security_archive_not_allowed', archives_not_allowed: ['Debian/oldstable-security'] },
      });
    });

    it('is UNKNOWN, never PASS from the configuration alone, when the lists cannot tell what is fetched', async () => {
      const noLists = (dir: string[] | { error: 'permission_denied' } | undefined) => (host: LoadedFixture['fixture']['host']) => {
        const dirs = { ...host.dirs };
        if (dir) dirs['/var/lib/apt/lists'] = dir;
        else delete dirs['/var/lib/apt/lists'];
        return { ...host, dirs };
      };
      expect((await judge(noLists(undefined))).verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'archive_lists_unreadable', lists: 'lists_unreadable', lists_error: 'not_found' },
      });
      // Never ran `apt update`: the lock and nothing else.
      expect((await judge(noLists(['lock', 'partial']))).verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'archive_lists_unreadable', lists: 'no_release_files' },
      });
      expect((await judge(noLists({ error: 'permission_denied' }))).verdict).toMatchObject({
        evidence: { reason: 'archive_lists_unreadable', lists_error: 'permission_denied' },
      });
      // A stale log stays a FAIL of its own, and no log an UNKNOWN of its own.
      expect((await judge(noLists(undefined), '2026-11-01T06:00:00Z')).verdict).toMatchObject({ evidence: { rule: 'not_run_recently' } });
      expect((await judge(noLists(undefined), null)).verdict).toMatchObject({ evidence: { reason: 'no_run_recorded' } });
    });

    it('decides only what an unreadable Release file cannot change', async () => {
      const UPDATES = '/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm-updates_InRelease';
      const unreadable = (host: LoadedFixture['fixture']['host']) => ({
        ...host,
        files: { ...host.files, [UPDATES]: { error: 'permission_denied' as const } },
      });
      expect((await judge(unreadable)).verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'archive_lists_unreadable', lists: 'release_files_unreadable', lists_unread: 1 },
      });
      expect((await judge((h) => unreadable(withPatterns('origin=Raspbian')(h)))).verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'archive_lists_unreadable' },
      });
      // A security archive read and not allowed stays a FAIL whatever the unread one is.
      expect(
        (await judge((h) => unreadable(withPatterns('origin=Debian,codename=${distro_codename},label=Debian')(h)))).verdict,
      ).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'security_archive_not_allowed' },
      });
    });

    it('is UNKNOWN where unattended-upgrades would stop at a pattern, naming it', async () => {
      const { verdict } = await judge(withPatterns('origin=Debian,suit=stable'));
      expect(verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'origin_pattern_unreadable', pattern_error: 'unknown key suit in origin=Debian,suit=stable' },
      });
      const substitution = await judge(withPatterns('origin=${distro}'));
      expect(substitution.verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'origin_pattern_unreadable', pattern_error: 'unknown placeholder ${distro} in origin=${distro}' },
      });
    });

    it('reads no list where unattended-upgrades is not installed', async () => {
      const { verdict, host } = await runFixture(fixture('AUTO_UPDATE', 'debian-not-installed-no-systemd'));
      expect(verdict.status).toBe('FAIL');
      expect(host.calls.filter((c) => c.target.startsWith('/var/lib/apt/lists'))).toEqual([]);
    });
  });

  const osRelease = (name: string) => readFileSync(new URL(`../../fixtures/os-release/chef-os_release/${name}`, import.meta.url), 'utf8');
  // The effect of dnf-automatic and transactional-update: systemd's record of the timer's last trigger
  // and of the run it started. No public recording of `systemctl show` for these units was found
  // (docs/checks.md, audit table): the values below are test inputs in the format systemd prints,
  // as recorded in Josef-Friedrich/check_systemd#20 (RHEL: `LastTriggerUSec=0`, `Result=success`)
  // and systemd/systemd#7993 (`LastTriggerUSec=` and `NextElapseUSecRealtime=` as timestamps).
  describe("dnf-automatic and transactional-update by systemd's record of their last run", () => {
    const SHOW = (units: string[]) => [
      '/usr/bin/systemctl',
      'show',
      '--no-pager',
      '--property=Id,LastTriggerUSec,NextElapseUSecRealtime,ActiveState,Result,ExecMainStatus,ExecMainExitTimestamp',
      ...units,
    ];
    const INSTALL = ['dnf-automatic-install.timer', 'dnf-automatic-install.service'];
    const record = (timer: Record<string, string>, service: Record<string, string>, units = INSTALL) =>
      [
        `Id=${units[0]}`,
        ...Object.entries(timer).map(([k, v]) => `${k}=${v}`),
        '',
        `Id=${units[1]}`,
        ...Object.entries(service).map(([k, v]) => `${k}=${v}`),
      ].join('\n') + '\n';
    const ran = { LastTriggerUSec: 'Sat 2026-11-21 06:23:41 UTC', NextElapseUSecRealtime: 'Sun 2026-11-22 06:00:00 UTC' };
    const succeeded = {
      ActiveState: 'inactive',
      Result: 'success',
      ExecMainStatus: '0',
      ExecMainExitTimestamp: 'Sat 2026-11-21 06:25:02 UTC',
    };
    const withRecord = async (stdout: string | undefined, exitCode = 0) => {
      const recorded = fixture('AUTO_UPDATE', 'rhel-dnf-automatic-install-timer');
      const commands = [...recorded.fixture.host.commands!];
      if (stdout !== undefined) commands.push({ argv: SHOW(INSTALL), stdout, exitCode });
      return runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, commands } } });
    };

    it('passes a timer that triggered within its period and whose run succeeded, naming the run; asks systemd in UTC', async () => {
      const { verdict, host } = await withRecord(record(ran, succeeded));
      expect(verdict).toMatchObject({
        status: 'PASS',
        evidence: {
          rule: 'dnf_automatic_install',
          job: 'dnf-automatic-install.timer',
          last_run: '2026-11-21T06:23:41.000Z',
          last_run_age_days: 0,
          max_run_age_days: 3,
          run_result: 'success',
          exit_status: '0',
        },
      });
      expect(host.calls.find((c) => c.kind === 'run' && c.args?.[0] === 'show')?.options).toEqual({ env: { TZ: 'UTC' } });
    });

    it('fails a run that failed, and one that has not triggered within its period', async () => {
      const failed = { ...succeeded, ActiveState: 'failed', Result: 'exit-code', ExecMainStatus: '1' };
      expect((await withRecord(record(ran, failed))).verdict).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'last_run_failed', run_result: 'exit-code', exit_status: '1' },
      });
      // Killed by a signal: the exit status is 0 but the result is not success.
      expect((await withRecord(record(ran, { ...succeeded, Result: 'signal' }))).verdict.status).toBe('FAIL');
      expect((await withRecord(record(ran, { ...succeeded, ExecMainStatus: '2' }))).verdict.status).toBe('FAIL');
      // A stopped timer (no next trigger) last fired four days ago: a daily job, late by more than two days.
      const stale = { LastTriggerUSec: 'Tue 2026-11-17 06:10:00 UTC', NextElapseUSecRealtime: '' };
      expect((await withRecord(record(stale, succeeded))).verdict).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'not_run_recently', job: 'dnf-automatic-install.timer', last_run_age_days: 4, max_run_age_days: 3 },
      });
      // The same age on a weekly timer (next trigger a week after the last) is within its period.
      const weekly = { LastTriggerUSec: 'Tue 2026-11-17 06:10:00 UTC', NextElapseUSecRealtime: 'Tue 2026-11-24 06:10:00 UTC' };
      const weeklyRun = { ...succeeded, ExecMainExitTimestamp: 'Tue 2026-11-17 06:12:00 UTC' };
      expect((await withRecord(record(weekly, weeklyRun))).verdict).toMatchObject({ status: 'PASS', evidence: { max_run_age_days: 9 } });
      // A schedule longer than autoUpdate.maxPendingDays counts as that long.
      const yearly = { LastTriggerUSec: 'Tue 2026-09-01 06:10:00 UTC', NextElapseUSecRealtime: 'Wed 2027-09-01 06:10:00 UTC' };
      expect((await withRecord(record(yearly, succeeded))).verdict).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'not_run_recently', max_run_age_days: 47 },
      });
    });

    it('is UNKNOWN, in its own words, when the record cannot show the last run succeeded', async () => {
      const reason = async (stdout: string | undefined, exitCode = 0) => (await withRecord(stdout, exitCode)).verdict.evidence.reason;
      // Never triggered (systemd prints 0, n/a or nothing for an unset timestamp).
      for (const never of ['0', 'n/a', '']) {
        expect(await reason(record({ ...ran, LastTriggerUSec: never }, succeeded))).toBe('no_run_recorded');
      }
      expect(await reason(record(ran, { ...succeeded, ActiveState: 'activating' }))).toBe('run_in_progress');
      // Rebooted since the run: the service keeps no exit; or the last trigger started nothing newer.
      expect(await reason(record(ran, { ...succeeded, ExecMainExitTimestamp: '' }))).toBe('run_result_unknown');
      expect(await reason(record(ran, { ...succeeded, ExecMainExitTimestamp: 'Fri 2026-11-20 06:25:02 UTC' }))).toBe('run_result_unknown');
      // A time zone systemctl was not asked for (recorded form: "Sun 2026-09-06 01:10:45 EEST").
      expect(await reason(record({ ...ran, LastTriggerUSec: 'Sun 2026-09-06 01:10:45 EEST' }, succeeded))).toBe('run_record_unreadable');
      expect(await reason(record(ran, { ...succeeded, ExecMainExitTimestamp: 'Sat 2026-11-21 06:25:02 CET' }))).toBe(
        'run_record_unreadable',
      );
      // systemctl failing as a whole (no bus), or not recorded at all, or leaving a unit out.
      expect(await reason('', 1)).toBe('run_record_unreadable');
      expect(await reason(undefined)).toBe('run_record_unreadable');
      expect(await reason('Id=dnf-automatic-install.timer\nLastTriggerUSec=0\n')).toBe('run_record_unreadable');
    });

    it('reads the newest run among the timers that follow apply_updates, never the download-only one', async () => {
      const recorded = fixture('AUTO_UPDATE', 'fedora-dnf-automatic-apply');
      const units = ['dnf-automatic.timer', 'dnf-automatic.service'];
      const commands = [...recorded.fixture.host.commands!, { argv: SHOW(units), stdout: record(ran, succeeded, units) }];
      const { verdict } = await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, commands } } });
      expect(verdict).toMatchObject({ status: 'PASS', evidence: { rule: 'dnf_automatic_apply', job: 'dnf-automatic.timer' } });
    });

    it('judges an accepted download-only dnf set-up by its timer the same way', async () => {
      const recorded = fixture('AUTO_UPDATE', 'fedora-dnf-automatic-download-only');
      const units = ['dnf-automatic.timer', 'dnf-automatic.service'];
      const withRun = async (service: Record<string, string>) => {
        const commands = [...recorded.fixture.host.commands!, { argv: SHOW(units), stdout: record(ran, service, units) }];
        const host = { ...recorded.fixture.host, commands };
        return (
          await runFixture({ ...recorded, fixture: { ...recorded.fixture, policy: { autoUpdate: { acceptDownloadOnly: true } }, host } })
        ).verdict;
      };
      expect(await withRun(succeeded)).toMatchObject({
        status: 'PASS',
        evidence: { rule: 'download_only_accepted', job: 'dnf-automatic.timer' },
      });
      expect(await withRun({ ...succeeded, Result: 'exit-code', ExecMainStatus: '1' })).toMatchObject({
        status: 'FAIL',
        evidence: { rule: 'last_run_failed' },
      });
    });

    it('judges transactional-update by its timer the same way', async () => {
      const units = ['transactional-update.timer', 'transactional-update.service'];
      const host = new FakeHost({
        files: { '/etc/os-release': osRelease('suse-microos') },
        stats: { '/usr/bin/zypper': {}, '/run/systemd/system': { isDirectory: true } },
        commands: [
          {
            argv: ['/usr/bin/systemctl', 'list-unit-files', '--no-legend', '--no-pager', 'transactional-update.timer'],
            stdout: 'transactional-update.timer enabled enabled\n',
          },
          { argv: SHOW(units), stdout: record(ran, { ...succeeded, Result: 'exit-code', ExecMainStatus: '1' }, units) },
        ],
      });
      const policy = resolvePolicy({});
      const now = new Date('2026-11-21T12:00:00Z');
      const verdict = autoUpdate.evaluate(await autoUpdate.collect(createContext(host, policy, now)), policy, now);
      expect(verdict).toMatchObject({
        status: 'FAIL',
        evidence: { source: 'zypper', rule: 'last_run_failed', job: 'transactional-update.timer' },
      });
    });
  });

  it('judges cron-driven updaters (apk, zypper online update) by when the package database last changed', async () => {
    const recorded = fixture('AUTO_UPDATE', 'alpine-periodic-apk-upgrade');
    const withDatabase = async (mtime: string | undefined) => {
      const stats = { ...recorded.fixture.host.stats, ...(mtime ? { '/lib/apk/db/installed': { mtime } } : {}) };
      return (await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, stats } } })).verdict;
    };
    expect(await withDatabase('2026-10-08T03:00:00Z')).toMatchObject({
      status: 'PASS',
      evidence: {
        rule: 'periodic_apk_upgrade',
        package_database: '/lib/apk/db/installed',
        packages_changed: '2026-10-08T03:00:00.000Z',
        packages_changed_age_days: 44,
        max_install_age_days: 45,
      },
    });
    expect(await withDatabase('2026-10-06T03:00:00Z')).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'no_recent_install', packages_changed_age_days: 46 },
    });
    expect(await withDatabase(undefined)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_install_recorded' } });

    const zypper = async (history: object | undefined) => {
      const host = new FakeHost({
        files: {
          '/etc/os-release': osRelease('opensuseleap_15'),
          '/etc/sysconfig/automatic_online_update': 'AOU_ENABLE_CRONJOB="true"\n',
        },
        stats: { '/usr/bin/zypper': {}, ...(history ? { '/var/log/zypp/history': history } : {}) },
      });
      const policy = resolvePolicy({});
      const now = new Date('2026-11-21T12:00:00Z');
      return autoUpdate.evaluate(await autoUpdate.collect(createContext(host, policy, now)), policy, now);
    };
    // No systemd here: the cron job alone decides, by the history libzypp appends to.
    expect(await zypper({ mtime: '2026-11-19T02:00:00Z' })).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'online_update_cron', package_database: '/var/log/zypp/history' },
    });
    expect(await zypper(undefined)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_install_recorded' } });
  });

  it("judges an accepted download-only APT set-up by apt.systemd.daily's download stamp", async () => {
    const recorded = fixture('AUTO_UPDATE', 'download-only-accepted');
    const STAMP = '/var/lib/apt/periodic/download-upgradeable-stamp';
    const withStamp = async (mtime: string) => {
      const stats = { ...recorded.fixture.host.stats, [STAMP]: { mtime } };
      return (await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, stats } } })).verdict;
    };
    expect(await withStamp('2026-11-18T06:25:11Z')).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'download_only_accepted', job: 'apt-daily.timer', last_run: '2026-11-18T06:25:11.000Z', last_run_age_days: 3 },
    });
    expect(await withStamp('2026-11-17T06:25:11Z')).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'not_run_recently', last_run_age_days: 4, max_run_age_days: 3 },
    });
    // unattended-upgrades' log and install stamp (not this job's record) are not given as its age.
    const stats = {
      ...recorded.fixture.host.stats,
      [UU_LOG]: { mtime: '2026-11-21T06:00:00Z' },
      [UU_INSTALL_STAMP]: { mtime: '2026-11-21T06:00:00Z' },
    };
    const { verdict } = await runFixture({ ...recorded, fixture: { ...recorded.fixture, host: { ...recorded.fixture.host, stats } } });
    expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'no_run_recorded' } });
    expect(verdict.evidence).not.toHaveProperty('last_run_age_days');
    expect(verdict.evidence).not.toHaveProperty('last_install_age_days');
  });

  it("reads APT::Periodic::Unattended-Upgrade's period as apt.systemd.daily does", () => {
    expect([undefined, 'always', '1', '0', '7', '36h', '90m', '2d', '200000s', 'x'].map(periodicDays)).toEqual([
      1, 1, 1, 1, 7, 2, 1, 2, 3, 1,
    ]);
  });

  it('prefers apt over the others when several are installed, and stays UNKNOWN when none is', async () => {
    expect((await judge({ '/usr/bin/apt-get': {}, '/usr/bin/dnf': {} })).verdict.evidence).toMatchObject({
      source: 'apt',
      detected_by: '/usr/bin/apt-get',
    });
    const none = await judge({});
    expect(none.verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'package_manager_unknown', id: 'openeuler' } });
    expect(none.host.calls.filter((c) => c.kind === 'stat').map((c) => c.target)).toEqual(
      expect.arrayContaining(['/usr/bin/apt-get', '/usr/bin/dnf5', '/usr/bin/dnf', '/usr/bin/zypper', '/sbin/apk', '/usr/bin/pacman']),
    );
  });
});

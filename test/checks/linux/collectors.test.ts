// What the Linux collectors ask the machine, on recorded hosts: per-user settings are read in the
// user's context, headless hosts never consult gsettings, and tools that cannot answer are not run.
import { describe, expect, it } from 'vitest';
import { loadChecks } from '../../../checks/registry';
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

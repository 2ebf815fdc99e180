// The server's Debian package in a booted Debian 12 (systemd-nspawn -b, systemd as PID 1): installed
// with dpkg, it creates its user and starts; it starts again on boot, comes back after kill -9,
// reloads its certificate on SIGHUP while requests keep being answered, is backed up and restored
// as docs/server.md says, refuses a database newer than it knows, upgrades from the previous
// package and rolls back with the data kept, and purges to nothing. The container shares this
// machine's network: the server listens on a free loopback port and the test talks to it from here.
// The container and its root filesystem: test/support/bootedContainer.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTools } from '../support/requireTools';
import { BOOTED_TOOLS, Container, freePort, rootfsTarball, until } from '../support/bootedContainer';
import { buildServerDeb, buildServerRpm, SERVER_ENV_FILE, SERVER_OPEN_FILES } from '../../installers/server';
import { makeCertificate } from '../../scripts/bench/server/harness';
import { VERSION } from '../../src/version';
import { tempDir } from '../support/agent';

const PREVIOUS = `${VERSION}~previous`;
const DB = '/var/lib/device-agent-server/server.db';
const UNIT = 'device-agent-server';

const isRoot = process.getuid?.() === 0;
const booted = requireTools(BOOTED_TOOLS, "the server's .deb in a booted Debian 12 (systemd-nspawn)");
const canRun = isRoot && !booted.skip;
const rpmBuilt = requireTools(['rpmbuild'], "the server's RPM package");

interface Answer {
  status: number;
  fingerprint?: string;
}

/** One GET on a new connection (TLS when `tls`), answered or failed. */
function get(port: number, path: string, tls = false): Promise<Answer> {
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}${path}`;
  if (!tls) return fetch(url, { signal: AbortSignal.timeout(10_000) }).then((response) => ({ status: response.status }));
  return new Promise((done, fail) => {
    const req = request(url, { rejectUnauthorized: false, agent: false, timeout: 10_000 }, (response) => {
      const fingerprint = (response.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      response.resume();
      response.once('end', () => done({ status: response.statusCode ?? 0, fingerprint }));
    });
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', fail);
    req.end();
  });
}

/** A self-signed certificate for 127.0.0.1, its key, and the certificate's SHA-256 fingerprint. */
function certificate(): { cert: string; key: string; fingerprint: string } {
  const { certFile, keyFile, cert } = makeCertificate(tempDir('device-agent-server-cert-'));
  return { cert: certFile, key: keyFile, fingerprint: new X509Certificate(cert).fingerprint256 };
}

describe.skipIf(!canRun)(isRoot ? booted.title : `${booted.title}: skipped, needs root`, () => {
  const out = tempDir('device-agent-server-debs-');
  let container: Container;
  let port: number;
  let previousDeb: string;
  let currentDeb: string;
  let deviceId: string;

  beforeAll(async () => {
    previousDeb = buildServerDeb({ arch: 'x64', outDir: out, compression: 'gzip', version: PREVIOUS });
    currentDeb = buildServerDeb({ arch: 'x64', outDir: out, compression: 'gzip' });
    const dir = tempDir('device-agent-server-rootfs-');
    execFileSync('tar', ['-xf', rootfsTarball(), '-C', dir]);
    for (const deb of [previousDeb, currentDeb]) execFileSync('cp', [deb, join(dir, 'root')]);
    port = await freePort();
    container = new Container(dir, UNIT);
    await container.boot();
  }, 600_000);
  afterAll(async () => {
    await container?.powerOff().catch(() => container.kill());
    // 300 MB unpacked: gone now, not at the worker's exit.
    if (container) rmSync(container.dir, { recursive: true, force: true });
  }, 60_000);

  const ready = (what: string, tls = false) =>
    until(what, async () => ((await get(port, '/readyz', tls)).status === 200 ? true : undefined));
  const admin = (args: string) => container.sh(`runuser -u device-agent-server -- device-agent-server ${args} --db ${DB}`);

  it('installs: its own user, the unit enabled and started, owner-only state, the configuration read', async () => {
    // Preseeded as an image or a configuration manager would: dpkg keeps the administrator's file.
    mkdirSync(container.path('/etc/device-agent-server'), { recursive: true });
    writeFileSync(
      container.path(SERVER_ENV_FILE),
      `DEVICE_AGENT_SERVER_DB=${DB}\nDEVICE_AGENT_SERVER_OPTIONS=--host 127.0.0.1 --port ${port}\n`,
    );
    const installed = container.run(['dpkg', '-i', '--force-confdef', '--force-confold', `/root/${previousDeb.split('/').pop()}`]);
    expect(installed.stdout).toContain(`Setting up device-agent-server (${PREVIOUS})`);

    expect(container.run(['systemctl', 'is-enabled', UNIT]).stdout.trim()).toBe('enabled');
    await ready('the first start on SQLite');
    expect(container.sh('getent passwd device-agent-server | cut -d: -f6,7')).toBe('/var/lib/device-agent-server:/usr/sbin/nologin\n');
    expect(
      container.sh('stat -c "%U:%G %a" /var/lib/device-agent-server /etc/device-agent-server /var/lib/device-agent-server/server.db'),
    ).toBe('device-agent-server:device-agent-server 700\nroot:device-agent-server 750\ndevice-agent-server:device-agent-server 600\n');
    // The process: the service's user, no capabilities at all, the open-file limit of the unit.
    const pid = container.show('MainPID');
    const status = container.sh(`cat /proc/${pid}/status`);
    expect(status).toMatch(/^Uid:\s+(\d+)\s+\1\s+\1\s+\1$/m);
    expect(status).not.toMatch(/^Uid:\s+0\s/m);
    for (const set of ['CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(status).toContain(`${set}:\t0000000000000000`);
    expect(container.show('LimitNOFILE')).toBe(String(SERVER_OPEN_FILES));
    expect(container.run(['journalctl', '-u', UNIT, '-o', 'short', '--no-pager', '-n', '1']).stdout).toMatch(
      / device-agent-server\[\d+\]: /,
    );
    // Its connection cap follows from the limit it got (this machine's hard limit may be lower).
    const limit = Number(/Max open files\s+(\d+)/.exec(container.sh(`cat /proc/${pid}/limits`))![1]);
    expect(container.run(['journalctl', '-u', UNIT, '-o', 'cat', '--no-pager']).stdout).toContain(`"connections":{"total":${limit - 64},`);

    // The unit passes systemd's own check where it is installed, and its sandbox rates "OK".
    const verify = container.run(['systemd-analyze', 'verify', `/lib/systemd/system/${UNIT}.service`], { check: false });
    expect({ code: verify.code, output: `${verify.stdout}${verify.stderr}` }).toEqual({ code: 0, output: '' });
    const exposure = /Overall exposure level for device-agent-server\.service: ([\d.]+)/.exec(
      container.run(['systemd-analyze', 'security', '--no-pager', UNIT]).stdout,
    );
    expect(Number(exposure![1])).toBeLessThanOrEqual(2);

    // The admin CLI, as the service's user, on the same database while the service runs.
    deviceId = (JSON.parse(admin('device create --org fleet --json')) as { device_id: string }).device_id;
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);
  });

  it('starts again on boot', async () => {
    await container.powerOff();
    await container.boot();
    expect(container.run(['systemctl', 'is-active', UNIT]).stdout.trim()).toBe('active');
    await ready('the server after a reboot');
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);
  }, 180_000);

  it('comes back after kill -9 (Restart=on-failure)', async () => {
    const before = container.show('MainPID');
    container.sh(`kill -9 ${before}`);
    await until('a new main process', () => {
      const now = container.show('MainPID');
      return now !== before && now !== '0' && container.show('ActiveState') === 'active' ? now : undefined;
    });
    expect(container.show('NRestarts')).toBe('1');
    await ready('the restarted server');
    // Plain HTTP has nothing to reload: the server logs the SIGHUP of `systemctl reload` and keeps running.
    const pid = container.show('MainPID');
    container.run(['systemctl', 'reload', UNIT]);
    await until('the SIGHUP in the log', () =>
      container.run(['journalctl', '-u', UNIT, '-o', 'cat', '--no-pager', `_PID=${pid}`]).stdout.includes('"event":"sighup_ignored"')
        ? true
        : undefined,
    );
    expect([container.show('MainPID'), container.show('ActiveState')]).toEqual([pid, 'active']);
    await ready('the server after the reload');
  });

  it('reloads its certificate on SIGHUP (systemctl reload) in every --workers process without dropping a request', async () => {
    const first = certificate();
    const second = certificate();
    // certbot's layout: live/ links into archive/. Rewriting archive/ is invisible to the server's
    // watcher on live/: only the SIGHUP of `systemctl reload` makes it read the files again.
    container.sh(`install -d -m 0750 -g device-agent-server /etc/device-agent-server/tls/archive /etc/device-agent-server/tls/live
      ln -s ../archive/cert.pem /etc/device-agent-server/tls/live/cert.pem
      ln -s ../archive/key.pem /etc/device-agent-server/tls/live/key.pem`);
    const install = (pair: { cert: string; key: string }, suffix: string) => {
      for (const [from, name] of [
        [pair.cert, 'cert.pem'],
        [pair.key, 'key.pem'],
      ] as const) {
        writeFileSync(container.path(`/etc/device-agent-server/tls/archive/.${name}.${suffix}`), readFileSync(from));
      }
      container.sh(`cd /etc/device-agent-server/tls/archive
        chgrp device-agent-server .cert.pem.${suffix} .key.pem.${suffix} && chmod 0640 .cert.pem.${suffix} .key.pem.${suffix}
        mv .key.pem.${suffix} key.pem && mv .cert.pem.${suffix} cert.pem`);
    };
    install(first, 'first');
    writeFileSync(
      container.path(SERVER_ENV_FILE),
      `DEVICE_AGENT_SERVER_DB=${DB}\nDEVICE_AGENT_SERVER_OPTIONS=--host 127.0.0.1 --port ${port} --tls-cert /etc/device-agent-server/tls/live/cert.pem --tls-key /etc/device-agent-server/tls/live/key.pem --workers 2\n`,
    );
    const since = container.sh('date +%s').trim();
    const journal = () => container.run(['journalctl', '-u', UNIT, '-o', 'cat', '--no-pager', `--since=@${since}`]).stdout;
    container.run(['systemctl', 'restart', UNIT]);
    // The supervisor passes SIGHUP to the workers that listen: wait for both.
    await until('both workers to listen', () => ((journal().match(/"msg":"listening on /g) ?? []).length >= 2 ? true : undefined));
    await ready('the server on HTTPS', true);
    const pid = container.show('MainPID');

    // Requests on new connections, two at a time, from before the reload until the new certificate answers.
    const answers: Answer[] = [];
    const failures: unknown[] = [];
    let seenSecond = false;
    const flood = async () => {
      while (!seenSecond) {
        try {
          const answer = await get(port, '/readyz', true);
          answers.push(answer);
          if (answer.fingerprint === second.fingerprint) seenSecond = true;
        } catch (error) {
          failures.push(error);
          if (failures.length > 50) return;
        }
      }
    };
    const flooding = Promise.all([flood(), flood()]);
    await until('requests under the first certificate', () => (answers.length >= 20 ? true : undefined));
    install(second, 'second');
    container.run(['systemctl', 'reload', UNIT]);
    await until('the second certificate', () => (seenSecond ? true : undefined), 30_000);
    await flooding;

    expect(failures).toEqual([]);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers[0]!.fingerprint).toBe(first.fingerprint);
    expect(container.show('MainPID')).toBe(pid);
    await until('both workers to reload', () =>
      (journal().match(/"event":"tls_reloaded","trigger":"SIGHUP"/g) ?? []).length === 2 ? true : undefined,
    );
    expect(journal()).toMatch(/"event":"sighup_forwarded","workers":2/);
    expect(journal()).not.toContain('a worker died');
  });

  it('backs up online and restores as docs/server.md says', async () => {
    const backup = '/var/lib/device-agent-server/backup-test.db';
    expect(container.sh(`runuser -u device-agent-server -- device-agent-server backup --db ${DB} --to ${backup}`)).toMatch(
      /^Backed up \/var\/lib\/device-agent-server\/server\.db into \/var\/lib\/device-agent-server\/backup-test\.db \(\d+ pages\)\.\n$/,
    );
    const later = (JSON.parse(admin('device create --org fleet --json')) as { device_id: string }).device_id;
    // The restore of docs/server.md: stop, replace the database (its -wal and -shm go), start.
    container.sh(`systemctl stop device-agent-server
      rm -f ${DB}-wal ${DB}-shm
      install -o device-agent-server -g device-agent-server -m 0600 ${backup} ${DB}
      systemctl start device-agent-server`);
    await ready('the restored server', true);
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);
    const missing = container.run(
      ['runuser', '-u', 'device-agent-server', '--', 'device-agent-server', 'device', 'show', later, '--db', DB],
      {
        check: false,
      },
    );
    expect(missing.code).not.toBe(0);
    container.sh(`rm ${backup}`);
  });

  it('refuses a database newer than it knows: exit 2, the reason in the journal, no restart loop', async () => {
    const setVersion = (version: string) =>
      container
        .sh(
          `runuser -u device-agent-server -- /usr/lib/device-agent-server/node -e "const D = require('/usr/lib/device-agent-server/node_modules/better-sqlite3-napi'); const db = new D('${DB}'); console.log(db.pragma('user_version', { simple: true })); ${version ? `db.pragma('user_version = ${version}');` : ''} db.close()"`,
        )
        .trim();
    container.run(['systemctl', 'stop', UNIT]);
    const known = setVersion('');
    setVersion('99');
    container.run(['systemctl', 'reset-failed', UNIT], { check: false });
    container.run(['systemctl', 'start', UNIT], { check: false });
    await until('the start to fail', () => (container.show('ActiveState') === 'failed' ? true : undefined));
    expect(container.show('ExecMainStatus')).toBe('2');
    expect(container.show('NRestarts')).toBe('0');
    expect(container.run(['journalctl', '-u', UNIT, '-o', 'cat', '--no-pager', '-n', '20']).stdout).toContain(
      `${DB}: the database schema is version 99, newer than this program knows (${known}); upgrade device-agent-server`,
    );
    setVersion(known);
    container.run(['systemctl', 'reset-failed', UNIT]);
    container.run(['systemctl', 'start', UNIT]);
    await ready('the server on its own schema again', true);
  });

  it('upgrades from the previous package with the data and the configuration kept, and rolls back', async () => {
    const before = container.show('MainPID');
    const upgraded = container.run(['dpkg', '-i', `/root/${currentDeb.split('/').pop()}`]);
    expect(upgraded.stdout).toContain(`Unpacking device-agent-server (${VERSION}) over (${PREVIOUS})`);
    expect(container.sh("dpkg-query -W -f '${Version}' device-agent-server")).toBe(VERSION);
    // Restarted on the new program, with the administrator's configuration (TLS on this port).
    await until('the restart', () => (container.show('MainPID') !== before ? true : undefined));
    await ready('the upgraded server', true);
    expect(readFileSync(container.path(SERVER_ENV_FILE), 'utf8')).toContain(`--port ${port} --tls-cert`);
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);

    // Rollback: the previous package over this one, same database.
    const rolled = container.run(['dpkg', '-i', `/root/${previousDeb.split('/').pop()}`]);
    expect(rolled.stderr).toContain(`downgrading device-agent-server from ${VERSION} to ${PREVIOUS}`);
    await ready('the rolled-back server', true);
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);
  });

  it('removal stops and disables it, keeping data and configuration; installing again starts it; a disable outlasts upgrades', async () => {
    container.run(['dpkg', '--remove', 'device-agent-server']);
    expect(container.show('LoadState')).toBe('not-found');
    await expect(get(port, '/readyz', true)).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(container.path(DB))).toBe(true);
    expect(existsSync(container.path(SERVER_ENV_FILE))).toBe(true);

    container.run(['dpkg', '-i', `/root/${currentDeb.split('/').pop()}`]);
    expect(container.run(['systemctl', 'is-enabled', UNIT]).stdout.trim()).toBe('enabled');
    await ready('the reinstalled server', true);
    expect(admin(`device show ${deviceId}`)).toContain(deviceId);

    container.run(['systemctl', 'disable', '--now', UNIT]);
    container.run(['dpkg', '-i', `/root/${previousDeb.split('/').pop()}`]);
    expect(container.run(['systemctl', 'is-enabled', UNIT], { check: false }).stdout.trim()).toBe('disabled');
    // The journal's last lines say why, should the stop have failed.
    const stopped = container.show('ActiveState');
    expect(stopped, container.run(['journalctl', '-u', UNIT, '-o', 'short', '--no-pager', '-n', '30']).stdout).toBe('inactive');
  });

  it('purges to nothing: files, configuration, database, user, unit', async () => {
    container.run(['dpkg', '--purge', 'device-agent-server']);
    for (const path of [
      '/usr/lib/device-agent-server',
      '/usr/bin/device-agent-server',
      `/lib/systemd/system/${UNIT}.service`,
      '/usr/lib/sysusers.d/device-agent-server.conf',
      '/etc/device-agent-server',
      '/var/lib/device-agent-server',
      `/etc/systemd/system/multi-user.target.wants/${UNIT}.service`,
    ]) {
      expect(existsSync(container.path(path)), path).toBe(false);
    }
    expect(container.run(['getent', 'passwd', 'device-agent-server'], { check: false }).code).toBe(2);
    expect(container.run(['getent', 'group', 'device-agent-server'], { check: false }).code).toBe(2);
    expect(container.show('LoadState')).toBe('not-found');
    await expect(get(port, '/readyz', true)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe.skipIf(!isRoot || rpmBuilt.skip)(isRoot ? rpmBuilt.title : `${rpmBuilt.title}: skipped, needs root`, () => {
  let rpm: string;
  beforeAll(() => {
    rpm = buildServerRpm({ arch: 'x64', outDir: tempDir('device-agent-server-rpm-'), compression: 'gzip' });
  }, 120_000);

  it('its scriptlets call the hook, the configuration is %config(noreplace), the runtime untouched', () => {
    const query = (...args: string[]) =>
      execFileSync('rpm', ['-qp', ...args, rpm], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(query('--qf', '%{NAME} %{VERSION} %{ARCH}')).toBe(`device-agent-server ${VERSION} x86_64`);
    const scripts = query('--scripts');
    expect(scripts).toContain(
      'if [ "$1" -eq 1 ]; then /usr/lib/device-agent-server/server-hook install; else /usr/lib/device-agent-server/server-hook upgrade; fi',
    );
    expect(scripts).toContain('if [ "$1" -eq 0 ]; then /usr/lib/device-agent-server/server-hook remove; fi');
    // After the removal the unit file is gone: systemd forgets the unit at once.
    expect(scripts).toMatch(
      /postuninstall scriptlet[^\n]*:\nif \[ "\$1" -eq 0 \] && \[ -d \/run\/systemd\/system \]; then systemctl daemon-reload \|\| true; fi/,
    );
    expect(query('--configfiles')).toBe(`${SERVER_ENV_FILE}\n`);

    const root = tempDir('device-agent-server-rpm-root-');
    const rpmRoot = ['--root', root, '--dbpath', join(root, 'var/lib/rpm')];
    execFileSync('rpm', ['-i', ...rpmRoot, '--nodeps', '--noscripts', rpm], { stdio: 'ignore' });
    expect(readFileSync(join(root, 'usr/lib/systemd/system/device-agent-server.service'), 'utf8')).toContain(
      'ExecStart=/usr/lib/device-agent-server/node /usr/lib/device-agent-server/device-agent-server serve $DEVICE_AGENT_SERVER_OPTIONS\n',
    );
    const version = spawnSync(
      join(root, 'usr/lib/device-agent-server/node'),
      [join(root, 'usr/lib/device-agent-server/device-agent-server'), '--version'],
      {
        encoding: 'utf8',
      },
    );
    expect(version.stdout).toBe(`${VERSION}\n`);
    execFileSync('rpm', ['-e', ...rpmRoot, '--nodeps', '--noscripts', 'device-agent-server'], { stdio: 'ignore' });
    expect(existsSync(join(root, 'usr/lib/device-agent-server'))).toBe(false);
  });
});

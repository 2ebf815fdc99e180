// The Debian and RPM packages, built from a freshly built linux-x64 executable: installed into a
// throwaway root with the real package managers (dpkg --root, rpm --root) and removed again; the
// packaged unit verified by systemd-analyze; the package hook driven through a whole managed-install
// lifecycle against the real reference server (enroll.env -> ACTIVE -> removal revokes and wipes).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDeb, buildRpm } from '../../installers/build';
import { VERSION } from '../../src/version';
import { agentEnv, tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { runServerCli, startServer, type RunningServer } from '../support/server';
import { buildLinuxSea, runExe, SEA_BUILD_TOOLS } from './seaBuild';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => lstatSync(path).mode & 0o7777;

let seaDir: string;
let server: RunningServer;
const out = tempDir('device-agent-packages-');

// Every suite installs or runs the linux-x64 executable, built once for this file.
const built = requireTools(SEA_BUILD_TOOLS, 'every suite of this file (the packages carry the linux-x64 executable)');
const debian = requireTools(['dpkg-deb'], 'Debian package');
const unitVerified = requireTools(['systemd-analyze'], 'its unit passes systemd-analyze verify without a word');
const linkHandlerValid = requireTools(['desktop-file-validate'], 'its link handler passes desktop-file-validate');
const rpmPackage = requireTools(['rpmbuild', 'rpm'], 'RPM package');

beforeAll(async () => {
  if (built.skip) return;
  [seaDir, server] = await Promise.all([buildLinuxSea(), startServer()]);
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

/** What both packages install, with the modes that matter. */
function expectInstalledTree(root: string, unitDir: string): void {
  const lib = join(root, 'usr/lib/device-agent');
  expect(mode(join(lib, 'device-agent'))).toBe(0o755);
  expect(mode(join(lib, 'keyring.node'))).toBe(0o644);
  expect(mode(join(lib, 'package-hook'))).toBe(0o755);
  expect(readlinkSync(join(root, 'usr/bin/device-agent'))).toBe('../lib/device-agent/device-agent');
  expect(mode(join(root, unitDir, 'device-agent.service'))).toBe(0o644);
  expect(mode(join(root, 'usr/share/applications/org.device_agent.LinkHandler.desktop'))).toBe(0o644);
  expect(readFileSync(join(root, 'usr/share/applications/org.device_agent.MyDevice.desktop'), 'utf8')).toContain(
    'Exec=/usr/lib/device-agent/device-agent my-device\n',
  );
  expect(mode(join(root, 'usr/share/dbus-1/services/org.device_agent.LinkHandler.service'))).toBe(0o644);
  expect(mode(join(root, 'etc/device-agent'))).toBe(0o700);
  for (const path of ['usr/lib/device-agent/device-agent', 'etc/device-agent']) expect(lstatSync(join(root, path)).uid).toBe(0);
  // Never stripped: the executable is the one that was built, byte for byte, and it runs.
  expect(sha256(join(lib, 'device-agent'))).toBe(sha256(join(seaDir, 'device-agent')));
  const unit = readFileSync(join(root, unitDir, 'device-agent.service'), 'utf8');
  expect(unit).toContain('ExecStart=/usr/lib/device-agent/device-agent run --state-dir /var/lib/device-agent\n');
  expect(readFileSync(join(lib, 'package-hook'), 'utf8')).toContain(
    "AGENT='/usr/lib/device-agent/device-agent'\nENROLL_ENV='/etc/device-agent/enroll.env'\n",
  );
}

const isRoot = process.getuid?.() === 0;

describe.skipIf(built.skip || debian.skip || !isRoot)(
  `${debian.title}${isRoot ? '' : ' (skipped: installing into a throwaway root needs root)'}`,
  () => {
    let deb: string;
    let root: string;
    beforeAll(() => {
      deb = buildDeb({ arch: 'x64', outDir: out, seaDir, compression: 'gzip' });
      root = tempDir('device-agent-dpkg-root-');
      mkdirSync(join(root, 'var/lib/dpkg/info'), { recursive: true });
      mkdirSync(join(root, 'var/lib/dpkg/updates'), { recursive: true });
      writeFileSync(join(root, 'var/lib/dpkg/status'), '');
      writeFileSync(join(root, 'var/lib/dpkg/available'), '');
    }, 120_000);

    const dpkg = (...args: string[]) =>
      execFileSync('dpkg', [`--root=${root}`, '--force-script-chrootless', ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });

    it('has the control fields of the contract', () => {
      const fields = execFileSync('dpkg-deb', ['-f', deb, 'Package', 'Version', 'Architecture', 'Depends', 'Section'], {
        encoding: 'utf8',
      });
      expect(fields).toBe(`Package: device-agent\nVersion: ${VERSION}\nArchitecture: amd64\nDepends: libc6 (>= 2.28)\nSection: admin\n`);
    });

    it('installs into a throwaway root with dpkg: files, modes, owners, the unit, the link handler', () => {
      // The throwaway root has no libc6 package; maintainer scripts see DPKG_ROOT and do nothing.
      dpkg('--force-depends', '-i', deb);
      expect(dpkg('-s', 'device-agent')).toContain('Status: install ok installed');
      expectInstalledTree(root, 'lib/systemd/system');
      expect(dpkg('-L', 'device-agent').split('\n')).toEqual(
        expect.arrayContaining(['/usr/lib/device-agent/device-agent', '/lib/systemd/system/device-agent.service', '/usr/bin/device-agent']),
      );
    });

    it('the installed executable runs from there', async () => {
      const result = await runExe(join(root, 'usr/bin/device-agent'), ['--version'], { env: agentEnv() });
      expect(result.stdout).toBe(`${VERSION}\n`);
    });

    it.skipIf(unitVerified.skip)(unitVerified.title, () => {
      // verify needs ExecStart's program on this machine: point it at the installed copy.
      const unit = readFileSync(join(root, 'lib/systemd/system/device-agent.service'), 'utf8').replace(
        'ExecStart=/usr/lib/',
        `ExecStart=${root}/usr/lib/`,
      );
      const dir = tempDir('device-agent-unit-');
      writeFileSync(join(dir, 'device-agent.service'), unit);
      const result = spawnSync('systemd-analyze', ['verify', join(dir, 'device-agent.service')], { encoding: 'utf8' });
      expect({ code: result.status, output: `${result.stdout}${result.stderr}` }).toEqual({ code: 0, output: '' });
    });

    it.skipIf(linkHandlerValid.skip)(linkHandlerValid.title, () => {
      expect(
        execFileSync('desktop-file-validate', [join(root, 'usr/share/applications/org.device_agent.LinkHandler.desktop')], {
          encoding: 'utf8',
        }),
      ).toBe('');
      expect(
        execFileSync('desktop-file-validate', [join(root, 'usr/share/applications/org.device_agent.MyDevice.desktop')], {
          encoding: 'utf8',
        }),
      ).toBe('');
    });

    it('purging removes every file it installed', () => {
      dpkg('--purge', 'device-agent');
      for (const path of [
        'usr/lib/device-agent',
        'usr/bin/device-agent',
        'lib/systemd/system/device-agent.service',
        'etc/device-agent',
        'usr/share/applications/org.device_agent.LinkHandler.desktop',
        'usr/share/applications/org.device_agent.MyDevice.desktop',
        'usr/share/dbus-1/services/org.device_agent.LinkHandler.service',
      ]) {
        expect(existsSync(join(root, path)), path).toBe(false);
      }
    });
  },
);

describe.skipIf(built.skip || rpmPackage.skip || !isRoot)(
  `${rpmPackage.title}${isRoot ? '' : ' (skipped: installing into a throwaway root needs root)'}`,
  () => {
    let rpm: string;
    beforeAll(() => {
      rpm = buildRpm({ arch: 'x64', outDir: out, seaDir, compression: 'gzip' });
    }, 120_000);

    it('names, requires and scripts', () => {
      const query = (format: string) =>
        execFileSync('rpm', ['-qp', '--qf', format, rpm], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(query('%{NAME} %{VERSION} %{ARCH}')).toBe(`device-agent ${VERSION} x86_64`);
      const requires = execFileSync('rpm', ['-qp', '--requires', rpm], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(requires).toContain('glibc >= 2.28');
      const scripts = execFileSync('rpm', ['-qp', '--scripts', rpm], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(scripts).toContain('postinstall scriptlet (using /bin/sh):\n/usr/lib/device-agent/package-hook configure');
      expect(scripts).toContain('if [ "$1" -eq 0 ]; then /usr/lib/device-agent/package-hook remove; fi');
      // After the removal the unit file is gone: systemd forgets the unit at once.
      expect(scripts).toContain('if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi');
    });

    it('installs into a throwaway root with rpm (nothing stripped) and erases cleanly', () => {
      const root = tempDir('device-agent-rpm-root-');
      const rpmRoot = ['--root', root, '--dbpath', join(root, 'var/lib/rpm')];
      execFileSync('rpm', ['-i', ...rpmRoot, '--nodeps', '--noscripts', rpm], { stdio: 'ignore' });
      expectInstalledTree(root, 'usr/lib/systemd/system');
      execFileSync('rpm', ['-e', ...rpmRoot, '--nodeps', '--noscripts', 'device-agent'], { stdio: 'ignore' });
      expect(existsSync(join(root, 'usr/lib/device-agent/device-agent'))).toBe(false);
    });
  },
);

describe.skipIf(built.skip)('package hook: managed install from enroll.env, then removal', () => {
  /** The packaged hook, pointed at a copy of the executable and a private enroll.env. */
  function hook(dir: string): { path: string; enrollEnv: string } {
    const enrollEnv = join(dir, 'enroll.env');
    const text = readFileSync(fileURLToPath(new URL('../../installers/unix/package-hook', import.meta.url)), 'utf8')
      .replace('@AGENT@', join(seaDir, 'device-agent'))
      .replace('@ENROLL_ENV@', enrollEnv);
    const path = join(dir, 'package-hook');
    writeFileSync(path, text, { mode: 0o755 });
    return { path, enrollEnv };
  }

  const runHook = (path: string, action: string, env: NodeJS.ProcessEnv) =>
    spawnSync('sh', [path, action], { env, encoding: 'utf8', timeout: 60_000 });

  it('enrolls from enroll.env (then deletes it), the device turns ACTIVE; removal revokes the key and leaves no state', async () => {
    const dir = tempDir('device-agent-hook-');
    const { path, enrollEnv } = hook(dir);
    const stateDir = join(dir, 'state');
    const device = await server.createDevice({ org: 'packages' });
    writeFileSync(
      enrollEnv,
      `# managed install\nDEVICE_AGENT_SERVER="${server.url}"\nexport DEVICE_AGENT_TOKEN=${device.enrollment_token}\n`,
      { mode: 0o644 },
    );
    const env = agentEnv({ DEVICE_AGENT_STATE_DIR: stateDir });

    const configured = runHook(path, 'configure', env);
    expect(configured.status).toBe(0);
    expect(existsSync(enrollEnv), 'the token file is deleted').toBe(false);
    expect(`${configured.stdout}${configured.stderr}`).not.toContain(device.enrollment_token);
    expect(configured.stdout).toContain(`Enrolled with ${server.url}. The API key is in a file readable only by its owner`);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);

    // What the service does once started.
    const once = await runExe(join(seaDir, 'device-agent'), ['run', '--once'], { env });
    expect(once.code, once.stderr).toBe(0);
    expect((await server.showDevice(device.device_id)).state).toBe('ACTIVE');

    const removed = runHook(path, 'remove', env);
    expect(removed.status).toBe(0);
    expect(removed.stdout).toContain(`unenrolled from ${server.url}: the server revoked the API key`);
    expect(removed.stdout).toContain(`Removed: ${stateDir}`);
    expect(existsSync(stateDir)).toBe(false);
    expect((await server.showDevice(device.device_id)).state).toBe('REVOKED');

    // Removing twice is harmless.
    const again = runHook(path, 'remove', env);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain(`no enrollment in ${stateDir}: no API key to revoke or delete`);
  });

  it('enrolls from enroll.env with DEVICE_AGENT_ENROLL_SECRET (the same file for a whole fleet), deletes it, and the device turns ACTIVE', async () => {
    const dir = tempDir('device-agent-hook-');
    const { path, enrollEnv } = hook(dir);
    const stateDir = join(dir, 'state');
    const secret = JSON.parse(
      (await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', 'packages-fleet', '--json'])).stdout,
    ) as { secret_id: string; enroll_secret: string };
    writeFileSync(enrollEnv, `DEVICE_AGENT_SERVER=${server.url}\nDEVICE_AGENT_ENROLL_SECRET='${secret.enroll_secret}'\n`, { mode: 0o600 });
    const env = agentEnv({ DEVICE_AGENT_STATE_DIR: stateDir, DEVICE_AGENT_TEST_HARDWARE_UUID: `hook-${process.pid}` });

    const configured = runHook(path, 'configure', env);
    expect(configured.status, configured.stderr).toBe(0);
    expect(existsSync(enrollEnv), 'enroll.env is deleted after use').toBe(false);
    expect(`${configured.stdout}${configured.stderr}`).not.toContain(secret.enroll_secret.slice(4));
    expect(JSON.parse(readFileSync(join(stateDir, 'enrollment.json'), 'utf8'))).toMatchObject({
      enrolled_with: { method: 'enroll_secret', secret_id: secret.secret_id },
    });
    const once = await runExe(join(seaDir, 'device-agent'), ['run', '--once'], { env });
    expect(once.code, once.stderr).toBe(0);
    const status = JSON.parse((await runExe(join(seaDir, 'device-agent'), ['status', '--json'], { env })).stdout) as { device_id: string };
    expect(await server.showDevice(status.device_id)).toMatchObject({ state: 'ACTIVE', enroll_secret_id: secret.secret_id });
    expect(runHook(path, 'remove', env).status).toBe(0);
  });

  it('refuses enroll.env with both a token and a secret, deleting it and enrolling nothing', () => {
    const dir = tempDir('device-agent-hook-');
    const { path, enrollEnv } = hook(dir);
    writeFileSync(
      enrollEnv,
      `DEVICE_AGENT_SERVER=${server.url}\nDEVICE_AGENT_TOKEN=${'e'.repeat(96)}\nDEVICE_AGENT_ENROLL_SECRET=das_${'f'.repeat(64)}\n`,
      {
        mode: 0o600,
      },
    );
    const stateDir = join(dir, 'state');
    const configured = runHook(path, 'configure', agentEnv({ DEVICE_AGENT_STATE_DIR: stateDir }));
    expect(configured.stderr).toContain('needs DEVICE_AGENT_SERVER and one of DEVICE_AGENT_TOKEN or DEVICE_AGENT_ENROLL_SECRET');
    expect(existsSync(enrollEnv)).toBe(false);
    expect(existsSync(join(stateDir, 'enrollment.json'))).toBe(false);
  });

  it('keeps enroll.env when the server is unreachable, deletes it when the token is refused', () => {
    const dir = tempDir('device-agent-hook-');
    const { path, enrollEnv } = hook(dir);
    const env = agentEnv({ DEVICE_AGENT_STATE_DIR: join(dir, 'state'), DEVICE_AGENT_RETRY_ATTEMPTS: '1' });

    writeFileSync(enrollEnv, `DEVICE_AGENT_SERVER=http://127.0.0.1:9\nDEVICE_AGENT_TOKEN=${'c'.repeat(96)}\n`, { mode: 0o600 });
    const unreachable = runHook(path, 'configure', env);
    expect(unreachable.status).toBe(0);
    expect(unreachable.stderr).toContain(`the server was unreachable: ${enrollEnv} is kept`);
    expect(existsSync(enrollEnv)).toBe(true);

    writeFileSync(enrollEnv, `DEVICE_AGENT_SERVER=${server.url}\nDEVICE_AGENT_TOKEN=${'d'.repeat(96)}\n`, { mode: 0o600 });
    const refused = runHook(path, 'configure', env);
    expect(refused.stderr).toContain('the server refused the enrollment token');
    expect(refused.stderr).toContain(`enrollment from ${enrollEnv} failed (exit 3); the file was deleted`);
    expect(existsSync(enrollEnv)).toBe(false);
    expect(refused.stderr).not.toContain('d'.repeat(96));
  });
});

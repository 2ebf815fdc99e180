// The macOS and FreeBSD package sources (`npm run release` makes them on Linux; pkgbuild and pkg
// create finish them on their own systems): what each archive holds, with owners and modes, the
// LaunchDaemon, the MDM profile and the app's Info.plist parsed, the pkg manifest and plist, and
// every shell script syntax-checked. Executables are stand-ins: these archives only carry them.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlist, type PlistDict } from '../../checks/darwin/plist';
import { buildArchive, buildFreebsdSources, buildMacosSources, builtTargets } from '../../installers/build';
import { VERSION } from '../../src/version';
import { tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';

function dict(xml: string): PlistDict {
  const parsed = parsePlist(xml);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value as PlistDict;
}

/** Extracts a release archive; returns its top directory. */
function extract(archive: string): string {
  const dir = tempDir('device-agent-sources-');
  execFileSync('tar', ['-xf', archive, '-C', dir]);
  return join(dir, execFileSync('tar', ['-tf', archive], { encoding: 'utf8' }).split('\n')[0]!.replace(/\/$/, ''));
}

/** `tar -tv` lines as path -> "mode owner/group". */
function listing(archive: string): Map<string, string> {
  const lines = execFileSync('tar', ['-tvf', archive], { encoding: 'utf8' }).trim().split('\n');
  return new Map(
    lines.map((line) => {
      const [mode, owner, , , , ...rest] = line.split(/\s+/);
      return [
        rest
          .join(' ')
          .replace(/ -> .*$/, '')
          .split('/')
          .slice(1)
          .join('/'),
        `${mode} ${owner}`,
      ];
    }),
  );
}

// Release archives are tar.xz: tar runs xz.
const macosSources = requireTools(['xz'], 'macOS pkgbuild sources');
const freebsdSources = requireTools(['xz'], 'FreeBSD pkg sources');
const unixArchive = requireTools(['xz'], 'a Unix target: a root-owned .tar.xz of its directory under device-agent-<v>-<target>/');

const shellOk = (file: string) => spawnSync('sh', ['-n', file]).status === 0;

/** xz's magic number: release tarballs are xz-compressed like the .deb and .rpm (gzip left the Linux ones over 40 MB). */
const isXz = (archive: string) =>
  readFileSync(archive)
    .subarray(0, 6)
    .equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]));

describe.skipIf(macosSources.skip)(macosSources.title, () => {
  let archive: string;
  let top: string;
  beforeAll(() => {
    const payload = tempDir('device-agent-macos-payload-');
    writeFileSync(join(payload, 'device-agent'), 'stand-in for the darwin-x64 executable\n');
    writeFileSync(join(payload, 'keyring.node'), 'stand-in for keyring.darwin-x64.node\n');
    archive = buildMacosSources({ outDir: tempDir('device-agent-macos-'), seaDir: payload });
    top = extract(archive);
  });

  it('holds the package root (root-owned), the installer scripts and the build script', () => {
    expect(archive.endsWith(`device-agent-${VERSION}-macos-x64-pkgbuild.tar.xz`)).toBe(true);
    expect(isXz(archive)).toBe(true);
    const entries = listing(archive);
    expect(entries.get('root/usr/local/libexec/device-agent/device-agent')).toBe('-rwxr-xr-x 0/0');
    expect(entries.get('root/usr/local/libexec/device-agent/keyring.node')).toBe('-rw-r--r-- 0/0');
    expect(entries.get('root/Library/LaunchDaemons/org.device-agent.agent.plist')).toBe('-rw-r--r-- 0/0');
    expect(entries.get('root/etc/newsyslog.d/device-agent.conf')).toBe('-rw-r--r-- 0/0');
    expect(entries.get('root/usr/local/bin/device-agent')).toBe('lrwxrwxrwx 0/0');
    for (const script of [
      'scripts/preinstall',
      'scripts/postinstall',
      'build-pkg.sh',
      'uninstall.sh',
      'root/usr/local/libexec/device-agent/package-hook',
    ]) {
      expect(entries.get(script), script).toBe('-rwxr-xr-x 0/0');
      expect(shellOk(join(top, script)), `${script} is valid sh`).toBe(true);
    }
  });

  it('"My device posture": an applet built from its script, running device-agent my-device as the user, errors in a dialog', () => {
    const script = readFileSync(join(top, 'root/usr/local/libexec/device-agent/my-device.applescript'), 'utf8');
    expect(script).toContain('\t\tdo shell script "/usr/local/libexec/device-agent/device-agent my-device"\n');
    expect(script).toContain('\ton error message\n\t\tactivate\n\t\tdisplay dialog message');
    const build = readFileSync(join(top, 'build-pkg.sh'), 'utf8');
    expect(build).toContain('MY_DEVICE_APP="root/Applications/My device posture.app"');
    expect(build).toContain('osacompile -o "$MY_DEVICE_APP" "$LIBEXEC/my-device.applescript"');
    expect(build).toContain('codesign "$@" "$MY_DEVICE_APP"');
    expect(readFileSync(join(top, 'uninstall.sh'), 'utf8')).toContain('"/Applications/My device posture.app"');
  });

  it('the LaunchDaemon runs the installed agent on the System state directory', () => {
    const job = dict(readFileSync(join(top, 'root/Library/LaunchDaemons/org.device-agent.agent.plist'), 'utf8'));
    expect(job).toMatchObject({
      Label: 'org.device-agent.agent',
      ProgramArguments: ['/usr/local/libexec/device-agent/device-agent', 'run', '--state-dir', '/Library/Application Support/device-agent'],
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
    });
  });

  it('postinstall enrolls from enroll.env or the managed preferences, then bootstraps the daemon', () => {
    expect(readFileSync(join(top, 'scripts/postinstall'), 'utf8')).toContain('/usr/local/libexec/device-agent/package-hook configure');
    const hook = readFileSync(join(top, 'root/usr/local/libexec/device-agent/package-hook'), 'utf8');
    expect(hook).toContain("AGENT='/usr/local/libexec/device-agent/device-agent'\nENROLL_ENV='/etc/device-agent/enroll.env'\n");
    expect(hook).toContain("MANAGED_PREFERENCES='/Library/Managed Preferences/org.device-agent'");
    expect(hook).toContain('launchctl bootstrap system /Library/LaunchDaemons/org.device-agent.agent.plist');
  });

  it('the MDM profile example sets ServerURL and EnrollSecret (one profile for the fleet) in the org.device-agent domain', () => {
    const profile = dict(readFileSync(join(top, 'org.device-agent.mobileconfig'), 'utf8'));
    const payload = (profile.PayloadContent as PlistDict[])[0]!;
    expect(payload.PayloadType).toBe('com.apple.ManagedClient.preferences');
    const settings = (((payload.PayloadContent as PlistDict)['org.device-agent'] as PlistDict).Forced as PlistDict[])[0]!
      .mcx_preference_settings as PlistDict;
    expect(Object.keys(settings).sort()).toEqual(['EnrollSecret', 'ServerURL']);
    // The hook reads that key first, and pipes it to the agent (never an argument).
    const hook = readFileSync(join(top, 'root/usr/local/libexec/device-agent/package-hook'), 'utf8');
    expect(hook).toContain('defaults read "$MANAGED_PREFERENCES" EnrollSecret');
    expect(hook).toContain(`printf '%s' "$3" | "$AGENT" enroll --keystore "$keystore" --server "$1" "$2" -`);
  });

  it('the link-handler app declares the device-agent scheme; the build script signs and notarises', () => {
    expect((dict(readFileSync(join(top, 'app-Info.plist'), 'utf8')).CFBundleURLTypes as PlistDict[])[0]!.CFBundleURLSchemes).toEqual([
      'device-agent',
    ]);
    const build = readFileSync(join(top, 'build-pkg.sh'), 'utf8');
    for (const step of [
      'osacompile -o "$APP"',
      'codesign --remove-signature',
      '--entitlements entitlements.plist',
      'pkgbuild --root root --scripts scripts',
      'productsign --sign',
      'xcrun notarytool submit',
      'xcrun stapler staple',
    ]) {
      expect(build).toContain(step);
    }
    expect(dict(readFileSync(join(top, 'entitlements.plist'), 'utf8'))).toEqual({
      'com.apple.security.cs.allow-jit': true,
      'com.apple.security.cs.allow-unsigned-executable-memory': true,
    });
  });
});

describe.skipIf(freebsdSources.skip)(freebsdSources.title, () => {
  let top: string;
  beforeAll(() => {
    const dir = tempDir('device-agent-bundle-');
    const bundle = join(dir, 'device-agent.cjs');
    writeFileSync(bundle, '// stand-in for the agent bundle\n');
    mkdirSync(join(dir, 'device-agent'));
    for (const chunk of ['status-AAAA.cjs', 'run-BBBB.cjs']) writeFileSync(join(dir, 'device-agent', chunk), '// stand-in for a chunk\n');
    top = extract(buildFreebsdSources({ outDir: tempDir('device-agent-freebsd-'), bundle }));
  }, 120_000);

  it('+MANIFEST: name, version, the Node dependency, install and removal scripts', () => {
    const manifest: unknown = JSON.parse(readFileSync(join(top, '+MANIFEST'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'device-agent',
      version: VERSION,
      origin: 'sysutils/device-agent',
      prefix: '/usr/local',
      deps: { node24: { origin: 'www/node24' } },
      scripts: {
        'post-install': '/usr/local/libexec/device-agent/package-hook configure',
        'pre-deinstall': '/usr/local/libexec/device-agent/package-hook remove',
      },
    });
  });

  it('pkg-plist lists every staged file with root ownership and the staged mode', () => {
    const plist = readFileSync(join(top, 'pkg-plist'), 'utf8').trim().split('\n');
    expect(plist).toContain('@(root,wheel,0755) /usr/local/etc/rc.d/device_agent');
    expect(plist).toContain('@dir(root,wheel,0700) /usr/local/etc/device-agent');
    // The bundle's chunks travel with its entry point: each command loads its own on demand.
    expect(plist).toContain('@(root,wheel,0644) /usr/local/libexec/device-agent/device-agent.cjs');
    expect(plist).toContain('@(root,wheel,0644) /usr/local/libexec/device-agent/device-agent/status-AAAA.cjs');
    expect(plist).toContain('@(root,wheel,0644) /usr/local/libexec/device-agent/device-agent/run-BBBB.cjs');
    for (const line of plist) {
      const [, keyword, owner, group, mode, path] = /^@(dir)?\((\w+),(\w+),(\d{4})\) (\/.+)$/.exec(line)!;
      expect({ owner, group }).toEqual({ owner: 'root', group: 'wheel' });
      const staged = statSync(join(top, 'root', path!));
      expect(staged.isDirectory()).toBe(keyword === 'dir');
      expect((staged.mode & 0o7777).toString(8).padStart(4, '0'), path).toBe(mode);
    }
  });

  it('rc.d script and wrapper run the bundle on the system Node; the keyring addon is the FreeBSD build', () => {
    const rc = join(top, 'root/usr/local/etc/rc.d/device_agent');
    expect(shellOk(rc)).toBe(true);
    expect(readFileSync(rc, 'utf8')).toContain(
      '-T device-agent /usr/local/bin/node /usr/local/libexec/device-agent/device-agent.cjs run --state-dir ${device_agent_state_dir}"',
    );
    expect(readFileSync(join(top, 'root/usr/local/bin/device-agent'), 'utf8')).toContain(
      'exec /usr/local/bin/node /usr/local/libexec/device-agent/device-agent.cjs "$@"',
    );
    const addon = readFileSync(join(top, 'root/usr/local/libexec/device-agent/keyring.node'));
    expect(addon.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(addon[7], 'ELF OS/ABI: FreeBSD').toBe(9);
    expect(shellOk(join(top, 'build-pkg.sh'))).toBe(true);
  });
});

describe('executable archives', () => {
  it("one per built target: the bundle's chunk directory beside the targets is not one", () => {
    const seaDir = tempDir('device-agent-sea-');
    mkdirSync(join(seaDir, 'linux-x64'));
    writeFileSync(join(seaDir, 'linux-x64', 'device-agent'), '// stand-in for the executable\n');
    mkdirSync(join(seaDir, 'win-x64'));
    writeFileSync(join(seaDir, 'win-x64', 'device-agent.exe'), '// stand-in for the executable\n');
    mkdirSync(join(seaDir, 'device-agent'));
    writeFileSync(join(seaDir, 'device-agent', 'status-AAAA.cjs'), '// stand-in for a chunk\n');
    mkdirSync(join(seaDir, '.work-darwin-x64'));
    expect(builtTargets(seaDir)).toEqual(['linux-x64', 'win-x64']);
  });

  it.skipIf(unixArchive.skip)(unixArchive.title, () => {
    const seaDir = tempDir('device-agent-sea-');
    mkdirSync(join(seaDir, 'linux-arm64'));
    writeFileSync(join(seaDir, 'linux-arm64', 'device-agent'), '// stand-in for the executable\n', { mode: 0o755 });
    writeFileSync(join(seaDir, 'linux-arm64', 'keyring.node'), 'stand-in for keyring.linux-arm64-gnu.node\n', { mode: 0o644 });
    const archive = buildArchive('linux-arm64', { outDir: tempDir('device-agent-archives-'), seaDir });
    expect(archive.endsWith(`device-agent-${VERSION}-linux-arm64.tar.xz`)).toBe(true);
    expect(isXz(archive)).toBe(true);
    const entries = listing(archive);
    expect(entries.get('device-agent')).toBe('-rwxr-xr-x 0/0');
    expect(entries.get('keyring.node')).toBe('-rw-r--r-- 0/0');
    const top = extract(archive);
    expect(top.endsWith(`/device-agent-${VERSION}-linux-arm64`)).toBe(true);
    expect(readFileSync(join(top, 'device-agent'), 'utf8')).toBe('// stand-in for the executable\n');
  });
});

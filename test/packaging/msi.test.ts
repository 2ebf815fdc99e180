// The Windows MSI, built with wixl and msibuild and read back with msiinfo/msiextract: the service
// (install, start, stop, remove, recovery), the enrollment properties for `msiexec /qn`, the custom
// actions and their place in the sequence, the link handler, the state directory's ACL.
// The payload files are small stand-ins: Windows Installer tables do not depend on file contents,
// and the real executables are exercised by the linux-x64 tests and `npm run release`.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildMsi, STATE_DIR_SDDL } from '../../installers/build';
import { VERSION } from '../../src/version';
import { tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';

const msiTools = requireTools(['wixl', 'msibuild', 'msiinfo', 'msiextract'], 'MSI');

describe.skipIf(msiTools.skip)(msiTools.title, () => {
  let msi: string;
  beforeAll(() => {
    const payload = tempDir('device-agent-msi-payload-');
    for (const name of ['device-agent.exe', 'keyring.node', 'device-agent-service.exe', 'device-agent-service.exe.config'])
      writeFileSync(join(payload, name), `stand-in for ${name}\n`);
    msi = buildMsi({ outDir: tempDir('device-agent-msi-'), seaDir: payload });
  });

  /** Rows of an MSI table (msiinfo export: header, types, keys, then rows). */
  function table(name: string): string[][] {
    return execFileSync('msiinfo', ['export', msi, name], { encoding: 'utf8' })
      .split(/\r?\n/)
      .slice(3)
      .filter(Boolean)
      .map((row) => row.split('\t'));
  }
  const row = (name: string, key: string) => table(name).find((r) => r[0] === key);

  it('is named by version and installs the five files into Program Files\\device-agent', () => {
    expect(msi.endsWith(`device-agent-${VERSION}-x64.msi`)).toBe(true);
    expect(
      table('File')
        .map((r) => r[2]!.split('|').pop())
        .sort(),
    ).toEqual([
      'device-agent-service.exe',
      'device-agent-service.exe.config',
      'device-agent-service.xml',
      'device-agent.exe',
      'keyring.node',
    ]);
    expect(row('Directory', 'INSTALLFOLDER')).toEqual(['INSTALLFOLDER', 'ProgramFiles64Folder', 'device-agent']);
  });

  it('installs the service (automatic, own process, LocalSystem) on the WinSW host and starts it', () => {
    const [, name, display, type, start, errorControl, , , account, , , component] = row('ServiceInstall', 'AgentService')!;
    expect({ name, display, type, start, errorControl, account, component }).toEqual({
      name: 'device-agent',
      display: 'Device Agent',
      type: '16',
      start: '2',
      errorControl: '1',
      account: 'LocalSystem',
      component: 'Service',
    });
    expect(row('Component', 'Service')![5]).toBe('ServiceHost');
    // Events 0xA3: start and stop on install, stop and delete on uninstall.
    expect(row('ServiceControl', 'AgentServiceControl')).toEqual(['AgentServiceControl', 'device-agent', '163', '', '1', 'Service']);
  });

  it('sets recovery actions: restart after 10 s, 30 s, 60 s, also when the agent exits with an error', () => {
    expect(row('MsiServiceConfigFailureActions', 'AgentRecovery')).toEqual([
      'AgentRecovery',
      'device-agent',
      '5',
      '86400',
      '',
      '',
      '1[~]1[~]1',
      '10000[~]30000[~]60000',
      'Service',
    ]);
    expect(row('MsiServiceConfig', 'AgentFailureFlag')).toEqual(['AgentFailureFlag', 'device-agent', '5', '4', '1', 'Service']);
  });

  it('takes SERVER_URL with ENROLLMENT_TOKEN or ENROLLSECRET from msiexec, keeps both out of logs', () => {
    expect(row('Property', 'SecureCustomProperties')![1]!.split(';')).toEqual(
      expect.arrayContaining(['SERVER_URL', 'ENROLLMENT_TOKEN', 'ENROLLSECRET']),
    );
    expect(row('Property', 'MsiHiddenProperties')).toEqual(['MsiHiddenProperties', 'ENROLLMENT_TOKEN;ENROLLSECRET']);
    const [, secretType, secretSource, secretTarget] = row('CustomAction', 'EnrollDeviceWithSecret')!;
    expect({ type: Number(secretType), source: secretSource, target: secretTarget }).toEqual({
      type: 18 + 1024 + 2048 + 8192,
      source: 'AgentExe',
      target: 'enroll --keystore file --server "[SERVER_URL]" --allow-enroll-secret-argument --enroll-secret "[ENROLLSECRET]"',
    });
    const [, type, source, target] = row('CustomAction', 'EnrollDevice')!;
    // 18 exe from a File + 1024 deferred + 2048 no impersonation (runs as LocalSystem) + 8192 hide target.
    expect({ type: Number(type), source, target }).toEqual({
      type: 18 + 1024 + 2048 + 8192,
      source: 'AgentExe',
      target: 'enroll --keystore file --server "[SERVER_URL]" --token "[ENROLLMENT_TOKEN]"',
    });
    expect(row('CustomAction', 'UninstallAgent')!.slice(1, 4)).toEqual([String(18 + 1024 + 2048 + 64), 'AgentExe', 'uninstall']);
  });

  it('enrolls after the service is installed and before it starts; uninstalls while the files are still there', () => {
    const sequence = new Map(
      table('InstallExecuteSequence').map(([action, condition, number]) => [action!, { condition, number: Number(number) }]),
    );
    const at = (action: string) => sequence.get(action)!.number;
    expect(at('InstallServices')).toBeLessThan(at('MsiConfigureServices'));
    expect(at('MsiConfigureServices')).toBeLessThan(at('EnrollDevice'));
    expect(at('EnrollDevice')).toBeLessThan(at('StartServices'));
    expect(sequence.get('EnrollDevice')!.condition).toBe('SERVER_URL AND NOT ENROLLSECRET AND NOT Installed AND NOT WIX_UPGRADE_DETECTED');
    // With a secret, the other action, at the same point: exactly one of the two runs.
    expect(at('MsiConfigureServices')).toBeLessThan(at('EnrollDeviceWithSecret'));
    expect(at('EnrollDeviceWithSecret')).toBeLessThan(at('StartServices'));
    expect(sequence.get('EnrollDeviceWithSecret')!.condition).toBe(
      'SERVER_URL AND ENROLLSECRET AND NOT Installed AND NOT WIX_UPGRADE_DETECTED',
    );
    expect(at('DeleteServices')).toBeLessThan(at('UninstallAgent'));
    expect(at('UninstallAgent')).toBeLessThan(at('RemoveFiles'));
    expect(sequence.get('UninstallAgent')!.condition).toBe('REMOVE="ALL" AND NOT UPGRADINGPRODUCTCODE');
  });

  it('registers the device-agent URL scheme for every user', () => {
    const values = table('Registry').map(([, root, key, name, value]) => [root, key, name, value]);
    expect(values).toEqual(
      expect.arrayContaining([
        ['2', 'Software\\Classes\\device-agent', 'URL Protocol', ''],
        ['2', 'Software\\Classes\\device-agent\\shell\\open\\command', '', '"[INSTALLFOLDER]device-agent.exe" open-link "%1"'],
      ]),
    );
  });

  it('puts "My device posture" in every user\'s Start menu: device-agent my-device through cmd, which waits on a failure', () => {
    const shortcut = row('Shortcut', 'MyDeviceStartMenu')!;
    const [, directory, name, component, target, args, description] = shortcut;
    expect({ directory, name: name!.split('|').pop(), component, target, args, description }).toEqual({
      directory: 'ProgramMenuFolder',
      name: 'My device posture',
      component: 'MyDeviceShortcut',
      target: '[System64Folder]cmd.exe',
      args: '/c ""[INSTALLFOLDER]device-agent.exe" my-device || pause"',
      description: "See this device's security checks and how to fix what fails",
    });
    // WkDir: the program's folder.
    expect(shortcut[11]).toBe('INSTALLFOLDER');
    expect(table('FeatureComponents').map(([, c]) => c)).toContain('MyDeviceShortcut');
    // Its key path: a per-machine value of our own.
    expect(
      table('Registry')
        .find((r) => r[5] === 'MyDeviceShortcut')
        ?.slice(1, 5),
    ).toEqual(['2', 'Software\\device-agent', 'MyDeviceShortcut', '#1']);
  });

  it('creates the state directory for SYSTEM and Administrators only', () => {
    expect(row('Directory', 'STATEDIR')).toEqual(['STATEDIR', 'CommonAppDataFolder', 'device-agent']);
    expect(row('MsiLockPermissionsEx', 'StateDirectoryAcl')).toEqual(['StateDirectoryAcl', 'STATEDIR', 'CreateFolder', STATE_DIR_SDDL, '']);
    expect(STATE_DIR_SDDL).toBe('D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)');
  });

  it('ships the WinSW configuration: the agent beside it, state in %ProgramData%, rotated logs', () => {
    const dir = tempDir('device-agent-msi-extract-');
    execFileSync('msiextract', ['-C', dir, msi], { stdio: 'ignore' });
    const config = readFileSync(join(dir, 'device-agent', 'device-agent-service.xml'), 'utf8');
    expect(config).toContain('<executable>%BASE%\\device-agent.exe</executable>');
    expect(config).toContain('<arguments>run --state-dir %ProgramData%\\device-agent</arguments>');
    expect(config).toContain('<logpath>%ProgramData%\\device-agent\\logs</logpath>');
    expect(config).toContain('<onfailure action="restart" delay="10 sec"/>');
  });
});

// Builds the installers from the single-file executables in dist/sea (scripts/package.mjs): Debian
// and RPM packages, the Windows MSI, and the macOS and FreeBSD package sources (their package tools
// run only on their own systems). Every service file comes from the generators that
// `device-agent install` uses (src/service, src/linkHandler). docs/packaging.md describes the output.
//   tsx installers/build.ts <out-dir> [deb rpm msi macos freebsd archives server-deb server-rpm]
// The server's packages are built by installers/server.ts.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_CHUNK_DIR } from '../scripts/build.mjs';
import { BUNDLE, fetchPackage, KEYRING_VERSION, OUT as SEA_DIR, TARGETS } from '../scripts/package.mjs';
import { appInfoPlist, linkHandlerScript, MY_DEVICE_SCRIPT_NAME, myDeviceAppleScript, SCRIPT_NAME } from '../src/linkHandler/darwin';
import type { LinkHandlerSpec } from '../src/linkHandler/types';
import { schemeRegistryValues } from '../src/linkHandler/windows';
import {
  MY_DEVICE_DESKTOP_FILE_NAME,
  dbusServiceFile,
  desktopEntry,
  myDeviceDesktopEntry,
  xdgLinkHandlerFiles,
} from '../src/linkHandler/xdg';
import {
  LAUNCHD_PLIST,
  launchdPlist,
  NEWSYSLOG_CONF as DARWIN_NEWSYSLOG_CONF,
  newsyslogConf as darwinNewsyslogConf,
} from '../src/service/launchd';
import { launchdService } from '../src/service/launchd';
import {
  NEWSYSLOG_CONF as FREEBSD_NEWSYSLOG_CONF,
  newsyslogConf as freebsdNewsyslogConf,
  RC_SCRIPT,
  rcScript,
  SYSLOG_CONF,
  syslogConf,
} from '../src/service/rcd';
import { systemdService, systemdUnit, UNIT_NAME } from '../src/service/systemd';
import { SERVICE_DESCRIPTION, SERVICE_NAME, type ProgramLayout } from '../src/service/types';
import { DISPLAY_NAME, RECOVERY, SERVICE_HOST, SERVICE_HOST_CONFIG, winswConfig } from '../src/service/windows';
import { VERSION } from '../src/version';
import { buildServerDeb, buildServerRpm } from './server';
import {
  RELOAD_AFTER_REMOVAL,
  buildDebPackage,
  buildRpmPackage,
  stage,
  tool,
  type LinuxArch,
  type LinuxPackage,
  type StagedFile,
} from './stage';

const HERE = dirname(fileURLToPath(import.meta.url));
const STATE_DIR = '/var/lib/device-agent';
const SUMMARY = 'Device posture agent for the Device Agent API';
const LONG_DESCRIPTION = [
  "Reports this device's security posture (disk encryption, screen lock, firewall, time",
  'synchronisation, OS version, automatic updates, password policy, remote login, malware',
  'protection) to a Device Agent API server, from a background service.',
];

/** The package hook (installers/unix/package-hook) with this platform's paths filled in. */
function packageHook(agent: string, enrollEnv: string): string {
  return readFileSync(join(HERE, 'unix', 'package-hook'), 'utf8')
    .replace('@AGENT@', agent)
    .replace('@ENROLL_ENV@', enrollEnv);
}

function documentation(docDir: string): StagedFile[] {
  return [
    { path: `${docDir}/enroll.env.example`, mode: 0o644, from: join(HERE, 'enroll.env.example') },
    { path: `${docDir}/copyright`, mode: 0o644, content: `device-agent ${VERSION}\nLicense: Apache-2.0\n` },
  ];
}

// --- Linux: Debian and RPM ---------------------------------------------------------------------

/** The executable, its keyring addon and the package hook, where a POSIX package installs them. */
function programFiles(layout: ProgramLayout, seaDir: string): StagedFile[] {
  return [
    { path: layout.executable, mode: 0o755, from: join(seaDir, 'device-agent') },
    { path: `${layout.dir}/keyring.node`, mode: 0o644, from: join(seaDir, 'keyring.node') },
    { path: `${layout.dir}/package-hook`, mode: 0o755, content: packageHook(layout.executable, '/etc/device-agent/enroll.env') },
  ];
}

/** The desktop link handler (Linux, FreeBSD): its .desktop entry and the D-Bus service that activates it. */
function linkHandlerFiles(shareDir: string, spec: LinkHandlerSpec): StagedFile[] {
  const { desktopFile, serviceFile } = xdgLinkHandlerFiles(shareDir);
  return [
    { path: desktopFile, mode: 0o644, content: desktopEntry(spec) },
    { path: serviceFile, mode: 0o644, content: dbusServiceFile(spec) },
    // "My device posture" in the desktop's menu: this device's page for whoever is logged in.
    { path: `${shareDir}/applications/${MY_DEVICE_DESKTOP_FILE_NAME}`, mode: 0o644, content: myDeviceDesktopEntry(spec) },
  ];
}

/** What the Debian and RPM packages install; `unitDir` is where each distribution keeps vendor units. */
export function linuxFiles(seaDir: string, unitDir: string): StagedFile[] {
  const layout = systemdService.programLayout({});
  const program = [layout.executable];
  return [
    ...programFiles(layout, seaDir),
    { path: layout.pathLink!, mode: 0o777, link: '../lib/device-agent/device-agent' },
    { path: `${unitDir}/${UNIT_NAME}`, mode: 0o644, content: systemdUnit({ program, stateDir: STATE_DIR, programDir: layout.dir }) },
    ...linkHandlerFiles('/usr/share', { program, programDir: layout.dir }),
    { path: '/etc/device-agent', mode: 0o700 },
    ...documentation('/usr/share/doc/device-agent'),
  ];
}

export interface LinuxPackageOptions {
  arch: LinuxArch;
  outDir: string;
  seaDir?: string;
  /** xz for releases; gzip makes test builds several times faster. */
  compression?: 'xz' | 'gzip';
}

function agentPackage(options: LinuxPackageOptions, unitDir: string): LinuxPackage {
  return {
    name: SERVICE_NAME,
    version: VERSION,
    arch: options.arch,
    summary: SUMMARY,
    longDescription: LONG_DESCRIPTION,
    files: linuxFiles(options.seaDir ?? join(SEA_DIR, `linux-${options.arch}`), unitDir),
    outDir: options.outDir,
    compression: options.compression,
  };
}

export function buildDeb(options: LinuxPackageOptions): string {
  return buildDebPackage(agentPackage(options, '/lib/systemd/system'), {
    section: 'admin',
    depends: 'libc6 (>= 2.28)',
    scriptsDir: join(HERE, 'debian'),
  });
}

export function buildRpm(options: LinuxPackageOptions): string {
  return buildRpmPackage(agentPackage(options, '/usr/lib/systemd/system'), {
    requires: ['glibc >= 2.28'],
    wholeDirs: ['/usr/lib/device-agent'],
    scriptlets: [
      '%post',
      '/usr/lib/device-agent/package-hook configure',
      '',
      '%preun',
      "# $1 is 0 on removal, 1 on upgrade (the new version's %post restarts the service).",
      'if [ "$1" -eq 0 ]; then /usr/lib/device-agent/package-hook remove; fi',
      '',
      '%postun',
      'if [ "$1" -eq 0 ]; then rm -rf /etc/device-agent /var/lib/device-agent; fi',
      RELOAD_AFTER_REMOVAL,
    ],
  });
}

// --- Windows: MSI (wixl) -----------------------------------------------------------------------

/** Fixed forever: how Windows Installer recognises an upgrade of this product. */
export const MSI_UPGRADE_CODE = '6A8F1D2C-3B4E-4F5A-9C7D-2E1B0A9F8D63';
/** A component without a file needs a fixed GUID. */
const STATE_DIR_COMPONENT_GUID = 'B3C1E6A4-2F7D-4E8B-A5C9-7D1E3F2A6B84';
const MY_DEVICE_SHORTCUT_GUID = '5E2D8C1A-7B4F-4A3E-9D6C-1F0B2A3C4D5E';
/** SYSTEM and Administrators only, nothing inherited (SDDL). */
export const STATE_DIR_SDDL = 'D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)';

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `sourceDir`: where the files are, relative to the .wxs (wixl refuses absolute sources). */
export function msiSource(sourceDir: string): string {
  const registry = schemeRegistryValues({ program: ['[INSTALLFOLDER]device-agent.exe'], programDir: '[INSTALLFOLDER]' }).map(
    ([key, name, data]) =>
      `            <RegistryValue Root="HKLM" Key="${xml(key.replace(/^HKLM\\/, ''))}"${name === null ? '' : ` Name="${xml(name)}"`} Type="string" Value="${xml(data)}" />`,
  );
  const file = (id: string, name: string, source: string, keyPath = false) =>
    `            <File Id="${id}" Name="${name}" Source="${xml(source)}"${keyPath ? ' KeyPath="yes"' : ''} />`;
  return `<?xml version="1.0" encoding="utf-8"?>
<!-- device-agent ${VERSION}: generated by installers/build.ts. Properties for msiexec /qn:
     SERVER_URL=https://… with ENROLLSECRET=<the organization's enrollment secret> (a rollout) or
     ENROLLMENT_TOKEN=<96 hex> (one device) enroll the device during the installation. -->
<Wix xmlns="http://schemas.microsoft.com/wix/2006/wi">
  <Product Id="*" Name="Device Agent" Language="1033" Version="${VERSION}" Manufacturer="device-agent" UpgradeCode="${MSI_UPGRADE_CODE}">
    <Package InstallerVersion="500" Compressed="yes" InstallScope="perMachine" Description="${xml(SUMMARY)}" />
    <MajorUpgrade DowngradeErrorMessage="A newer version of Device Agent is already installed." />
    <Media Id="1" Cabinet="agent.cab" EmbedCab="yes" />
    <Property Id="MsiHiddenProperties" Value="ENROLLMENT_TOKEN;ENROLLSECRET" />
    <Property Id="ARPNOMODIFY" Value="1" />
    <Directory Id="TARGETDIR" Name="SourceDir">
      <Directory Id="ProgramFiles64Folder">
        <Directory Id="INSTALLFOLDER" Name="${SERVICE_NAME}">
          <Component Id="Agent" Guid="*" Win64="yes">
${file('AgentExe', 'device-agent.exe', `${sourceDir}/device-agent.exe`, true)}
${file('KeyringAddon', 'keyring.node', `${sourceDir}/keyring.node`)}
${registry.join('\n')}
          </Component>
          <Component Id="Service" Guid="*" Win64="yes">
${file('ServiceHost', SERVICE_HOST, `${sourceDir}/${SERVICE_HOST}`, true)}
${file('ServiceHostRuntime', `${SERVICE_HOST}.config`, `${sourceDir}/${SERVICE_HOST}.config`)}
${file('ServiceHostConfig', SERVICE_HOST_CONFIG, `${sourceDir}/${SERVICE_HOST_CONFIG}`)}
            <ServiceInstall Id="AgentService" Name="${SERVICE_NAME}" DisplayName="${DISPLAY_NAME}" Description="${xml(SERVICE_DESCRIPTION)}" Type="ownProcess" Start="auto" ErrorControl="normal" Account="LocalSystem" />
            <ServiceControl Id="AgentServiceControl" Name="${SERVICE_NAME}" Start="install" Stop="both" Remove="uninstall" Wait="yes" />
          </Component>
        </Directory>
      </Directory>
      <Directory Id="ProgramMenuFolder">
        <!-- "My device posture" for every user: this device's page (device-agent my-device, as the user
             who clicks it). Through cmd, so that a failure (a user without administrator rights:
             docs/agent.md) stays on the screen until a key is pressed. -->
        <Component Id="MyDeviceShortcut" Guid="${MY_DEVICE_SHORTCUT_GUID}" Win64="yes">
          <Shortcut Id="MyDeviceStartMenu" Name="My device posture" Description="See this device's security checks and how to fix what fails" Target="[System64Folder]cmd.exe" Arguments="/c &quot;&quot;[INSTALLFOLDER]device-agent.exe&quot; my-device || pause&quot;" WorkingDirectory="INSTALLFOLDER" />
          <RegistryValue Root="HKLM" Key="Software\\device-agent" Name="MyDeviceShortcut" Type="integer" Value="1" KeyPath="yes" />
        </Component>
      </Directory>
      <Directory Id="CommonAppDataFolder">
        <Directory Id="STATEDIR" Name="${SERVICE_NAME}">
          <Component Id="StateDirectory" Guid="${STATE_DIR_COMPONENT_GUID}" Win64="yes">
            <CreateFolder />
          </Component>
        </Directory>
      </Directory>
    </Directory>
    <!-- Runs as LocalSystem (the service's account) before the service starts. -->
    <CustomAction Id="EnrollDevice" FileKey="AgentExe" ExeCommand="enroll --keystore file --server &quot;[SERVER_URL]&quot; --token &quot;[ENROLLMENT_TOKEN]&quot;" Execute="deferred" Impersonate="no" Return="check" />
    <!-- The secret as an argument, allowed by its explicit flag: this process runs as LocalSystem, whose
         command line other non-admin users cannot read, and the action's target is hidden from the log. -->
    <CustomAction Id="EnrollDeviceWithSecret" FileKey="AgentExe" ExeCommand="enroll --keystore file --server &quot;[SERVER_URL]&quot; --allow-enroll-secret-argument --enroll-secret &quot;[ENROLLSECRET]&quot;" Execute="deferred" Impersonate="no" Return="check" />
    <!-- Before the files go: stop and delete the service, revoke and delete the key and the state. -->
    <CustomAction Id="UninstallAgent" FileKey="AgentExe" ExeCommand="uninstall" Execute="deferred" Impersonate="no" Return="ignore" />
    <InstallExecuteSequence>
      <!-- After InstallServices (5800) and MsiConfigureServices (5850), before StartServices (5900). -->
      <Custom Action="EnrollDevice" Sequence="5870">SERVER_URL AND NOT ENROLLSECRET AND NOT Installed AND NOT WIX_UPGRADE_DETECTED</Custom>
      <Custom Action="EnrollDeviceWithSecret" Sequence="5871">SERVER_URL AND ENROLLSECRET AND NOT Installed AND NOT WIX_UPGRADE_DETECTED</Custom>
      <!-- After StopServices (1900) and DeleteServices (2000), while the files are still there (RemoveFiles 3500). -->
      <Custom Action="UninstallAgent" Sequence="2010">REMOVE="ALL" AND NOT UPGRADINGPRODUCTCODE</Custom>
    </InstallExecuteSequence>
    <Feature Id="Main" Level="1">
      <ComponentRef Id="Agent" />
      <ComponentRef Id="Service" />
      <ComponentRef Id="StateDirectory" />
      <ComponentRef Id="MyDeviceShortcut" />
    </Feature>
  </Product>
</Wix>
`;
}

/**
 * What wixl cannot express, added to its output with msibuild (SQL on the MSI database): the
 * service's recovery actions, the state directory's ACL, the token and secret kept out of logs, and
 * the properties passed to the elevated part of the installation.
 */
function msiPostProcessing(): string[] {
  const seconds = RECOVERY.delaysMs.map(String).join('[~]');
  const restarts = RECOVERY.delaysMs.map(() => '1').join('[~]');
  return [
    'CREATE TABLE `MsiServiceConfigFailureActions` (`MsiServiceConfigFailureActions` CHAR(72) NOT NULL, `Name` CHAR(255) NOT NULL LOCALIZABLE, `Event` SHORT NOT NULL, `ResetPeriod` LONG, `RebootMessage` CHAR(255) LOCALIZABLE, `Command` CHAR(255) LOCALIZABLE, `Actions` CHAR(255), `DelayActions` CHAR(255), `Component_` CHAR(72) NOT NULL PRIMARY KEY `MsiServiceConfigFailureActions`)',
    // Event 5: on install and reinstall. Actions 1: restart.
    `INSERT INTO \`MsiServiceConfigFailureActions\` (\`MsiServiceConfigFailureActions\`, \`Name\`, \`Event\`, \`ResetPeriod\`, \`Actions\`, \`DelayActions\`, \`Component_\`) VALUES ('AgentRecovery', '${SERVICE_NAME}', 5, ${RECOVERY.resetSeconds}, '${restarts}', '${seconds}', 'Service')`,
    'CREATE TABLE `MsiServiceConfig` (`MsiServiceConfig` CHAR(72) NOT NULL, `Name` CHAR(255) NOT NULL LOCALIZABLE, `Event` SHORT NOT NULL, `ConfigType` LONG NOT NULL, `Argument` CHAR(0) LOCALIZABLE, `Component_` CHAR(72) NOT NULL PRIMARY KEY `MsiServiceConfig`)',
    // ConfigType 4 = SERVICE_CONFIG_FAILURE_ACTIONS_FLAG: recover also when the agent exits with an error.
    `INSERT INTO \`MsiServiceConfig\` (\`MsiServiceConfig\`, \`Name\`, \`Event\`, \`ConfigType\`, \`Argument\`, \`Component_\`) VALUES ('AgentFailureFlag', '${SERVICE_NAME}', 5, 4, '1', 'Service')`,
    "INSERT INTO `InstallExecuteSequence` (`Action`, `Sequence`) VALUES ('MsiConfigureServices', 5850)",
    'CREATE TABLE `MsiLockPermissionsEx` (`MsiLockPermissionsEx` CHAR(72) NOT NULL, `LockObject` CHAR(72) NOT NULL, `Table` CHAR(32) NOT NULL, `SDDLText` CHAR(0) NOT NULL, `Condition` CHAR(255) PRIMARY KEY `MsiLockPermissionsEx`)',
    `INSERT INTO \`MsiLockPermissionsEx\` (\`MsiLockPermissionsEx\`, \`LockObject\`, \`Table\`, \`SDDLText\`) VALUES ('StateDirectoryAcl', 'STATEDIR', 'CreateFolder', '${STATE_DIR_SDDL}')`,
    // 3090 (deferred, no impersonation, exe from a File) + 8192 (msidbCustomActionTypeHideTarget).
    "UPDATE `CustomAction` SET `Type` = 11282 WHERE `Action` = 'EnrollDevice'",
    "UPDATE `CustomAction` SET `Type` = 11282 WHERE `Action` = 'EnrollDeviceWithSecret'",
    "UPDATE `Property` SET `Value` = 'WIX_DOWNGRADE_DETECTED;WIX_UPGRADE_DETECTED;SERVER_URL;ENROLLMENT_TOKEN;ENROLLSECRET' WHERE `Property` = 'SecureCustomProperties'",
  ];
}

export function buildMsi(options: { outDir: string; seaDir?: string }): string {
  const seaDir = options.seaDir ?? join(SEA_DIR, 'win-x64');
  const work = mkdtempSync(join(tmpdir(), 'device-agent-msi-'));
  try {
    const files = join(work, 'files');
    mkdirSync(files);
    for (const name of ['device-agent.exe', 'keyring.node', SERVICE_HOST, `${SERVICE_HOST}.config`])
      symlinkSync(resolve(seaDir, name), join(files, name));
    // WinSW expands %BASE% (its own folder) and environment variables when it reads this file.
    writeFileSync(
      join(files, SERVICE_HOST_CONFIG),
      winswConfig({ program: ['%BASE%\\device-agent.exe'], stateDir: '%ProgramData%\\device-agent', programDir: '%BASE%' }),
    );
    const source = join(work, 'device-agent.wxs');
    writeFileSync(source, msiSource('files'));
    const msi = join(options.outDir, `${SERVICE_NAME}-${VERSION}-x64.msi`);
    mkdirSync(options.outDir, { recursive: true });
    tool('wixl', ['-a', 'x64', '-o', msi, source], work);
    for (const query of msiPostProcessing()) tool('msibuild', [msi, '-q', query], work);
    return msi;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- macOS: pkgbuild sources ---------------------------------------------------------------------

/** The files the macOS package installs, for pkgbuild --root on a Mac (installers/macos/build-pkg.sh). */
export function macosFiles(seaDir: string): StagedFile[] {
  const layout = launchdService.programLayout({});
  const program = [layout.executable];
  return [
    ...programFiles(layout, seaDir),
    { path: `${layout.dir}/${SCRIPT_NAME}`, mode: 0o644, content: linkHandlerScript({ program, programDir: layout.dir }) },
    // Compiled into /Applications/My device posture.app by build-pkg.sh.
    { path: `${layout.dir}/${MY_DEVICE_SCRIPT_NAME}`, mode: 0o644, content: myDeviceAppleScript({ program }) },
    { path: layout.pathLink!, mode: 0o777, link: layout.executable },
    {
      path: LAUNCHD_PLIST,
      mode: 0o644,
      content: launchdPlist({ program, stateDir: '/Library/Application Support/device-agent', programDir: layout.dir }),
    },
    { path: DARWIN_NEWSYSLOG_CONF, mode: 0o644, content: darwinNewsyslogConf() },
  ];
}

/**
 * tar flags of every release tarball: root-owned entries, xz-compressed like the .deb and .rpm (a
 * Node runtime takes about 27 MB with xz against 40 MB with gzip: docs/packaging.md).
 */
const TAR_XZ = ['--owner=0', '--group=0', '--numeric-owner', '--use-compress-program=xz -T0'];

function tarball(dir: string, out: string): void {
  tool('tar', [...TAR_XZ, '-cf', out, '-C', dirname(dir), relativeName(dir)]);
}

function relativeName(dir: string): string {
  return dir.split(/[\\/]/).pop()!;
}

export function buildMacosSources(options: { outDir: string; seaDir?: string }): string {
  const work = mkdtempSync(join(tmpdir(), 'device-agent-macos-'));
  try {
    const top = join(work, `${SERVICE_NAME}-${VERSION}-macos-x64-pkgbuild`);
    stage(join(top, 'root'), macosFiles(options.seaDir ?? join(SEA_DIR, 'darwin-x64')));
    stage(top, [
      { path: '/app-Info.plist', mode: 0o644, content: appInfoPlist() },
      ...['build-pkg.sh', 'uninstall.sh'].map((name) => ({ path: `/${name}`, mode: 0o755, from: join(HERE, 'macos', name) })),
      ...['entitlements.plist', 'org.device-agent.mobileconfig'].map((name) => ({
        path: `/${name}`,
        mode: 0o644,
        from: join(HERE, 'macos', name),
      })),
      ...['preinstall', 'postinstall'].map((name) => ({
        path: `/scripts/${name}`,
        mode: 0o755,
        from: join(HERE, 'macos', 'scripts', name),
      })),
      { path: '/VERSION', mode: 0o644, content: `${VERSION}\n` },
    ]);
    const out = join(options.outDir, `${relativeName(top)}.tar.xz`);
    mkdirSync(options.outDir, { recursive: true });
    tarball(top, out);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- FreeBSD: pkg create sources -------------------------------------------------------------------

const FREEBSD_DIR = '/usr/local/libexec/device-agent';
const FREEBSD_NODE = '/usr/local/bin/node';

/** The agent bundle's entry point and, in the directory beside it, the chunks it loads on demand (scripts/build.mjs). */
function bundleFiles(agentBundle: string, dir: string): StagedFile[] {
  const chunkDir = join(dirname(agentBundle), AGENT_CHUNK_DIR);
  const chunks = existsSync(chunkDir) ? readdirSync(chunkDir).filter((name) => name.endsWith('.cjs')) : [];
  return [
    { path: `${dir}/device-agent.cjs`, mode: 0o644, from: agentBundle },
    ...chunks.sort().map((name) => ({ path: `${dir}/${AGENT_CHUNK_DIR}/${name}`, mode: 0o644, from: join(chunkDir, name) })),
  ];
}

export function freebsdFiles(keyringAddon: string, agentBundle: string = BUNDLE): StagedFile[] {
  const bundle = `${FREEBSD_DIR}/device-agent.cjs`;
  const program = [FREEBSD_NODE, bundle];
  return [
    ...bundleFiles(agentBundle, FREEBSD_DIR),
    { path: `${FREEBSD_DIR}/keyring.node`, mode: 0o644, from: keyringAddon },
    {
      path: `${FREEBSD_DIR}/package-hook`,
      mode: 0o755,
      content: packageHook('/usr/local/bin/device-agent', '/usr/local/etc/device-agent/enroll.env'),
    },
    {
      path: '/usr/local/bin/device-agent',
      mode: 0o755,
      content: `#!/bin/sh\n# device-agent: the agent bundle on the system's Node (pkg install node24).\nexec ${FREEBSD_NODE} ${bundle} "$@"\n`,
    },
    { path: RC_SCRIPT, mode: 0o755, content: rcScript({ program, stateDir: STATE_DIR, programDir: FREEBSD_DIR }) },
    { path: SYSLOG_CONF, mode: 0o644, content: syslogConf() },
    { path: FREEBSD_NEWSYSLOG_CONF, mode: 0o644, content: freebsdNewsyslogConf() },
    ...linkHandlerFiles('/usr/local/share', { program, programDir: FREEBSD_DIR }),
    { path: '/usr/local/etc/device-agent', mode: 0o700 },
    ...documentation('/usr/local/share/doc/device-agent'),
  ];
}

/** pkg(8) manifest (UCL, JSON syntax): metadata, the Node dependency and the install scripts. */
export function freebsdManifest(): string {
  return `${JSON.stringify(
    {
      name: SERVICE_NAME,
      version: VERSION,
      origin: 'sysutils/device-agent',
      comment: SUMMARY,
      desc: LONG_DESCRIPTION.join(' '),
      maintainer: 'maintainers@device-agent.invalid',
      prefix: '/usr/local',
      licenselogic: 'single',
      licenses: ['APACHE20'],
      categories: ['sysutils', 'security'],
      deps: { node24: { origin: 'www/node24', version: '24' } },
      scripts: {
        'post-install': `${FREEBSD_DIR}/package-hook configure`,
        'pre-deinstall': `${FREEBSD_DIR}/package-hook remove`,
      },
    },
    null,
    2,
  )}\n`;
}

export function buildFreebsdSources(options: { outDir: string; bundle?: string }): string {
  const keyring = join(fetchPackage('@napi-rs/keyring-freebsd-x64', KEYRING_VERSION), 'keyring.freebsd-x64.node');
  const work = mkdtempSync(join(tmpdir(), 'device-agent-freebsd-'));
  try {
    const top = join(work, `${SERVICE_NAME}-${VERSION}-freebsd-x64-pkg`);
    const files = freebsdFiles(keyring, options.bundle);
    stage(join(top, 'root'), files);
    // Owner and mode set here: the files were staged by whoever ran the build.
    const plist = files.map((file) => {
      const mode = file.mode.toString(8).padStart(4, '0');
      return file.from === undefined && file.content === undefined
        ? `@dir(root,wheel,${mode}) ${file.path}`
        : `@(root,wheel,${mode}) ${file.path}`;
    });
    stage(top, [
      { path: '/+MANIFEST', mode: 0o644, content: freebsdManifest() },
      { path: '/pkg-plist', mode: 0o644, content: `${plist.join('\n')}\n` },
      { path: '/build-pkg.sh', mode: 0o755, from: join(HERE, 'freebsd', 'build-pkg.sh') },
    ]);
    const out = join(options.outDir, `${relativeName(top)}.tar.xz`);
    mkdirSync(options.outDir, { recursive: true });
    tarball(top, out);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- plain archives of the executables --------------------------------------------------------------

export function buildArchive(target: string, options: { outDir: string; seaDir?: string }): string {
  const dir = join(options.seaDir ?? SEA_DIR, target);
  const name = `${SERVICE_NAME}-${VERSION}-${target}`;
  mkdirSync(options.outDir, { recursive: true });
  if (target.startsWith('win')) {
    const out = resolve(options.outDir, `${name}.zip`);
    rmSync(out, { force: true });
    tool('zip', ['-q', '-X', out, ...readdirSync(dir)], dir);
    return out;
  }
  const out = join(options.outDir, `${name}.tar.xz`);
  tool('tar', [...TAR_XZ, '--transform', `s,^\\.,${name},`, '-cf', out, '-C', dir, '.']);
  return out;
}

/** The targets whose executable `npm run package` built into `seaDir` (beside them: the bundle and its chunk directory). */
export function builtTargets(seaDir: string = SEA_DIR): string[] {
  return Object.entries(TARGETS)
    .filter(([target, spec]) => existsSync(join(seaDir, target, spec.exe)))
    .map(([target]) => target);
}

// --- command line ------------------------------------------------------------------------------------

const BUILDERS: Record<string, (outDir: string) => string[]> = {
  archives: (outDir) => builtTargets().map((target) => buildArchive(target, { outDir })),
  deb: (outDir) => (['x64', 'arm64'] as const).filter(hasSea).map((arch) => buildDeb({ arch, outDir })),
  rpm: (outDir) => (['x64', 'arm64'] as const).filter(hasSea).map((arch) => buildRpm({ arch, outDir })),
  msi: (outDir) => (existsSync(join(SEA_DIR, 'win-x64')) ? [buildMsi({ outDir })] : []),
  macos: (outDir) => (existsSync(join(SEA_DIR, 'darwin-x64')) ? [buildMacosSources({ outDir })] : []),
  freebsd: (outDir) => [buildFreebsdSources({ outDir })],
  // The server on the runtime the agent's Linux executables were made from (installers/server.ts).
  'server-deb': (outDir) => (['x64', 'arm64'] as const).filter(hasSea).map((arch) => buildServerDeb({ arch, outDir })),
  'server-rpm': (outDir) => (['x64', 'arm64'] as const).filter(hasSea).map((arch) => buildServerRpm({ arch, outDir })),
};

function hasSea(arch: LinuxArch): boolean {
  return existsSync(join(SEA_DIR, `linux-${arch}`, 'device-agent'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [outDir, ...kinds] = process.argv.slice(2);
  if (!outDir) throw new Error('usage: tsx installers/build.ts <out-dir> [archives deb rpm msi macos freebsd server-deb server-rpm]');
  for (const kind of kinds.length > 0 ? kinds : Object.keys(BUILDERS)) {
    const builder = BUILDERS[kind];
    if (!builder) throw new Error(`unknown artifact kind ${kind}`);
    for (const path of builder(resolve(outDir))) process.stdout.write(`${path}\n`);
  }
}

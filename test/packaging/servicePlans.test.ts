// `device-agent install --dry-run` and `uninstall --dry-run` on each of the four platforms (the
// platform injected with the hidden --platform option), run as the real CLI (dist/device-agent.cjs):
// exactly the expected files and commands, and nothing changed on this machine.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/device-agent.cjs', import.meta.url));
const NODE = process.execPath;
const TOKEN = 'ab'.repeat(48);
const work = mkdtempSync(join(tmpdir(), 'device-agent-plans-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function agent(args: readonly string[], options: { uid?: number; input?: string } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const env = { ...process.env, DEVICE_AGENT_STATE_DIR: '', DEVICE_AGENT_SERVER: '', DEVICE_AGENT_TOKEN: '', SUDO_USER: '' };
    for (const key of ['DEVICE_AGENT_STATE_DIR', 'DEVICE_AGENT_SERVER', 'DEVICE_AGENT_TOKEN', 'SUDO_USER'] as const) delete env[key];
    const child = execFile(
      NODE,
      [CLI, ...args],
      { env, ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

/** The numbered step lines of a dry run, without their numbers. */
function steps(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => /^ {2}\d+\. /.test(line))
    .map((line) => line.replace(/^ {2}\d+\. /, ''));
}

/** The text a dry run prints for one file. */
function fileText(stdout: string, path: string): string {
  const start = stdout.indexOf(`\n--- ${path}\n`);
  expect(start, `${path} is printed`).toBeGreaterThanOrEqual(0);
  const body = stdout.slice(start + path.length + 6);
  const end = body.indexOf('\n--- ');
  return end === -1 ? body : body.slice(0, end + 1);
}

const DEV_NOTE = `note: the service runs the script ${CLI} with the Node.js at ${NODE}`;

describe('install --dry-run', () => {
  it('linux: state directory, link handler, hardened unit, enable and restart', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'linux', '--no-enroll']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(steps(result.stdout)).toEqual([
      'create directory /var/lib/device-agent (mode 0700)',
      'create directory /usr/lib/device-agent (mode 0755)',
      'remove /usr/share/applications/device-agent-link.desktop',
      'write /usr/share/dbus-1/services/org.device_agent.LinkHandler.service (mode 0644)',
      'write /usr/share/applications/org.device_agent.LinkHandler.desktop (mode 0644)',
      'run update-desktop-database -q /usr/share/applications  (a failure here is not fatal)',
      'write /etc/systemd/system/device-agent.service (mode 0644)',
      'run systemctl daemon-reload',
      'run systemctl enable device-agent.service',
      'run systemctl restart device-agent.service',
    ]);
    expect(result.stdout).toContain(DEV_NOTE);
    expect(result.stdout).toContain('note: the service logs to the journal: journalctl -u device-agent');
    const unit = fileText(result.stdout, '/etc/systemd/system/device-agent.service');
    expect(unit).toContain(`ExecStart=${NODE} ${CLI} run --state-dir /var/lib/device-agent\n`);
    for (const directive of [
      'ProtectSystem=strict',
      'StateDirectory=device-agent',
      'NoNewPrivileges=yes',
      'PrivateTmp=yes',
      'Restart=on-failure',
    ]) {
      expect(unit).toContain(`${directive}\n`);
    }
    expect(unit).toMatch(/^CapabilityBoundingSet=CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_SETGID CAP_SETUID$/m);
    const desktopEntry = fileText(result.stdout, '/usr/share/applications/org.device_agent.LinkHandler.desktop');
    expect(desktopEntry).toContain('DBusActivatable=true\n');
    expect(desktopEntry).toContain(`Exec=${NODE} ${CLI} open-link --via-terminal %u\n`);
    expect(fileText(result.stdout, '/usr/share/dbus-1/services/org.device_agent.LinkHandler.service')).toContain(
      `[D-BUS Service]\nName=org.device_agent.LinkHandler\nExec=${NODE} ${CLI} open-link --dbus-service\n`,
    );
  });

  it('darwin: program, link-handler app, newsyslog, LaunchDaemon', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'darwin', '--no-enroll']);
    expect(result.code).toBe(0);
    const app = "'/Applications/Device Agent.app'";
    expect(steps(result.stdout)).toEqual([
      'create directory /Library/Application Support/device-agent (mode 0700)',
      'create directory /usr/local/libexec/device-agent (mode 0755)',
      'write /usr/local/libexec/device-agent/link-handler.applescript (mode 0644)',
      'remove /Applications/Device Agent.app and everything in it',
      `run osacompile -o ${app} /usr/local/libexec/device-agent/link-handler.applescript`,
      'write /Applications/Device Agent.app/Contents/Info.plist (mode 0644)',
      `run codesign --force --sign - ${app}`,
      `run /System/Library/Frameworks/CoreServices.framework/Frameworks/LaunchServices.framework/Support/lsregister -f ${app}  (a failure here is not fatal)`,
      'create directory /Library/Logs/device-agent (mode 0755)',
      'write /etc/newsyslog.d/device-agent.conf (mode 0644)',
      'write /Library/LaunchDaemons/org.device-agent.agent.plist (mode 0644)',
      'run launchctl bootout system/org.device-agent.agent  (a failure here is not fatal)',
      'run launchctl enable system/org.device-agent.agent',
      'run launchctl bootstrap system /Library/LaunchDaemons/org.device-agent.agent.plist',
    ]);
    expect(fileText(result.stdout, '/Library/LaunchDaemons/org.device-agent.agent.plist')).toContain(
      '\t\t<string>--state-dir</string>\n\t\t<string>/Library/Application Support/device-agent</string>',
    );
  });

  it('freebsd: rc.d script, syslog rule, newsyslog, rc.conf, restart', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'freebsd', '--no-enroll']);
    expect(result.code).toBe(0);
    expect(steps(result.stdout)).toEqual([
      'create directory /var/lib/device-agent (mode 0700)',
      'create directory /usr/local/libexec/device-agent (mode 0755)',
      'remove /usr/local/share/applications/device-agent-link.desktop',
      'write /usr/local/share/dbus-1/services/org.device_agent.LinkHandler.service (mode 0644)',
      'write /usr/local/share/applications/org.device_agent.LinkHandler.desktop (mode 0644)',
      'run update-desktop-database -q /usr/local/share/applications  (a failure here is not fatal)',
      'write /usr/local/etc/rc.d/device_agent (mode 0755)',
      'write /usr/local/etc/syslog.d/device-agent.conf (mode 0644)',
      'write /usr/local/etc/newsyslog.conf.d/device-agent.conf (mode 0644)',
      'run service syslogd reload',
      'run sysrc device_agent_enable=YES',
      'run service device_agent restart',
    ]);
    const script = fileText(result.stdout, '/usr/local/etc/rc.d/device_agent');
    expect(script).toContain(
      `command_args="-P \${pidfile} -R 10 -S -l daemon -s info -T device-agent ${NODE} ${CLI} run --state-dir \${device_agent_state_dir}"`,
    );
    expect(script).toContain(': ${device_agent_enable:="NO"}');
  });

  it('windows: ACL on the state directory, registry scheme, WinSW service with recovery actions', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'windows', '--no-enroll']);
    expect(result.code).toBe(0);
    const host = '"\\"C:\\Program Files\\device-agent\\device-agent-service.exe\\""';
    const settings = `binPath= ${host} start= auto DisplayName= "Device Agent"`;
    const key = 'HKLM\\Software\\Classes\\device-agent';
    expect(steps(result.stdout)).toEqual([
      'create directory C:\\ProgramData\\device-agent',
      'run icacls.exe C:\\ProgramData\\device-agent /inheritance:r /grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F /T /Q',
      'run net.exe stop device-agent  (a failure here is not fatal)',
      'create directory C:\\Program Files\\device-agent',
      `run reg.exe add ${key} /ve /t REG_SZ /d "URL:Device Agent enrollment link" /f`,
      `run reg.exe add ${key} /v "URL Protocol" /t REG_SZ /d "" /f`,
      `run reg.exe add ${key}\\DefaultIcon /ve /t REG_SZ /d ${NODE},0 /f`,
      `run reg.exe add ${key}\\shell\\open\\command /ve /t REG_SZ /d "\\"${NODE}\\" \\"${CLI}\\" open-link \\"%1\\"" /f`,
      'write C:\\Program Files\\device-agent\\device-agent-service.xml',
      `run sc.exe create device-agent ${settings}  (a failure here is not fatal)`,
      `run sc.exe config device-agent ${settings}`,
      'run sc.exe description device-agent "Device posture agent: reports this device to its Device Agent API server"',
      'run sc.exe failure device-agent reset= 86400 actions= restart/10000/restart/30000/restart/60000',
      'run sc.exe failureflag device-agent 1',
      'run net.exe start device-agent',
    ]);
    const config = fileText(result.stdout, 'C:\\Program Files\\device-agent\\device-agent-service.xml');
    expect(config).toContain('<startmode>Automatic</startmode>');
    expect(config).toContain(`<arguments>${CLI} run --state-dir C:\\ProgramData\\device-agent</arguments>`);
    expect(config).toContain('<log mode="roll-by-size">');
  });

  it('enrolls first when given a server and a token, and never prints the token', async () => {
    const tokenFile = join(work, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const stateDir = join(work, 'state-enroll');
    const result = await agent([
      'install',
      '--dry-run',
      '--platform',
      'linux',
      '--server',
      'https://agents.example.com',
      '--token-file',
      tokenFile,
      '--state-dir',
      stateDir,
    ]);
    expect(result.code).toBe(0);
    expect(steps(result.stdout).slice(0, 2)).toEqual([
      `create directory ${stateDir} (mode 0700)`,
      `enroll with https://agents.example.com (token from --token-file ${tokenFile})`,
    ]);
    expect(fileText(result.stdout, '/etc/systemd/system/device-agent.service')).toContain(`ReadWritePaths=${stateDir}\n`);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    expect(existsSync(stateDir), 'a dry run creates nothing').toBe(false);
  });

  it('reads the token from standard input (--token -)', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'darwin', '--server', 'https://agents.example.com', '--token', '-'], {
      input: TOKEN,
    });
    expect(result.code).toBe(0);
    expect(steps(result.stdout)[1]).toBe('enroll with https://agents.example.com (token from standard input)');
    expect(result.stdout).not.toContain(TOKEN);
  });

  it('enrolls with the enrollment secret from --enroll-secret-file, which stays where it is; a secret as a value is refused', async () => {
    const secret = `das_${'5e'.repeat(32)}`;
    const secretFile = join(work, 'enroll-secret');
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    const result = await agent([
      'install',
      '--dry-run',
      '--platform',
      'linux',
      '--server',
      'https://agents.example.com',
      '--enroll-secret-file',
      secretFile,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(steps(result.stdout)[1]).toBe(
      `enroll with https://agents.example.com (enrollment secret from --enroll-secret-file ${secretFile})`,
    );
    expect(result.stdout + result.stderr).not.toContain(secret);
    expect(readFileSync(secretFile, 'utf8')).toBe(`${secret}\n`);
    const asValue = await agent([
      'install',
      '--dry-run',
      '--platform',
      'linux',
      '--server',
      'https://agents.example.com',
      '--enroll-secret',
      secret,
    ]);
    expect(asValue.code).toBe(2);
    expect(asValue.stderr).toContain('an enrollment secret is not accepted as a command-line value');
    expect(asValue.stdout + asValue.stderr).not.toContain(secret);
  });
});

describe('install refuses, before doing anything', () => {
  it('without credentials in the state directory unless --no-enroll (exit 5)', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'linux', '--state-dir', join(work, 'empty')]);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /holds no enrollment: pass --server <url> with --enroll-secret-file <path>, --token-file <path> or --token - to enroll first, or --no-enroll/,
    );
    expect(result.stdout).toBe('');
  });

  it('a plain-http server that is not loopback, or a malformed token (exit 2, no token echoed)', async () => {
    const http = await agent(['install', '--dry-run', '--server', 'http://agents.example.com', '--token', '-'], { input: TOKEN });
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/plain http is allowed only for loopback hosts/);
    const malformed = await agent(['install', '--dry-run', '--server', 'https://agents.example.com', '--token', '-'], {
      input: 'xyz-not-a-token',
    });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).not.toContain('xyz-not-a-token');
  });

  it('--no-enroll together with a server (exit 2)', async () => {
    const result = await agent(['install', '--dry-run', '--no-enroll', '--server', 'https://agents.example.com', '--token', '-'], {
      input: TOKEN,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--no-enroll cannot be combined with --server');
  });

  it('another platform without --dry-run, and an unknown platform (exit 2)', async () => {
    const other = await agent(['install', '--platform', 'windows', '--no-enroll']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--platform windows only works with --dry-run');
    const unknown = await agent(['install', '--dry-run', '--platform', 'plan9', '--no-enroll']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown platform "plan9"');
  });

  it('a state directory an rc.d script cannot carry safely (exit 2)', async () => {
    const result = await agent(['install', '--dry-run', '--platform', 'freebsd', '--no-enroll', '--state-dir', '/var/db/device agent']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('an rc.d script cannot carry "/var/db/device agent" safely');
  });

  it.skipIf(process.getuid?.() !== 0)('without administrator rights (exit 2, nothing written)', async () => {
    const stateDir = join(work, 'state-nobody');
    const result = await agent(['install', '--no-enroll', '--state-dir', stateDir], { uid: 65534 });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('install changes the system service and needs administrator rights: re-run it with sudo');
    expect(existsSync(stateDir)).toBe(false);
    const uninstall = await agent(['uninstall', '--state-dir', stateDir], { uid: 65534 });
    expect(uninstall.code).toBe(2);
  });
});

describe('uninstall --dry-run', () => {
  const wipe = (dir: string) => [
    `unenroll from the server (best effort), then wipe the API key (secret store or file) and the queue of ${dir}`,
    `remove ${dir} and everything in it`,
  ];

  it('linux: service, link handler, then key and state', async () => {
    const result = await agent(['uninstall', '--dry-run', '--platform', 'linux']);
    expect(result.code).toBe(0);
    expect(steps(result.stdout)).toEqual([
      'run systemctl disable --now device-agent.service  (a failure here is not fatal)',
      'remove /etc/systemd/system/device-agent.service',
      'run systemctl daemon-reload  (a failure here is not fatal)',
      'run systemctl reset-failed device-agent.service  (a failure here is not fatal)',
      'remove /usr/share/applications/org.device_agent.LinkHandler.desktop',
      'remove /usr/share/dbus-1/services/org.device_agent.LinkHandler.service',
      'remove /usr/share/applications/device-agent-link.desktop',
      'run update-desktop-database -q /usr/share/applications  (a failure here is not fatal)',
      ...wipe('/var/lib/device-agent'),
    ]);
    expect(result.stdout).toContain('note: the program itself stays (/usr/lib/device-agent/device-agent and /usr/bin/device-agent)');
  });

  it('darwin', async () => {
    const result = await agent(['uninstall', '--dry-run', '--platform', 'darwin']);
    expect(steps(result.stdout)).toEqual([
      'run launchctl bootout system/org.device-agent.agent  (a failure here is not fatal)',
      'remove /Library/LaunchDaemons/org.device-agent.agent.plist',
      'remove /etc/newsyslog.d/device-agent.conf',
      "run /System/Library/Frameworks/CoreServices.framework/Frameworks/LaunchServices.framework/Support/lsregister -u '/Applications/Device Agent.app'  (a failure here is not fatal)",
      'remove /Applications/Device Agent.app and everything in it',
      'remove /usr/local/libexec/device-agent/link-handler.applescript',
      ...wipe('/Library/Application Support/device-agent'),
    ]);
  });

  it('freebsd', async () => {
    const result = await agent(['uninstall', '--dry-run', '--platform', 'freebsd']);
    expect(steps(result.stdout)).toEqual([
      'run service device_agent onestop  (a failure here is not fatal)',
      'run sysrc -x device_agent_enable  (a failure here is not fatal)',
      'remove /usr/local/etc/rc.d/device_agent',
      'remove /usr/local/etc/syslog.d/device-agent.conf',
      'remove /usr/local/etc/newsyslog.conf.d/device-agent.conf',
      'run service syslogd reload  (a failure here is not fatal)',
      'remove /usr/local/share/applications/org.device_agent.LinkHandler.desktop',
      'remove /usr/local/share/dbus-1/services/org.device_agent.LinkHandler.service',
      'remove /usr/local/share/applications/device-agent-link.desktop',
      'run update-desktop-database -q /usr/local/share/applications  (a failure here is not fatal)',
      ...wipe('/var/lib/device-agent'),
    ]);
  });

  it('windows', async () => {
    const result = await agent(['uninstall', '--dry-run', '--platform', 'windows']);
    expect(steps(result.stdout)).toEqual([
      'run net.exe stop device-agent  (a failure here is not fatal)',
      'run sc.exe delete device-agent  (a failure here is not fatal)',
      'remove C:\\Program Files\\device-agent\\device-agent-service.xml',
      'run reg.exe delete HKLM\\Software\\Classes\\device-agent /f  (a failure here is not fatal)',
      ...wipe('C:\\ProgramData\\device-agent'),
    ]);
  });
});

// The service and link-handler files themselves, checked by the tools that read them where they run
// here (systemd-analyze, desktop-file-validate, sh -n) and by parsing them otherwise (launchd and
// Info.plist with the project's plist parser).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePlist, type PlistDict } from '../../checks/darwin/plist';
import { appInfoPlist, linkHandlerScript } from '../../src/linkHandler/darwin';
import { schemeRegistryValues } from '../../src/linkHandler/windows';
import { dbusServiceFile, desktopEntry, DESKTOP_FILE_NAME } from '../../src/linkHandler/xdg';
import { launchdPlist, LOG_FILE, newsyslogConf } from '../../src/service/launchd';
import { rcScript } from '../../src/service/rcd';
import { systemdUnit } from '../../src/service/systemd';
import { winswConfig } from '../../src/service/windows';
import { requireTools } from '../support/requireTools';

const work = mkdtempSync(join(tmpdir(), 'device-agent-service-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const verified = requireTools(['systemd-analyze'], 'checked by systemd-analyze verify');
const linkHandlerValid = requireTools(['desktop-file-validate'], 'passes desktop-file-validate');

/** A stand-in for the agent: systemd-analyze verify insists that ExecStart names an executable. */
function stubProgram(name: string): string {
  const path = join(work, name);
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
}

function dict(xml: string): PlistDict {
  const parsed = parsePlist(xml);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value as PlistDict;
}

describe('systemd unit', () => {
  describe.skipIf(verified.skip)(verified.title, () => {
    const verify = (unit: string, name: string) => {
      const dir = mkdtempSync(join(work, 'unit-'));
      const file = join(dir, name);
      writeFileSync(file, unit);
      // Warnings (unknown keys, bad values) leave the exit code at 0: any output is a failure.
      const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
      return { code: result.status, output: `${result.stdout}${result.stderr}` };
    };

    it('passes systemd-analyze verify without a word', () => {
      const unit = systemdUnit({ program: [stubProgram('device-agent')], stateDir: '/var/lib/device-agent', programDir: work });
      expect(verify(unit, 'device-agent.service')).toEqual({ code: 0, output: '' });
    });

    it('quotes and escapes a state directory with a space, % and $', () => {
      const stateDir = '/srv/agent state/%h$HOME';
      const unit = systemdUnit({ program: [stubProgram('agent with space')], stateDir, programDir: work });
      expect(unit).toContain('ReadWritePaths="/srv/agent state/%%h$$HOME"');
      expect(unit).not.toContain('StateDirectory=');
      expect(verify(unit, 'device-agent.service')).toEqual({ code: 0, output: '' });
    });

    it('the check itself catches a typo', () => {
      const unit = systemdUnit({ program: [stubProgram('device-agent')], stateDir: '/var/lib/device-agent', programDir: work });
      expect(verify(unit.replace('NoNewPrivileges=', 'NoNewPrivilege='), 'device-agent.service').output).toContain(
        "Unknown key 'NoNewPrivilege'",
      );
    });
  });

  it('uses StateDirectory= for a directory under /var/lib, with owner-only permissions', () => {
    const unit = systemdUnit({
      program: ['/usr/lib/device-agent/device-agent'],
      stateDir: '/var/lib/agents/one',
      programDir: '/usr/lib/device-agent',
    });
    expect(unit).toContain('StateDirectory=agents/one\nStateDirectoryMode=0700\n');
    expect(unit).toContain('UMask=0077\n');
  });
});

describe('launchd', () => {
  const spec = {
    program: ['/usr/local/libexec/device-agent/device-agent'],
    stateDir: '/Library/Application Support/device-agent',
    programDir: '/usr/local/libexec/device-agent',
  };

  it('LaunchDaemon plist: label, arguments, RunAtLoad, KeepAlive, logs under /Library/Logs', () => {
    const job = dict(launchdPlist(spec));
    expect(job).toEqual({
      Label: 'org.device-agent.agent',
      ProgramArguments: ['/usr/local/libexec/device-agent/device-agent', 'run', '--state-dir', '/Library/Application Support/device-agent'],
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 10,
      ProcessType: 'Background',
      Umask: 63,
      StandardOutPath: '/Library/Logs/device-agent/device-agent.log',
      StandardErrorPath: '/Library/Logs/device-agent/device-agent.log',
    });
  });

  it('escapes XML in paths', () => {
    const job = dict(launchdPlist({ ...spec, stateDir: '/Volumes/R&D <agents>' }));
    expect((job.ProgramArguments as string[])[3]).toBe('/Volumes/R&D <agents>');
  });

  it('newsyslog entry names the log file with owner, mode, count, size and flags', () => {
    const entry = newsyslogConf()
      .split('\n')
      .find((line) => line.startsWith('/'))!;
    expect(entry.split(/\s+/)).toEqual([LOG_FILE, 'root:wheel', '640', '5', '10240', '*', 'NZ']);
  });

  it('link-handler app: URL scheme in Info.plist, applet executable, no Dock icon', () => {
    const info = dict(appInfoPlist());
    expect(info.CFBundleURLTypes).toEqual([
      { CFBundleURLName: 'org.device-agent.link-handler.enrollment', CFBundleURLSchemes: ['device-agent'] },
    ]);
    expect(info).toMatchObject({ CFBundleExecutable: 'applet', CFBundlePackageType: 'APPL', LSUIElement: true });
  });

  it('the AppleScript handler never puts the link on a command line', () => {
    const script = linkHandlerScript({
      program: ['/usr/local/libexec/device-agent/device-agent'],
      programDir: '/usr/local/libexec/device-agent',
    });
    const shellLines = script.split('\n').filter((line) => line.includes('do shell script'));
    expect(shellLines.length).toBeGreaterThanOrEqual(3);
    for (const line of shellLines) expect(line).not.toMatch(/linkText/);
    expect(script).toContain('display dialog "Enroll this Mac with the server"');
    expect(script).toContain('property agentCommand : "/usr/local/libexec/device-agent/device-agent open-link"');
    expect(script).toMatch(/--yes --link-file " & quoted form of linkFile with administrator privileges/);
  });
});

describe('FreeBSD rc.d', () => {
  it('is valid sh, runs the agent under daemon(8) with restart and syslog', () => {
    const script = rcScript({
      program: ['/usr/local/bin/node', '/usr/local/libexec/device-agent/device-agent.cjs'],
      stateDir: '/var/lib/device-agent',
      programDir: '/usr/local/libexec/device-agent',
    });
    const file = join(work, 'device_agent');
    writeFileSync(file, script);
    expect(spawnSync('sh', ['-n', file]).status).toBe(0);
    expect(script).toContain('rcvar="device_agent_enable"');
    expect(script).toContain('command="/usr/sbin/daemon"');
    expect(script).toMatch(
      /command_args="-P \$\{pidfile\} -R 10 -S -l daemon -s info -T device-agent \/usr\/local\/bin\/node \/usr\/local\/libexec\/device-agent\/device-agent.cjs run --state-dir \$\{device_agent_state_dir\}"/,
    );
  });
});

describe('Windows', () => {
  it('WinSW configuration: the agent, automatic start, restarts, rotated logs; XML escaped', () => {
    const config = winswConfig({
      program: ['C:\\Program Files\\device-agent\\device-agent.exe'],
      stateDir: 'C:\\Data\\R&D agent',
      programDir: 'C:\\Program Files\\device-agent',
    });
    expect(config.split('\r\n')).toEqual([
      '<service>',
      '  <id>device-agent</id>',
      '  <name>Device Agent</name>',
      '  <description>Device posture agent: reports this device to its Device Agent API server</description>',
      '  <executable>C:\\Program Files\\device-agent\\device-agent.exe</executable>',
      '  <arguments>run --state-dir &quot;C:\\Data\\R&amp;D agent&quot;</arguments>',
      '  <startmode>Automatic</startmode>',
      '  <stoptimeout>15 sec</stoptimeout>',
      '  <onfailure action="restart" delay="10 sec"/>',
      '  <onfailure action="restart" delay="30 sec"/>',
      '  <onfailure action="restart" delay="60 sec"/>',
      '  <resetfailure>1 day</resetfailure>',
      '  <logpath>C:\\Data\\R&amp;D agent\\logs</logpath>',
      '  <log mode="roll-by-size">',
      '    <sizeThreshold>10240</sizeThreshold>',
      '    <keepFiles>5</keepFiles>',
      '  </log>',
      '</service>',
      '',
    ]);
  });

  it('URL scheme registry values quote the program (it may contain spaces)', () => {
    const values = schemeRegistryValues({
      program: ['C:\\Program Files\\device-agent\\device-agent.exe'],
      programDir: 'C:\\Program Files\\device-agent',
    });
    expect(values).toContainEqual(['HKLM\\Software\\Classes\\device-agent', 'URL Protocol', '']);
    expect(values).toContainEqual([
      'HKLM\\Software\\Classes\\device-agent\\shell\\open\\command',
      null,
      '"C:\\Program Files\\device-agent\\device-agent.exe" open-link "%1"',
    ]);
  });
});

describe('desktop entry', () => {
  const parse = (text: string) =>
    Object.fromEntries(
      text
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );

  it('is D-Bus activatable; its Exec= fallback passes the link as %u to the agent, which refuses it unless the session opted in', () => {
    const entry = parse(desktopEntry({ program: ['/usr/lib/device-agent/device-agent'], programDir: '/usr/lib/device-agent' }));
    expect(entry).toMatchObject({
      Type: 'Application',
      DBusActivatable: 'true',
      Exec: '/usr/lib/device-agent/device-agent open-link --via-terminal %u',
      Terminal: 'false',
      NoDisplay: 'true',
      MimeType: 'x-scheme-handler/device-agent;',
    });
  });

  it('quotes a program path with spaces and escapes % as the specification says', () => {
    const entry = parse(desktopEntry({ program: ['/opt/device agent/100%/device-agent'], programDir: '/opt' }));
    expect(entry.Exec).toBe('"/opt/device agent/100%%/device-agent" open-link --via-terminal %u');
  });

  it('its D-Bus service file starts the agent in the mode that claims the name, the program quoted as a shell would', () => {
    expect(dbusServiceFile({ program: ["/opt/device agent/it's/device-agent"], programDir: '/opt' })).toBe(
      "[D-BUS Service]\nName=org.device_agent.LinkHandler\nExec='/opt/device agent/it'\\''s/device-agent' open-link --dbus-service\n",
    );
  });

  // DBusActivatable=true: the validator also requires the file name to be the application id.
  it.skipIf(linkHandlerValid.skip)(linkHandlerValid.title, () => {
    const file = join(work, DESKTOP_FILE_NAME);
    writeFileSync(file, desktopEntry({ program: ['/opt/device agent/device-agent'], programDir: '/opt' }));
    expect(execFileSync('desktop-file-validate', [file], { encoding: 'utf8' })).toBe('');
  });
});

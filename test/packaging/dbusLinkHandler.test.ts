// The desktop link handler on a real session bus (dbus-run-session, which reads service files from
// $XDG_DATA_DIRS/dbus-1/services). GLib's own launcher (GDesktopAppInfo: what GNOME, Firefox and
// `gio open` use) opens a link with the installed .desktop entry; the bus starts the agent from the
// installed service file; the link arrives in org.freedesktop.Application.Open and the agent hands it
// to a terminal, which enrolls against the real reference server. Every process's command line is
// sampled throughout: none ever holds the token.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTools } from '../support/requireTools';
import { agentEnv, AGENT_BIN, runAgent, tempDir } from '../support/agent';
import { readJson } from '../support/json';
import { startServer, type RunningServer } from '../support/server';
import type { EnrollmentRecord } from '../../src/agent/state';
import { OBJECT_PATH } from '../../src/linkHandler/dbusApplication';
import { XDG_APP_ID } from '../../src/linkHandler/types';
import { dbusServiceFile, desktopEntry, xdgLinkHandlerFiles } from '../../src/linkHandler/xdg';

const SYSTEM_PYTHON = '/usr/bin/python3';
const onBus = requireTools(['dbus-run-session', 'gdbus'], 'the D-Bus link handler on a real session bus');
/** python3-gi: GLib's launcher, driven from Python; the link comes on standard input, never argv. */
const hasGio = existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, ['-c', 'import gi']).status === 0;
// python3-gi is a module, not a tool on the PATH: CI (which installs it) must not skip for it either.
if (!hasGio && process.env.DEVICE_AGENT_REQUIRE_ALL_TOOLS === '1')
  throw new Error('python3-gi is not installed (apt-get install python3-gi)');
const canRun = !onBus.skip && hasGio;

let server: RunningServer;
beforeAll(async () => {
  if (canRun) server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const link = (serverUrl: string, token: string) => `device-agent://enroll?server=${encodeURIComponent(serverUrl)}&token=${token}`;

/** Reads a line (the link) from standard input, launches it with the .desktop entry, exits at end of input. */
const LAUNCHER = `import sys
import gi
gi.require_version('Gio', '2.0')
from gi.repository import Gio
link = sys.stdin.readline().strip()
print('launched', Gio.DesktopAppInfo.new_from_filename(sys.argv[1]).launch_uris([link], None), flush=True)
Gio.bus_get_sync(Gio.BusType.SESSION, None).flush_sync(None)
sys.stdin.read()
`;

interface Desktop {
  dir: string;
  desktopFile: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The installed files under a temporary share directory, and a stand-in terminal emulator that
 * records its arguments, the command line of the process that started it, and then runs the command
 * it was given (confirmed with --yes: the question itself is tested in linkHandler.test.ts; the key in
 * the state directory's file, as for the service).
 */
function desktop(stateDir: string, withTerminal = true): Desktop {
  const dir = tempDir();
  const share = join(dir, 'share');
  const files = xdgLinkHandlerFiles(share);
  const spec = { program: [process.execPath, AGENT_BIN], programDir: dirname(AGENT_BIN) };
  for (const [path, content] of [
    [files.desktopFile, desktopEntry(spec)],
    [files.serviceFile, dbusServiceFile(spec)],
  ] as const) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  if (withTerminal) {
    writeFileSync(
      join(bin, 'x-terminal-emulator'),
      `#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline > '${dir}/terminal-parent'\nprintf '%s\\n' "$@" > '${dir}/terminal-argv'\n` +
        `env > '${dir}/terminal-env'\nshift\n"$@" --yes --state-dir '${stateDir}' --keystore file > '${dir}/terminal-output' 2>&1\necho $? > '${dir}/terminal-done'\n`,
      { mode: 0o755 },
    );
  }
  const runtime = join(dir, 'runtime');
  mkdirSync(runtime, { mode: 0o700 });
  return {
    dir,
    desktopFile: files.desktopFile,
    env: agentEnv({ PATH: `${bin}:/usr/bin:/bin`, XDG_DATA_DIRS: share, XDG_RUNTIME_DIR: runtime }),
  };
}

/** Every process's command line now, as text. */
function commandLines(): string[] {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' '));
    } catch {
      // the process ended meanwhile
    }
  }
  return lines;
}

/** The private copies of links in the runtime directory. */
const linkCopies = (env: NodeJS.ProcessEnv) => readdirSync(env.XDG_RUNTIME_DIR!).filter((name) => name.startsWith('device-agent-link-'));

async function waitFor(path: string, timeoutMs: number): Promise<void> {
  for (const start = Date.now(); !existsSync(path); await sleep(20)) {
    if (Date.now() - start > timeoutMs) throw new Error(`${path} did not appear`);
  }
}

describe.skipIf(!canRun)(hasGio ? onBus.title : `${onBus.title}: python3-gi is not installed (apt-get install python3-gi)`, () => {
  it('a link opened by GLib’s launcher arrives over D-Bus and enrolls; no command line ever holds the token', async () => {
    const device = await server.createDevice({ org: 'dbus' });
    const token = device.enrollment_token;
    const stateDir = join(tempDir(), 'state');
    const { dir, desktopFile, env } = desktop(stateDir);
    const launcherScript = join(dir, 'launch.py');
    writeFileSync(launcherScript, LAUNCHER);

    const session = spawn('dbus-run-session', ['--', SYSTEM_PYTHON, launcherScript, desktopFile], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    session.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    session.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => session.once('exit', resolve));

    // Sample every command line from before the link is given until the session has ended.
    let sampling = true;
    let sweeps = 0;
    const holdingToken: string[] = [];
    const seen = new Set<string>();
    const sampler = (async () => {
      while (sampling) {
        for (const line of commandLines()) {
          if (line.includes(token)) holdingToken.push(line);
          seen.add(line);
        }
        sweeps += 1;
        await nextTurn();
      }
    })();

    try {
      session.stdin.write(`${link(server.url, token)}\n`);
      await waitFor(join(dir, 'terminal-done'), 30_000);
    } finally {
      session.stdin.end();
      await exited;
      sampling = false;
      await sampler;
    }

    expect(output).toContain('launched True');
    expect(holdingToken).toEqual([]);
    // The sampler saw the processes that held the link in memory: the D-Bus service and the terminal's agent.
    expect(sweeps).toBeGreaterThan(20);
    expect([...seen].some((line) => line.startsWith('device-agent open-link --dbus-service'))).toBe(true);
    expect([...seen].some((line) => line.includes('open-link --consume-link-file --link-file'))).toBe(true);
    // The terminal was started by the agent the bus activated, not by the Exec= fallback.
    expect(readFileSync(join(dir, 'terminal-parent'), 'utf8').trim()).toBe('device-agent open-link --dbus-service');
    expect(readFileSync(join(dir, 'terminal-done'), 'utf8').trim(), readFileSync(join(dir, 'terminal-output'), 'utf8')).toBe('0');
    expect(readFileSync(join(dir, 'terminal-output'), 'utf8')).toContain(`Enrolled this device with ${server.url}.`);
    expect(readJson<EnrollmentRecord>(join(stateDir, 'enrollment.json')).state).toBe('enrolled');
    // This enrollment spent the one-time token: it enrolls nothing else now.
    const again = join(dir, 'again');
    writeFileSync(again, link(server.url, token), { mode: 0o600 });
    const spent = await runAgent(['open-link', '--yes', '--link-file', again, '--state-dir', join(dir, 'other-state')]);
    expect(spent.code).toBe(3);
    expect(spent.stderr).toContain('the server refused the enrollment token');
    // The private copy of the link was consumed.
    expect(linkCopies(env)).toEqual([]);
  }, 60_000);

  /** Runs a shell script on a fresh session bus of `desktop`; its output. */
  function onBus(script: string, env: NodeJS.ProcessEnv): string {
    const result = spawnSync('dbus-run-session', ['--', 'sh', '-c', script], { env, encoding: 'utf8', timeout: 60_000 });
    return result.stdout;
  }
  const gdbusCall = (method: string, ...args: string[]) =>
    [
      'gdbus',
      'call',
      '--session',
      '--dest',
      XDG_APP_ID,
      '--object-path',
      OBJECT_PATH,
      '--method',
      `org.freedesktop.Application.${method}`,
      ...args,
    ]
      .map((part) => (part.includes(' ') || /[[\]{}<>'"]/.test(part) ? `'${part.replace(/'/g, `'\\''`)}'` : part))
      .join(' ') + ' 2>&1';

  it('answers Activate, ActivateAction, Introspect as the specification says; Open passes the launcher’s activation token on', async () => {
    const { dir, env } = desktop(join(tempDir(), 'state'));
    const bogus = link('https://agents.example.com', 'c'.repeat(96));
    const output = onBus(
      [
        gdbusCall('Activate', '{}'),
        gdbusCall('ActivateAction', 'refresh', '[]', '{}'),
        `gdbus introspect --session --dest ${XDG_APP_ID} --object-path ${OBJECT_PATH} 2>&1`,
        gdbusCall('Open', `['${bogus}']`, `{'activation-token': <'token-from-the-launcher'>, 'other': <(1, [2.5])>}`),
      ].join('; '),
      env,
    );
    expect(output).toContain('()\n'); // Activate, then Open: empty replies
    expect(output).toContain('org.freedesktop.DBus.Error.InvalidArgs: no action refresh');
    expect(output).toMatch(/Open\(in {2}as uris,\s+in {2}a\{sv\} platform_data\);/);
    await waitFor(join(dir, 'terminal-done'), 30_000);
    expect(readFileSync(join(dir, 'terminal-env'), 'utf8')).toContain('XDG_ACTIVATION_TOKEN=token-from-the-launcher\n');
  }, 60_000);

  it('without a terminal emulator, Open fails with the reason and leaves no copy of the link', () => {
    const { env } = desktop(join(tempDir(), 'state'), false);
    const output = onBus(gdbusCall('Open', `['${link('https://agents.example.com', 'd'.repeat(96))}']`, '{}'), env);
    expect(output).toContain('org.freedesktop.DBus.Error.Failed: no terminal emulator found');
    expect(output).not.toContain('d'.repeat(96));
    expect(linkCopies(env)).toEqual([]);
  }, 60_000);

  it('--dbus-service takes no link on its command line (exit 2)', async () => {
    const result = await runAgent(['open-link', '--dbus-service', link('https://agents.example.com', 'e'.repeat(96))]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('device-agent: --dbus-service takes links over D-Bus only\n');
  });
});

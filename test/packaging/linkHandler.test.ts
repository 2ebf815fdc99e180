// `device-agent open-link`: what the registered link handler runs. It shows the server origin and
// asks (on a real pseudo-terminal, made by script(1)) before enrolling against the real reference
// server; the link never shows in the process list, an output or a log.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnv, AGENT_BIN, runAgent, tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { startServer, type RunningServer } from '../support/server';
import type { EnrollmentRecord } from '../../src/agent/state';
import { readJson } from '../support/json';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const link = (serverUrl: string, token: string) => `device-agent://enroll?server=${encodeURIComponent(serverUrl)}&token=${token}`;
/** A private file holding the link, as the D-Bus handler and the macOS applet hand it over. */
function linkFile(text: string): string {
  const file = join(tempDir(), 'link');
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}
/** The old form, a link as an argument, which Linux refuses unless the session opts in. */
const OLD_FORM = { DEVICE_AGENT_ALLOW_LINK_ARGUMENT: '1' };
const terminal = requireTools(['script'], 'open-link on a pseudo-terminal (the two tests typing at its prompt)');

/** Runs open-link on a pseudo-terminal (script -e), typing `typed`. */
function onTerminal(args: string[], typed: string, env: NodeJS.ProcessEnv): { code: number | null; output: string } {
  const command = [process.execPath, AGENT_BIN, 'open-link', ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { input: typed, env, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, output: result.stdout };
}

describe('open-link', () => {
  it('--describe prints the server origin and nothing else; the link file stays', async () => {
    const file = join(tempDir(), 'link');
    writeFileSync(file, `${link('https://agents.example.com:8443', 'a'.repeat(96))}\n`, { mode: 0o600 });
    const result = await runAgent(['open-link', '--describe', '--link-file', file]);
    expect(result).toMatchObject({ code: 0, stdout: 'https://agents.example.com:8443\n', stderr: '' });
    expect(existsSync(file)).toBe(true);
  });

  it('refuses a malformed link or a link to plain http without echoing the token (exit 2)', async () => {
    const token = 'b'.repeat(96);
    for (const bad of [link('http://agents.example.com', token), `device-agent://other?server=x&token=${token}`]) {
      const result = await runAgent(['open-link', '--describe', bad], { env: agentEnv(OLD_FORM) });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^device-agent: invalid/);
      expect(result.stdout + result.stderr).not.toContain(token);
    }
  });

  it('never enrolls without a confirmation: no terminal and no --yes is refused (exit 2)', async () => {
    const device = await server.createDevice();
    const stateDir = join(tempDir(), 'state');
    const result = await runAgent([
      'open-link',
      '--link-file',
      linkFile(link(server.url, device.enrollment_token)),
      '--state-dir',
      stateDir,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('opening an enrollment link needs your confirmation');
    expect(existsSync(stateDir)).toBe(false);
    expect((await server.showDevice(device.device_id)).state).toBe('PENDING');
  });

  it('refuses a link given as an argument (exit 2), from a shell or the desktop’s Exec= fallback: no terminal, no file, the token unspent', async () => {
    const device = await server.createDevice();
    const bin = tempDir();
    const runtime = tempDir();
    const recorded = join(tempDir(), 'terminal-argv');
    writeFileSync(join(bin, 'x-terminal-emulator'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${recorded}'\n`, { mode: 0o755 });
    const env = agentEnv({ PATH: `${bin}:/usr/bin:/bin`, XDG_RUNTIME_DIR: runtime });
    const enrollmentLink = link(server.url, device.enrollment_token);
    for (const args of [[enrollmentLink], ['--yes', enrollmentLink], ['--describe', enrollmentLink], ['--via-terminal', enrollmentLink]]) {
      const result = await runAgent(['open-link', ...args, '--state-dir', join(tempDir(), 'state')], { env });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        'device-agent: an enrollment link is not accepted as an argument: other local users can read it in the process list and spend its token first. Nothing was sent.',
      );
      expect(result.stderr).toContain('run device-agent enroll --link-file <file>');
      expect(result.stderr).not.toContain(device.enrollment_token);
    }
    expect(existsSync(recorded)).toBe(false);
    expect(readdirSync(runtime)).toEqual([]);
    expect((await server.showDevice(device.device_id)).state).toBe('PENDING');
  });

  it.skipIf(terminal.skip)('shows the server and asks; "n" sends nothing, "y" enrolls', async () => {
    const device = await server.createDevice({ org: 'links' });
    const stateDir = join(tempDir(), 'state');
    const args = ['--link-file', linkFile(link(server.url, device.enrollment_token)), '--state-dir', stateDir];

    const declined = onTerminal(args, 'n\n', agentEnv());
    expect(declined.code).toBe(0);
    expect(declined.output).toContain(`This link enrolls this device with the server\r\n\r\n    ${server.url}\r\n`);
    expect(declined.output).toContain('Enroll this device? [y/N]');
    expect(declined.output).toContain('Not enrolled: nothing was sent.');
    expect(existsSync(stateDir)).toBe(false);

    const accepted = onTerminal(args, 'y\n\n', agentEnv());
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain(`Enrolled this device with ${server.url}.`);
    expect(accepted.output).toContain('Press Enter to close.');
    expect(accepted.output).not.toContain(device.enrollment_token);
    // Enrolled as root for a service: the key is in the state directory's key file.
    expect(JSON.parse(readFileSync(join(stateDir, 'enrollment.json'), 'utf8'))).toMatchObject({
      state: 'enrolled',
      server_url: server.url,
      keystore: 'file',
    });
  });

  it.skipIf(terminal.skip)('a refused token is reported on the terminal before it closes (exit 3)', () => {
    const stateDir = join(tempDir(), 'state');
    const result = onTerminal(['--link-file', linkFile(link(server.url, 'e'.repeat(96))), '--state-dir', stateDir], 'y\n\n', agentEnv());
    expect(result.code).toBe(3);
    expect(result.output).toContain('the server refused the enrollment token');
    expect(result.output).toContain('Press Enter to close.');
    expect(result.output).not.toContain('e'.repeat(96));
  });

  it('--yes --link-file enrolls and deletes the file (the elevated step)', async () => {
    const device = await server.createDevice({ org: 'elevated' });
    const dir = tempDir();
    const file = join(dir, 'link');
    writeFileSync(file, link(server.url, device.enrollment_token), { mode: 0o600 });
    const result = await runAgent(['open-link', '--yes', '--link-file', file, '--state-dir', join(dir, 'state')]);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(result.stdout + result.stderr).not.toContain(device.enrollment_token);
  });

  it('a link given as an argument anyway (DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1) is gone from the process list while the agent works', async () => {
    // A server that accepts and never answers keeps the agent waiting long enough to look at it.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const token = 'f'.repeat(96);
    const child = spawn(
      process.execPath,
      [AGENT_BIN, 'open-link', '--yes', link(`http://127.0.0.1:${port}`, token), '--state-dir', join(tempDir(), 'state')],
      {
        env: agentEnv(OLD_FORM),
        stdio: 'ignore',
      },
    );
    try {
      for (let i = 0; i < 100 && sockets.length === 0; i += 1) await sleep(50);
      expect(sockets.length, 'the agent connected').toBeGreaterThan(0);
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
      expect(cmdline.replace(/\0+$/, '')).toMatch(/^device-agent open-link --yes --state-dir \S+$/);
      expect(cmdline).not.toContain(token);
    } finally {
      child.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('from the desktop’s Exec= fallback, opted into: only the agent gets the link as an argument; the terminal it opens gets a private file', async () => {
    const device = await server.createDevice({ org: 'desktop' });
    const bin = tempDir();
    const runtime = tempDir();
    const recorded = join(tempDir(), 'terminal-argv');
    // The desktop's terminal, recorded: what it was started with (one argument per line).
    writeFileSync(join(bin, 'x-terminal-emulator'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${recorded}'\n`, { mode: 0o755 });
    const env = agentEnv({ PATH: `${bin}:/usr/bin:/bin`, XDG_RUNTIME_DIR: runtime, ...OLD_FORM });
    const enrollmentLink = link(server.url, device.enrollment_token);
    const result = await runAgent(['open-link', '--via-terminal', enrollmentLink], { env });
    expect(result.code, result.stderr).toBe(0);
    for (let i = 0; i < 100 && !existsSync(recorded); i += 1) await sleep(50);
    const argv = readFileSync(recorded, 'utf8').trimEnd().split('\n');
    expect(argv.join(' ')).not.toContain(device.enrollment_token);
    expect(argv.slice(0, 1)).toEqual(['-e']);
    expect(argv.slice(-4, -1)).toEqual(['open-link', '--consume-link-file', '--link-file']);
    const file = argv.at(-1)!;
    expect(file.startsWith(`${runtime}/device-agent-link-`)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(enrollmentLink);

    // What the terminal runs (confirmed here with --yes: the question itself is tested above) enrolls and consumes the file.
    const stateDir = join(tempDir(), 'state');
    const inTerminal = await runAgent([...argv.slice(argv.indexOf('open-link')), '--yes', '--state-dir', stateDir], { env });
    expect(inTerminal.code, inTerminal.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(readJson<EnrollmentRecord>(join(stateDir, 'enrollment.json')).state).toBe('enrolled');
  });

  it('from the desktop without any terminal emulator: exit 2, and no link file is left', async () => {
    const runtime = tempDir();
    const result = await runAgent(['open-link', '--via-terminal', link(server.url, 'd'.repeat(96))], {
      env: agentEnv({ PATH: tempDir(), XDG_RUNTIME_DIR: runtime, ...OLD_FORM }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no terminal emulator found');
    expect(result.stderr).not.toContain('d'.repeat(96));
    expect(readdirSync(runtime)).toEqual([]);
  });
});

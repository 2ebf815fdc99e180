// The enrollment link and token never sit in the process list: read from standard input or a file
// (--link-file, --token-file, --token -); a link as an argument is refused unless
// DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1, and arguments given anyway are wiped from /proc/<pid>/cmdline by
// the process title set before any other module loads.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LINK_SCHEME } from '../../src/protocol/schemas';
import { AGENT_BIN, agentEnv, runAgent, tempDir } from '../support/agent';
import { common, expectNoSecrets, expectUserError, serverAccepts, stateDir, storedKey, useServer } from './cliHelpers';

const running = useServer();
const linkFor = (server: string, token: string) => `${LINK_SCHEME}://enroll?server=${encodeURIComponent(server)}&token=${token}`;

/** Runs the agent against a server that accepts and never answers, and returns its cmdline while it waits. */
async function cmdlineWhileWaiting(args: (serverUrl: string) => string[], env: NodeJS.ProcessEnv = agentEnv()): Promise<string> {
  const sockets: Socket[] = [];
  const silent: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  const child = spawn(process.execPath, [AGENT_BIN, ...args(url)], { env, stdio: 'ignore' });
  try {
    for (let i = 0; i < 200 && sockets.length === 0; i += 1) await sleep(50);
    expect(sockets.length, 'the agent connected').toBeGreaterThan(0);
    return readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').replace(/\0+$/, '');
  } finally {
    child.kill('SIGKILL');
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
}

describe.skipIf(process.platform !== 'linux')('the link and the token are not in the process list', () => {
  it('a link given as the argument (DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1) is wiped from /proc/<pid>/cmdline while enroll works', async () => {
    const token = 'a'.repeat(96);
    const dir = stateDir();
    const cmdline = await cmdlineWhileWaiting(
      (url) => ['enroll', linkFor(url, token), ...common(dir)],
      agentEnv({ DEVICE_AGENT_ALLOW_LINK_ARGUMENT: '1' }),
    );
    expect(cmdline).toBe(`device-agent enroll --state-dir ${dir} --keystore file`);
  });

  it('a token given with --token is wiped too', async () => {
    const token = 'b'.repeat(96);
    const dir = stateDir();
    const cmdline = await cmdlineWhileWaiting((url) => ['enroll', '--server', url, '--token', token, ...common(dir)]);
    expect(cmdline).not.toContain(token);
    expect(cmdline).toMatch(/^device-agent enroll --server http:\/\/127\.0\.0\.1:\d+ --token --state-dir /);
  });
});

describe('enroll --link-file', () => {
  it('reads the link from standard input (-), with a trailing newline', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--link-file', '-', ...common(dir)], { input: `${device.enrollment_link}\n` });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('warning');
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
    expect(await serverAccepts(running.current, storedKey(dir))).toBe(true);
  });

  it('reads the link from a file', async () => {
    const device = await running.current.createDevice();
    const file = join(tempDir(), 'link.txt');
    writeFileSync(file, `${device.enrollment_link}\r\n`, { mode: 0o600 });
    const dir = stateDir();
    const result = await runAgent(['enroll', '--link-file', file, ...common(dir)]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(`${device.enrollment_link}\r\n`); // the user's file is left alone
    expect(await serverAccepts(running.current, storedKey(dir))).toBe(true);
  });

  it.each([
    [
      'the link as an argument with --link-file',
      (link: string) => [link, '--link-file', '-'],
      /an enrollment link is not accepted as an argument/,
    ],
    [
      '--link-file and --server',
      (_: string, server: string) => ['--link-file', '-', '--server', server],
      /give either the enrollment link or --server with a token or an enrollment secret, not both/,
    ],
    [
      '--link-file and --token-file',
      () => ['--link-file', '-', '--token-file', '/dev/null'],
      /give either the enrollment link or --server with a token or an enrollment secret, not both/,
    ],
  ])('refuses %s (exit 2, nothing sent)', async (_label, extra, message) => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', ...extra(device.enrollment_link, running.current.url), ...common(dir)], {
      input: device.enrollment_link,
    });
    expectUserError(result, 2, message);
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
    expect((await running.current.showDevice(device.device_id)).state).toBe('PENDING');
  });

  it('refuses a link file over 4 KiB without reading it all', async () => {
    const file = join(tempDir(), 'link.txt');
    writeFileSync(file, `${linkFor(running.current.url, 'c'.repeat(96))}${' '.repeat(5000)}`);
    const result = await runAgent(['enroll', '--link-file', file, ...common(stateDir())]);
    expectUserError(result, 2, /cannot read the link file .*: larger than 4096 bytes, too large to hold an enrollment link/);
  });
});

// A reader that stops reading (`| head`) closes the pipe before or while a command writes: the
// command ends quietly with status 0, without a stack trace. The pipe's read end is closed before
// the program has started, so its first write meets EPIPE (as a `head` that has read enough).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { AGENT_BIN, agentEnv } from '../support/agent';
import { SERVER_BIN, runServerCli } from '../support/server';

const dir = mkdtempSync(join(tmpdir(), 'device-agent-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function intoClosedPipe(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [program, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

test('the admin CLI: `device list --json | head` ends quietly', async () => {
  const db = join(dir, 'server.db');
  await runServerCli(['device', 'create', '--org', 'acme', '--db', db, '--public-url', 'https://agents.example.com']);
  expect(await intoClosedPipe(SERVER_BIN, ['device', 'list', '--json', '--db', db], process.env)).toEqual({ code: 0, stderr: '' });
});

test('the agent CLI: `check --json | head` ends quietly', async () => {
  expect(await intoClosedPipe(AGENT_BIN, ['check', '--json'], agentEnv())).toEqual({ code: 0, stderr: '' });
});

// Drives the built agent (dist/device-agent.cjs) as real child processes for the daemon tests.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRuntimeStatus } from '../../src/agent/runtimeStatus';
import { PostureQueue } from '../../src/agent/postureQueue';
import type { PostureResult } from '../../src/protocol/schemas';
import { agentEnv } from '../support/agent';
import type { RunningServer } from '../support/server';

export const AGENT_BIN = fileURLToPath(new URL('../../dist/device-agent.cjs', import.meta.url));

/**
 * On top of a clean environment (none of the caller's DEVICE_AGENT_*, proxy or D-Bus variables):
 * fast retries, the file key store (no Secret Service needed), debug logs.
 */
export const TEST_ENV: NodeJS.ProcessEnv = {
  DEVICE_AGENT_KEYSTORE: 'file',
  DEVICE_AGENT_RETRY_BASE_MS: '50',
  DEVICE_AGENT_RETRY_MAX_MS: '400',
  DEVICE_AGENT_RETRY_ATTEMPTS: '3',
  DEVICE_AGENT_LOG_LEVEL: 'debug',
};

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runAgent(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [AGENT_BIN, ...args], { env: agentEnv({ ...TEST_ENV, ...env }) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

export async function makeStateDir(): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), 'daemon-test-'));
  return join(parent, 'state');
}

export async function removeStateDir(stateDir: string): Promise<void> {
  await rm(join(stateDir, '..'), { recursive: true, force: true });
}

/** Creates a device in its own organization (all test agents share this machine's hardware_uuid) and enrolls through `serverUrl`. */
export async function enrollNewDevice(
  server: RunningServer,
  stateDir: string,
  serverUrl: string,
  org = `org-${randomUUID()}`,
): Promise<{ deviceId: string; org: string }> {
  const device = await server.createDevice({ org });
  await enrollWithToken(stateDir, serverUrl, device.enrollment_token);
  return { deviceId: device.device_id, org };
}

export async function enrollWithToken(stateDir: string, serverUrl: string, token: string): Promise<void> {
  const tokenFile = join(stateDir, '..', `token-${randomUUID()}`);
  await writeFile(tokenFile, token, { mode: 0o600 });
  const result = await runAgent(['enroll', '--server', serverUrl, '--token-file', tokenFile, '--state-dir', stateDir]);
  await rm(tokenFile, { force: true });
  if (result.code !== 0) throw new Error(`enroll failed (${result.code}): ${result.stderr}`);
}

export interface Daemon {
  child: ChildProcess;
  pid: number;
  /** Parsed JSON log lines so far (for diagnostics and synchronisation only). */
  lines: any[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

export function startDaemon(stateDir: string, env: NodeJS.ProcessEnv = {}, args: string[] = []): Daemon {
  const child = spawn(process.execPath, [AGENT_BIN, 'run', '--state-dir', stateDir, ...args], {
    env: agentEnv({ ...TEST_ENV, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: any[] = [];
  let output = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        lines.push(JSON.parse(line));
      } catch {
        /* not JSON */
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, pid: child.pid!, lines, exited, output: () => output };
}

/** SIGTERM and the exit code and time it took. */
export async function stopDaemon(daemon: Daemon): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  daemon.child.kill('SIGTERM');
  const { code } = await daemon.exited;
  return { code, ms: Date.now() - started };
}

export async function until<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const runtimeStatus = (stateDir: string): Promise<Record<string, any>> => readRuntimeStatus(stateDir);

export function fakeResults(prefix: string, n: number): PostureResult[] {
  return Array.from({ length: n }, (_, i) => ({
    check_key: `${prefix}_${i}`,
    status: (['PASS', 'FAIL', 'UNKNOWN', 'NOT_APPLICABLE'] as const)[i % 4]!,
    evidence: { index: i },
    observed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  }));
}

/** Queues results as earlier cycles would have (the daemon must not be running). */
export async function queueResults(stateDir: string, cycles: PostureResult[][]): Promise<void> {
  const queue = await PostureQueue.open(stateDir);
  for (const cycle of cycles) await queue.append(cycle);
}

/** Every queue file must parse as a segment; returns the segment file names. */
export async function queueFiles(stateDir: string): Promise<string[]> {
  const dir = join(stateDir, 'queue');
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.json'))) JSON.parse(await readFile(join(dir, name), 'utf8'));
  return names;
}

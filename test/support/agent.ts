// Runs the built agent (dist/device-agent.cjs, rebuilt by globalSetup) as real child processes:
// one-shot commands (runAgent) and the long-lived daemon (startDaemon), with a clean environment.
// DEVICE_AGENT_TEST_BIN points the same tests at another build, e.g. the single-file executable.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PostureQueue } from '../../src/agent/state/postureQueue';
import { StatusFile, type RuntimeStatus } from '../../src/agent/state/statusFile';
import { stateLayout } from '../../src/agent/state/layout';
import type { PostureResult } from '../../src/protocol/schemas';
import { parseLogLine, type DaemonLogLine } from './daemonWire';
import type { RunningServer } from './server';

export const AGENT_BIN = process.env.DEVICE_AGENT_TEST_BIN ?? fileURLToPath(new URL('../../dist/device-agent.cjs', import.meta.url));

export interface AgentResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The whole environment of the child (start from agentEnv()). */
  env?: NodeJS.ProcessEnv;
  /** Written to standard input, which is then closed. */
  input?: string;
  cwd?: string;
  uid?: number;
  gid?: number;
  timeoutMs?: number;
}

function agentCommand(args: readonly string[]): [string, string[]] {
  return /\.[cm]?js$/.test(AGENT_BIN) ? [process.execPath, [AGENT_BIN, ...args]] : [AGENT_BIN, [...args]];
}

export function runAgent(args: readonly string[], options: RunOptions = {}): Promise<AgentResult> {
  const [command, argv] = agentCommand(args);
  const child = spawn(command, argv, {
    env: options.env ?? agentEnv(),
    cwd: options.cwd,
    uid: options.uid,
    gid: options.gid,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => undefined); // the agent may exit before reading its input
  child.stdin.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`device-agent ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const temps: string[] = [];
process.once('exit', () => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory, removed when the test process exits. */
export function tempDir(prefix = 'device-agent-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

let runtimeDir: string | undefined;
/**
 * The runtime directory of this test file's agents (each file runs in a process of its own): a
 * daemon running as root opens its local endpoint there rather than in the machine's
 * /run/device-agent, where the daemons of test files running at the same time, or an agent
 * installed here, would replace each other's socket. Its parent is root's and world-readable, as
 * /run is.
 */
function testRuntimeDir(): string {
  if (runtimeDir === undefined) {
    const parent = tempDir('device-agent-run-');
    chmodSync(parent, 0o755);
    runtimeDir = join(parent, 'device-agent');
  }
  return runtimeDir;
}

/**
 * A clean environment for the agent: none of the caller's DEVICE_AGENT_*, proxy or D-Bus variables
 * (so no test reaches a real secret store, or the machine's agent, by accident), a private HOME and
 * XDG_RUNTIME_DIR, and this test file's runtime directory.
 */
export function agentEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(DEVICE_AGENT_|DBUS_|XDG_|HTTPS?_PROXY$|NO_PROXY$|ALL_PROXY$)/i.test(name)) continue;
    env[name] = value;
  }
  const home = tempDir('device-agent-home-');
  return { ...env, HOME: home, XDG_RUNTIME_DIR: home, DEVICE_AGENT_RUNTIME_DIR: testRuntimeDir(), ...extra };
}

export interface StateFile {
  path: string;
  mode: number;
  isDirectory: boolean;
  /** A regular file's text, or a symbolic link's target (a lock names its holder's pid so). */
  content?: string;
}

/** Every entry under `dir` (recursive), with modes and file contents. */
export function listStateFiles(dir: string): StateFile[] {
  const entries: StateFile[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = lstatSync(path);
      const entry: StateFile = { path: relative(dir, path), mode: stat.mode & 0o777, isDirectory: stat.isDirectory() };
      if (stat.isDirectory()) walk(path);
      else entry.content = stat.isSymbolicLink() ? readlinkSync(path) : readFileSync(path, 'utf8');
      entries.push(entry);
    }
  };
  walk(dir);
  return entries;
}

export interface ConnectionRecorder {
  /** http://127.0.0.1:<port>: usable as a server URL or as HTTP(S)_PROXY. */
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  stop(): Promise<void>;
}

/**
 * A TCP listener that counts connections and closes them at once: pointed to as the server and as
 * the proxy, it proves that a command sent nothing.
 */
export async function startConnectionRecorder(): Promise<ConnectionRecorder> {
  const { createServer } = await import('node:net');
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- the daemon ---------------------------------------------------------------------------------

/** For daemon tests, on top of agentEnv: fast retries, the file key store (no Secret Service), debug logs. */
export function daemonEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return agentEnv({
    DEVICE_AGENT_KEYSTORE: 'file',
    DEVICE_AGENT_RETRY_BASE_MS: '50',
    DEVICE_AGENT_RETRY_MAX_MS: '400',
    DEVICE_AGENT_RETRY_ATTEMPTS: '3',
    DEVICE_AGENT_LOG_LEVEL: 'debug',
    ...extra,
  });
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface RunningDaemon {
  child: ChildProcess;
  pid: number;
  /** Parsed JSON log lines so far (for diagnostics and synchronisation only). */
  lines: DaemonLogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** `device-agent run` on `stateDir` with daemonEnv(env). */
export function startDaemon(stateDir: string, env: NodeJS.ProcessEnv = {}, args: string[] = []): RunningDaemon {
  const [command, argv] = agentCommand(['run', '--state-dir', stateDir, ...args]);
  const child = spawn(command, argv, { env: daemonEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: DaemonLogLine[] = [];
  let output = '';
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        lines.push(parseLogLine(line));
      } catch {
        /* not JSON */
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, pid: child.pid!, lines, exited, output: () => output };
}

/** SIGTERM and the exit code and time it took. */
export async function stopDaemon(daemon: RunningDaemon): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGTERM');
  const { code } = await daemon.exited;
  return { code, ms: Date.now() - started };
}

/** Polls `probe` until `accept` holds; throws with the last value after `timeoutMs`. */
export async function until<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  timeoutMs = 60_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A state directory path (not yet created) in a fresh temp dir; removeStateDir removes both. */
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

/** `enroll --token-file` with the file key store; throws when it fails. */
export async function enrollWithToken(stateDir: string, serverUrl: string, token: string): Promise<void> {
  const tokenFile = join(stateDir, '..', `token-${randomUUID()}`);
  await writeFile(tokenFile, token, { mode: 0o600 });
  const result = await runAgent(['enroll', '--server', serverUrl, '--token-file', tokenFile, '--state-dir', stateDir], {
    env: daemonEnv(),
  });
  await rm(tokenFile, { force: true });
  if (result.code !== 0) throw new Error(`enroll failed (${result.code}): ${result.stderr}`);
}

export const runtimeStatus = (stateDir: string): Promise<RuntimeStatus> => new StatusFile(stateLayout(stateDir)).read();

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

// Runs the built agent (dist/device-agent.cjs, rebuilt by globalSetup) as a real child process.
// DEVICE_AGENT_TEST_BIN points the same tests at another build, e.g. the single-file executable.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export function runAgent(args: readonly string[], options: RunOptions = {}): Promise<AgentResult> {
  const [command, prefix] = /\.[cm]?js$/.test(AGENT_BIN) ? [process.execPath, [AGENT_BIN]] : [AGENT_BIN, []];
  const child = spawn(command, [...prefix, ...args], {
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
  const timeoutMs = options.timeoutMs ?? 20_000;
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

/**
 * A clean environment for the agent: none of the caller's DEVICE_AGENT_*, proxy or D-Bus variables
 * (so no test reaches a real secret store by accident), a private HOME and XDG_RUNTIME_DIR.
 */
export function agentEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(DEVICE_AGENT_|DBUS_|XDG_|HTTPS?_PROXY$|NO_PROXY$|ALL_PROXY$)/i.test(name)) continue;
    env[name] = value;
  }
  const home = tempDir('device-agent-home-');
  return { ...env, HOME: home, XDG_RUNTIME_DIR: home, ...extra };
}

export interface StateFile {
  path: string;
  mode: number;
  isDirectory: boolean;
  content?: string;
}

/** Every entry under `dir` (recursive), with modes and file contents. */
export function listStateFiles(dir: string): StateFile[] {
  const entries: StateFile[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = statSync(path);
      const entry: StateFile = { path: relative(dir, path), mode: stat.mode & 0o777, isDirectory: stat.isDirectory() };
      if (stat.isDirectory()) walk(path);
      else entry.content = readFileSync(path, 'utf8');
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

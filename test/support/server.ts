// Starts the real reference server (dist/device-agent-server.cjs, rebuilt by globalSetup) as a
// child process on a free loopback port with a new database, and drives its admin CLI. The database
// is a SQLite file in a temporary directory, or, in the `postgres` vitest project, a new database
// on the run's PostgreSQL cluster (test/support/postgres.ts).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DeviceDetails } from '../../src/server/admin';
import { ON_POSTGRES, createDatabase, postgresEnv } from './postgres';

export interface CreatedDevice {
  device_id: string;
  org: string;
  enrollment_token: string;
  server_url: string;
  enrollment_link: string;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:<port> (https when tls given) */
  url: string;
  /** The `--db` the server was started with: a SQLite file, or a postgres:// URL (no password). */
  dbPath: string;
  /** temp dir holding the db */
  dir: string;
  /** The server process (with `exec`, also when started through a shell). */
  pid: number;
  /** Runs the real admin CLI (`device create --json`). Defaults: org "acme". */
  createDevice(options?: { org?: string; name?: string; tokenTtl?: string }): Promise<CreatedDevice>;
  /** `device show --json` output, parsed. */
  showDevice(deviceId: string): Promise<DeviceDetails>;
  revokeDevice(deviceId: string): Promise<void>;
  /** All stdout+stderr the server process printed so far. */
  logs(): string;
  /** SIGTERM and wait for exit; rejects when the server does not exit with code 0. */
  stop(): Promise<void>;
  /** Sends `signal` to the server process (kill -9: SIGKILL), without waiting. */
  kill(signal: NodeJS.Signals): void;
  /** SIGKILL and wait for exit: nothing the server still holds in memory is written. */
  crash(): Promise<void>;
}

/** One line of the server's JSON log: the fields tests read, and any others. */
export interface LogEntry {
  level?: unknown;
  msg?: string;
  url?: string;
  command?: string;
  event?: string;
  status?: number;
  [field: string]: unknown;
}

/** The JSON lines of a server's output. */
export function logEntries(logs: string): LogEntry[] {
  return logs
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogEntry);
}

export interface StartOptions {
  /** Extra `serve` flags; they come last, so they override the defaults. */
  args?: string[];
  /** Added to this process's environment, and to its admin CLI's (createDevice, showDevice, revokeDevice). */
  env?: NodeJS.ProcessEnv;
  /** PEM text or paths of PEM files; the server then serves HTTPS. */
  tls?: { cert: string; key: string };
  /** Soft limit on open files of the server process (`ulimit -n`), to meet EMFILE. */
  openFileLimit?: number;
  /** The `--db` value; default: server.db in a new temporary directory, or a new PostgreSQL database. */
  dbPath?: string;
}

// DEVICE_AGENT_SERVER_TEST_BIN points the same tests at another build (e.g. an older commit's).
/** `serve` flags that turn the per-device rate limits off, for tests that send one device's traffic in a loop. */
export const NO_RATE_LIMITS = ['--rate-limit-heartbeats', '0', '--rate-limit-postures', '0', '--rate-limit-posture-mib', '0'];
export const SERVER_BIN =
  process.env.DEVICE_AGENT_SERVER_TEST_BIN ?? fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));

const STARTUP_TIMEOUT_MS = 60_000;
const runFile = promisify(execFile);

const cleanups = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of cleanups) cleanup();
});

/** Runs `device-agent-server <args>` to completion (the admin CLI). */
export async function runServerCli(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return runFile(process.execPath, [SERVER_BIN, ...args], { env: serverEnv(env), maxBuffer: 64 * 1024 * 1024 });
}

/** The environment of every server and admin CLI process: on PostgreSQL, how to log in. */
export function serverEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, ...(ON_POSTGRES ? postgresEnv() : {}), ...extra };
}

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `device-agent-server <args>` and reports its exit code and output instead of throwing. */
export function tryServerCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliOutcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SERVER_BIN, ...args], { env: serverEnv(options.env), cwd: options.cwd }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-server-'));
  cleanups.add(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = options.dbPath ?? (ON_POSTGRES ? await createDatabase() : join(dir, 'server.db'));
  const args = ['serve', '--db', dbPath, '--host', '127.0.0.1', '--port', '0'];
  if (options.tls)
    args.push('--tls-cert', pemFile(dir, 'cert.pem', options.tls.cert), '--tls-key', pemFile(dir, 'key.pem', options.tls.key));
  args.push(...(options.args ?? []));

  const command = [process.execPath, SERVER_BIN, ...args];
  // `exec` keeps the pid: signals reach the server itself.
  if (options.openFileLimit !== undefined) command.unshift('/bin/sh', '-c', `ulimit -n ${options.openFileLimit} && exec "$@"`, 'sh');
  const child = spawn(command[0]!, command.slice(1), {
    env: serverEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  cleanups.add(killOnExit);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // `exited` never rejects.
  void exited.then(() => cleanups.delete(killOnExit));

  let output = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => fail(`did not announce its URL within ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`device-agent-server ${why}:\n${output}`));
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf('\n')) !== -1) {
        const announced = listeningUrl(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        if (announced) {
          clearTimeout(timer);
          resolve(announced);
        }
      }
    });
    void exited.then((code) => fail(`exited with code ${code} before listening`));
  });

  return {
    url,
    dbPath,
    dir,
    pid: child.pid!,
    async createDevice(device = {}) {
      const flags = ['device', 'create', '--db', dbPath, '--org', device.org ?? 'acme', '--json'];
      if (device.name !== undefined) flags.push('--name', device.name);
      if (device.tokenTtl !== undefined) flags.push('--token-ttl', device.tokenTtl);
      return JSON.parse((await runServerCli(flags, options.env)).stdout) as CreatedDevice;
    },
    async showDevice(deviceId) {
      return JSON.parse((await runServerCli(['device', 'show', deviceId, '--db', dbPath, '--json'], options.env)).stdout) as DeviceDetails;
    },
    async revokeDevice(deviceId) {
      await runServerCli(['device', 'revoke', deviceId, '--db', dbPath], options.env);
    },
    logs: () => output,
    kill: (signal) => child.kill(signal),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`device-agent-server exited with code ${code}:\n${output}`);
    },
    async crash() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function listeningUrl(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return typeof entry.url === 'string' && typeof entry.msg === 'string' && entry.msg.startsWith('listening') ? entry.url : undefined;
  } catch {
    return undefined;
  }
}

function pemFile(dir: string, name: string, pemOrPath: string): string {
  if (!pemOrPath.includes('-----BEGIN')) return pemOrPath;
  const path = join(dir, name);
  writeFileSync(path, pemOrPath, { mode: 0o600 });
  return path;
}

// The real Host: how collectors touch this machine. Commands run without a shell, from absolute
// paths, with a scrubbed environment (LC_ALL=C), a timeout that kills the whole process group,
// and an output cap; stdout, stderr and exit code stay apart.
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type {
  CommandError,
  CommandResult,
  DirResult,
  FileResult,
  FsError,
  Host,
  LinkResult,
  ReadOptions,
  RunOptions,
  StatResult,
} from './types';

export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;
export const MAX_OUTPUT_BYTES = 1024 * 1024;
export const MAX_FILE_BYTES = 1024 * 1024;

/** Variables a Windows process needs to start PowerShell and find system folders; copied, never invented. */
const WINDOWS_ENV_KEEP = [
  'SystemRoot',
  'windir',
  'SystemDrive',
  'ProgramData',
  'ProgramFiles',
  'ProgramFiles(x86)',
  'ComSpec',
  'TEMP',
  'TMP',
  'PSModulePath',
];

function baseEnvironment(): Record<string, string> {
  const env: Record<string, string> = { LC_ALL: 'C', LANG: 'C' };
  if (process.platform === 'win32') {
    for (const name of WINDOWS_ENV_KEEP) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    const root = process.env.SystemRoot ?? 'C:\\Windows';
    env.Path = `${root}\\system32;${root};${root}\\System32\\WindowsPowerShell\\v1.0`;
  } else {
    env.PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  }
  return env;
}

function spawnErrorKind(code: string | undefined): CommandError {
  if (code === 'ENOENT') return 'not_found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission_denied';
  return 'spawn_failed';
}

export function runCommand(command: string, args: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
  if (!path.isAbsolute(command)) throw new Error(`command must be an absolute path: ${command}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  return new Promise((resolve) => {
    const detached = process.platform !== 'win32';
    let child;
    try {
      child = spawn(command, [...args], {
        env: { ...baseEnvironment(), ...options.env },
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
        detached,
        ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
      });
    } catch (err) {
      resolve({ exitCode: null, stdout: '', stderr: '', error: spawnErrorKind((err as NodeJS.ErrnoException).code) });
      return;
    }
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let bytes = 0;
    let failure: CommandError | undefined;
    const kill = (why: CommandError) => {
      failure ??= why;
      try {
        if (detached && child.pid) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const collect = (sink: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_OUTPUT_BYTES) return kill('output_too_large');
      sink.push(chunk);
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(errOut));
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    child.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= spawnErrorKind(err.code);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const result: CommandResult = {
        exitCode: failure ? null : code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(errOut).toString('utf8'),
      };
      if (failure) result.error = failure;
      resolve(result);
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

function fsError(err: unknown): FsError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'not_found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission_denied';
  return 'io_error';
}

/**
 * A file is read into a buffer of FIRST_READ bytes, then READ_CHUNK for the rest, each filled before
 * the next is taken (the read that finds the end uses what is left). A cycle reads one tiny file per
 * process (/proc/<pid>/comm): a fresh 16 KiB buffer per read, and one more to find the end, left
 * megabytes of garbage behind each cycle, kept until the next collection (maybe an hour later). A
 * FIRST_READ buffer comes from Node's shared pool.
 */
const FIRST_READ = 512;
const READ_CHUNK = 16 * 1024;

async function readFileCapped(file: string, options: ReadOptions = {}): Promise<FileResult> {
  const head = options.maxBytes;
  let handle;
  try {
    handle = await fs.open(file, 'r');
    const chunks: Buffer[] = [];
    let buffer = Buffer.allocUnsafe(FIRST_READ);
    let filled = 0;
    let length = 0;
    for (;;) {
      // A bounded read stops at its bound: the file's start is what was asked for.
      if (head !== undefined && length >= head) break;
      if (filled === buffer.length) {
        chunks.push(buffer);
        buffer = Buffer.allocUnsafe(READ_CHUNK);
        filled = 0;
      }
      const room = head === undefined ? buffer.length - filled : Math.min(buffer.length - filled, head - length);
      const { bytesRead } = await handle.read(buffer, filled, room, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
      length += bytesRead;
      if (length > MAX_FILE_BYTES) return { ok: false, error: 'too_large' };
    }
    chunks.push(buffer.subarray(0, filled));
    return { ok: true, text: Buffer.concat(chunks, length).toString('utf8') };
  } catch (err) {
    return { ok: false, error: fsError(err) };
  } finally {
    await handle?.close();
  }
}

export function createSystemHost(): Host {
  return {
    run: runCommand,
    readFile: readFileCapped,
    async readDir(dir): Promise<DirResult> {
      try {
        return { ok: true, entries: (await fs.readdir(dir)).sort() };
      } catch (err) {
        return { ok: false, error: fsError(err) };
      }
    },
    async readLink(link): Promise<LinkResult> {
      try {
        return { ok: true, target: await fs.readlink(link) };
      } catch (err) {
        return { ok: false, error: fsError(err) };
      }
    },
    async stat(file): Promise<StatResult> {
      try {
        const s = await fs.stat(file);
        return { ok: true, isDirectory: s.isDirectory(), mode: s.mode, uid: s.uid, gid: s.gid, size: s.size, mtimeMs: s.mtimeMs };
      } catch (err) {
        return { ok: false, error: fsError(err) };
      }
    },
  };
}

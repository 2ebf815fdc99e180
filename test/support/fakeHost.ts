// A Host that answers from recorded outputs of another machine (fixtures), and records what
// the collector asked for, so tests can check commands are absolute and arguments right.
import path from 'node:path';
import type {
  CommandResult,
  DirResult,
  FileResult,
  FsError,
  Host,
  LinkResult,
  ReadOptions,
  RunOptions,
  StatResult,
} from '../../checks/types';

export interface RecordedCommand {
  argv: string[];
  stdout?: string | string[];
  stderr?: string | string[];
  exitCode?: number | null;
  error?: CommandResult['error'];
}

export interface HostRecording {
  commands?: RecordedCommand[];
  /** path -> content, or an error the read gets */
  files?: Record<string, string | string[] | { error: FsError }>;
  dirs?: Record<string, string[] | { error: FsError }>;
  links?: Record<string, string>;
  /** `mtime` is an ISO date (fixtures are judged at a fixed time, so ages stay stable). */
  stats?: Record<string, { isDirectory?: boolean; mode?: number; uid?: number; gid?: number; size?: number; mtime?: string }>;
}

export interface HostCall {
  kind: 'run' | 'readFile' | 'readDir' | 'readLink' | 'stat';
  target: string;
  args?: string[];
  options?: RunOptions;
}

const text = (value: string | string[] | undefined): string =>
  value === undefined ? '' : Array.isArray(value) ? value.map((line) => `${line}\n`).join('') : value;

const isAbsoluteAnywhere = (p: string) => path.posix.isAbsolute(p) || path.win32.isAbsolute(p);

/** Like an async function's body: runs now, and a throw becomes a rejection. */
function settle<T>(answer: () => T): Promise<T> {
  return new Promise((resolve) => resolve(answer()));
}

export class FakeHost implements Host {
  readonly calls: HostCall[] = [];
  constructor(private readonly recording: HostRecording = {}) {}

  run(command: string, args: readonly string[], options?: RunOptions): Promise<CommandResult> {
    return settle(() => {
      this.calls.push({ kind: 'run', target: command, args: [...args], ...(options ? { options } : {}) });
      if (!isAbsoluteAnywhere(command)) throw new Error(`command must be an absolute path: ${command}`);
      const argv = [command, ...args];
      const match = this.recording.commands?.find((c) => c.argv.length === argv.length && c.argv.every((part, i) => part === argv[i]));
      if (!match) return { exitCode: null, stdout: '', stderr: '', error: 'not_found' };
      const result: CommandResult = {
        exitCode: match.error ? null : (match.exitCode ?? 0),
        stdout: text(match.stdout),
        stderr: text(match.stderr),
      };
      if (match.error) result.error = match.error;
      return result;
    });
  }

  readFile(file: string, options?: ReadOptions): Promise<FileResult> {
    return settle(() => {
      this.calls.push({ kind: 'readFile', target: file });
      const entry = this.recording.files?.[file];
      if (entry === undefined) return { ok: false, error: 'not_found' };
      if (typeof entry === 'object' && !Array.isArray(entry)) return { ok: false, error: entry.error };
      const content = text(entry);
      if (options?.maxBytes === undefined) return { ok: true, text: content };
      return { ok: true, text: Buffer.from(content).subarray(0, options.maxBytes).toString('utf8') };
    });
  }

  readDir(dir: string): Promise<DirResult> {
    return settle(() => {
      this.calls.push({ kind: 'readDir', target: dir });
      const entry = this.recording.dirs?.[dir];
      if (entry === undefined) return { ok: false, error: 'not_found' };
      if (!Array.isArray(entry)) return { ok: false, error: entry.error };
      return { ok: true, entries: [...entry] };
    });
  }

  readLink(link: string): Promise<LinkResult> {
    return settle(() => {
      this.calls.push({ kind: 'readLink', target: link });
      const target = this.recording.links?.[link];
      return target === undefined ? { ok: false, error: 'not_found' } : { ok: true, target };
    });
  }

  stat(file: string): Promise<StatResult> {
    return settle(() => {
      this.calls.push({ kind: 'stat', target: file });
      const s = this.recording.stats?.[file];
      if (s) {
        const result: StatResult = {
          ok: true,
          isDirectory: s.isDirectory ?? false,
          mode: s.mode ?? 0o644,
          uid: s.uid ?? 0,
          gid: s.gid ?? 0,
          size: s.size ?? 0,
        };
        if (s.mtime !== undefined) result.mtimeMs = Date.parse(s.mtime);
        return result;
      }
      if (this.recording.dirs?.[file] !== undefined) return { ok: true, isDirectory: true, mode: 0o755, uid: 0, gid: 0, size: 0 };
      if (typeof this.recording.files?.[file] === 'string' || Array.isArray(this.recording.files?.[file])) {
        return { ok: true, isDirectory: false, mode: 0o644, uid: 0, gid: 0, size: text(this.recording.files?.[file]).length };
      }
      return { ok: false, error: 'not_found' };
    });
  }

  /** Commands the collector ran, as argv arrays. */
  commandsRun(): string[][] {
    return this.calls.filter((c) => c.kind === 'run').map((c) => [c.target, ...(c.args ?? [])]);
  }
}

// The posture-check framework's contracts. Every check on every platform is a collector
// (touches the machine only through `Host`) plus a pure evaluator (facts -> verdict), so
// evaluators run on fixtures from any platform on any machine (test/fixtures/checks).
import type { CheckKey, Platform, PostureStatus } from '../src/protocol/schemas';
import type { Policy } from './policy';

export type Evidence = Record<string, unknown>;

/**
 * Why a check could not decide (UNKNOWN) or has no subject (NOT_APPLICABLE).
 * Shared vocabulary from the research's cross-cutting rules; checks may add precise ones.
 */
export type Reason =
  | 'command_not_found'
  | 'permission_denied'
  | 'timeout'
  | 'parse_error'
  | 'not_found'
  | 'check_error'
  | 'no_console_user'
  | 'no_user_hive'
  | 'unrecognized_version'
  | 'unknown_release'
  | 'container'
  | 'jail'
  | 'headless'
  | 'no_builtin_antimalware'
  | (string & {});

export interface Verdict {
  status: PostureStatus;
  /** Small, machine-readable, no secrets/usernames/home paths/raw output. Carries `reason` unless PASS/FAIL. */
  evidence: Evidence;
}

export type CommandError = 'not_found' | 'permission_denied' | 'timeout' | 'output_too_large' | 'spawn_failed';

export interface CommandResult {
  /** Exit code; null when the process did not exit normally (signal, spawn failure). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not run to completion. */
  error?: CommandError;
}

export interface RunOptions {
  timeoutMs?: number;
  /** Run in this user's context (POSIX, needs root): per-user settings such as a desktop's screen lock. */
  user?: { uid: number; gid: number };
  /** Added to the scrubbed environment (which always has LC_ALL=C). */
  env?: Record<string, string>;
  /** Written to the command's standard input. */
  input?: string;
}

export type FsError = 'not_found' | 'permission_denied' | 'too_large' | 'io_error';
export type FileResult = { ok: true; text: string } | { ok: false; error: FsError };
export type DirResult = { ok: true; entries: string[] } | { ok: false; error: FsError };
export type LinkResult = { ok: true; target: string } | { ok: false; error: FsError };
export type StatResult =
  | { ok: true; isDirectory: boolean; mode: number; uid: number; gid: number; size: number; mtimeMs?: number }
  | { ok: false; error: FsError };

/** All a collector may touch. The real one is checks/host.ts; tests use test/support/fakeHost.ts. */
export interface Host {
  /** `command` must be an absolute path; no shell is involved. */
  run(command: string, args: readonly string[], options?: RunOptions): Promise<CommandResult>;
  readFile(path: string): Promise<FileResult>;
  readDir(path: string): Promise<DirResult>;
  readLink(path: string): Promise<LinkResult>;
  stat(path: string): Promise<StatResult>;
}

export interface CheckContext {
  host: Host;
  policy: Policy;
  now: Date;
  /** Runs an expensive probe once per cycle and shares its result among the checks that need it. */
  shared<T>(key: string, probe: () => Promise<T>): Promise<T>;
}

export interface Check<Facts = unknown> {
  key: CheckKey;
  platform: Platform;
  /** Gathers facts; never throws for expected conditions (missing tool, permission): records them as facts. */
  collect(ctx: CheckContext): Promise<Facts>;
  /** Pure: the same facts, policy and time always give the same verdict. */
  evaluate(facts: Facts, policy: Policy, now: Date): Verdict;
}

/** Identity helper so that `defineCheck({...})` infers Facts from collect(). */
export function defineCheck<Facts>(check: Check<Facts>): Check<Facts> {
  return check;
}

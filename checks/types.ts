// The posture-check framework's contracts. Every check on every platform is a collector
// (touches the machine only through `Host`) plus a pure evaluator (facts -> verdict), so
// evaluators run on fixtures from any platform on any machine (test/fixtures/checks).
import type { CheckKey, Platform } from '../src/protocol/schemas';
import type { Policy } from './policy';

export type Evidence = Record<string, unknown>;

/** What the engine itself answers for any check it runs (checks/engine.ts): a check that ran too long or threw. */
type EngineWord = 'timeout' | 'check_error';

/**
 * A check's answer. Its word (`rule` on PASS/FAIL, `reason` on UNKNOWN/NOT_APPLICABLE) is typed, so
 * that the words a check can return are its evaluator's return type and the remediation catalogue
 * (checks/<os>/remediation.ts) is checked against them by the compiler.
 * Evidence is small, machine-readable, with no secrets, usernames, home paths or raw output.
 */
export type Verdict<Word extends string = string> =
  | { status: 'PASS' | 'FAIL'; evidence: Evidence & { rule: Word } }
  | { status: 'UNKNOWN' | 'NOT_APPLICABLE'; evidence: Evidence & { reason: Word } };

/** A verdict that passes or fails (and so carries a `rule`). */
export type PassOrFail<Word extends string = string> = Extract<Verdict<Word>, { status: 'PASS' | 'FAIL' }>;

/** The words a verdict type can carry. */
export type VerdictWord<V> = V extends Verdict<infer Word> ? Word : never;

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

/** A bounded read: at most `maxBytes` from the file's start, a larger file being no error (headers of big files). */
export interface ReadOptions {
  maxBytes?: number;
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
  readFile(path: string, options?: ReadOptions): Promise<FileResult>;
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

export interface Check<Facts = unknown, Word extends string = string, Key extends CheckKey = CheckKey> {
  key: Key;
  platform: Platform;
  /** Gathers facts; never throws for expected conditions (missing tool, permission): records them as facts. */
  collect(ctx: CheckContext): Promise<Facts>;
  /** Pure: the same facts, policy and time always give the same verdict. */
  evaluate(facts: Facts, policy: Policy, now: Date): Verdict<Word>;
}

/** The words a check's results can carry: its evaluator's, and the engine's. */
export type WordOf<C> = C extends { evaluate(...args: never[]): infer V } ? VerdictWord<V> | EngineWord : never;

/**
 * Identity helper that infers a check's facts from collect(), its words from evaluate() (so that
 * its catalogue in checks/<os>/remediation.ts is checked against them) and its key.
 */
export function defineCheck<Facts, Word extends string, Key extends CheckKey>(check: Check<Facts, Word, Key>): Check<Facts, Word, Key> {
  return check;
}

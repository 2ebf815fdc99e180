// Runs a plan step by step, saying what each step did. Files are written atomically; commands run
// without a shell from the system's own directories. A failing step stops the plan unless it may
// fail; the enroll/unenroll steps are delegated to the agent's enrollment modules by the caller.
import { execFile } from 'node:child_process';
import { chmod, copyFile, lstat, mkdir, realpath, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isCode, writeFileAtomic } from '../agent/state';
import { firstLine } from '../agent/errors';
import { commandLine, describeStep, type Plan, type PlanStep } from './plan';

/** A step that had to succeed did not. Exit 1: the system is in the state the report describes. */
export class PlanStepError extends Error {
  override name = 'PlanStepError';
}

export interface ExecutorHooks {
  /** Performs an enroll/unenroll step and returns one line saying what happened. */
  enroll(step: Extract<PlanStep, { kind: 'enroll' }>): Promise<string>;
  unenroll(step: Extract<PlanStep, { kind: 'unenroll' }>): Promise<string>;
  /** One line of progress for the user. */
  report(line: string): void;
}

export interface ExecutionResult {
  /** Paths that existed and were removed. */
  removed: string[];
  /** Non-fatal failures, one line each. */
  warnings: string[];
}

const POSIX_SYSTEM_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];

/**
 * Plans name system tools by their file name (`systemctl`, `sc.exe`); run them from the system's
 * directories only, never from whatever PATH the caller had.
 */
function systemPath(style: Plan['style'], env: NodeJS.ProcessEnv): string {
  if (style === 'windows') {
    const root = env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows';
    return [join(root, 'System32'), join(root, 'System32', 'WindowsPowerShell', 'v1.0')].join(';');
  }
  return POSIX_SYSTEM_DIRS.join(':');
}

interface CommandOutcome {
  code: number | null;
  stderr: string;
}

function runCommand(argv: readonly string[], path: string): Promise<CommandOutcome> {
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    execFile(
      file!,
      args,
      { env: { ...process.env, PATH: path, LC_ALL: 'C' }, windowsHide: true, timeout: 120_000, maxBuffer: 1 << 20 },
      (err, _stdout, stderr) => {
        if (!err) return resolve({ code: 0, stderr });
        const code = typeof err.code === 'number' ? err.code : null;
        // No exit code: it could not start (ENOENT) or was killed; the error says which.
        resolve({ code, stderr: code === null ? err.message : stderr });
      },
    );
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (isCode(err, 'ENOENT', 'ENOTDIR')) return false;
    throw err;
  }
}

async function samePath(a: string, b: string): Promise<boolean> {
  try {
    return (await realpath(a)) === (await realpath(b));
  } catch {
    return false;
  }
}

async function writeFile(path: string, content: string | Uint8Array, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  await writeFileAtomic(path, content, { mode });
  await chmod(path, mode); // the umask narrowed the mode at creation
}

export async function executePlan(plan: Plan, hooks: ExecutorHooks, env: NodeJS.ProcessEnv = process.env): Promise<ExecutionResult> {
  const result: ExecutionResult = { removed: [], warnings: [] };
  const path = systemPath(plan.style, env);
  for (const step of plan.steps) {
    if (step.kind === 'enroll') hooks.report(await hooks.enroll(step));
    else if (step.kind === 'unenroll') hooks.report(await hooks.unenroll(step));
    else if (step.kind === 'run') await runStep(step, plan.style, path, hooks, result);
    else {
      try {
        await fileStep(step, hooks, result);
      } catch (err) {
        throw new PlanStepError(`could not ${describeStep(step, plan.style)}: ${firstLine(err)}`);
      }
    }
  }
  return result;
}

async function runStep(
  step: Extract<PlanStep, { kind: 'run' }>,
  style: Plan['style'],
  path: string,
  hooks: ExecutorHooks,
  result: ExecutionResult,
): Promise<void> {
  const outcome = await runCommand(step.argv, path);
  const shown = commandLine(step.argv, style);
  if (outcome.code === 0) {
    hooks.report(`ran ${shown}`);
    return;
  }
  const message = firstLine(outcome.stderr).replace(/\.+$/, '') || 'no message';
  const failure = `${shown} failed (${outcome.code === null ? 'it did not run' : `exit ${outcome.code}`}): ${message}`;
  if (!step.mayFail) throw new PlanStepError(failure);
  result.warnings.push(failure);
  hooks.report(`${failure} (not fatal)`);
}

type FileStep = Exclude<PlanStep, { kind: 'run' | 'enroll' | 'unenroll' }>;

async function fileStep(step: FileStep, hooks: ExecutorHooks, result: ExecutionResult): Promise<void> {
  switch (step.kind) {
    case 'mkdir':
      await mkdir(step.path, { recursive: true, mode: step.mode });
      await chmod(step.path, step.mode);
      hooks.report(`created ${step.path}`);
      return;
    case 'write':
      await writeFile(step.path, step.content, step.mode);
      hooks.report(`wrote ${step.path}`);
      return;
    case 'copy': {
      if (await samePath(step.from, step.to)) {
        hooks.report(`kept ${step.to} (already in place)`);
        return;
      }
      // Copy beside the target, then rename: a running program is never overwritten in place.
      const temp = `${step.to}.${process.pid}.new`;
      await mkdir(dirname(step.to), { recursive: true, mode: 0o755 });
      try {
        await copyFile(step.from, temp);
        await chmod(temp, step.mode);
        await rename(temp, step.to);
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
      hooks.report(`installed ${step.to}`);
      return;
    }
    case 'symlink':
      await mkdir(dirname(step.path), { recursive: true, mode: 0o755 });
      await rm(step.path, { force: true });
      await symlink(step.target, step.path);
      hooks.report(`linked ${step.path} -> ${step.target}`);
      return;
    case 'remove':
      if (!(await exists(step.path))) {
        hooks.report(`${step.path} was not there`);
        return;
      }
      await rm(step.path, { recursive: step.recursive ?? false, force: true });
      result.removed.push(step.path);
      hooks.report(`removed ${step.path}`);
      return;
  }
}

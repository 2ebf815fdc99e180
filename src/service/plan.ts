// An install or uninstall is a plan: an ordered list of file and command steps that `--dry-run`
// prints and the real run executes through one executor (executor.ts). Generators build plans as
// plain data, so every platform's plan can be printed and tested on any machine.

/** How a step is shown and how its commands are quoted: POSIX shells or Windows command lines. */
export type PathStyle = 'posix' | 'windows';

export type PlanStep =
  /** Create a directory (and its parents) with this mode (POSIX; ignored on Windows). */
  | { kind: 'mkdir'; path: string; mode: number }
  /** Write a whole file atomically. */
  | { kind: 'write'; path: string; content: string; mode: number }
  /** Copy a file (the agent's executable and its native addon). */
  | { kind: 'copy'; from: string; to: string; mode: number }
  /** Make `path` a symbolic link to `target`, replacing an earlier link. */
  | { kind: 'symlink'; path: string; target: string }
  /** Delete a file, a link or (with `recursive`) a directory tree; absent is fine. */
  | { kind: 'remove'; path: string; recursive?: boolean }
  /**
   * Run a program (no shell). `mayFail`: a non-zero exit is reported and the plan goes on (stopping
   * a service that is not running, removing one that is not installed).
   */
  | { kind: 'run'; argv: readonly string[]; mayFail?: boolean }
  /** Enroll through the enrollment module before anything is installed. */
  | { kind: 'enroll'; server: string; credentialSource: string }
  /** Best-effort /unenroll, then wipe the key (secret store or file) and the queue. */
  | { kind: 'unenroll'; stateDir: string };

export interface Plan {
  /** "install" or "uninstall". */
  readonly action: string;
  readonly platform: string;
  readonly style: PathStyle;
  readonly steps: readonly PlanStep[];
  /** Said after the steps (for example where the logs go, or what is left to remove by hand). */
  readonly notes: readonly string[];
}

const POSIX_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument as a POSIX shell would need it written. */
export function quotePosix(arg: string): string {
  if (arg !== '' && POSIX_SAFE.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** One argument as the Windows C runtime parses a command line (CommandLineToArgvW rules). */
function quoteWindows(arg: string): string {
  if (arg !== '' && !/[\s"]/.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes += 1;
      continue;
    }
    out += ch === '"' ? '\\'.repeat(backslashes * 2 + 1) + '"' : '\\'.repeat(backslashes) + ch;
    backslashes = 0;
  }
  return `${out}${'\\'.repeat(backslashes * 2)}"`;
}

export function commandLine(argv: readonly string[], style: PathStyle): string {
  return argv.map(style === 'windows' ? quoteWindows : quotePosix).join(' ');
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

/** One line per step, in the order they run. */
export function describeStep(step: PlanStep, style: PathStyle): string {
  const modeNote = (mode: number) => (style === 'posix' ? ` (mode ${octal(mode)})` : '');
  switch (step.kind) {
    case 'mkdir':
      return `create directory ${step.path}${modeNote(step.mode)}`;
    case 'write':
      return `write ${step.path}${modeNote(step.mode)}`;
    case 'copy':
      return `copy ${step.from} to ${step.to}${modeNote(step.mode)}`;
    case 'symlink':
      return `link ${step.path} -> ${step.target}`;
    case 'remove':
      return `remove ${step.path}${step.recursive ? ' and everything in it' : ''}`;
    case 'run':
      return `run ${commandLine(step.argv, style)}${step.mayFail ? '  (a failure here is not fatal)' : ''}`;
    case 'enroll':
      return `enroll with ${step.server} (${step.credentialSource})`;
    case 'unenroll':
      return `unenroll from the server (best effort), then wipe the API key (secret store or file) and the queue of ${step.stateDir}`;
  }
}

/** What `--dry-run` prints: every step, then the full text of every file that would be written. */
export function renderDryRun(plan: Plan): string {
  const lines = [`device-agent ${plan.action} on ${plan.platform} would (dry run: nothing was changed):`];
  plan.steps.forEach((step, index) => lines.push(`  ${index + 1}. ${describeStep(step, plan.style)}`));
  for (const note of plan.notes) lines.push(`  note: ${note}`);
  for (const step of plan.steps) {
    if (step.kind !== 'write') continue;
    lines.push('', `--- ${step.path}`, step.content.replace(/\n$/, ''));
  }
  return `${lines.join('\n')}\n`;
}

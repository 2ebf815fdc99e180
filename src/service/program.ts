// What program is running this command: a single-file executable (SEA), which `install` copies to
// the platform's standard place, or `node <script>` from a checkout (a development install, where
// the service runs the script with the same node).
import { realpathSync } from 'node:fs';
import { isSea } from 'node:sea';

export type RunningProgram =
  { readonly kind: 'executable'; readonly path: string } | { readonly kind: 'script'; readonly node: string; readonly script: string };

export function runningProgram(): RunningProgram {
  if (isSea()) return { kind: 'executable', path: process.execPath };
  return { kind: 'script', node: process.execPath, script: realpathSync(process.argv[1] ?? '') };
}

/** The command line that runs this program again (before its own arguments). */
export function selfCommand(): string[] {
  const program = runningProgram();
  return program.kind === 'executable' ? [program.path] : [program.node, program.script];
}

// Which source modules a run of the bundled agent loaded. Seen from outside: Node's module loader
// names every file it loads (NODE_DEBUG=module, on standard error), and the build records which
// source modules each file of the bundle carries (dist/device-agent.inputs.json).
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { AGENT_INPUTS } from '../../scripts/build.mjs';
import { AGENT_BIN } from './agent';

const DIST = dirname(AGENT_BIN);

/** The bundle files named in `stderr` of a run with NODE_DEBUG=module (an addon loaded from node_modules is not one). */
export function bundleFilesLoaded(stderr: string): string[] {
  return [
    ...new Set(
      [...stderr.matchAll(/^MODULE \d+: load "([^"]+)"/gm)]
        .map((match) => relative(DIST, match[1]!))
        .filter((file) => !file.startsWith('..')),
    ),
  ];
}

/** The source modules (src/…, checks/…, node_modules/<package>/…) those files carry; throws on a file this build did not write. */
export function modulesOf(files: readonly string[]): string[] {
  const inputs = JSON.parse(readFileSync(join(DIST, AGENT_INPUTS), 'utf8')) as Record<string, string[]>;
  return files.flatMap((file) => {
    const modules = inputs[file];
    if (!modules) throw new Error(`${file} is not a file of this build (${AGENT_INPUTS})`);
    return modules;
  });
}

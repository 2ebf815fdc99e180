// Each command loads only the parts of the bundle it runs: scripts/build.mjs splits the agent into an
// entry point and chunks required on demand. Seen from outside: Node's module loader names every
// file it loads (NODE_DEBUG=module), and the build records which source modules each file carries
// (dist/device-agent.inputs.json). Start-up time itself is measured by `npm run bench:footprint`.
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_INPUTS } from '../../scripts/build.mjs';
import { VERSION } from '../../src/version';
import { AGENT_BIN, agentEnv, runAgent, tempDir } from '../support/agent';

const DIST = dirname(AGENT_BIN);

/** The source modules in the bundle files that `device-agent <args>` loaded, and its result. */
async function loadedModules(args: string[]): Promise<{ modules: string[]; code: number | null; stdout: string }> {
  const inputs = JSON.parse(readFileSync(join(DIST, AGENT_INPUTS), 'utf8')) as Record<string, string[]>;
  const result = await runAgent(args, { env: agentEnv({ NODE_DEBUG: 'module' }) });
  // Files of the bundle only (an external addon, such as the keyring's, loads from node_modules).
  const files = new Set(
    [...result.stderr.matchAll(/^MODULE \d+: load "([^"]+)"/gm)]
      .map((match) => relative(DIST, match[1]!))
      .filter((file) => !file.startsWith('..')),
  );
  expect(files, result.stderr).toContain('device-agent.cjs');
  const modules = [...files].flatMap((file) => {
    expect(Object.keys(inputs), `${file}: a file of this build`).toContain(file);
    return inputs[file]!;
  });
  return { modules, code: result.code, stdout: result.stdout };
}

const from = (modules: string[], prefix: string) => modules.filter((module) => module.startsWith(prefix));

describe('the agent loads only what a command runs', () => {
  it('--version: the entry point and the version, not even the command line parser', async () => {
    const { modules, code, stdout } = await loadedModules(['--version']);
    expect({ code, stdout }).toEqual({ code: 0, stdout: `${VERSION}\n` });
    expect(modules).toContain('src/cli/device-agent.ts');
    expect(modules).not.toContain('src/cli/program.ts');
    expect(from(modules, 'node_modules/')).toEqual([]);
  });

  it('--help: commander and the registrations, none of the commands nor their libraries', async () => {
    const { modules, code } = await loadedModules(['--help']);
    expect(code).toBe(0);
    expect(modules).toContain('src/cli/program.ts');
    expect(from(modules, 'node_modules/commander/').length).toBeGreaterThan(0);
    expect(from(modules, 'src/cli/commands/')).toEqual([]);
    for (const heavy of [
      'node_modules/undici/',
      'node_modules/zod/',
      'node_modules/pino',
      'checks/',
      'src/agent/logger.ts',
      'src/agent/client.ts',
    ]) {
      expect(from(modules, heavy), heavy).toEqual([]);
    }
  });

  it('status: its own command, no HTTP client, no daemon, no checks', async () => {
    const { modules, code } = await loadedModules(['status', '--state-dir', join(tempDir(), 'never-enrolled')]);
    expect(code).toBe(5);
    expect(from(modules, 'src/cli/commands/')).toEqual(['src/cli/commands/status.ts']);
    for (const unused of ['node_modules/undici/', 'src/agent/daemon.ts', 'src/agent/client.ts', 'checks/', 'src/server/']) {
      expect(from(modules, unused), unused).toEqual([]);
    }
  });

  it.skipIf(process.platform !== 'linux')("check (Linux): this platform's checks only, never another platform's", async () => {
    const { modules, code } = await loadedModules(['check', '--json', '--only', 'OS_VERSION']);
    expect(code).toBe(0);
    expect(modules).toContain('checks/linux/index.ts');
    for (const other of ['checks/darwin/index.ts', 'checks/windows/index.ts', 'checks/freebsd/index.ts'])
      expect(modules).not.toContain(other);
    expect(from(modules, 'node_modules/undici/')).toEqual([]);
  });
});

// Each command loads only the parts of the bundle it runs: scripts/build.mjs splits the agent into an
// entry point and chunks required on demand; test/support/bundleModules.ts tells which source
// modules a run loaded. Start-up time itself is measured by `npm run bench:footprint`.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version';
import { agentEnv, runAgent, tempDir } from '../support/agent';
import { bundleFilesLoaded, modulesOf } from '../support/bundleModules';

/** The source modules in the bundle files that `device-agent <args>` loaded, and its result. */
async function loadedModules(args: string[]): Promise<{ modules: string[]; code: number | null; stdout: string }> {
  const result = await runAgent(args, { env: agentEnv({ NODE_DEBUG: 'module' }) });
  const files = bundleFilesLoaded(result.stderr);
  expect(files, result.stderr).toContain('device-agent.cjs');
  return { modules: modulesOf(files), code: result.code, stdout: result.stdout };
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

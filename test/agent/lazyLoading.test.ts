// Each command loads only the parts of the bundle it runs: scripts/build.mjs splits the agent into an
// entry point and chunks required on demand; test/support/bundleModules.ts tells which source
// modules a run loaded, and a preloaded script prints the built-in modules it loaded
// (process.moduleLoadList), which also counts process.getBuiltinModule and a built-in's own loads.
// Start-up time itself is measured by `npm run bench:footprint`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version';
import { agentEnv, enrollNewDevice, makeStateDir, removeStateDir, runAgent, tempDir } from '../support/agent';
import { startServer } from '../support/server';
import { bundleFilesLoaded, modulesOf } from '../support/bundleModules';

const BUILTINS_LINE = 'built-in modules loaded:';
/** Prints, at exit, the public built-in modules the process loaded. */
const builtinsReporter = join(tempDir(), 'builtins.cjs');
writeFileSync(
  builtinsReporter,
  `process.on('exit', () => process.stderr.write('${BUILTINS_LINE}' + process.moduleLoadList` +
    `.filter((m) => m.startsWith('NativeModule ') && !m.startsWith('NativeModule internal/'))` +
    `.map((m) => ' node:' + m.slice(13)).join('') + '\\n'));\n`,
);

interface Loaded {
  /** Source modules of the bundle files loaded. */
  modules: string[];
  builtins: string[];
  code: number | null;
  stdout: string;
}

/** The source modules in the bundle files that `device-agent <args>` loaded, its built-ins, and its result. */
async function loadedModules(args: string[]): Promise<Loaded> {
  const result = await runAgent(args, { env: agentEnv({ NODE_DEBUG: 'module', NODE_OPTIONS: `--require ${builtinsReporter}` }) });
  const files = bundleFilesLoaded(result.stderr);
  expect(files, result.stderr).toContain('device-agent.cjs');
  const builtinsLine = result.stderr.split('\n').find((line) => line.startsWith(BUILTINS_LINE));
  expect(builtinsLine, result.stderr).toBeDefined();
  const builtins = builtinsLine!.slice(BUILTINS_LINE.length).trim().split(' ');
  expect(builtins).toContain('node:fs'); // the reporter ran in this process
  return { modules: modulesOf(files), builtins, code: result.code, stdout: result.stdout };
}

/** Built-ins that cost a command 2-4 ms each to load and that these commands do not use. */
const UNUSED_BUILTINS = ['node:child_process', 'node:worker_threads', 'node:assert', 'node:dns', 'node:https', 'node:tls'];

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
    const { modules, builtins, code } = await loadedModules(['--help']);
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
    // commander requires node:child_process as it loads; the build defers it to first use.
    for (const builtin of [...UNUSED_BUILTINS, 'node:crypto']) expect(builtins, builtin).not.toContain(builtin);
  });

  it('status: its own command, no HTTP client, no daemon, no checks', async () => {
    const { modules, builtins, code } = await loadedModules(['status', '--state-dir', join(tempDir(), 'never-enrolled')]);
    expect(code).toBe(5);
    expect(from(modules, 'src/cli/commands/')).toEqual(['src/cli/commands/status.ts']);
    for (const unused of [
      'node_modules/undici/',
      'src/agent/daemon.ts',
      'src/agent/client.ts',
      'checks/',
      'src/server/',
      'src/linkHandler/',
    ]) {
      expect(from(modules, unused), unused).toEqual([]);
    }
    // It logs nothing: no logger. It validates its state files with zod/mini, never classic zod, and
    // without building the wire schemas.
    for (const unused of ['node_modules/pino', 'src/agent/logger.ts', 'node_modules/zod/v4/classic/', 'src/protocol/schemas.ts']) {
      expect(from(modules, unused), unused).toEqual([]);
    }
    expect(modules).toContain('src/protocol/rfc3339.ts');
    // The key store it would use is probed with an entry whose name is not hashed.
    for (const builtin of [...UNUSED_BUILTINS, 'node:crypto']) expect(builtins, builtin).not.toContain(builtin);
  });

  it('status of an enrollment: the key store it recorded, no node:crypto to name one', async () => {
    const server = await startServer();
    const stateDir = await makeStateDir();
    try {
      await enrollNewDevice(server, stateDir, server.url);
      const { builtins, code, stdout } = await loadedModules(['status', '--state-dir', stateDir]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^API key: +present$/m);
      for (const builtin of [...UNUSED_BUILTINS, 'node:crypto']) expect(builtins, builtin).not.toContain(builtin);
    } finally {
      await removeStateDir(stateDir);
      await server.stop();
    }
  });

  it('open-link: the link handler; its D-Bus client only in the mode the session bus starts', async () => {
    const linkFile = join(tempDir(), 'link');
    writeFileSync(linkFile, `device-agent://enroll?server=https%3A%2F%2Fagents.example.com&token=${'a'.repeat(96)}`, { mode: 0o600 });
    const described = await loadedModules(['open-link', '--describe', '--link-file', linkFile]);
    expect(described.code).toBe(0);
    expect(described.modules).toContain('src/linkHandler/openLink.ts');
    expect(from(described.modules, 'src/linkHandler/dbus')).toEqual([]);

    // No session bus here (agentEnv drops DBUS_*): it fails to connect, having loaded the client.
    const service = await loadedModules(['open-link', '--dbus-service']);
    expect(service.code).toBe(4);
    expect(from(service.modules, 'src/linkHandler/dbus').sort()).toEqual([
      'src/linkHandler/dbusApplication.ts',
      'src/linkHandler/dbusWire.ts',
    ]);
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

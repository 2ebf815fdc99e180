// The linux-x64 single-file executable (npm run package), built once for this file and copied alone
// into a fresh directory: it runs with no node_modules anywhere, loads the keyring addon from beside
// itself, checks this machine, enrolls and reports to the real reference server.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_KEYS, STATUSES } from '../../src/protocol/constants';
import { VERSION } from '../../src/version';
import { agentEnv, listStateFiles, tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { SECRET_SERVICE_TOOLS, useSecretService } from '../support/secretService';
import { startServer, type RunningServer } from '../support/server';
import { bareCopy, buildLinuxSea, PACKAGE_SCRIPT, runExe, SEA_BUILD_TOOLS } from './seaBuild';

const sea = requireTools(SEA_BUILD_TOOLS, 'single-file executable (linux-x64, Node 24)');
const symbolTables = requireTools(
  ['readelf'],
  'runs on a stripped runtime: no static symbol table or debug sections; every Node-API symbol the addon imports is still exported',
);
const withSecretService = requireTools(SECRET_SERVICE_TOOLS, 'keyring addon from beside the executable, with a real Secret Service');

let seaDir: string;
let exe: string;
let server: RunningServer;

beforeAll(async () => {
  if (sea.skip) return;
  [seaDir, server] = await Promise.all([buildLinuxSea(), startServer()]);
  exe = bareCopy(seaDir, { withKeyring: true });
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

describe.skipIf(sea.skip)(sea.title, () => {
  it('prints its version', async () => {
    const result = await runExe(exe, ['--version'], { env: agentEnv() });
    expect(result).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('compiles nothing it runs at start-up: every file of --help, status and check comes with a code cache V8 accepts', async () => {
    for (const args of [['--help'], ['status', '--state-dir', join(tempDir(), 'state')], ['check', '--json', '--only', 'OS_VERSION']]) {
      const result = await runExe(exe, args, { env: agentEnv({ NODE_DEBUG: 'device-agent-sea' }) });
      const files = [...result.stderr.matchAll(/^DEVICE-AGENT-SEA \d+: (\S+): (.+)$/gm)].map(([, file, cache]) => [file, cache]);
      expect(files.length, result.stderr).toBeGreaterThan(3);
      expect(files.map(([file]) => file)).toContain('device-agent.cjs');
      for (const [file, cache] of files) expect(cache, `${args[0]}: ${file}`).toBe('code cache used');
    }
  });

  it.skipIf(symbolTables.skip)(symbolTables.title, () => {
    const readelf = (...args: string[]) => execFileSync('readelf', ['-W', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const sections = [...readelf('-S', exe).matchAll(/^\s*\[\s*\d+\]\s+(\S+)/gm)].map((m) => m[1]!);
    expect(sections).toContain('.dynsym');
    expect(sections.filter((name) => name === '.symtab' || name === '.strtab' || name.startsWith('.debug'))).toEqual([]);
    /** Node-API symbols of a file's dynamic symbol table: [name, defined]. */
    const napi = (file: string) =>
      [...readelf('--dyn-syms', file).matchAll(/^\s*\d+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(napi_\w+)/gm)].map(
        (m) => [m[2]!, m[1] !== 'UND'] as const,
      );
    const imported = napi(join(seaDir, 'keyring.node')).filter(([, defined]) => !defined);
    expect(imported.length).toBeGreaterThan(10);
    const exported = new Set(
      napi(exe)
        .filter(([, defined]) => defined)
        .map(([name]) => name),
    );
    expect(imported.filter(([name]) => !exported.has(name))).toEqual([]);
  });

  it("carries the agent only: no file of the bundle loads the server's SQLite addon", () => {
    const dist = dirname(seaDir);
    const files = ['device-agent.cjs', ...readdirSync(join(dist, 'device-agent')).map((name) => join('device-agent', name))];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(join(dist, file), 'utf8');
      expect(text, file).not.toMatch(/require\(["']better-sqlite3["']\)/);
      expect(text, file).not.toContain('better_sqlite3.node');
    }
  });

  it('check --json: the nine checks of this machine, sent nowhere', async () => {
    const result = await runExe(exe, ['check', '--json'], { env: agentEnv() });
    expect(result.code).toBe(0);
    const results = JSON.parse(result.stdout) as Array<{ check_key: string; status: string; evidence: object; observed_at: string }>;
    expect(results.map((r) => r.check_key).sort()).toEqual([...CHECK_KEYS].sort());
    for (const r of results) {
      expect(STATUSES).toContain(r.status);
      expect(typeof r.evidence).toBe('object');
      expect(Number.isNaN(Date.parse(r.observed_at))).toBe(false);
    }
  });

  it('enrolls (token on standard input) and run --once turns the device ACTIVE with its postures', async () => {
    const device = await server.createDevice();
    const stateDir = join(tempDir(), 'state');
    const env = agentEnv();
    const enrolled = await runExe(exe, ['enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir, '--keystore', 'file'], {
      env,
      input: device.enrollment_token,
    });
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    const once = await runExe(exe, ['run', '--once', '--state-dir', stateDir], { env });
    expect(once.code, once.stderr).toBe(0);
    const shown = await server.showDevice(device.device_id);
    expect(shown.state).toBe('ACTIVE');
    expect(shown.agent_version).toBe(VERSION);
    expect(new Set(shown.postures.map((p: { check_key: string }) => p.check_key))).toEqual(new Set(CHECK_KEYS));
    for (const output of [enrolled, once]) expect(`${output.stdout}${output.stderr}`).not.toContain(device.enrollment_token);
  });

  it('install --dry-run copies the executable and its addon to the standard place', async () => {
    const result = await runExe(exe, ['install', '--dry-run', '--platform', 'linux', '--no-enroll'], { env: agentEnv() });
    expect(result.code).toBe(0);
    const from = dirname(exe);
    expect(result.stdout).toContain(
      [
        '  2. create directory /usr/lib/device-agent (mode 0755)',
        `  3. copy ${from}/device-agent to /usr/lib/device-agent/device-agent (mode 0755)`,
        `  4. copy ${from}/keyring.node to /usr/lib/device-agent/keyring.node (mode 0644)`,
        '  5. link /usr/bin/device-agent -> /usr/lib/device-agent/device-agent',
      ].join('\n'),
    );
    expect(result.stdout).toContain('ExecStart=/usr/lib/device-agent/device-agent run --state-dir /var/lib/device-agent\n');
  });

  it('without keyring.node beside it: `auto` falls back to the file store, `keyring` says why it cannot', async () => {
    const alone = bareCopy(seaDir, { withKeyring: false });
    const device = await server.createDevice();
    const env = agentEnv();
    const stateDir = join(tempDir(), 'state');
    const forced = await runExe(
      alone,
      ['enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir, '--keystore', 'keyring'],
      { env, input: device.enrollment_token },
    );
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain(`the OS secret store addon is missing: ${dirname(alone)}/keyring.node ships beside the program`);
    const auto = await runExe(alone, ['enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir], {
      env,
      input: device.enrollment_token,
    });
    expect(auto.code, auto.stderr).toBe(0);
    const status: unknown = JSON.parse((await runExe(alone, ['status', '--json', '--state-dir', stateDir], { env })).stdout);
    expect(status).toMatchObject({ enrolled: true, keystore: 'file' });
  });
});

describe.skipIf(sea.skip || withSecretService.skip)(withSecretService.title, () => {
  const secrets = useSecretService();

  it('stores the API key in the secret store, in no file of the state directory', async () => {
    // Another organization: this machine's hardware_uuid is already active in the default one.
    const device = await server.createDevice({ org: 'keyring' });
    const stateDir = join(tempDir(), 'state');
    const env = { ...agentEnv(), ...secrets.current.env };
    const enrolled = await runExe(
      exe,
      ['enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir, '--keystore', 'keyring'],
      { env, input: device.enrollment_token },
    );
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const status: unknown = JSON.parse((await runExe(exe, ['status', '--json', '--state-dir', stateDir], { env })).stdout);
    expect(status).toMatchObject({ enrolled: true, keystore: 'keyring' });
    expect(secrets.current.count({ service: 'device-agent' })).toBeGreaterThanOrEqual(1);
    for (const file of listStateFiles(stateDir)) expect(file.content ?? '').not.toMatch(/[0-9a-f]{96}/);
    const once = await runExe(exe, ['run', '--once', '--state-dir', stateDir], { env });
    expect(once.code, once.stderr).toBe(0);
    expect((await server.showDevice(device.device_id)).state).toBe('ACTIVE');
  });
});

describe('npm run package without the strip for a target', () => {
  it('refuses the target, naming the tool and its Debian package; writes nothing', () => {
    const out = join(tempDir(), 'out');
    const result = spawnSync(process.execPath, [PACKAGE_SCRIPT, '--targets', 'linux-arm64', '--out', out], {
      env: { PATH: tempDir('device-agent-empty-path-') },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'cannot build linux-arm64: aarch64-linux-gnu-strip is not installed (apt-get install binutils-aarch64-linux-gnu)',
    );
    expect(existsSync(out)).toBe(false);
  });
});

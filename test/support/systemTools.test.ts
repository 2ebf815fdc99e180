// The rules for tests that run system tools (test/support/systemTools.ts): what counts as an
// installed tool, the skip and its one line in the run's summary, the failure under
// DEVICE_AGENT_REQUIRE_ALL_TOOLS=1, and that .ci/run installs every package a skip can name.
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from './agent';
import { DEBIAN_PACKAGES, findTool, requireToolsIn, skipSummary } from './systemTools';

const executable = (dir: string, name: string) => {
  writeFileSync(join(dir, name), '#!/bin/sh\n', { mode: 0o755 });
  return join(dir, name);
};

describe('findTool', () => {
  it('finds a regular executable file, in the order of the directories', () => {
    const [first, second] = [tempDir(), tempDir()];
    executable(second, 'nft');
    expect(findTool('nft', [first, second])).toBe(join(second, 'nft'));
    executable(first, 'nft');
    expect(findTool('nft', [first, second])).toBe(join(first, 'nft'));
  });

  it('passes over what a fresh machine would not run: a file without x, a directory, a dangling link, /dev/null', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plain'), '#!/bin/sh\n', { mode: 0o644 });
    mkdirSync(join(dir, 'directory'));
    chmodSync(join(dir, 'directory'), 0o755);
    symlinkSync(join(dir, 'gone'), join(dir, 'dangling'));
    symlinkSync('/dev/null', join(dir, 'null'));
    // Also as root: access(X_OK) refuses root too when no execute bit is set.
    for (const name of ['plain', 'directory', 'dangling', 'null', 'absent']) expect(findTool(name, [dir]), name).toBeUndefined();
  });

  it('looks on the PATH and in the sbin directories by default', () => {
    const dir = tempDir();
    executable(dir, 'device-agent-test-tool');
    const path = process.env.PATH;
    process.env.PATH = dir;
    try {
      expect(findTool('device-agent-test-tool')).toBe(join(dir, 'device-agent-test-tool'));
      expect(findTool('sh')).toMatch(/^\/(usr\/)?bin\/sh$/);
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('requireToolsIn', () => {
  let log: string;
  const saved = { log: process.env.DEVICE_AGENT_TEST_SKIP_LOG, strict: process.env.DEVICE_AGENT_REQUIRE_ALL_TOOLS };
  beforeEach(() => {
    // A private skip list: this run's own must not show these made-up skips.
    log = join(tempDir(), 'skips.jsonl');
    process.env.DEVICE_AGENT_TEST_SKIP_LOG = log;
    delete process.env.DEVICE_AGENT_REQUIRE_ALL_TOOLS;
  });
  afterEach(() => {
    for (const [name, value] of [
      ['DEVICE_AGENT_TEST_SKIP_LOG', saved.log],
      ['DEVICE_AGENT_REQUIRE_ALL_TOOLS', saved.strict],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('runs what has every tool, recording nothing', () => {
    const dir = tempDir();
    executable(dir, 'nft');
    executable(dir, 'sshd');
    expect(requireToolsIn('test/a.test.ts', ['nft', 'sshd'], 'the suite', [dir])).toEqual({ skip: false, title: 'the suite' });
    expect(existsSync(log)).toBe(false);
    expect(skipSummary()).toBe('No test was skipped for a missing system tool.');
  });

  it('skips what lacks a tool, naming the missing tools and their Debian packages once each', () => {
    const dir = tempDir();
    executable(dir, 'msiinfo');
    const need = requireToolsIn('test/b.test.ts', ['wixl', 'msibuild', 'msiinfo', 'msiextract'], 'MSI', [dir]);
    expect(need).toEqual({
      skip: true,
      title: 'MSI (skipped: wixl, msibuild, msiextract are not installed (apt-get install wixl msitools))',
    });
    expect(requireToolsIn('test/c.test.ts', ['nginx'], 'behind nginx', [dir]).title).toBe(
      'behind nginx (skipped: nginx is not installed (apt-get install nginx))',
    );
  });

  it("ends the run with one line per skip, sorted, a file's second project not repeated; the list is then gone", () => {
    const empty = [tempDir()];
    requireToolsIn('test/z.test.ts', ['chromium'], 'the console in a browser', empty);
    requireToolsIn('test/a.test.ts', ['nft'], 'FIREWALL_ENABLED', empty);
    requireToolsIn('test/z.test.ts', ['chromium'], 'the console in a browser', empty);
    expect(skipSummary()).toBe(
      [
        'Skipped for a missing system tool (2; .ci/run installs them all):',
        '  test/a.test.ts: FIREWALL_ENABLED: nft is not installed (apt-get install nftables)',
        '  test/z.test.ts: the console in a browser: chromium is not installed (apt-get install chromium)',
      ].join('\n'),
    );
    expect(existsSync(log)).toBe(false);
  });

  it('fails instead under DEVICE_AGENT_REQUIRE_ALL_TOOLS=1, recording nothing', () => {
    process.env.DEVICE_AGENT_REQUIRE_ALL_TOOLS = '1';
    expect(() => requireToolsIn('test/a.test.ts', ['initdb', 'pg_ctl'], 'the postgres project', [tempDir()])).toThrow(
      'the postgres project: initdb, pg_ctl are not installed (apt-get install postgresql); DEVICE_AGENT_REQUIRE_ALL_TOOLS=1 allows no skip',
    );
    expect(existsSync(log)).toBe(false);
  });
});

describe('.ci/run', () => {
  const script = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');

  it('installs the package of every tool a test can skip for (Debian essential ones are always there)', () => {
    const installed = new Set(/apt-get install -y[^\n]*\\\n((?:.*\\\n)*.*)/.exec(script)![1]!.split(/[\s\\]+/));
    const essential = new Set(['bsdutils', 'dpkg', 'util-linux']);
    const named = new Set<string>(Object.values(DEBIAN_PACKAGES));
    expect([...named].filter((name) => !essential.has(name) && !installed.has(name))).toEqual([]);
  });

  it('makes a skip for a missing tool fail the tests it runs', () => {
    expect(script).toMatch(/^export DEVICE_AGENT_REQUIRE_ALL_TOOLS=1\nnpm test\n/m);
  });
});

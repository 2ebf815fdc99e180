// The system tools the tests run beside Node and the npm dependencies, and what happens when one is
// missing: the tests that need it are skipped, with the tool and its Debian package in their title
// and in the summary that ends the run (test/support/globalSetup.ts prints it). `.ci/run` installs
// every package named here and sets DEVICE_AGENT_REQUIRE_ALL_TOOLS=1, which turns a missing tool
// into a failure instead: CI skips nothing. docs/testing.md lists the rules. No vitest import: the
// configuration and globalSetup use this too (test files call test/support/requireTools.ts).
import { accessSync, appendFileSync, constants, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** Each tool a test runs, with the Debian 12 package that installs it. */
export const DEBIAN_PACKAGES = {
  busctl: 'systemd',
  chromium: 'chromium',
  'dbus-daemon': 'dbus-daemon',
  'dbus-run-session': 'dbus-daemon',
  'dbus-send': 'dbus-bin',
  'desktop-file-validate': 'desktop-file-utils',
  'dpkg-deb': 'dpkg',
  gdbus: 'libglib2.0-bin',
  'gnome-keyring-daemon': 'gnome-keyring',
  initdb: 'postgresql',
  loginctl: 'systemd',
  mmdebstrap: 'mmdebstrap',
  msibuild: 'msitools',
  msiextract: 'msitools',
  msiinfo: 'msitools',
  nft: 'nftables',
  nginx: 'nginx',
  nsenter: 'util-linux',
  pg_ctl: 'postgresql',
  prlimit: 'util-linux',
  readelf: 'binutils',
  rpm: 'rpm',
  rpmbuild: 'rpm',
  runuser: 'util-linux',
  script: 'bsdutils',
  'secret-tool': 'libsecret-tools',
  sshd: 'openssh-server',
  'systemd-analyze': 'systemd',
  'systemd-nspawn': 'systemd-container',
  unshare: 'util-linux',
  wixl: 'wixl',
  'x86_64-linux-gnu-strip': 'binutils-x86-64-linux-gnu',
  xz: 'xz-utils',
} as const;

export type Tool = keyof typeof DEBIAN_PACKAGES;

/** Set to 1 by .ci/run: a missing tool fails the run instead of skipping tests. */
const REQUIRE_ALL_TOOLS = 'DEVICE_AGENT_REQUIRE_ALL_TOOLS';
const SKIP_LOG = 'DEVICE_AGENT_TEST_SKIP_LOG';

/** PATH, then the sbin directories a non-root PATH lacks (nft, sshd and nginx live there). */
function toolDirs(): string[] {
  const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  return [...new Set([...path, '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'])];
}

/** The first regular, executable file named `tool` in `dirs` (a dangling link or /dev/null is no tool). */
export function findTool(tool: string, dirs: readonly string[] = toolDirs()): string | undefined {
  for (const dir of dirs) {
    const path = join(dir, tool);
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here, or not executable: the next directory.
    }
  }
  return undefined;
}

/**
 * Where to look for initdb and pg_ctl: DEVICE_AGENT_TEST_PG_BIN alone when set, else Debian's layout
 * (/usr/lib/postgresql/<major>/bin, newest major first), then the PATH.
 */
export function postgresBinDirs(): string[] {
  const explicit = process.env.DEVICE_AGENT_TEST_PG_BIN;
  if (explicit) return [explicit];
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name)) : [];
  return [...majors.sort((a, b) => Number(b) - Number(a)).map((major) => join(root, major, 'bin')), ...toolDirs()];
}

export interface Requirement {
  /** A tool is missing: skip what needs it. */
  skip: boolean;
  /** What needs the tools, and when skipped why: the title of the suite or test. */
  title: string;
}

interface SkipRecord {
  where: string;
  what: string;
  missing: string;
}

/** The run's list of skips: the main process names it before the test workers start, which inherit it. */
function skipLog(): string | undefined {
  // Outside a vitest run (knip reading vitest.config.ts) nothing is recorded.
  if (process.env.VITEST !== 'true') return undefined;
  return (process.env[SKIP_LOG] ??= join(tmpdir(), `device-agent-test-skips-${process.pid}.jsonl`));
}

/**
 * Whether `what` (in `where`: a test file, or the configuration) can run here: every tool of `tools`
 * installed (looked up in `dirs`). When one is missing, the skip is recorded for the run's summary,
 * or, under DEVICE_AGENT_REQUIRE_ALL_TOOLS=1, this throws: the test file (or the run) fails.
 */
export function requireToolsIn(where: string, tools: readonly Tool[], what: string, dirs?: readonly string[]): Requirement {
  const absent = tools.filter((tool) => findTool(tool, dirs) === undefined);
  if (absent.length === 0) return { skip: false, title: what };
  const packages = [...new Set(absent.map((tool) => DEBIAN_PACKAGES[tool]))];
  const missing = `${absent.join(', ')} ${absent.length === 1 ? 'is' : 'are'} not installed (apt-get install ${packages.join(' ')})`;
  if (process.env[REQUIRE_ALL_TOOLS] === '1') {
    throw new Error(`${what}: ${missing}; ${REQUIRE_ALL_TOOLS}=1 allows no skip`);
  }
  const log = skipLog();
  if (log !== undefined) appendFileSync(log, `${JSON.stringify({ where, what, missing } satisfies SkipRecord)}\n`);
  return { skip: true, title: `${what} (skipped: ${missing})` };
}

/** Names the run's skip list before any worker starts (globalSetup). */
export function startSkipLog(): void {
  skipLog();
}

/** The summary that ends a run: one line per skipped suite or test, then the list is removed. */
export function skipSummary(): string {
  const log = skipLog();
  if (log === undefined || !existsSync(log)) return 'No test was skipped for a missing system tool.';
  const lines = readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const { where, what, missing } = JSON.parse(line) as SkipRecord;
      return `  ${where}: ${what}: ${missing}`;
    });
  rmSync(log, { force: true });
  const unique = [...new Set(lines)].sort();
  return [`Skipped for a missing system tool (${unique.length}; .ci/run installs them all):`, ...unique].join('\n');
}

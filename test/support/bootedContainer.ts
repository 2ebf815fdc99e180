// A booted Debian 12 container (systemd-nspawn -b, systemd as PID 1) for the packages' service
// tests (test/packaging/serverService.test.ts, agentService.test.ts): the root filesystem
// (mmdebstrap, minbase + systemd) built once into .cache/rootfs/, commands run inside through
// nsenter. The container shares this machine's network.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const ROOTFS_CACHE = join(ROOT, '.cache', 'rootfs');
/** What the container needs beyond minbase: an init (and systemd-analyze). */
const ROOTFS_PACKAGES = ['systemd', 'systemd-sysv', 'dbus'];
const ROOTFS_TAR = join(ROOTFS_CACHE, `bookworm-minbase-${ROOTFS_PACKAGES.join('-')}.tar`);

/** The tools a booted container needs. */
export const BOOTED_TOOLS = ['systemd-nspawn', 'mmdebstrap', 'nsenter', 'dpkg-deb'] as const;

export /** Until `probe` returns a value (not undefined), or fails the test after `timeoutMs`. */
async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
    probe.once('error', fail);
  });
}

/** A booted container on `dir`; commands run inside through nsenter into its PID 1's namespaces. */
export class Container {
  private nspawn?: ChildProcess;
  private leader?: number;
  private log = '';
  constructor(
    readonly dir: string,
    /** The unit `show` reads. */
    private readonly unit: string,
  ) {}

  async boot(): Promise<void> {
    this.log = '';
    const nspawn = spawn('systemd-nspawn', ['-D', this.dir, '-b', '--register=no', '--keep-unit', '--console=read-only', '-q'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    nspawn.stdout.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    nspawn.stderr.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    this.nspawn = nspawn;
    // The container's init: the child of systemd-nspawn that runs systemd.
    this.leader = await until('the container to start', () => {
      const children = readFileSync(`/proc/${nspawn.pid}/task/${nspawn.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      return children.map(Number).find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'systemd');
    });
    // `offline` until systemd listens, `starting` until the boot is done; `degraded`: a unit of the
    // minimal system failed, which the check below names.
    const state = await until('systemd in the container', () => {
      const now = this.run(['systemctl', 'is-system-running'], { check: false }).stdout.trim();
      return ['running', 'degraded'].includes(now) ? now : undefined;
    });
    const failed = this.run(['systemctl', 'list-units', '--failed', '--plain', '--no-legend'], { check: false }).stdout;
    expect(failed, state).toBe('');
  }

  run(command: readonly string[], options: { check?: boolean; input?: string } = {}): { code: number; stdout: string; stderr: string } {
    const result = spawnSync('nsenter', ['-t', String(this.leader), '-a', ...command], {
      encoding: 'utf8',
      input: options.input,
      timeout: 120_000,
    });
    const outcome = { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
    if (options.check !== false && outcome.code !== 0) {
      throw new Error(`${command.join(' ')} exited with ${outcome.code}:\n${outcome.stdout}${outcome.stderr}`);
    }
    return outcome;
  }

  sh(script: string): string {
    return this.run(['sh', '-ec', script]).stdout;
  }

  /** A property of the unit. */
  show(property: string): string {
    return this.run(['systemctl', 'show', '-p', property, '--value', this.unit]).stdout.trim();
  }

  /** The file as seen inside (a path in the container). */
  path(inside: string): string {
    return join(this.dir, inside);
  }

  async powerOff(): Promise<void> {
    const nspawn = this.nspawn;
    if (!nspawn || nspawn.exitCode !== null) return;
    const exited = new Promise((done) => nspawn.once('exit', done));
    this.run(['systemctl', 'poweroff'], { check: false });
    const timer = setTimeout(() => this.kill(), 60_000);
    await exited;
    clearTimeout(timer);
  }

  /** Ends the container at once: its init, and with it every process in its PID namespace. */
  kill(): void {
    if (this.nspawn?.exitCode !== null) return;
    if (this.leader !== undefined) process.kill(this.leader, 'SIGKILL');
    this.nspawn.kill('SIGKILL');
  }
}

export /** The rootfs tarball, built once (about two minutes) and reused by later runs. */
function rootfsTarball(): string {
  if (existsSync(ROOTFS_TAR)) return ROOTFS_TAR;
  mkdirSync(ROOTFS_CACHE, { recursive: true });
  const partial = `${ROOTFS_TAR}.partial-${process.pid}`;
  execFileSync(
    'mmdebstrap',
    [
      '--quiet',
      '--format=tar',
      '--variant=minbase',
      `--include=${ROOTFS_PACKAGES.join(',')}`,
      'bookworm',
      partial,
      'http://deb.debian.org/debian',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  renameSync(partial, ROOTFS_TAR);
  return ROOTFS_TAR;
}

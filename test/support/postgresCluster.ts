// A throwaway PostgreSQL cluster for one test run: initdb in a new temporary directory, the server
// on a free loopback port (password authentication) and on a unix socket in that directory, removed
// at the end. PostgreSQL refuses to run as root, so when the tests run as root the cluster belongs
// to an unprivileged user (`nobody` unless DEVICE_AGENT_TEST_PG_USER names another).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTool, postgresBinDirs } from './systemTools';

/** What tests need to reach the cluster's superuser over TCP; serializable for vitest's `provide`. */
export interface PostgresCluster {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface RunningCluster extends PostgresCluster {
  /** The postmaster's pid (its backends are its children): what the fleet benchmark reads CPU from. */
  pid: () => number;
  stop(): void;
  /** Shuts the server down (fast: its connections are ended), keeping its data; `start` brings it back on the same port. */
  halt(): void;
  /** Starts a halted server again; returns once it accepts connections. */
  start(): void;
  /** SIGSTOP to the postmaster and its backends: connections are accepted by the kernel and never answered. */
  freeze(): void;
  /** SIGCONT to the frozen processes. */
  thaw(): void;
}

export interface ClusterOptions {
  /**
   * fsync on, as a deployment runs (the benchmarks); tests turn it off, their data is thrown away.
   * Default false.
   */
  durable?: boolean;
}

function binDir(): string {
  const dir = postgresBinDirs().find((candidate) => findTool('initdb', [candidate]) && findTool('pg_ctl', [candidate]));
  if (!dir) {
    throw new Error(
      "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql nor on the PATH (install Debian's postgresql package, or set DEVICE_AGENT_TEST_PG_BIN to the directory holding them)",
    );
  }
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

interface Owner {
  name: string;
  uid: number;
  gid: number;
}

function unprivilegedOwner(): Owner | undefined {
  if (process.geteuid?.() !== 0) return undefined;
  const name = process.env.DEVICE_AGENT_TEST_PG_USER ?? 'nobody';
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim()));
  return { name, uid: uid!, gid: gid! };
}

export async function startCluster(options: ClusterOptions = {}): Promise<RunningCluster> {
  const bin = binDir();
  const owner = unprivilegedOwner();
  const dir = mkdtempSync(join(tmpdir(), 'device-agent-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('base64url');
  const passwordFile = join(dir, 'superuser-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(passwordFile, owner.uid, owner.gid);
  }
  const run = (program: string, args: string[]) => {
    const [command, argv] = owner ? ['runuser', ['-u', owner.name, '--', join(bin, program), ...args]] : [join(bin, program), args];
    execFileSync(command, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    run('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
  } catch (error) {
    remove();
    throw new Error(`initdb failed: ${String((error as { stderr?: unknown }).stderr ?? error)}`, { cause: error });
  }
  // Throwaway data: no fsync unless asked. Enough connections for several servers per test file and two workers.
  const fsync = options.durable === true ? 'on' : 'off';
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${fsync} -c max_connections=400`;
    const start = () => run('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    try {
      start();
      // postmaster.pid's first line is the postmaster's pid.
      const pid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      let frozen: number[] = [];
      const thaw = () => {
        for (const stopped of frozen) signal(stopped, 'SIGCONT');
        frozen = [];
      };
      const stop = () => {
        thaw();
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          remove();
        }
      };
      return {
        host: '127.0.0.1',
        port,
        user: 'postgres',
        password,
        pid,
        stop,
        halt: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
        start,
        freeze() {
          // The postmaster first, so that it starts no new backend while its children are stopped.
          const postmaster = pid();
          signal(postmaster, 'SIGSTOP');
          frozen = [postmaster, ...childrenOf(postmaster)];
          for (const child of frozen.slice(1)) signal(child, 'SIGSTOP');
        },
        thaw,
      };
    } catch (error) {
      // Another process may have taken the port between the probe and the start.
      if (attempt >= 3) {
        remove();
        throw new Error(`pg_ctl start failed: ${String((error as { stderr?: unknown }).stderr ?? error)}`, { cause: error });
      }
    }
  }
}

function childrenOf(pid: number): number[] {
  const listed = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return listed
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
}

/** A process that exited meanwhile (a backend whose client left) needs no signal. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

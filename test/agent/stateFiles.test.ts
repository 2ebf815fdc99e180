// The state directory's building blocks on real files and real processes: atomic writes and
// owner-only modes, the exclusive lock (live holder, stale holder, contention between processes),
// the runtime status file, and where the state directory is on each OS.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ensurePrivateDirectory, writeFileAtomic } from '../../src/agent/state/atomicFile';
import { ElevationRequiredError, LockHeldError } from '../../src/agent/errors';
import { acquireLock, lockHolder } from '../../src/agent/state/lock';
import { StatusFile } from '../../src/agent/state/statusFile';
import { resolveStateDir, stateLayout } from '../../src/agent/state/layout';
import { platformPaths } from '../../src/platform/paths';
import { tempDir } from '../support/agent';

describe('atomic files', () => {
  it('writes 0600 files in a 0700 directory and leaves no temp file', async () => {
    const dir = join(tempDir(), 'state');
    await ensurePrivateDirectory(dir);
    await writeFileAtomic(join(dir, 'a.json'), 'one');
    await writeFileAtomic(join(dir, 'a.json'), 'two');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'a.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('tightens an existing directory that is too open', async () => {
    const dir = tempDir();
    const { chmodSync } = await import('node:fs');
    chmodSync(dir, 0o755);
    await ensurePrivateDirectory(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('concurrent writers never leave a torn file', async () => {
    const file = join(tempDir(), 'status.json');
    const bodies = Array.from({ length: 20 }, (_, i) => JSON.stringify({ writer: i, pad: 'x'.repeat(10_000) }));
    await Promise.all(bodies.map((body) => writeFileAtomic(file, body)));
    expect(bodies).toContain(readFileSync(file, 'utf8'));
  });
});

/** A node process that takes the lock file the way acquireLock does and holds it until killed. */
function holdLockInChild(file: string): Promise<{ pid: number; kill: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(file)}, process.pid + '\\n', { flag: 'wx' }); console.log('held'); setInterval(() => {}, 1000);`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () =>
      resolve({
        pid: child.pid!,
        kill: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      }),
    );
    child.once('error', reject);
  });
}

describe('exclusive lock', () => {
  it('reports a live holder with its pid, and takes over once that holder is dead', async () => {
    const file = join(tempDir(), 'enrollment.lock');
    const holder = await holdLockInChild(file);
    await expect(acquireLock(file, { wait: false })).rejects.toMatchObject({ name: 'LockHeldError', holderPid: holder.pid });
    expect(await lockHolder(file)).toBe(holder.pid);

    await holder.kill(); // dies without releasing: the file stays, naming a dead pid
    expect(existsSync(file)).toBe(true);
    expect(await lockHolder(file)).toBeNull();
    const lock = await acquireLock(file, { wait: false });
    expect(await lockHolder(file)).toBe(process.pid);
    await lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('waits for a live holder when asked to, and gives up after the timeout', async () => {
    const file = join(tempDir(), 'enrollment.lock');
    const holder = await holdLockInChild(file);
    await expect(acquireLock(file, { wait: true, timeoutMs: 200 })).rejects.toBeInstanceOf(LockHeldError);
    let waitedFor: number | undefined;
    const acquiring = acquireLock(file, { wait: true, onWait: (pid) => (waitedFor = pid) });
    await sleep(150);
    await holder.kill();
    const lock = await acquiring;
    expect(waitedFor).toBe(holder.pid);
    await lock.release();
  });

  it('admits one holder at a time among concurrent acquirers, including over a stale lock', async () => {
    const file = join(tempDir(), 'enrollment.lock');
    writeFileSync(file, '999999999\n'); // a pid that cannot exist
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        const lock = await acquireLock(file, { wait: true });
        inside += 1;
        most = Math.max(most, inside);
        await sleep(10);
        inside -= 1;
        await lock.release();
      }),
    );
    expect(most).toBe(1);
    expect(existsSync(file)).toBe(false);
  });

  it('serialises separate processes competing for a stale lock', async () => {
    const dir = tempDir();
    const file = join(dir, 'enrollment.lock');
    const log = join(dir, 'log');
    writeFileSync(file, '999999999\n');
    const script = `
      const { acquireLock } = await import(${JSON.stringify(new URL('../../src/agent/state/lock.ts', import.meta.url).href)});
      const { appendFileSync } = await import('node:fs');
      const lock = await acquireLock(${JSON.stringify(file)}, { wait: true });
      appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
      await new Promise((r) => setTimeout(r, 30));
      appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
      await lock.release();`;
    await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'inherit' });
            child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
          }),
      ),
    );
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(8);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]!.replace('in ', 'out ')).toBe(lines[i + 1]);
    }
  });
});

describe('runtime status', () => {
  it('merges patches in call order and keeps fields it does not know', async () => {
    const dir = tempDir();
    const status = new StatusFile(stateLayout(dir));
    await Promise.all([
      status.update({ device_id: 'dev_1', queued_results: 3 }),
      status.update({ last_heartbeat_at: '2026-01-02T03:04:05Z', future_field: 'kept' }),
      status.update({ queued_results: 4 }),
    ]);
    expect(await status.read()).toEqual({
      device_id: 'dev_1',
      queued_results: 4,
      last_heartbeat_at: '2026-01-02T03:04:05Z',
      future_field: 'kept',
    });
    expect(statSync(join(dir, 'status.json')).mode & 0o777).toBe(0o600);
    await status.update({ device_id: null });
    expect((await status.read()).device_id).toBeNull();
    expect(existsSync(join(dir, 'status.lock'))).toBe(false); // released after each write
  });

  it('reads a missing or damaged file as empty', async () => {
    const dir = tempDir();
    const status = new StatusFile(stateLayout(dir));
    expect(await status.read()).toEqual({});
    writeFileSync(join(dir, 'status.json'), '{not json');
    expect(await status.read()).toEqual({});
  });
});

describe('state directory', () => {
  const env = { XDG_STATE_HOME: '/home/ann/.state', LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local', ProgramData: 'D:\\ProgramData' };

  it('has the contract default per OS, for the service and per user', () => {
    expect(platformPaths('LINUX').systemStateDir(env)).toBe('/var/lib/device-agent');
    expect(platformPaths('FREEBSD').systemStateDir(env)).toBe('/var/lib/device-agent');
    expect(platformPaths('DARWIN').systemStateDir(env)).toBe('/Library/Application Support/device-agent');
    expect(platformPaths('WINDOWS').systemStateDir(env)).toBe('D:\\ProgramData\\device-agent');
    expect(platformPaths('LINUX').userStateDir(env, '/home/ann')).toBe('/home/ann/.state/device-agent');
    expect(platformPaths('LINUX').userStateDir({ XDG_STATE_HOME: 'relative' }, '/home/ann')).toBe('/home/ann/.local/state/device-agent');
    expect(platformPaths('DARWIN').userStateDir(env, '/Users/ann')).toBe('/Users/ann/Library/Application Support/device-agent');
    expect(platformPaths('WINDOWS').userStateDir(env, 'C:\\Users\\ann')).toBe('C:\\Users\\ann\\AppData\\Local\\device-agent');
  });

  it('prefers an explicit directory, then the system one for root, then the per-user one', () => {
    const paths = platformPaths('LINUX');
    expect(resolveStateDir({ explicit: 'rel/dir', paths })).toBe(join(process.cwd(), 'rel/dir'));
    expect(resolveStateDir({ privileged: true, paths, env })).toBe('/var/lib/device-agent');
    expect(resolveStateDir({ privileged: false, systemStatePresent: false, paths, env, home: '/home/ann' })).toBe(
      '/home/ann/.state/device-agent',
    );
    // An explicit directory wins even when the service's state exists.
    expect(resolveStateDir({ explicit: '/tmp/x', privileged: false, systemStatePresent: true, paths })).toBe('/tmp/x');
  });

  it('tells a non-root user to re-run elevated when the service state exists', () => {
    const attempt = () => resolveStateDir({ privileged: false, systemStatePresent: true, paths: platformPaths('LINUX'), env });
    expect(attempt).toThrow(ElevationRequiredError);
    expect(attempt).toThrow(/\/var\/lib\/device-agent.*sudo/);
  });
});

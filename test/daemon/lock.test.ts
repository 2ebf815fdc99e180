// The daemon's and the enrollment's lock on a full disk: a small tmpfs (root only) filled to the
// last byte. The lock must still be taken and name its holder, and leave nothing behind.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { acquireLock, lockHolder } from '../../src/agent/lock';

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('SKIPPED: the full-disk lock test mounts a small tmpfs, which needs root');

it.skipIf(!isRoot)('takes a lock on a full disk, names its holder, and leaves no file behind on release', async () => {
  const mountPoint = await mkdtemp(join(tmpdir(), 'lock-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', mountPoint]);
  try {
    const filler = await open(join(mountPoint, 'filler'), 'a');
    await expect(
      (async () => {
        for (;;) await filler.write(Buffer.alloc(4096));
      })(),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    await filler.close();

    const file = join(mountPoint, 'daemon.lock');
    const lock = await acquireLock(file, { wait: false });
    expect(await lockHolder(file)).toBe(process.pid);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    await expect(acquireLock(file, { wait: false })).rejects.toMatchObject({ name: 'LockHeldError', holderPid: process.pid });
    await lock.release();
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(mountPoint)).toEqual(['filler']);
  } finally {
    execFileSync('umount', [mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  }
});

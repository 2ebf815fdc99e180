// The daemon's and the enrollment's lock on a full disk: a small tmpfs (root only) filled to the
// last byte. The lock must still be taken and name its holder, and leave nothing behind.
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { acquireLock, lockHolder } from '../../src/agent/state/lock';
import { CAN_MOUNT, mountSmallDisk } from '../support/smallDisk';

if (!CAN_MOUNT) console.warn('SKIPPED: the full-disk lock test mounts a small tmpfs, which needs root');

it.skipIf(!CAN_MOUNT)('takes a lock on a full disk, names its holder, and leaves no file behind on release', async () => {
  const disk = await mountSmallDisk('lock-full-', '64k');
  try {
    await disk.fill();

    const file = join(disk.dir, 'daemon.lock');
    const lock = await acquireLock(file, { wait: false });
    expect(await lockHolder(file)).toBe(process.pid);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    await expect(acquireLock(file, { wait: false })).rejects.toMatchObject({ name: 'LockHeldError', holderPid: process.pid });
    await lock.release();
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(disk.dir)).toEqual(['filler']);
  } finally {
    await disk.unmount();
  }
});

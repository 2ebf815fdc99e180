// A full disk, for real: a small tmpfs mounted on a new temporary directory (root only), filled to
// the last byte by one filler file, and freed by removing it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mounting a tmpfs needs root; the tests that do skip otherwise and say so. */
export const CAN_MOUNT = process.getuid?.() === 0;

export interface SmallDisk {
  /** The mount point. */
  dir: string;
  /** Writes to `filler` until the file system refuses another byte. */
  fill(): Promise<void>;
  /** Removes `filler`. */
  free(): Promise<void>;
  /** Unmounts the tmpfs and removes the mount point. */
  unmount(): Promise<void>;
}

/** Mounts a tmpfs of `size` (mount's syntax: `512k`) on a new directory named after `prefix`. */
export async function mountSmallDisk(prefix: string, size: string): Promise<SmallDisk> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  const filler = join(dir, 'filler');
  return {
    dir,
    async fill() {
      const file = await open(filler, 'a');
      try {
        for (const chunk of [65_536, 4096, 512, 1]) {
          for (;;) {
            try {
              await file.write(Buffer.alloc(chunk));
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
              break;
            }
          }
        }
      } finally {
        await file.close();
      }
    },
    free: () => rm(filler, { force: true }),
    async unmount() {
      execFileSync('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

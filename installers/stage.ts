// What the package builders share (installers/build.ts for the agent, installers/server.ts for the
// server): files staged under a root as the target system will see them, the build tools run
// quietly, and the architecture names each package format uses.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface StagedFile {
  /** Absolute path on the target system. */
  path: string;
  mode: number;
  /** Text to write, or a file to copy, or a symbolic link target. */
  content?: string;
  from?: string;
  link?: string;
}

/** Runs a build tool; its output is shown only when it fails. */
export function tool(file: string, args: readonly string[], cwd?: string): void {
  try {
    execFileSync(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`${file} failed:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`, { cause: err });
  }
}

export function stage(root: string, files: readonly StagedFile[]): void {
  for (const file of files) {
    const target = join(root, file.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    if (file.link !== undefined) symlinkSync(file.link, target);
    else if (file.from !== undefined) copyFileSync(file.from, target);
    else if (file.content !== undefined) writeFileSync(target, file.content);
    else mkdirSync(target, { recursive: true });
    if (file.link === undefined) chmodSync(target, file.mode);
  }
}

export type LinuxArch = 'x64' | 'arm64';
export const ARCH_NAMES: Record<LinuxArch, { deb: string; rpm: string }> = {
  x64: { deb: 'amd64', rpm: 'x86_64' },
  arm64: { deb: 'arm64', rpm: 'aarch64' },
};

/** Installed size of a staged root (Debian's Installed-Size), without its DEBIAN/ directory. */
export function installedKiB(root: string): number {
  let bytes = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'DEBIAN') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) bytes += statSync(path).size;
    }
  };
  walk(root);
  return Math.ceil(bytes / 1024);
}

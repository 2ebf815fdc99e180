// Whether this process runs with the rights of the system service (root, or an elevated Windows
// shell), which decides between the system and the per-user state directory.
import { join } from 'node:path';

let cached: boolean | undefined;

export function isPrivileged(): boolean {
  if (cached !== undefined) return cached;
  if (typeof process.getuid === 'function') {
    cached = process.getuid() === 0;
  } else {
    // Windows has no uid: `net session` succeeds only in an elevated (administrator) token.
    // node:child_process is loaded here only: elsewhere it would cost every command's start-up.
    const { spawnSync } = process.getBuiltinModule('node:child_process');
    const net = join(process.env.SystemRoot ?? 'C:\\Windows', 'System32', 'net.exe');
    cached = spawnSync(net, ['session'], { stdio: 'ignore', windowsHide: true, timeout: 5000 }).status === 0;
  }
  return cached;
}

// Builds the linux-x64 single-file executable for a test file (scripts/package.mjs into a private
// directory: test files run in parallel), and runs it as a child process.
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../support/agent';
import type { Tool } from '../support/systemTools';

export const PACKAGE_SCRIPT = fileURLToPath(new URL('../../scripts/package.mjs', import.meta.url));

/** What `buildLinuxSea` runs: linux-x64's strip (scripts/package.mjs strips the runtime before it injects the program). */
export const SEA_BUILD_TOOLS: readonly Tool[] = ['x86_64-linux-gnu-strip'];

/** The executable and its keyring addon, built fresh; the first build downloads the Node runtime. */
export async function buildLinuxSea(): Promise<string> {
  const out = tempDir('device-agent-sea-');
  await promisify(execFile)(process.execPath, [PACKAGE_SCRIPT, '--targets', 'linux-x64', '--out', out], { maxBuffer: 16 << 20 });
  return join(out, 'linux-x64');
}

/** A copy of the executable alone in a fresh directory (no node_modules anywhere near it). */
export function bareCopy(seaDir: string, options: { withKeyring: boolean }): string {
  const dir = tempDir('device-agent-bare-');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(seaDir, 'device-agent'), join(dir, 'device-agent'));
  if (options.withKeyring) copyFileSync(join(seaDir, 'keyring.node'), join(dir, 'keyring.node'));
  return join(dir, 'device-agent');
}

export interface ExeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runExe(
  exe: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<ExeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { env: options.env, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${exe} ${args.join(' ')} did not exit in time\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

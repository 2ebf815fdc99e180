// Opening a URL in the user's browser with the platform's own opener: xdg-open (Linux, FreeBSD),
// open (macOS), and on Windows rundll32's FileProtocolHandler, which is what `start` does without a
// shell parsing the URL. The URL is an argument of the opener's process, so it is in the process
// list while the opener runs (docs/agent.md, "My device").
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Platform } from '../protocol/schemas';

type Opener = (url: string, env: NodeJS.ProcessEnv) => { file: string; args: string[] };

const OPENERS: Record<Platform, Opener> = {
  LINUX: (url) => ({ file: '/usr/bin/xdg-open', args: [url] }),
  FREEBSD: (url) => ({ file: '/usr/local/bin/xdg-open', args: [url] }),
  DARWIN: (url) => ({ file: '/usr/bin/open', args: [url] }),
  WINDOWS: (url, env) => ({
    file: join(env.SystemRoot ?? 'C:\\Windows', 'System32', 'rundll32.exe'),
    args: ['url.dll,FileProtocolHandler', url],
  }),
};

/** The opener's command line for `url` on `platform`. */
export function openerFor(platform: Platform, url: string, env: NodeJS.ProcessEnv = process.env): { file: string; args: string[] } {
  return OPENERS[platform](url, env);
}

/** Runs the opener and waits for it: rejects when it cannot start or exits with a failure. */
export function openInBrowser(platform: Platform, url: string): Promise<void> {
  const { file, args } = openerFor(platform, url);
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    child.once('error', (err) => reject(new Error(`cannot run ${file}: ${err.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

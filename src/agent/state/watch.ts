// Notices that a file changed (created, replaced, removed) without reading it: fs.watch on its
// directory for a prompt answer, and a periodic stat as the fallback for file systems and platforms
// where watching is unreliable (network mounts, some containers). The daemon watches the
// enrollment record this way, so an enrollment is picked up without a restart and without a request.
import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

const WATCH_POLL_MS = 5_000;

export interface FileWatch {
  close(): void;
}

export function watchFileChanges(file: string, onChange: () => void, pollMs = WATCH_POLL_MS): FileWatch {
  let last = signature(file);
  const check = () => {
    const now = signature(file);
    if (now === last) return;
    last = now;
    onChange();
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (!name || name === basename(file)) check();
    });
    watcher.on('error', () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined; // no watching here: polling alone
  }
  const timer = setInterval(check, pollMs);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      watcher?.close();
    },
  };
}

/** Identity and version of the file: changes whenever it is replaced (atomic rename), written or removed. */
function signature(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'absent';
  }
}

// The process's soft limit on open files, where the system tells it without a native addon
// (Linux: /proc/self/limits); undefined elsewhere.
import { readFileSync } from 'node:fs';

export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

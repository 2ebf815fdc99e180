// Typed reads of what the programs write (state files, --json output, log lines): the declared type
// names what a test may look at; the test's assertions check it.
import { readFileSync } from 'node:fs';

export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export function readJson<T>(file: string): T {
  return parseJson<T>(readFileSync(file, 'utf8'));
}

// Database errors as pg and a real PostgreSQL server raise them, recorded by
// test/server/postgres/failures.test.ts (DEVICE_AGENT_RECORD=1 writes the file; otherwise that test
// checks every live error against its recording) and replayed where there is no cluster:
// test/server/databaseFailures.test.ts, which the mutation run of src/server/db/failures.ts uses.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface RecordedError {
  /** What the test did to raise it. */
  label: string;
  /** The error's class: pg's DatabaseError, or Error. */
  class: string;
  code: string | null;
  /** A port at the end written as <port>: it changes from run to run. */
  message: string;
}

const FILE = fileURLToPath(new URL('../fixtures/server/databaseErrors.json', import.meta.url));

export const RECORDING = process.env.DEVICE_AGENT_RECORD === '1';

export function recordedErrors(): RecordedError[] {
  return JSON.parse(readFileSync(FILE, 'utf8')) as RecordedError[];
}

export function recordingOf(label: string, error: unknown): RecordedError {
  const code = (error as { code?: unknown }).code;
  return {
    label,
    class: (error as Error).constructor.name,
    code: typeof code === 'string' ? code : null,
    message: (error as Error).message.replace(/:\d+$/, ':<port>'),
  };
}

/** Writes `entries` (and the file's entries of labels not among them), sorted, each once. */
export function saveRecordings(entries: readonly RecordedError[]): void {
  const labels = new Set(entries.map((entry) => entry.label));
  const kept = recordedErrors().filter((entry) => !labels.has(entry.label));
  const unique = new Map([...kept, ...entries].map((entry) => [JSON.stringify(entry), entry]));
  const sorted = [...unique.values()].sort((a, b) => a.label.localeCompare(b.label) || a.message.localeCompare(b.message));
  writeFileSync(FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

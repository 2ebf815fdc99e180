// The durable posture queue in <stateDir>/queue/. Every cycle's results land here before any upload.
//
// Design: one file per posture cycle (a "segment"), named `<16-digit sequence>-<result count>.json`.
// - Appending a cycle is one atomic write (temp file, fsync, rename, fsync of the directory): after a
//   SIGKILL or a power loss the cycle is wholly there or wholly absent, and no torn file can hide others.
// - Counting is a directory listing (the count is in the name); order is the sequence (oldest first).
// - Acknowledging is deleting the file after the server's 204; a crash before the delete re-sends the
//   batch, which is the at-least-once promise. A cycle delivered in part (more than one batch, or a
//   result dropped after a 400) is rewritten under the same sequence with what remains and the report
//   id the server gave; if a crash leaves both files, the one with fewer results is the newer state.
// - A file that cannot be read or parsed is moved to queue/quarantine/ and counted, never fatal.
// - The bound never trusts the count in a name: when the names add up to more than the bound, every
//   segment is read first, so a damaged or foreign file named as if it held a billion results is
//   quarantined, never a reason to drop others.
// Only the daemon writes here, under the run lock; a wipe (agentState.ts) removes the directory.
// Constructed only by the state owner (AgentState.queue), which counts quarantined files in status.json.
import { readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { PostureResult } from '../../protocol/schemas';
import { ensurePrivateDirectory, isCode, TEMP_SUFFIX, writeFileAtomic } from './atomicFile';
import { stateLayout } from './layout';

const QUARANTINE_DIRECTORY = 'quarantine';
/** The contract's floor: the queue holds at least this many results before dropping the oldest. */
export const DEFAULT_MAX_QUEUED_RESULTS = 10_000;
/** Quarantined files kept for inspection; older ones are deleted. */
const MAX_QUARANTINED_FILES = 20;

const SEGMENT_NAME = /^(\d{16})-(\d{1,9})\.json$/;

const SegmentFile = z.object({
  v: z.literal(1),
  created_at: z.string(),
  /** Posture report of this cycle, once the server assigned one (its first batch was accepted). */
  report_id: z.optional(z.string().check(z.minLength(1))),
  results: z.array(PostureResult).check(z.minLength(1)),
});

export interface Segment {
  readonly sequence: number;
  readonly file: string;
  readonly createdAt: string;
  readonly reportId?: string;
  readonly results: readonly PostureResult[];
}

export interface SegmentEntry {
  sequence: number;
  count: number;
  name: string;
}

export interface QueueOptions {
  maxResults?: number;
  /** Called when a damaged file was moved to queue/quarantine/ (never throws into the queue). */
  onQuarantine?: (file: string) => void;
}

/** Results waiting in a state directory's queue, from a listing only (for `doctor`). */
export async function countQueuedResults(stateDir: string): Promise<number> {
  return sum(await listSegments(stateLayout(stateDir).queueDir));
}

export class PostureQueue {
  private nextSequence: number;

  private constructor(
    readonly directory: string,
    readonly maxResults: number,
    highestSequence: number,
    private readonly onQuarantine: (file: string) => void,
  ) {
    this.nextSequence = highestSequence + 1;
  }

  /** Opens (creating) the queue and repairs what a crash can leave: temp files, superseded segments. */
  static async open(stateDir: string, options: QueueOptions = {}): Promise<PostureQueue> {
    const directory = stateLayout(stateDir).queueDir;
    await ensurePrivateDirectory(directory);
    for (const name of await readdir(directory)) {
      if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) await rm(join(directory, name), { force: true });
    }
    const segments = await listSegments(directory, true);
    const highest = segments.reduce((max, s) => Math.max(max, s.sequence), 0);
    return new PostureQueue(
      directory,
      options.maxResults ?? DEFAULT_MAX_QUEUED_RESULTS,
      highest,
      options.onQuarantine ?? (() => undefined),
    );
  }

  async count(): Promise<number> {
    return sum(await listSegments(this.directory));
  }

  /**
   * Stores one cycle's results durably, then enforces the bound by dropping the oldest results.
   * Returns how many results were dropped.
   */
  async append(results: readonly PostureResult[]): Promise<{ dropped: number }> {
    if (results.length === 0) return { dropped: 0 };
    await ensurePrivateDirectory(this.directory);
    await this.write(this.nextSequence++, { created_at: new Date().toISOString(), results });
    return { dropped: await this.enforceBound() };
  }

  /** The oldest readable segment, or null when the queue is empty. Damaged files are quarantined on the way. */
  async oldest(): Promise<Segment | null> {
    for (const entry of await listSegments(this.directory)) {
      const segment = await this.read(entry);
      if (segment) return segment;
    }
    return null;
  }

  /**
   * Records delivery progress on a segment: `remaining` are the results still to send (none: the
   * segment is acknowledged and deleted), `reportId` the cycle's posture report.
   */
  async settle(segment: Segment, remaining: readonly PostureResult[], reportId?: string): Promise<void> {
    if (remaining.length > 0) {
      const body = { created_at: segment.createdAt, ...(reportId ? { report_id: reportId } : {}), results: remaining };
      try {
        await this.write(segment.sequence, body);
      } catch (err) {
        if (isCode(err, 'ENOENT')) return; // the queue was wiped meanwhile (unenroll): nothing left to settle
        throw err;
      }
      if (remaining.length === segment.results.length) return; // same name: replaced in place
    }
    await unlinkIfExists(segment.file);
  }

  private async write(
    sequence: number,
    body: { created_at: string; report_id?: string; results: readonly PostureResult[] },
  ): Promise<void> {
    const name = `${String(sequence).padStart(16, '0')}-${body.results.length}.json`;
    await writeFileAtomic(join(this.directory, name), JSON.stringify({ v: 1, ...body }));
  }

  private async read(entry: SegmentEntry): Promise<Segment | null> {
    const file = join(this.directory, entry.name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if (isCode(err, 'ENOENT')) return null;
      await this.quarantine(entry.name);
      return null;
    }
    const parsed = parseSegment(text);
    if (!parsed || parsed.results.length !== entry.count) {
      await this.quarantine(entry.name);
      return null;
    }
    return {
      sequence: entry.sequence,
      file,
      createdAt: parsed.created_at,
      ...(parsed.report_id ? { reportId: parsed.report_id } : {}),
      results: parsed.results,
    };
  }

  private async enforceBound(): Promise<number> {
    const listed = await listSegments(this.directory);
    if (sum(listed) <= this.maxResults) return 0;
    // Over the bound by the names: read every segment before dropping anything by its count.
    const segments: Segment[] = [];
    for (const entry of listed) {
      const segment = await this.read(entry);
      if (segment) segments.push(segment);
    }
    let excess = segments.reduce((total, s) => total + s.results.length, 0) - this.maxResults;
    let dropped = 0;
    for (const segment of segments) {
      if (excess <= 0) break;
      const drop = Math.min(excess, segment.results.length);
      await this.settle(segment, segment.results.slice(drop), segment.reportId);
      excess -= drop;
      dropped += drop;
    }
    return dropped;
  }

  private async quarantine(name: string): Promise<void> {
    const aside = join(this.directory, QUARANTINE_DIRECTORY);
    this.onQuarantine(name);
    try {
      await ensurePrivateDirectory(aside);
      await rename(join(this.directory, name), join(aside, `${Date.now()}-${name}`));
      const kept = (await readdir(aside)).sort();
      for (const old of kept.slice(0, Math.max(0, kept.length - MAX_QUARANTINED_FILES))) {
        await rm(join(aside, old), { force: true });
      }
    } catch {
      // Cannot move it aside (e.g. I/O error): delete it so that it never blocks the queue.
      await rm(join(this.directory, name), { force: true });
    }
  }
}

function parseSegment(text: string): z.infer<typeof SegmentFile> | null {
  try {
    const result = SegmentFile.safeParse(JSON.parse(text));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

/**
 * The segments a directory listing names, oldest first, whatever order the file system lists them
 * in. Two files of one sequence exist only when a crash interrupted a rewrite: the one with fewer
 * results is the newer state; the other is `superseded`. Other names are not segments.
 */
export function segmentsIn(names: readonly string[]): { segments: SegmentEntry[]; superseded: string[] } {
  const bySequence = new Map<number, SegmentEntry>();
  const superseded: string[] = [];
  for (const name of names) {
    const match = SEGMENT_NAME.exec(name);
    if (!match) continue;
    const entry = { sequence: Number(match[1]), count: Number(match[2]), name };
    const other = bySequence.get(entry.sequence);
    if (other && other.count <= entry.count) {
      superseded.push(entry.name);
      continue;
    }
    if (other) superseded.push(other.name);
    bySequence.set(entry.sequence, entry);
  }
  return { segments: [...bySequence.values()].sort((a, b) => a.sequence - b.sequence), superseded };
}

/** Segment files, oldest first; `repair` deletes the superseded ones. */
async function listSegments(directory: string, repair = false): Promise<SegmentEntry[]> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return [];
    throw err;
  }
  const { segments, superseded } = segmentsIn(names);
  if (repair) for (const name of superseded) await unlinkIfExists(join(directory, name));
  return segments;
}

function sum(segments: readonly SegmentEntry[]): number {
  return segments.reduce((total, s) => total + s.count, 0);
}

async function unlinkIfExists(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (!isCode(err, 'ENOENT')) throw err;
  }
}

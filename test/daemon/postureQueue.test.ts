import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stateLayout } from '../../src/agent/state/layout';
import {
  countQueuedResults,
  DEFAULT_MAX_QUEUED_RESULTS,
  PostureQueue as Queue,
  segmentsIn,
  type QueueOptions,
} from '../../src/agent/state/postureQueue';
import type { PostureResult } from '../../src/protocol/schemas';

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'queue-test-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const queueDirectory = (dir: string) => stateLayout(dir).queueDir;

/** A queue that counts the files it quarantined, as the daemon does through onQuarantine. */
type PostureQueue = Queue & { quarantined: number };
const PostureQueue = {
  async open(dir: string, options: QueueOptions = {}): Promise<PostureQueue> {
    const counter = { quarantined: 0 };
    const queue = await Queue.open(dir, { ...options, onQuarantine: () => (counter.quarantined += 1) });
    return Object.defineProperty(queue, 'quarantined', { get: () => counter.quarantined }) as PostureQueue;
  },
};

function results(prefix: string, n: number): PostureResult[] {
  return Array.from({ length: n }, (_, i) => ({
    check_key: `${prefix}_${i}`,
    status: 'PASS' as const,
    evidence: { index: i },
    observed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  }));
}

async function drain(queue: PostureQueue): Promise<string[]> {
  const keys: string[] = [];
  for (let segment = await queue.oldest(); segment; segment = await queue.oldest()) {
    keys.push(...segment.results.map((r) => r.check_key));
    await queue.settle(segment, []);
  }
  return keys;
}

describe('PostureQueue', () => {
  it('keeps cycles on disk, owner-only, and gives them back oldest first across a reopen', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 3));
    await queue.append(results('B', 2));
    expect(await queue.count()).toBe(5);
    expect(await countQueuedResults(stateDir)).toBe(5);

    const dir = queueDirectory(stateDir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const name of await readdir(dir)) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);

    const reopened = await PostureQueue.open(stateDir);
    await reopened.append(results('C', 1));
    expect(await drain(reopened)).toEqual(['A_0', 'A_1', 'A_2', 'B_0', 'B_1', 'C_0']);
    expect(await reopened.count()).toBe(0);
  });

  it('records partial delivery and the report id, and acknowledges by deleting', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 4));
    const segment = (await queue.oldest())!;
    await queue.settle(segment, segment.results.slice(3), 'rep_1');
    const rest = (await (await PostureQueue.open(stateDir)).oldest())!;
    expect(rest.results.map((r) => r.check_key)).toEqual(['A_3']);
    expect(rest.reportId).toBe('rep_1');
    expect(rest.sequence).toBe(segment.sequence);
    await queue.settle(rest, []);
    expect(await readdir(queueDirectory(stateDir))).toEqual([]);
  });

  it('repairs what an interrupted rewrite or write leaves: the newer file of a sequence wins, temp files go', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 3));
    const segment = (await queue.oldest())!;
    const dir = queueDirectory(stateDir);
    // A crash between writing the rewritten segment and deleting the old one leaves both.
    const old = await readFile(segment.file, 'utf8');
    await queue.settle(segment, segment.results.slice(2));
    await writeFile(segment.file, old, { mode: 0o600 });
    await writeFile(join(dir, '.0000000000000009-1.json.123.abcd.tmp'), '{"v":1,"resu', { mode: 0o600 });

    const reopened = await PostureQueue.open(stateDir);
    expect(await readdir(dir)).toEqual([`${String(segment.sequence).padStart(16, '0')}-1.json`]);
    expect(await drain(reopened)).toEqual(['A_2']);
  });

  it('quarantines a damaged entry, counts it, and goes on with the next', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 2));
    await queue.append(results('B', 2));
    await queue.append(results('C', 1));
    const dir = queueDirectory(stateDir);
    const [first, second] = (await readdir(dir)).sort();
    await writeFile(join(dir, first!), '{"v":1,"results":[{"check_key":', { mode: 0o600 }); // torn
    const body = JSON.parse(await readFile(join(dir, second!), 'utf8')) as { results: PostureResult[] };
    body.results.pop();
    await writeFile(join(dir, second!), JSON.stringify(body), { mode: 0o600 }); // count no longer matches its name

    expect(await drain(queue)).toEqual(['C_0']);
    expect(queue.quarantined).toBe(2);
    expect((await readdir(join(dir, 'quarantine'))).length).toBe(2);
    expect(await queue.count()).toBe(0);
  });

  it('drops the oldest results beyond its bound and says how many', async () => {
    const queue = await PostureQueue.open(stateDir, { maxResults: 25 });
    expect((await queue.append(results('A', 10))).dropped).toBe(0);
    expect((await queue.append(results('B', 10))).dropped).toBe(0);
    expect((await queue.append(results('C', 10))).dropped).toBe(5);
    expect(await queue.count()).toBe(25);
    expect((await queue.append(results('D', 30))).dropped).toBe(30);
    expect(await drain(queue)).toEqual(
      results('D', 30)
        .slice(5)
        .map((r) => r.check_key),
    );
  });

  it('holds the contract minimum of 10,000 results before dropping any', async () => {
    expect(DEFAULT_MAX_QUEUED_RESULTS).toBeGreaterThanOrEqual(10_000);
    const queue = await PostureQueue.open(stateDir);
    let dropped = 0;
    for (let i = 0; i < 100; i += 1) dropped += (await queue.append(results(`C${i}`, 100))).dropped;
    expect(dropped).toBe(0);
    expect(await queue.count()).toBe(10_000);
    expect((await queue.append(results('X', 9))).dropped).toBe(9);
    expect((await queue.oldest())!.results[0]!.check_key).toBe('C0_9');
  });

  it('gives cycles back oldest first whatever order the files were created in', async () => {
    const queue = await PostureQueue.open(stateDir);
    for (let i = 0; i < 8; i += 1) await queue.append(results(`C${i}`, 1));
    // Recreate the files newest first, so that a listing in creation order is the reverse of the queue's order.
    const dir = queueDirectory(stateDir);
    const names = (await readdir(dir)).sort().reverse();
    const bodies = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
    for (const name of names) await unlink(join(dir, name));
    for (const [i, name] of names.entries()) await writeFile(join(dir, name), bodies[i]!, { mode: 0o600 });
    expect(await drain(await PostureQueue.open(stateDir))).toEqual(['C0_0', 'C1_0', 'C2_0', 'C3_0', 'C4_0', 'C5_0', 'C6_0', 'C7_0']);
  });

  it('repairs an interrupted rewrite whichever of the two files was written last', async () => {
    for (const newerFirst of [true, false]) {
      const dir = queueDirectory(stateDir);
      await rm(dir, { recursive: true, force: true });
      const queue = await PostureQueue.open(stateDir);
      await queue.append(results('A', 3));
      const segment = (await queue.oldest())!;
      const old = await readFile(segment.file, 'utf8');
      await queue.settle(segment, segment.results.slice(1));
      const newer = join(dir, `${String(segment.sequence).padStart(16, '0')}-2.json`);
      const newerBody = await readFile(newer, 'utf8');
      await unlink(newer);
      const writes: [string, string][] = [
        [newer, newerBody],
        [segment.file, old],
      ];
      for (const [file, body] of newerFirst ? writes : writes.reverse()) await writeFile(file, body, { mode: 0o600 });

      const reopened = await PostureQueue.open(stateDir);
      expect(await readdir(dir)).toEqual([`${String(segment.sequence).padStart(16, '0')}-2.json`]);
      expect(await drain(reopened)).toEqual(['A_1', 'A_2']);
    }
  });

  it('does not let a damaged file named as if it held a billion results push real results out', async () => {
    const dir = queueDirectory(stateDir);
    const queue = await PostureQueue.open(stateDir, { maxResults: 25 });
    await writeFile(join(dir, '0000000000000000-999999999.json'), 'not a segment', { mode: 0o600 });
    expect((await queue.append(results('A', 10))).dropped).toBe(0);
    expect(queue.quarantined).toBe(1);
    expect(await queue.count()).toBe(10);
    expect((await queue.append(results('B', 10))).dropped).toBe(0);
    // A segment whose content no longer matches the count in its name counts for nothing either.
    const [first] = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    await writeFile(join(dir, first!), JSON.stringify({ v: 1, created_at: 'x', results: results('X', 1) }), { mode: 0o600 });
    expect((await queue.append(results('C', 10))).dropped).toBe(0);
    expect(queue.quarantined).toBe(2);
    expect((await queue.append(results('D', 10))).dropped).toBe(5); // the real bound still holds
    expect(await drain(queue)).toEqual([...results('B', 10).slice(5), ...results('C', 10), ...results('D', 10)].map((r) => r.check_key));
    expect(await readdir(join(dir, 'quarantine'))).toHaveLength(2);
  });

  it('tolerates being wiped underneath (unenroll while running)', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 3));
    const segment = (await queue.oldest())!;
    await rm(queueDirectory(stateDir), { recursive: true });
    await queue.settle(segment, segment.results.slice(1));
    expect(await queue.count()).toBe(0);
    expect(await queue.oldest()).toBeNull();
    await queue.append(results('B', 1));
    expect(await drain(queue)).toEqual(['B_0']);
  });
});

describe('PostureQueue edges', () => {
  const segmentName = (sequence: number, count: number) => `${String(sequence).padStart(16, '0')}-${count}.json`;

  it('lives in <state dir>/queue and stores nothing for an empty cycle', async () => {
    const queue = await PostureQueue.open(stateDir);
    expect(queue.directory).toBe(join(stateDir, 'queue'));
    expect(await queue.append([])).toEqual({ dropped: 0 });
    expect(await readdir(join(stateDir, 'queue'))).toEqual([]);
  });

  it('removes only its own temp files when it opens', async () => {
    const dir = queueDirectory(stateDir);
    await mkdir(dir, { recursive: true });
    for (const name of ['.0000000000000001-1.json.77.ab12.tmp', '.keep', 'notes.tmp']) await writeFile(join(dir, name), 'x');
    await PostureQueue.open(stateDir);
    expect((await readdir(dir)).sort()).toEqual(['.keep', 'notes.tmp']);
  });

  it('records a report id on a segment whose results are all still to send', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 2));
    const segment = (await queue.oldest())!;
    await queue.settle(segment, segment.results, 'rep_9');
    expect(await readdir(queueDirectory(stateDir))).toEqual([segmentName(segment.sequence, 2)]);
    expect((await queue.oldest())!.reportId).toBe('rep_9');
  });

  it('quarantines an entry it cannot read, and deletes one it cannot move aside', async () => {
    const dir = queueDirectory(stateDir);
    const queue = await PostureQueue.open(stateDir);
    await mkdir(join(dir, segmentName(0, 1))); // a directory named like a segment: unreadable
    await queue.append(results('A', 1));
    expect((await queue.oldest())!.results[0]!.check_key).toBe('A_0');
    expect(queue.quarantined).toBe(1);
    expect(await readdir(join(dir, 'quarantine'))).toEqual([expect.stringMatching(new RegExp(`^\\d+-${segmentName(0, 1)}$`))]);

    await rm(join(dir, 'quarantine'), { recursive: true });
    await writeFile(join(dir, 'quarantine'), 'in the way'); // the quarantine cannot be created
    await writeFile(join(dir, segmentName(0, 1)), 'torn');
    expect((await queue.oldest())!.results[0]!.check_key).toBe('A_0');
    expect(queue.quarantined).toBe(2);
    expect((await readdir(dir)).sort()).toEqual([segmentName(1, 1), 'quarantine']);
  });

  it('keeps the 20 newest quarantined files, by name, whatever order they were created in', async () => {
    const dir = queueDirectory(stateDir);
    const aside = join(dir, 'quarantine');
    await mkdir(aside, { recursive: true });
    const stamp = (i: number) => `${1_700_000_000_000 + i}-${segmentName(i, 1)}`;
    for (let i = 20; i >= 1; i -= 1) await writeFile(join(aside, stamp(i)), 'torn'); // newest created first
    const queue = await PostureQueue.open(stateDir);
    await writeFile(join(dir, segmentName(0, 1)), 'torn');
    expect(await queue.oldest()).toBeNull();
    const kept = (await readdir(aside)).sort();
    expect(kept).toHaveLength(20);
    expect(kept).not.toContain(stamp(1)); // the oldest went
    expect(kept.slice(0, 19)).toEqual(Array.from({ length: 19 }, (_, i) => stamp(i + 2)));
  });

  it("lets `status` count while leaving a crash's two files to the daemon, and reports other errors", async () => {
    const dir = queueDirectory(stateDir);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, segmentName(5, 3)), 'old');
    await writeFile(join(dir, segmentName(5, 1)), 'new');
    expect(await countQueuedResults(stateDir)).toBe(1);
    expect((await readdir(dir)).sort()).toEqual([segmentName(5, 1), segmentName(5, 3)]);

    await rm(dir, { recursive: true });
    await writeFile(dir, 'not a directory');
    await expect(countQueuedResults(stateDir)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('acknowledges a segment that is already gone, but reports any other failure to remove or rewrite it', async () => {
    const queue = await PostureQueue.open(stateDir);
    await queue.append(results('A', 2));
    const segment = (await queue.oldest())!;
    await unlink(segment.file);
    await queue.settle(segment, []); // gone already (unenroll): nothing to do

    await mkdir(segment.file); // something else in its place
    await expect(queue.settle(segment, [])).rejects.toMatchObject({ code: expect.stringMatching(/EISDIR|EPERM/) as unknown });
    await rm(queueDirectory(stateDir), { recursive: true });
    await writeFile(queueDirectory(stateDir), 'not a directory');
    await expect(queue.settle(segment, segment.results.slice(1))).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(queue.settle(segment, segment.results, 'rep_1')).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});

describe('PostureQueue under files changed by someone else', () => {
  const segmentName = (sequence: number, count: number) => `${String(sequence).padStart(16, '0')}-${count}.json`;
  // A name that is not UTF-8 is listed decoded (U+FFFD), and that decoded name does not exist: the same
  // state as a file removed by someone else between the listing and the removal.
  const foreignName = (dir: string, prefix: string, suffix: string) =>
    Buffer.concat([Buffer.from(`${dir}/${prefix}`), Buffer.from([0xff]), Buffer.from(suffix)]);

  it('opens even when a temp file it lists is gone by the time it removes it', async () => {
    const dir = queueDirectory(stateDir);
    await mkdir(dir, { recursive: true });
    await writeFile(foreignName(dir, '.', '.tmp'), 'x');
    await writeFile(join(dir, '.0000000000000001-1.json.77.ab12.tmp'), 'x');
    const queue = await PostureQueue.open(stateDir);
    expect(await queue.count()).toBe(0);
    expect(await readdir(dir)).toEqual(['.\uFFFD.tmp']);
  });

  it('skips a segment removed between the listing and the read without counting it as damaged', async () => {
    const dir = queueDirectory(stateDir);
    const queue = await PostureQueue.open(stateDir);
    // Segment 0 is a FIFO: reading it waits until this test writes, which holds the queue between its
    // listing (done) and its read of segment 1, while segment 1 is deleted.
    execFileSync('mkfifo', ['-m', '600', join(dir, segmentName(0, 1))]);
    await queue.append(results('A', 1)); // segment 1
    await queue.append(results('B', 1)); // segment 2
    const reading = queue.oldest();
    const writer = await open(join(dir, segmentName(0, 1)), 'w'); // resolves once the queue reads segment 0
    await unlink(join(dir, segmentName(1, 1)));
    await writer.write('torn');
    await writer.close();
    expect((await reading)!.results[0]!.check_key).toBe('B_0');
    expect(queue.quarantined).toBe(1); // the FIFO's torn content only
    expect(await readdir(join(dir, 'quarantine'))).toHaveLength(1);
  });

  it('appends with a listing only while the names stay within the bound, and reads everything beyond it', async () => {
    const dir = queueDirectory(stateDir);
    const queue = await PostureQueue.open(stateDir, { maxResults: 3 });
    await writeFile(join(dir, segmentName(0, 1)), 'torn', { mode: 0o600 });
    expect(await queue.append(results('A', 2))).toEqual({ dropped: 0 }); // names: 1 + 2 = the bound
    expect(queue.quarantined).toBe(0);
    expect(await readdir(dir)).toContain(segmentName(0, 1));
    expect(await queue.append(results('B', 1))).toEqual({ dropped: 0 }); // names: 4; contents: 3
    expect(queue.quarantined).toBe(1);
    expect(await drain(queue)).toEqual(['A_0', 'A_1', 'B_0']);
  });

  it('drops the oldest results without rewriting the segments it keeps whole', async () => {
    const dir = queueDirectory(stateDir);
    const queue = await PostureQueue.open(stateDir, { maxResults: 6 });
    for (const prefix of ['A', 'B', 'C']) await queue.append(results(prefix, 2));
    const inode = async (name: string) => (await stat(join(dir, name))).ino;
    const before = [await inode(segmentName(2, 2)), await inode(segmentName(3, 2))];
    expect(await queue.append(results('D', 2))).toEqual({ dropped: 2 });
    expect([await inode(segmentName(2, 2)), await inode(segmentName(3, 2))]).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual([segmentName(2, 2), segmentName(3, 2), segmentName(4, 2)]);
  });

  it('trims the quarantine past a listed file that is already gone', async () => {
    const dir = queueDirectory(stateDir);
    const aside = join(dir, 'quarantine');
    await mkdir(aside, { recursive: true });
    const stamp = (i: number) => `${1_700_000_000_000 + i}-${segmentName(i, 1)}`;
    await writeFile(foreignName(aside, '1600000000000-', '.json'), 'torn'); // sorts oldest; cannot be removed by its listed name
    for (let i = 1; i <= 20; i += 1) await writeFile(join(aside, stamp(i)), 'torn');
    const queue = await PostureQueue.open(stateDir);
    await writeFile(join(dir, segmentName(0, 1)), 'torn');
    expect(await queue.oldest()).toBeNull();
    const kept = await readdir(aside);
    expect(kept).not.toContain(stamp(1));
    expect(kept).toHaveLength(21); // the 20 newest, and the name nobody can remove
  });

  it('goes on when the quarantine cannot be trimmed (a directory put there by someone else)', async () => {
    const dir = queueDirectory(stateDir);
    const aside = join(dir, 'quarantine');
    await mkdir(join(aside, '1600000000000-foreign'), { recursive: true }); // oldest, and rm without recursive refuses it
    for (let i = 1; i <= 20; i += 1) await writeFile(join(aside, `${1_700_000_000_000 + i}-${segmentName(i, 1)}`), 'torn');
    const queue = await PostureQueue.open(stateDir);
    await writeFile(join(dir, segmentName(0, 1)), 'torn');
    await queue.append(results('A', 1));
    expect((await queue.oldest())!.results[0]!.check_key).toBe('A_0');
    expect(queue.quarantined).toBe(1);
    expect(await readdir(dir)).not.toContain(segmentName(0, 1));
  });
});

describe('segmentsIn (the listing rule)', () => {
  const name = (sequence: number, count: number) => `${String(sequence).padStart(16, '0')}-${count}.json`;
  const permutations = <T>(items: T[]): T[][] =>
    items.length <= 1
      ? [items]
      : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));

  it('orders by sequence and keeps the smaller file of a sequence, in every listing order', () => {
    const listing = [name(3, 5), name(10, 2), name(2, 7), name(10, 4), 'quarantine', '.0000000000000011-1.json.1.ab.tmp', name(1, 1)];
    for (const order of permutations(listing)) {
      const { segments, superseded } = segmentsIn(order);
      expect(segments.map((s) => s.name)).toEqual([name(1, 1), name(2, 7), name(3, 5), name(10, 2)]);
      expect(segments.map((s) => [s.sequence, s.count])).toEqual([
        [1, 1],
        [2, 7],
        [3, 5],
        [10, 2],
      ]);
      expect(superseded).toEqual([name(10, 4)]);
    }
  });

  it('keeps one file when two of a sequence claim the same count', () => {
    const { segments, superseded } = segmentsIn([name(4, 3), `${String(4).padStart(16, '0')}-03.json`]);
    expect(segments).toHaveLength(1);
    expect(superseded).toHaveLength(1);
    expect(segments[0]!.count).toBe(3);
  });

  it('ignores names that are not segments', () => {
    expect(
      segmentsIn([
        '12-3.json',
        `x${'1'.repeat(16)}-3.json`,
        `${'1'.repeat(16)}-3.json.tmp`,
        `${'1'.repeat(16)}-1234567890.json`,
        `${'1'.repeat(16)}-x.json`,
      ]).segments,
    ).toEqual([]);
  });
});

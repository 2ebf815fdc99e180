import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countQueuedResults, DEFAULT_MAX_QUEUED_RESULTS, PostureQueue, queueDirectory } from '../../src/agent/postureQueue';
import type { PostureResult } from '../../src/protocol/schemas';

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'queue-test-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

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
    const body = JSON.parse(await readFile(join(dir, second!), 'utf8'));
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
    expect(await drain(queue)).toEqual(results('D', 30).slice(5).map((r) => r.check_key));
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

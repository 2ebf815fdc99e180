// The uploader against the real reference server, through the fault proxy for the answers a correct
// server does not give (400 on one result, 413, 503 in mid-cycle, 401).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { capEvidence } from '../../checks/verdict';
import { CredentialsRejectedError, RetryableError } from '../../src/agent/api';
import { createApiClient, type ApiClient } from '../../src/agent/client';
import { PostureQueue } from '../../src/agent/state/postureQueue';
import {
  fitEvidence,
  MAX_EVIDENCE_BYTES,
  takeBatch,
  uploadNextBatch,
  type BatchOutcome,
  type UploadContext,
} from '../../src/agent/uploader';
import { BODY_LIMITS, MAX_RESULTS_PER_REQUEST, type PostureResult } from '../../src/protocol/schemas';
import type { PostureView } from '../../src/server/admin';
import { deviceDetails, postureBody } from '../support/daemonWire';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { startServer, type RunningServer } from '../support/server';
import { CAN_MOUNT, mountSmallDisk } from '../support/smallDisk';

/** Sends batches until the queue is empty (what the daemon's loop does, one batch per step). */
async function flushQueue(ctx: UploadContext): Promise<BatchOutcome> {
  const total: BatchOutcome = { sent: 0, rejected: 0, requests: 0 };
  for (;;) {
    const outcome = await uploadNextBatch(ctx);
    if (!outcome) return total;
    total.sent += outcome.sent;
    total.rejected += outcome.rejected;
    total.requests += outcome.requests;
  }
}

let server: RunningServer;
let proxy: FaultProxy;
let client: ApiClient;
let stateDir: string;
let queue: PostureQueue;
let apiKey: string;
let deviceId: string;
let logText: string;
const log = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  }),
);

beforeAll(async () => {
  // Each result has a check key of its own: more distinct keys per device than the default cap allows.
  server = await startServer({ args: ['--max-check-keys', '10000'] });
  proxy = await startFaultProxy(server.url);
  client = createApiClient({ serverUrl: proxy.url });
});
afterAll(async () => {
  await client?.close();
  await proxy?.stop();
  await server?.stop();
});

beforeEach(async () => {
  logText = '';
  proxy.clearRules();
  proxy.requests.length = 0;
  stateDir = await mkdtemp(join(tmpdir(), 'uploader-test-'));
  queue = await PostureQueue.open(stateDir);
  const device = await server.createDevice();
  deviceId = device.device_id;
  apiKey = (await client.enroll(device.enrollment_token)).api_key;
  await client.heartbeat(apiKey, {
    hardware_uuid: randomUUID(),
    hostname: 'uploader-test',
    platform: 'LINUX',
    os_version: 'Debian GNU/Linux 12 (bookworm)',
    agent_version: '0.1.0',
  });
  return () => rm(stateDir, { recursive: true, force: true });
});

function results(prefix: string, n: number, evidence: (i: number) => Record<string, unknown> = (i) => ({ i })): PostureResult[] {
  return Array.from({ length: n }, (_, i) => ({
    check_key: `${prefix}_${i}`,
    status: 'FAIL' as const,
    evidence: evidence(i),
    observed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  }));
}

const context = () => ({ api: client, apiKey, queue, log });
const postureRequests = () => proxy.seen('postures').map((request) => ({ ...request, body: postureBody(request.body) }));
const stored = async (): Promise<PostureView[]> => (await deviceDetails(server, deviceId)).postures;

describe('uploader', () => {
  it('delivers a backlog in batches of at most 100, one posture report per cycle', async () => {
    await queue.append(results('CYCLE1', 250));
    await queue.append(results('CYCLE2', 30));
    const outcome = await flushQueue(context());
    expect(outcome).toEqual({ sent: 280, rejected: 0, requests: 4 });

    const sizes = postureRequests().map((r) => r.body.results.length);
    expect(sizes).toEqual([100, 100, 50, 30]);
    const [first, second, third, fourth] = postureRequests();
    expect(first!.body.results.every((r) => r.correlation_id === undefined)).toBe(true);
    expect(first!.reportId).toMatch(/\S/);
    for (const later of [second!, third!]) {
      expect(later.body.results.every((r) => r.correlation_id === first!.reportId)).toBe(true);
    }
    expect(fourth!.body.results.every((r) => r.correlation_id === undefined)).toBe(true);

    const rows = await stored();
    expect(rows).toHaveLength(280);
    expect(rows.find((r) => r.check_key === 'CYCLE1_5')?.evidence).toEqual({ i: 5 }); // small evidence goes as it is
    const reportOf = (prefix: string) => new Set(rows.filter((r) => r.check_key.startsWith(prefix)).map((r) => r.correlation_id));
    expect(reportOf('CYCLE1_')).toEqual(new Set([first!.reportId]));
    expect(reportOf('CYCLE2_').size).toBe(1);
    expect(reportOf('CYCLE2_')).not.toEqual(reportOf('CYCLE1_'));
    expect(await queue.count()).toBe(0);
  });

  it('isolates and drops only the result a 400 refuses, never resending a request unchanged', async () => {
    proxy.add({
      route: 'postures',
      when: (body: unknown) => postureBody(body).results.some((r) => r.check_key === 'BATCH_6'),
      fault: { kind: 'answer', status: 400, body: { error: 'bad_request', message: 'results[0].evidence: not accepted' } },
    });
    await queue.append(results('BATCH', 10, (i) => ({ i, secret_looking: `evidence-value-${i}` })));
    const outcome = await flushQueue(context());
    expect(outcome.sent).toBe(9);
    expect(outcome.rejected).toBe(1);

    const bodies = postureRequests().map((r) => JSON.stringify(r.body));
    expect(new Set(bodies).size).toBe(bodies.length);
    expect((await stored()).map((r) => r.check_key).sort()).toEqual(
      results('BATCH', 10)
        .map((r) => r.check_key)
        .filter((k) => k !== 'BATCH_6')
        .sort(),
    );
    expect(new Set((await stored()).map((r) => r.correlation_id)).size).toBe(1);
    expect(await queue.count()).toBe(0);
    // The server's message is logged for operators; the evidence is not.
    expect(logText).toContain('results[0].evidence: not accepted');
    expect(logText).toContain('"check_key":"BATCH_6"');
    expect(logText).toContain('"http_status":400');
    expect(logText).toContain('"event":"posture_result_rejected"');
    expect(logText).toContain('"msg":"server refused a posture result; it is dropped"');
    expect(logText).not.toContain('evidence-value');
  });

  it('drops a one-result cycle that draws 400 after one request: nothing left to change, so nothing is resent', async () => {
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 400, body: { error: 'bad_request', message: 'refused' } } });
    await queue.append(results('ALONE', 1));
    expect(await flushQueue(context())).toEqual({ sent: 0, rejected: 1, requests: 1 });
    expect(postureRequests()).toHaveLength(1);
    expect(await queue.count()).toBe(0);
  });

  it('resends a refused result once without its correlation id, and only when it had one', async () => {
    await queue.append(results('KNOWN', 101));
    expect(await uploadNextBatch(context())).toMatchObject({ sent: 100, requests: 1 });
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 400, body: { error: 'bad_request', message: 'refused' } } });
    expect(await uploadNextBatch(context())).toEqual({ sent: 0, rejected: 1, requests: 2 });
    const [withReport, without] = postureRequests().slice(1);
    expect(withReport!.body.results[0]!.correlation_id).toBe(postureRequests()[0]!.reportId);
    expect(without!.body.results[0]!.correlation_id).toBeUndefined();
    expect(await queue.count()).toBe(0);
  });

  it('sends a 413-refused result once more with its evidence truncated, but not one already truncated', async () => {
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 413 } });
    await queue.append(results('WIDE', 1));
    await queue.append([{ ...results('MARKED', 1)[0]!, evidence: { truncated: true, original_bytes: 99_999 } }]);
    expect(await uploadNextBatch(context())).toEqual({ sent: 0, rejected: 1, requests: 2 });
    expect(postureRequests()[1]!.body.results[0]!.evidence).toEqual({ truncated: true, original_bytes: expect.any(Number) as unknown });
    expect(await uploadNextBatch(context())).toEqual({ sent: 0, rejected: 1, requests: 1 });
    expect(postureRequests()).toHaveLength(3);
    const bodies = postureRequests().map((r) => JSON.stringify(r.body));
    expect(new Set(bodies).size).toBe(bodies.length); // never the same request twice
  });

  it('delivers a 413-refused result once its evidence is truncated, and a 400-refused one without its stale report id', async () => {
    proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.evidence?.truncated !== true),
      fault: { kind: 'answer', status: 413 },
    });
    await queue.append(results('SHRUNK', 1));
    expect(await flushQueue(context())).toEqual({ sent: 1, rejected: 0, requests: 2 });
    expect((await stored()).find((r) => r.check_key === 'SHRUNK_0')?.evidence).toEqual({ truncated: true, original_bytes: 7 });
    expect(await queue.count()).toBe(0);

    proxy.clearRules();
    proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.correlation_id !== undefined),
      fault: { kind: 'answer', status: 400, body: { error: 'bad_request', message: 'unknown report' } },
    });
    await queue.append(results('STALE', 1));
    const segment = (await queue.oldest())!;
    await queue.settle(segment, segment.results, 'prr_stale');
    expect(await flushQueue(context())).toEqual({ sent: 1, rejected: 0, requests: 2 });
    expect(await queue.count()).toBe(0);
  });

  it("joins the cycle's later results to the report that a truncated resend opened", async () => {
    proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.check_key === 'OPENER_0' && r.evidence?.truncated !== true),
      fault: { kind: 'answer', status: 413 },
    });
    await queue.append(results('OPENER', 2));
    expect(await flushQueue(context())).toEqual({ sent: 2, rejected: 0, requests: 4 });
    const [, , truncated, rest] = postureRequests();
    expect(truncated!.body.results.map((r) => [r.check_key, r.correlation_id])).toEqual([['OPENER_0', undefined]]);
    expect(truncated!.reportId).toMatch(/\S/);
    expect(rest!.body.results.map((r) => [r.check_key, r.correlation_id])).toEqual([['OPENER_1', truncated!.reportId]]);
    expect(new Set((await stored()).map((r) => r.correlation_id))).toEqual(new Set([truncated!.reportId]));
  });

  it("resends truncated any evidence but its own marker after a 413: a check's capped evidence, a field named original_bytes", async () => {
    // Only the uploader's marker {truncated: true, original_bytes: n} counts as already truncated.
    const capped = capEvidence({ rule: 'sshd_config', lines: Array.from({ length: 50 }, () => 'l'.repeat(200)) });
    expect(capped).toEqual({ truncated: true, rule: 'sshd_config' });
    const sized = { path: '/etc/ssh/sshd_config', original_bytes: 3291 };
    const isMarker = (e: Record<string, unknown> | undefined) => JSON.stringify(Object.keys(e ?? {})) === '["truncated","original_bytes"]';
    proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => !isMarker(r.evidence)),
      fault: { kind: 'answer', status: 413 },
    });
    await queue.append(results('LOOKALIKE', 2, (i) => [capped, sized][i]!));
    expect(await flushQueue(context())).toEqual({ sent: 2, rejected: 0, requests: 5 });
    const evidence = Object.fromEntries((await stored()).map((r) => [r.check_key, r.evidence]));
    expect(evidence).toEqual({
      LOOKALIKE_0: { truncated: true, original_bytes: Buffer.byteLength(JSON.stringify(capped)) },
      LOOKALIKE_1: { truncated: true, original_bytes: Buffer.byteLength(JSON.stringify(sized)) },
    });
  });

  it.skipIf(!CAN_MOUNT)('on a full disk, a failed request leaves the queue as it is and reaches the caller as itself', async () => {
    const disk = await mountSmallDisk('uploader-full-', '256k');
    try {
      const full = await PostureQueue.open(join(disk.dir, 'state'));
      await full.append(results('KEPT', 3));
      await disk.fill();
      proxy.add({ route: 'postures', fault: { kind: 'answer', status: 503, headers: { 'retry-after': '7' } }, times: 1 });
      const failure: unknown = await uploadNextBatch({ ...context(), queue: full }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(RetryableError);
      expect((failure as RetryableError).retryAfterMs).toBe(7000);
      proxy.add({ route: 'postures', fault: { kind: 'answer', status: 401, body: { error: 'unauthorized', message: 'revoked' } } });
      await expect(uploadNextBatch({ ...context(), queue: full })).rejects.toBeInstanceOf(CredentialsRejectedError);
      await disk.free();
      expect(await full.count()).toBe(3);
    } finally {
      await disk.unmount();
    }
  });

  it('keeps a refused result queued when its changed resend fails transiently', async () => {
    proxy.add({
      route: 'postures',
      when: (b: unknown) => postureBody(b).results.some((r) => r.evidence?.truncated !== true),
      fault: { kind: 'answer', status: 413 },
    });
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 503 } });
    await queue.append(results('HELD', 1));
    await expect(uploadNextBatch(context())).rejects.toBeInstanceOf(RetryableError);
    expect(await queue.count()).toBe(1);
  });

  it("logs at most 300 characters of a refusing server's message", async () => {
    proxy.add({
      route: 'postures',
      fault: { kind: 'answer', status: 400, body: { error: 'bad_request', message: `${'m'.repeat(300)}TAIL` } },
    });
    await queue.append(results('CHATTY', 1));
    await flushQueue(context());
    expect(logText).toContain(`"server_message":"${'m'.repeat(300)}"`);
    expect(logText).not.toContain('TAIL');
  });

  it('drops a result without evidence that draws 413 after one request', async () => {
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 413 } });
    const bare: PostureResult = { ...results('BARE', 1)[0]! };
    delete bare.evidence;
    await queue.append([bare]);
    expect(await flushQueue(context())).toEqual({ sent: 0, rejected: 1, requests: 1 });
  });

  it("passes the caller's signal and timeout to each request, keeping the queue when they end it", async () => {
    await queue.append(results('BOUND', 3));
    await expect(uploadNextBatch({ ...context(), signal: AbortSignal.abort(new Error('stopping')) })).rejects.toThrow();
    proxy.add({ route: 'postures', fault: { kind: 'delay', ms: 3000 } });
    const started = Date.now();
    await expect(uploadNextBatch({ ...context(), timeoutMs: 300 })).rejects.toBeInstanceOf(RetryableError);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await queue.count()).toBe(3);
  });

  it('splits a batch that draws 413 until the pieces fit, and delivers everything', async () => {
    proxy.add({
      route: 'postures',
      when: (body: unknown) => postureBody(body).results.length > 30,
      fault: { kind: 'answer', status: 413 },
    });
    await queue.append(results('BIG', 100));
    const outcome = await flushQueue(context());
    expect(outcome).toMatchObject({ sent: 100, rejected: 0 });
    const accepted = postureRequests().filter((r) => r.status === 204);
    expect(accepted.every((r) => r.body.results.length <= 30)).toBe(true);
    const bodies = postureRequests().map((r) => JSON.stringify(r.body));
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(await stored()).toHaveLength(100);
  });

  it('keeps each request within 1 MiB and truncates oversized evidence with a marker', async () => {
    const padding = 'x'.repeat(20_000);
    await queue.append(results('WIDE', 100, (i) => ({ i, padding })));
    await queue.append([
      { check_key: 'HUGE', status: 'UNKNOWN', evidence: { blob: 'y'.repeat(2 * 1024 * 1024) }, observed_at: new Date().toISOString() },
    ]);
    const outcome = await flushQueue(context());
    expect(outcome.sent).toBe(101);
    expect(postureRequests().length).toBeGreaterThanOrEqual(3);
    for (const request of postureRequests()) expect(request.bodyBytes).toBeLessThanOrEqual(BODY_LIMITS.postures);
    const huge = (await stored()).find((r) => r.check_key === 'HUGE');
    expect(huge?.evidence).toEqual({ truncated: true, original_bytes: expect.any(Number) as unknown });
    expect(huge?.evidence?.original_bytes).toBeGreaterThan(2 * 1024 * 1024);
  });

  it('keeps its place and the report id when a 503 interrupts a cycle', async () => {
    await queue.append(results('CUT', 250));
    expect(await uploadNextBatch(context())).toMatchObject({ sent: 100 });
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 503, headers: { 'retry-after': '7' } }, times: 1 });
    const failure: unknown = await uploadNextBatch(context()).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RetryableError);
    expect((failure as RetryableError).retryAfterMs).toBe(7000);
    expect(await queue.count()).toBe(150);

    const reopened = await PostureQueue.open(stateDir);
    await flushQueue({ ...context(), queue: reopened });
    const reportId = postureRequests()[0]!.reportId;
    expect(new Set((await stored()).map((r) => r.correlation_id))).toEqual(new Set([reportId]));
    expect(await stored()).toHaveLength(250);
  });

  it('starts a new report when the server no longer knows the cycle’s report id', async () => {
    await queue.append(results('LOST', 120));
    const segment = (await queue.oldest())!;
    await queue.settle(segment, segment.results, 'prr_unknown_to_this_server');
    const outcome = await flushQueue(context());
    expect(outcome).toMatchObject({ sent: 120, rejected: 0 });
    expect(outcome.requests).toBeLessThan(25);
    const reports = new Set((await stored()).map((r) => r.correlation_id));
    expect(reports.size).toBe(1);
    expect(reports.has('prr_unknown_to_this_server')).toBe(false);
  });

  it('stops at a 401 and leaves the queue to the caller', async () => {
    await queue.append(results('DENIED', 5));
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 401, body: { error: 'unauthorized', message: 'revoked' } } });
    await expect(flushQueue(context())).rejects.toBeInstanceOf(CredentialsRejectedError);
    expect(await queue.count()).toBe(5);
  });
});

describe('fitEvidence', () => {
  const result = (evidence?: Record<string, unknown>): PostureResult => ({
    check_key: 'EVIDENCE',
    status: 'PASS',
    ...(evidence ? { evidence } : {}),
    observed_at: '2026-01-01T00:00:00Z',
  });
  const sized = (bytes: number) => ({ blob: 'z'.repeat(bytes - '{"blob":""}'.length) });

  it('keeps evidence up to the limit and replaces larger evidence by a marker with its size', () => {
    expect(Buffer.byteLength(JSON.stringify(sized(MAX_EVIDENCE_BYTES)))).toBe(MAX_EVIDENCE_BYTES);
    expect(MAX_EVIDENCE_BYTES).toBe(65_536);
    expect(fitEvidence(result(sized(MAX_EVIDENCE_BYTES)))).toEqual(result(sized(MAX_EVIDENCE_BYTES)));
    expect(fitEvidence(result(sized(MAX_EVIDENCE_BYTES + 1))).evidence).toEqual({
      truncated: true,
      original_bytes: MAX_EVIDENCE_BYTES + 1,
    });
    expect(fitEvidence(result({ a: 1 }), 0).evidence).toEqual({ truncated: true, original_bytes: 7 });
  });

  it('leaves a result without evidence as it is', () => {
    expect(fitEvidence(result())).toEqual(result());
  });
});

describe('takeBatch', () => {
  // A batch leaves room for the correlation id its cycle's later batches carry (160 bytes a result).
  const budget = BODY_LIMITS.postures - MAX_RESULTS_PER_REQUEST * 160 - '{"results":[]}'.length;
  const sized = (key: string, bytes: number): PostureResult => {
    const base = { check_key: key, status: 'PASS' as const, evidence: { pad: '' }, observed_at: '2026-01-01T00:00:00Z' };
    return { ...base, evidence: { pad: 'p'.repeat(bytes - Buffer.byteLength(JSON.stringify(base))) } };
  };

  it('fills a batch up to its byte budget exactly, commas counted, and not a byte more', () => {
    const fit = 25; // n results and n − 1 commas
    const each = Math.floor((budget + 1) / fit) - 1;
    const last = budget - (fit - 1) * (each + 1); // the last one makes the batch exactly the budget
    expect(last).toBeLessThan(MAX_EVIDENCE_BYTES); // no truncation plays a part
    const exact = [...Array.from({ length: fit - 1 }, (_, i) => sized(`E${i}`, each)), sized('LAST', last), sized('NEXT', 100)];
    expect(takeBatch(exact).map((item) => item.result.check_key)).toEqual(exact.slice(0, fit).map((r) => r.check_key));
    const over = [...exact.slice(0, fit - 1), sized('LAST', last + 1)];
    expect(takeBatch(over)).toHaveLength(fit - 1);
    const full = JSON.stringify({ results: takeBatch(exact).map(({ result }) => ({ ...result, correlation_id: 'c'.repeat(140) })) });
    expect(Buffer.byteLength(full)).toBeLessThanOrEqual(BODY_LIMITS.postures);
  });

  it('always takes the first result, however large', () => {
    expect(takeBatch([sized('ALONE', 60_000)])).toHaveLength(1);
  });
});

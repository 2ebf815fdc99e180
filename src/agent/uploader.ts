// Drains the posture queue, oldest first, one batch per call: at most 100 results and 1 MiB of JSON,
// taken from one segment (one posture cycle) so that a cycle's results share one posture report.
// The first batch of a cycle goes without correlation_id; the report id the server returns
// (POSTURE_REPORT_HEADER) is stored with the segment and sent with the cycle's later batches.
// A 400/413 is never answered by resending the same request: the batch is split in halves until
// the offending results are isolated; those alone are dropped and counted.
import type { Logger } from 'pino';
import { BODY_LIMITS, MAX_RESULTS_PER_REQUEST, type PostureResult } from '../protocol/schemas';
import { InvalidRequestError, PayloadTooLargeError, type AgentApi, type PosturesAccepted } from './api';
import type { PostureQueue, Segment } from './state';

/** Evidence above this size is replaced by a marker: far above what a check produces (4 KiB cap), far below the body limit. */
export const MAX_EVIDENCE_BYTES = 64 * 1024;
/** Room kept in each batch for the correlation id that a later batch of the cycle may carry. */
const CORRELATION_RESERVE_BYTES = MAX_RESULTS_PER_REQUEST * 160;
const BATCH_BYTE_BUDGET = BODY_LIMITS.postures - CORRELATION_RESERVE_BYTES - '{"results":[]}'.length;
/** Server messages are logged for operators, shortened: they never need to be long. */
const MAX_SERVER_MESSAGE = 300;

export interface UploadContext {
  api: AgentApi;
  apiKey: string;
  queue: PostureQueue;
  log: Logger;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface BatchOutcome {
  /** Results the server accepted. */
  sent: number;
  /** Results the server refused (400/413) even alone, now dropped. */
  rejected: number;
  /** Requests made, splits included. */
  requests: number;
}

/** Sends the next batch of the oldest segment; null when the queue is empty. Errors other than 400/413 are thrown after recording progress. */
export async function uploadNextBatch(ctx: UploadContext): Promise<BatchOutcome | null> {
  const segment = await ctx.queue.oldest();
  if (!segment) return null;
  const batch = takeBatch(segment.results);
  const delivery = new SegmentDelivery(ctx, segment);
  try {
    await delivery.deliver(batch);
  } finally {
    await delivery.settle();
  }
  return delivery.outcome;
}

interface Item {
  /** Position in the segment, to know what remains. */
  index: number;
  result: PostureResult;
}

/** The longest prefix of `results` within the count and byte limits (always at least one result). */
export function takeBatch(results: readonly PostureResult[]): Item[] {
  const batch: Item[] = [];
  let bytes = 0;
  for (const [index, stored] of results.entries()) {
    if (batch.length === MAX_RESULTS_PER_REQUEST) break;
    const result = fitEvidence(stored);
    const size = Buffer.byteLength(JSON.stringify(result)) + (batch.length > 0 ? 1 : 0);
    if (batch.length > 0 && bytes + size > BATCH_BYTE_BUDGET) break;
    batch.push({ index, result });
    bytes += size;
  }
  return batch;
}

/** Replaces evidence above MAX_EVIDENCE_BYTES by a marker, so that the result itself is still delivered. */
export function fitEvidence(result: PostureResult, limit = MAX_EVIDENCE_BYTES): PostureResult {
  if (result.evidence === undefined) return result;
  const size = Buffer.byteLength(JSON.stringify(result.evidence));
  return size <= limit ? result : { ...result, evidence: { truncated: true, original_bytes: size } };
}

class SegmentDelivery {
  private readonly delivered = new Set<number>();
  private readonly rejected = new Set<number>();
  private reportId: string | undefined;
  readonly outcome: BatchOutcome = { sent: 0, rejected: 0, requests: 0 };

  constructor(
    private readonly ctx: UploadContext,
    private readonly segment: Segment,
  ) {
    this.reportId = segment.reportId;
  }

  async deliver(items: Item[]): Promise<void> {
    try {
      const reportId = await this.post(items, this.reportId);
      this.reportId ??= reportId;
      this.accept(items);
    } catch (err) {
      if (!isRefusal(err)) throw err;
      if (items.length > 1) {
        const half = Math.ceil(items.length / 2);
        await this.deliver(items.slice(0, half));
        await this.deliver(items.slice(half));
        return;
      }
      await this.deliverAlone(items[0]!, err);
    }
  }

  /**
   * Records what was delivered or dropped, and the report id, in the queue. The report id changes
   * only with a delivery; when nothing was delivered or dropped the queue is left untouched, so a
   * failed request on a full disk reaches the caller as itself (a 503's Retry-After, a 401).
   */
  async settle(): Promise<void> {
    if (this.delivered.size === 0 && this.rejected.size === 0) return;
    const remaining = this.segment.results.filter((_, i) => !this.delivered.has(i) && !this.rejected.has(i));
    await this.ctx.queue.settle(this.segment, remaining, this.reportId);
  }

  /**
   * One result refused on its own. Before dropping it, try the one change that can make it
   * acceptable: after a 413, its evidence replaced by the truncation marker; after a 400 while it
   * carries a correlation id, without it (the report may be unknown to this server, e.g. after a
   * reset: the cycle then continues in the new report the server opens).
   */
  private async deliverAlone(item: Item, refusal: InvalidRequestError | PayloadTooLargeError): Promise<void> {
    const evidence = item.result.evidence;
    try {
      if (refusal instanceof PayloadTooLargeError && evidence && !isMarker(evidence)) {
        const truncated = { ...item, result: fitEvidence(item.result, 0) };
        const reportId = await this.post([truncated], this.reportId);
        this.reportId ??= reportId;
        this.accept([item]);
        return;
      }
      if (refusal instanceof InvalidRequestError && this.reportId !== undefined) {
        this.reportId = await this.post([item], undefined);
        this.accept([item]);
        return;
      }
    } catch (err) {
      if (!isRefusal(err)) throw err;
      refusal = err;
    }
    this.rejected.add(item.index);
    this.outcome.rejected += 1;
    this.ctx.log.warn(
      {
        event: 'posture_result_rejected',
        check_key: item.result.check_key,
        http_status: refusal.status,
        server_message: refusal.serverMessage?.slice(0, MAX_SERVER_MESSAGE),
      },
      'server refused a posture result; it is dropped',
    );
  }

  private accept(items: Item[]): void {
    for (const item of items) this.delivered.add(item.index);
    this.outcome.sent += items.length;
  }

  /** Sends one request; returns the posture report id the server assigned, if any. */
  private async post(items: Item[], reportId: string | undefined): Promise<string | undefined> {
    const results = items.map(({ result }) => withReport(result, reportId));
    const { timeoutMs, signal } = this.ctx;
    this.outcome.requests += 1;
    const accepted: PosturesAccepted = await this.ctx.api.postures(
      this.ctx.apiKey,
      { results },
      { ...(timeoutMs ? { timeoutMs } : {}), ...(signal ? { signal } : {}) },
    );
    return accepted.reportId;
  }
}

function withReport(result: PostureResult, reportId: string | undefined): PostureResult {
  const rest = { ...result };
  delete rest.correlation_id;
  return reportId === undefined ? rest : { ...rest, correlation_id: reportId };
}

function isRefusal(err: unknown): err is InvalidRequestError | PayloadTooLargeError {
  return err instanceof InvalidRequestError || err instanceof PayloadTooLargeError;
}

function isMarker(evidence: Record<string, unknown>): boolean {
  return evidence.truncated === true && typeof evidence.original_bytes === 'number';
}

import type { IncomingHttpHeaders } from 'node:http';
import { ISO_DATE_TIME_PATTERN } from '../../protocol/rfc3339';
import {
  BODY_LIMITS,
  MAX_EVIDENCE_DEPTH,
  MAX_RESULTS_PER_REQUEST,
  POSTURE_REPORT_HEADER,
  PosturesRequest,
  ROUTES,
  STATUSES,
  nestsAtMost,
  type PostureResult,
  type PostureStatus,
} from '../../protocol/schemas';
import type { AgentRoute } from '../agentRoute';
import type { AppContext } from '../context';
import type { NewPostureResult } from '../db/store';
import { refusalError, uploadPostures } from '../deviceLifecycle';
import { spendDeviceBudget } from '../rateLimit';
import { isStoredText, parseBody } from '../validation';

/** Observations further in the future than this are stored with the receive time (contract). */
const MAX_CLOCK_AHEAD_MS = 5 * 60_000;

/**
 * POST /postures: stores a batch of results. 204; when the server created a posture report for
 * the results without correlation_id, its id is in the posture-report-id header (extension).
 */
export function posturesRoute({ store, config, limits, metrics, heartbeats }: AppContext): AgentRoute {
  return {
    path: ROUTES.postures,
    bodyLimit: BODY_LIMITS.postures,
    admit(device, headers) {
      spendDeviceBudget(limits.postures, device.id, 'posture uploads');
      spendDeviceBudget(limits.postureBytes, device.id, 'posture data', declaredBytes(headers));
    },
    async answer(device, json) {
      const { results } = parseBody(PosturesRequest, json, plainPostures);
      const now = new Date();
      const receivedAt = now.toISOString();
      const outcome = await uploadPostures(
        store,
        device,
        results.map((result) => toNewResult(result, now)),
        receivedAt,
        config.maxCheckKeys,
      );
      if (outcome.kind === 'check_key_cap') metrics.observeCheckKeyCap();
      if (outcome.kind !== 'recorded') throw refusalError(outcome);
      heartbeats.noteSeen(device, receivedAt);
      const headers: Record<string, string> = {};
      if (outcome.createdReportId) headers[POSTURE_REPORT_HEADER] = outcome.createdReportId;
      return { status: 204, headers };
    },
  };
}

/**
 * The body size as declared (Node has already refused a malformed Content-Length), at most the
 * route's limit (a larger body is refused with 413 anyway); a chunked body counts as the limit.
 */
function declaredBytes(headers: IncomingHttpHeaders): number {
  const declared = headers['content-length'];
  return declared === undefined ? BODY_LIMITS.postures : Math.min(Number(declared), BODY_LIMITS.postures);
}

const KNOWN_STATUSES: ReadonlySet<unknown> = new Set<PostureStatus>(STATUSES);

/**
 * True only for an upload PosturesRequest accepts and outputs as it is, for the fields toNewResult
 * reads (false also for some it accepts: see isStoredText, isPlainEvidence, and observed_at with a
 * lowercase `t`/`z`, which Rfc3339 upper-cases). zod's parse of a 9-result upload cost about
 * 110 µs of CPU in the fleet benchmark; the agent's uploads pass this instead, and anything else
 * gets zod's verdict and messages (test/server/posturesValidation.test.ts holds the two to the
 * same answers). For JSON.parse's output: no getters, symbols or prototypes to fool it.
 */
export function plainPostures(body: unknown): body is PosturesRequest {
  if (!isObject(body)) return false;
  const { results } = body;
  if (!Array.isArray(results) || results.length > MAX_RESULTS_PER_REQUEST) return false;
  for (let i = 0; i < results.length; i++) if (!plainResult(results[i])) return false;
  return true;
}

function plainResult(result: unknown): boolean {
  if (!isObject(result)) return false;
  const { evidence, observed_at, correlation_id } = result;
  return (
    isStoredText(result.check_key, 128) &&
    KNOWN_STATUSES.has(result.status) &&
    (evidence === undefined || (isPlainEvidence(evidence) && nestsAtMost(evidence, MAX_EVIDENCE_DEPTH))) &&
    typeof observed_at === 'string' &&
    ISO_DATE_TIME_PATTERN.test(observed_at) &&
    (correlation_id === undefined || (typeof correlation_id === 'string' && correlation_id.length >= 1 && correlation_id.length <= 128))
  );
}

/** What z.object reads fields from: any object but an array. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object z.record takes (zod's isPlainObject holds for any non-array object whose constructor
 * is Object) and copies whole: it skips an own `__proto__` key, so such evidence is left to zod,
 * as is one without Object's constructor (null prototype, an own `constructor` key).
 */
function isPlainEvidence(value: unknown): value is Record<string, unknown> {
  return isObject(value) && value.constructor === Object && !Object.hasOwn(value, '__proto__');
}

function toNewResult(result: PostureResult, now: Date): NewPostureResult {
  const observed = Date.parse(result.observed_at);
  const observedAt = observed - now.getTime() > MAX_CLOCK_AHEAD_MS ? now : new Date(observed);
  return {
    checkKey: result.check_key,
    status: result.status,
    evidence: result.evidence ?? null,
    observedAt: observedAt.toISOString(),
    correlationId: result.correlation_id ?? null,
  };
}

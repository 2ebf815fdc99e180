import type { IncomingHttpHeaders } from 'node:http';
import { BODY_LIMITS, POSTURE_REPORT_HEADER, PosturesRequest, ROUTES, type PostureResult } from '../../protocol/schemas';
import type { AgentRoute } from '../agentRoute';
import type { AppContext } from '../context';
import type { NewPostureResult } from '../db/store';
import { refusalError, uploadPostures } from '../deviceLifecycle';
import { spendDeviceBudget } from '../rateLimit';
import { parseBody } from '../validation';

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
      const { results } = parseBody(PosturesRequest, json);
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

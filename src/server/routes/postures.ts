import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BODY_LIMITS, POSTURE_REPORT_HEADER, PosturesRequest, ROUTES, type PostureResult } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { authenticateDevice, deviceOf } from '../auth';
import type { NewPostureResult } from '../db/store';
import { refusalError, uploadPostures } from '../deviceLifecycle';
import { limitDevice } from '../rateLimit';
import { parseBody } from '../validation';

/** Observations further in the future than this are stored with the receive time (contract). */
const MAX_CLOCK_AHEAD_MS = 5 * 60_000;

/**
 * POST /postures: stores a batch of results. 204; when the server created a posture report for
 * the results without correlation_id, its id is in the posture-report-id header (extension).
 */
export function posturesRoute(app: FastifyInstance, { store, config, limits, metrics, devices, heartbeats }: AppContext): void {
  app.post(
    ROUTES.postures,
    {
      bodyLimit: BODY_LIMITS.postures,
      onRequest: [
        authenticateDevice(devices),
        limitDevice(limits.postures, 'posture uploads'),
        limitDevice(limits.postureBytes, 'posture data', declaredBytes),
      ],
    },
    async (request, reply) => {
      const device = deviceOf(request);
      const { results } = parseBody(PosturesRequest, request.body);
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
      if (outcome.createdReportId) reply.header(POSTURE_REPORT_HEADER, outcome.createdReportId);
      return reply.code(204).send();
    },
  );
}

/**
 * The body size as declared (Node has already refused a malformed Content-Length), at most the
 * route's limit (a larger body is refused with 413 anyway); a chunked body counts as the limit.
 */
function declaredBytes(request: FastifyRequest): number {
  const declared = request.headers['content-length'];
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

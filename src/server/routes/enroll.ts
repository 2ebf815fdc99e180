import type { FastifyInstance } from 'fastify';
import { BODY_LIMITS, EnrollRequest, ROUTES, type EnrollResponse } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { enroll, refusalError } from '../deviceLifecycle';
import { parseBody } from '../validation';

/** POST /enroll: exchanges a single-use enrollment token for a device API key. */
export function enrollRoute(app: FastifyInstance, { store, logger }: AppContext): void {
  app.post(ROUTES.enroll, { bodyLimit: BODY_LIMITS.enroll }, async (request): Promise<EnrollResponse> => {
    const { token } = parseBody(EnrollRequest, request.body);
    const enrollment = await enroll(store, token, new Date().toISOString());
    if (enrollment.kind !== 'enrolled') throw refusalError(enrollment);
    logger.info({ device_id: enrollment.deviceId }, 'device enrolled');
    return { api_key: enrollment.apiKey };
  });
}

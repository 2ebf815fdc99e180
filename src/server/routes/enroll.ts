import type { FastifyInstance } from 'fastify';
import { BODY_LIMITS, EnrollRequest, ROUTES, type EnrollResponse } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { hashCredential, isCredential, newCredential } from '../credentials';
import { tokenRefused } from '../errors';
import { parseBody } from '../validation';

/** POST /enroll: exchanges a single-use enrollment token for a device API key. */
export function enrollRoute(app: FastifyInstance, { store, logger }: AppContext): void {
  app.post(ROUTES.enroll, { bodyLimit: BODY_LIMITS.enroll }, async (request): Promise<EnrollResponse> => {
    const { token } = parseBody(EnrollRequest, request.body);
    const apiKey = newCredential();
    const deviceId = isCredential(token)
      ? await store.exchangeToken(hashCredential(token), hashCredential(apiKey), new Date().toISOString())
      : undefined;
    if (deviceId === undefined) throw tokenRefused();
    logger.info({ device_id: deviceId }, 'device enrolled');
    return { api_key: apiKey };
  });
}

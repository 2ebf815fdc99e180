import type { FastifyInstance } from 'fastify';
import { BODY_LIMITS, ROUTES, UnenrollRequest } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { authenticateDevice, deviceOf } from '../auth';
import { revoke } from '../deviceLifecycle';
import { parseBody } from '../validation';

/** POST /unenroll: revokes the calling device's API key. The body may be empty. */
export function unenrollRoute(app: FastifyInstance, { store, logger, devices }: AppContext): void {
  app.post(ROUTES.unenroll, { bodyLimit: BODY_LIMITS.unenroll, onRequest: authenticateDevice(devices) }, async (request, reply) => {
    const device = deviceOf(request);
    if (request.body !== undefined) parseBody(UnenrollRequest, request.body);
    await revoke(store, device, new Date().toISOString());
    // This process's own commit does not move the store's change signal.
    devices.forgetAll();
    logger.info({ device_id: device.id }, 'device unenrolled');
    return reply.code(204).send();
  });
}

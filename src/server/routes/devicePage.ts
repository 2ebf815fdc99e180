import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEVICE_PAGE_BODY_LIMIT, DEVICE_PAGE_ROUTE, type DevicePageResponse } from '../../protocol/schemas';
import { authenticateDevice, deviceOf } from '../auth';
import type { AppContext } from '../context';
import { issueDevicePageLink } from '../devicePage';
import { HttpError, badRequest } from '../errors';
import { limitDevice } from '../rateLimit';

/**
 * POST /device-page (an extension beside the spec's routes): a one-time URL of the calling device's
 * page (src/server/devicePage.ts), under the origin the agent reached. Any body is ignored.
 */
export function devicePageRoute(app: FastifyInstance, { store, devices, limits, logger }: AppContext): void {
  app.post(
    DEVICE_PAGE_ROUTE,
    // Rate-limited per device (--rate-limit-device-pages): each link stores a code.
    {
      bodyLimit: DEVICE_PAGE_BODY_LIMIT,
      onRequest: [authenticateDevice(devices), limitDevice(limits.devicePages, 'device page requests')],
    },
    async (request): Promise<DevicePageResponse> => {
      const device = deviceOf(request);
      // A page of a device that never reported would be empty; a revoked key never gets here.
      if (device.state !== 'ACTIVE') throw new HttpError('conflict', 'the device has not sent its first heartbeat yet');
      const link = await issueDevicePageLink(store, device, originOf(request), new Date());
      logger.info({ event: 'device_page_issued', device_id: device.id }, 'device page link issued');
      return link;
    },
  );
}

/** The origin the request was made to (behind a trusted proxy, the one the proxy was asked for). */
function originOf(request: FastifyRequest): string {
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    throw badRequest('the Host header does not name a host');
  }
}

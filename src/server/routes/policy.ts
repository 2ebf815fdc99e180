import type { FastifyInstance } from 'fastify';
import { BODY_LIMITS, EXTENSION_ROUTES, PolicyRequest } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { authenticateDevice, deviceOf } from '../auth';
import { limitDevice } from '../rateLimit';
import { parseBody } from '../validation';

/**
 * POST /policy (an extension of the spec, docs/server.md "Policy"): the device's organization's
 * policy and its platform's lifecycle data set, from memory (PolicyCache). An agent asks for it when
 * a heartbeat's `policy_version` differs from its own.
 */
export function policyRoute(app: FastifyInstance, { limits, devices, policies }: AppContext): void {
  app.post(
    EXTENSION_ROUTES.policy,
    { bodyLimit: BODY_LIMITS.policy, onRequest: [authenticateDevice(devices), limitDevice(limits.heartbeats, 'heartbeats')] },
    async (request, reply) => {
      const device = deviceOf(request);
      const body = parseBody(PolicyRequest, request.body);
      return reply.type('application/json; charset=utf-8').send(await policies.body(device.orgId, device.id, body.platform));
    },
  );
}

import type { FastifyInstance } from 'fastify';
import { BODY_LIMITS, HeartbeatRequest, ROUTES, type HeartbeatResponse } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { authenticateDevice, deviceOf } from '../auth';
import { refusalError } from '../deviceLifecycle';
import { limitDevice } from '../rateLimit';
import { parseBody } from '../validation';

/** POST /heartbeat: records the device's attributes, activates a PENDING device (deviceLifecycle.ts), returns the schedule. */
export function heartbeatRoute(app: FastifyInstance, { config, limits, devices, heartbeats, policies, checks }: AppContext): void {
  app.post(
    ROUTES.heartbeat,
    { bodyLimit: BODY_LIMITS.heartbeat, onRequest: [authenticateDevice(devices), limitDevice(limits.heartbeats, 'heartbeats')] },
    async (request): Promise<HeartbeatResponse & { policy_version?: string; check_requested_at?: string }> => {
      const device = deviceOf(request);
      const body = parseBody(HeartbeatRequest, request.body);
      const now = new Date().toISOString();
      const outcome = await heartbeats.record(
        device,
        {
          hardwareUuid: body.hardware_uuid,
          serialNumber: body.serial_number ?? null,
          hostname: body.hostname,
          platform: body.platform,
          osVersion: body.os_version,
          agentVersion: body.agent_version,
        },
        now,
      );
      if (outcome.kind !== 'recorded') throw refusalError(outcome);
      const answer: HeartbeatResponse & { policy_version?: string; check_requested_at?: string } = {
        device_id: device.id,
        heartbeat_interval_seconds: config.heartbeatIntervalSeconds,
        posture_interval_seconds: config.postureIntervalSeconds,
        server_time: now,
      };
      // The extensions' extra fields (docs/server.md, "Policy" and "Check again"); the spec's fields stay as they are.
      const pending = checks.pending(device.id, new Date(now));
      const checkRequestedAt = pending instanceof Promise ? await pending : pending;
      if (checkRequestedAt !== undefined) answer.check_requested_at = checkRequestedAt;
      if (config.policy) {
        const token = policies.token(device.orgId);
        answer.policy_version = typeof token === 'string' ? token : await token;
      }
      return answer;
    },
  );
}

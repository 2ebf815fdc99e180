import { BODY_LIMITS, HeartbeatRequest, PLATFORMS, ROUTES, type HeartbeatResponse, type Platform } from '../../protocol/schemas';
import type { AgentRoute } from '../agentRoute';
import type { AppContext } from '../context';
import { refusalError } from '../deviceLifecycle';
import { spendDeviceBudget } from '../rateLimit';
import { isStoredText, parseBody } from '../validation';

/** POST /heartbeat: records the device's attributes, activates a PENDING device (deviceLifecycle.ts), returns the schedule. */
export function heartbeatRoute({ config, limits, heartbeats, policies, checks }: AppContext): AgentRoute {
  return {
    path: ROUTES.heartbeat,
    bodyLimit: BODY_LIMITS.heartbeat,
    admit(device) {
      spendDeviceBudget(limits.heartbeats, device.id, 'heartbeats');
    },
    async answer(device, json) {
      const body = parseBody(HeartbeatRequest, json, plainHeartbeat);
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
      return { status: 200, json: answer };
    },
  };
}

const KNOWN_PLATFORMS: ReadonlySet<unknown> = new Set<Platform>(PLATFORMS);

/**
 * True only for a body HeartbeatRequest accepts as it is: every field of the schema's type and
 * length, no NUL (false also for some it accepts, see isStoredText). Validating a heartbeat with zod cost about 2 % of its CPU over a new TLS
 * connection; nearly every heartbeat passes this instead, and anything else gets zod's verdict
 * and messages (test/server/heartbeatValidation.test.ts holds the two to the same answers).
 */
export function plainHeartbeat(body: unknown): body is HeartbeatRequest {
  if (typeof body !== 'object' || body === null) return false;
  const fields = body as Record<string, unknown>;
  return (
    isStoredText(fields.hardware_uuid, 255) &&
    (fields.serial_number === undefined || isStoredText(fields.serial_number, 255)) &&
    isStoredText(fields.hostname, 255) &&
    KNOWN_PLATFORMS.has(fields.platform) &&
    isStoredText(fields.os_version, 255) &&
    isStoredText(fields.agent_version, 64)
  );
}

import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { BODY_LIMITS, EXTENSION_ROUTES, RegisterRequest, type RegisterResponse } from '../../protocol/schemas';
import type { AppContext } from '../context';
import { hashCredential } from '../credentials';
import { refusalError, register } from '../deviceLifecycle';
import { tooManyRequests } from '../rateLimit';
import { parseBody } from '../validation';

/**
 * POST /register (an extension beside the spec's routes): an enrollment secret and the device's
 * identity for a device record and its one-time token, which the agent then exchanges at /enroll.
 * Limited per client address before the body is read, and per secret (by its hash, whatever it
 * names: the limit answers alike for a valid and an unknown secret) after. Registrations run side by
 * side: the store locks the secret's row only for its final conditional UPDATE (the cap's guard).
 */
export function registerRoute(app: FastifyInstance, { store, logger, limits, config }: AppContext): void {
  const limitAddress = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const wait = limits.registrations.take(request.ip);
    if (wait !== undefined) throw tooManyRequests('registrations', wait, 'this address');
    done();
  };
  app.post(
    EXTENSION_ROUTES.register,
    { bodyLimit: BODY_LIMITS.register, onRequest: limitAddress },
    async (request): Promise<RegisterResponse> => {
      const body = parseBody(RegisterRequest, request.body);
      const secretHash = hashCredential(body.enroll_secret);
      const wait = limits.registrationsPerSecret.take(secretHash);
      if (wait !== undefined) throw tooManyRequests('registrations', wait, 'this enrollment secret');
      const attributes = {
        hardwareUuid: body.hardware_uuid,
        serialNumber: body.serial_number ?? null,
        hostname: body.hostname,
        platform: body.platform,
        osVersion: body.os_version,
        agentVersion: body.agent_version,
      };
      const registration = await register(store, body.enroll_secret, attributes, new Date().toISOString(), config.heartbeatIntervalSeconds);
      if (registration.kind !== 'registered') {
        logger.info({ event: 'registration_refused' }, 'registration refused: the enrollment secret is not valid');
        throw refusalError(registration);
      }
      logger.info(
        {
          event: 'device_registered',
          device_id: registration.deviceId,
          secret_id: registration.secretId,
          outcome: registration.outcome,
          holder_id: registration.holder ?? undefined,
        },
        'device registered with an enrollment secret',
      );
      return { device_id: registration.deviceId, enrollment_token: registration.enrollmentToken, secret_id: registration.secretId };
    },
  );
}

// Device authentication: `Authorization: Bearer <API key>`, checked before the body is read.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashCredential, isCredential } from './credentials';
import type { AuthenticatedDevice } from './db/store';
import type { DeviceCache } from './deviceCache';
import { keyRefused, unauthorized } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on authenticated routes. */
    device: AuthenticatedDevice | null;
  }
}

const BEARER = /^Bearer +([^\s]+) *$/i;

export function decorateDevice(app: FastifyInstance): void {
  app.decorateRequest('device', null);
}

export function authenticateDevice(devices: DeviceCache) {
  // fastify answers a rejection of this hook as the request's error.
  return async function authenticate(request: FastifyRequest): Promise<void> {
    request.device = await deviceByAuthorization(devices, request.headers.authorization);
  };
}

/** The device whose API key the Authorization header carries; a 401 HttpError otherwise. */
export async function deviceByAuthorization(devices: DeviceCache, header: string | undefined): Promise<AuthenticatedDevice> {
  if (header === undefined) throw unauthorized('missing "Authorization: Bearer <API key>" header');
  const key = BEARER.exec(header)?.[1];
  if (key === undefined || !isCredential(key)) throw unauthorized('the Authorization header must be "Bearer <API key>" with a 96-hex key');
  const device = await devices.authenticate(hashCredential(key));
  if (!device) throw keyRefused();
  return device;
}

/** The authenticated device; only called on routes guarded by authenticateDevice. */
export function deviceOf(request: FastifyRequest): AuthenticatedDevice {
  if (!request.device) throw new Error('route handler reached without an authenticated device');
  return request.device;
}

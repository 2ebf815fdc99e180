// The admin API, /api/admin/v1: JSON over the admin service layer (admin.ts), authenticated by an
// admin token or the console session (adminAuth.ts), each request within the caller's scope.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  complianceSeries,
  complianceSummary,
  createDevice,
  deviceHistory,
  getDevice,
  listDevicePage,
  organizationInScope,
  revokeDevice,
  type DeviceListRequest,
} from '../admin';
import { adminOf, authenticateAdmin, csrfForSessions } from '../adminAuth';
import type { AppContext } from '../context';
import { createSecret, listSecrets, revokeSecret, type NewSecretRequest } from '../enrollSecrets';
import type { Labels } from '../db/store';
import { badRequest } from '../errors';
import { fleetFailures } from '../remediation';

export const ADMIN_API_PREFIX = '/api/admin/v1';
/** Admin request bodies are small: a device's organization, label and token lifetime. */
const ADMIN_BODY_LIMIT = 4 * 1024;
const DAY_SECONDS = 86_400;

type Query = Record<string, string | string[] | undefined>;

/** The query's parameters as single strings, refusing unknown and repeated ones. */
function queryOf(request: FastifyRequest, allowed: readonly string[]): Record<string, string | undefined> {
  const query = (request.query ?? {}) as Query;
  const values: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!allowed.includes(name)) throw badRequest(`unknown query parameter "${name}"; this route takes ${allowed.join(', ') || 'none'}`);
    if (typeof value !== 'string') throw badRequest(`query parameter "${name}" may appear only once`);
    values[name] = value;
  }
  return values;
}

function wholeNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw badRequest(`${name} must be a whole number`);
  return Number(value);
}

const LIST_PARAMETERS = [
  'org',
  'state',
  'platform',
  'failing',
  'hostname',
  'last_seen_before',
  'last_seen_after',
  'sort',
  'order',
  'cursor',
  'limit',
] as const;

interface CreateBody {
  org?: unknown;
  name?: unknown;
  token_ttl_seconds?: unknown;
}

export function adminApiRoutes(app: FastifyInstance, context: AppContext): void {
  const { store, config } = context;
  const intervals = { heartbeatIntervalSeconds: config.heartbeatIntervalSeconds, postureIntervalSeconds: config.postureIntervalSeconds };
  const guarded = { onRequest: authenticateAdmin(store), preHandler: csrfForSessions(app), bodyLimit: ADMIN_BODY_LIMIT };
  const p = ADMIN_API_PREFIX;

  app.get(`${p}/devices`, guarded, async (request) => {
    const q = queryOf(request, LIST_PARAMETERS);
    const listRequest: DeviceListRequest = { ...q, limit: wholeNumber('limit', q.limit) };
    return listDevicePage(store, adminOf(request).scope, listRequest);
  });

  app.post(`${p}/devices`, guarded, async (request, reply) => {
    queryOf(request, []);
    const body = request.body as CreateBody | undefined;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('the body must be a JSON object {org, name?, token_ttl_seconds?}');
    const unknown = Object.keys(body).filter((key) => !['org', 'name', 'token_ttl_seconds'].includes(key));
    if (unknown.length > 0) throw badRequest(`unknown field "${unknown[0]}"`);
    if (typeof body.org !== 'string') throw badRequest('org must be a string');
    if (body.name !== undefined && typeof body.name !== 'string') throw badRequest('name must be a string');
    const ttl = body.token_ttl_seconds ?? 7 * DAY_SECONDS;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl)) throw badRequest('token_ttl_seconds must be a whole number');
    const created = await createDevice(
      store,
      { org: body.org, name: body.name, tokenTtlMs: ttl * 1000 },
      new Date(),
      adminOf(request).scope,
    );
    return reply.code(201).send(created);
  });

  app.get<{ Params: { id: string } }>(`${p}/devices/:id`, guarded, async (request) => {
    queryOf(request, []);
    return getDevice(store, adminOf(request).scope, request.params.id);
  });

  app.get<{ Params: { id: string } }>(`${p}/devices/:id/history`, guarded, async (request) => {
    const q = queryOf(request, ['check', 'before', 'limit']);
    return deviceHistory(store, adminOf(request).scope, request.params.id, {
      check: q.check,
      before: wholeNumber('before', q.before),
      limit: wholeNumber('limit', q.limit),
    });
  });

  app.post<{ Params: { id: string } }>(`${p}/devices/:id/revoke`, guarded, async (request) => {
    queryOf(request, []);
    const outcome = await revokeDevice(store, request.params.id, new Date(), adminOf(request).scope);
    // This process's own commit does not move the store's change counter: drop the device cache here.
    context.devices.forgetAll();
    return { device_id: request.params.id, outcome };
  });

  app.post(`${p}/enroll-secrets`, guarded, async (request, reply) => {
    queryOf(request, []);
    return reply.code(201).send(await createSecret(store, secretRequest(request.body), new Date(), adminOf(request).scope));
  });

  app.get(`${p}/enroll-secrets`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    const { scope } = adminOf(request);
    const org = q.org === undefined ? undefined : (await organizationInScope(store, scope, q.org)).name;
    return { secrets: await listSecrets(store, scope, org) };
  });

  app.delete<{ Params: { id: string } }>(`${p}/enroll-secrets/:id`, guarded, async (request) => {
    queryOf(request, []);
    const outcome = await revokeSecret(store, request.params.id, new Date(), adminOf(request).scope);
    return { secret_id: request.params.id, outcome };
  });

  app.get(`${p}/compliance`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    return complianceSummary(store, adminOf(request).scope, { org: q.org, ...intervals });
  });

  app.get(`${p}/compliance/daily`, guarded, async (request) => {
    const q = queryOf(request, ['org', 'days']);
    return complianceSeries(store, adminOf(request).scope, { org: q.org, days: wholeNumber('days', q.days) });
  });

  app.get(`${p}/failures`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    const { scope } = adminOf(request);
    const org = q.org === undefined ? undefined : (await organizationInScope(store, scope, q.org)).name;
    return { failures: await fleetFailures(store, org, scope) };
  });
}

const SECRET_FIELDS = ['org', 'expires_in_seconds', 'max_uses', 'labels', 'note'];

/** POST /enroll-secrets' body as the service layer's request; its values are checked there. */
function secretRequest(body: unknown): NewSecretRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object {org, expires_in_seconds?, max_uses?, labels?, note?}');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !SECRET_FIELDS.includes(key));
  if (unknown !== undefined) throw badRequest(`unknown field "${unknown}"`);
  const { org, expires_in_seconds: expires, max_uses: maxUses, labels, note } = fields;
  if (typeof org !== 'string') throw badRequest('org must be a string');
  if (expires !== undefined && (typeof expires !== 'number' || !Number.isInteger(expires)))
    throw badRequest('expires_in_seconds must be a whole number');
  if (maxUses !== undefined && typeof maxUses !== 'number') throw badRequest('max_uses must be a whole number');
  if (labels !== undefined && (typeof labels !== 'object' || labels === null || Array.isArray(labels)))
    throw badRequest('labels must be an object of strings, e.g. {"team": "finance"}');
  if (note !== undefined && typeof note !== 'string') throw badRequest('note must be a string');
  return { org, expiresInMs: expires === undefined ? undefined : expires * 1000, maxUses, labels: labels as Labels | undefined, note };
}

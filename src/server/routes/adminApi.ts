// The admin API, /api/admin/v1: JSON over the admin service layer (admin.ts), authenticated by an
// admin token or the console session (adminAuth.ts), each request within the caller's scope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  complianceSeries,
  complianceSummary,
  createDevice,
  DEVICE_LIST_PARAMETERS,
  deviceHistory,
  getDevice,
  listDevicePage,
  organizationInScope,
  revokeDevice,
  type DeviceListRequest,
} from '../admin';
import { adminOf, authenticateAdmin, csrfForSessions } from '../adminAuth';
import { deviceHistoryCsv, deviceListCsv, type CsvFile } from '../adminExports';
import { csvFileName } from '../csv';
import type { AppContext } from '../context';
import { createSecret, listSecrets, revokeSecret, type NewSecretRequest } from '../enrollSecrets';
import type { Labels } from '../db/store';
import { badRequest } from '../errors';
import { organizationContact, setOrganizationContact } from '../devicePage';
import { fleetFailures } from '../remediation';
import { policyHistory, setPolicy, showPolicy } from '../policy';
import { grantException, listExceptions, removeException } from '../exceptions';

/** A policy document: small, but a lifecycle override (osVersion.lifecycle) may list many releases. */
const POLICY_BODY_LIMIT = 256 * 1024;

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

/** `format=csv` answers a list whole as a CSV download instead of a page of JSON. */
function wantsCsv(format: string | undefined): boolean {
  if (format === undefined || format === 'json') return false;
  if (format === 'csv') return true;
  throw badRequest('format must be json or csv');
}

function sendCsv(reply: FastifyReply, file: CsvFile, now: Date): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${csvFileName(file.subject, now)}"`)
    .send(file.text);
}

const LIST_PARAMETERS = [...DEVICE_LIST_PARAMETERS, 'limit', 'format'];

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

  app.get(`${p}/devices`, guarded, async (request, reply) => {
    const { format, ...q } = queryOf(request, LIST_PARAMETERS);
    if (wantsCsv(format)) {
      const { cursor, limit, ...filters } = q;
      if (cursor !== undefined || limit !== undefined)
        throw badRequest('format=csv exports every matching device: it takes no cursor or limit');
      const now = new Date();
      return sendCsv(reply, await deviceListCsv(store, adminOf(request), filters, now), now);
    }
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

  app.get<{ Params: { id: string } }>(`${p}/devices/:id/history`, guarded, async (request, reply) => {
    const { format, ...q } = queryOf(request, ['check', 'before', 'limit', 'format']);
    if (wantsCsv(format)) {
      if (q.before !== undefined || q.limit !== undefined)
        throw badRequest('format=csv exports the whole history: it takes no before or limit');
      const now = new Date();
      return sendCsv(reply, await deviceHistoryCsv(store, adminOf(request), request.params.id, q.check, now), now);
    }
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
    return complianceSeries(store, adminOf(request).scope, {
      org: q.org,
      days: wholeNumber('days', q.days),
      retentionMs: config.retentionMs,
    });
  });

  app.get(`${p}/failures`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    const { scope } = adminOf(request);
    const org = q.org === undefined ? undefined : (await organizationInScope(store, scope, q.org)).name;
    return { failures: await fleetFailures(store, org, scope) };
  });

  app.get(`${p}/policy`, guarded, async (request) => {
    const q = queryOf(request, ['org', 'label']);
    if (q.org === undefined) throw badRequest('org is required');
    return showPolicy(store, adminOf(request).scope, { org: q.org, label: q.label });
  });

  // The body is the policy document itself; an invalid one is 400 with the setting's path and why, and nothing is stored.
  app.put(`${p}/policy`, { ...guarded, bodyLimit: POLICY_BODY_LIMIT }, async (request) => {
    const q = queryOf(request, ['org', 'label']);
    if (q.org === undefined) throw badRequest('org is required');
    const principal = adminOf(request);
    if (request.body === undefined)
      throw badRequest('the body must be the policy: a JSON object of the settings that differ from the defaults');
    return setPolicy(store, principal.scope, { org: q.org, label: q.label, document: request.body, actor: principal.actor });
  });

  app.get(`${p}/policy/history`, guarded, async (request) => {
    const q = queryOf(request, ['org', 'label', 'limit']);
    if (q.org === undefined) throw badRequest('org is required');
    return {
      changes: await policyHistory(store, adminOf(request).scope, { org: q.org, label: q.label, limit: wholeNumber('limit', q.limit) }),
    };
  });

  app.get(`${p}/exceptions`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    if (q.org === undefined) throw badRequest('org is required');
    return { exceptions: await listExceptions(store, adminOf(request).scope, { org: q.org }) };
  });

  app.post(`${p}/exceptions`, guarded, async (request, reply) => {
    const q = queryOf(request, ['org']);
    if (q.org === undefined) throw badRequest('org is required');
    const body = request.body as Record<string, unknown> | undefined;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('the body must be a JSON object {device_id or label, check_key, reason, expires}');
    const unknown = Object.keys(body).filter((key) => !EXCEPTION_FIELDS.includes(key));
    if (unknown.length > 0) throw badRequest(`unknown field "${unknown[0]}"`);
    const text = (name: string): string | undefined => {
      const value = body[name];
      if (value !== undefined && typeof value !== 'string') throw badRequest(`${name} must be a string`);
      return value;
    };
    const principal = adminOf(request);
    const granted = await grantException(store, principal.scope, {
      org: q.org,
      device: text('device_id'),
      label: text('label'),
      check: text('check_key') ?? '',
      reason: text('reason') ?? '',
      expires: text('expires') ?? '',
      actor: principal.actor,
    });
    return reply.code(201).send(granted);
  });

  app.delete<{ Params: { id: string } }>(`${p}/exceptions/:id`, guarded, async (request, reply) => {
    const q = queryOf(request, ['org']);
    if (q.org === undefined) throw badRequest('org is required');
    await removeException(store, adminOf(request).scope, { org: q.org, id: request.params.id });
    return reply.code(204).send();
  });

  // The contact the device page shows the organization's device users (devicePage.ts).
  app.get<{ Params: { org: string } }>(`${p}/organizations/:org/contact`, guarded, async (request) => {
    queryOf(request, []);
    return organizationContact(store, adminOf(request).scope, request.params.org);
  });

  app.put<{ Params: { org: string }; Body: { contact?: unknown } }>(`${p}/organizations/:org/contact`, guarded, async (request) => {
    queryOf(request, []);
    const contact = request.body?.contact;
    if (contact !== null && typeof contact !== 'string') throw badRequest('the body must be {"contact": <text or null>}');
    return setOrganizationContact(store, adminOf(request).scope, request.params.org, contact, new Date());
  });
}

const EXCEPTION_FIELDS = ['device_id', 'label', 'check_key', 'reason', 'expires'];
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

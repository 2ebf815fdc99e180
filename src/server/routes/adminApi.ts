// The admin API, /api/admin/v1: JSON over the admin service layer (admin.ts), authenticated by an
// admin token or the console session (adminAuth.ts), each request within the caller's scope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  complianceSeries,
  complianceSummary,
  createDevice,
  DEVICE_LIST_PARAMETERS,
  deviceHistory,
  deviceStatusChanges,
  getDevice,
  listDevicePage,
  organizationInScope,
  revokeDevice,
  type DeviceListRequest,
} from '../admin';
import { adminOf, auditWho, authenticateAdmin, csrfForSessions } from '../adminAuth';
import { auditCsv, listAudit, recordAudit, type AuditEvent } from '../audit';
import { deviceHistoryCsv, deviceListCsv, type CsvFile } from '../adminExports';
import { csvFileName } from '../csv';
import type { AppContext } from '../context';
import { createSecret, listSecrets, revokeSecret, type NewSecretRequest } from '../enrollSecrets';
import type { Labels } from '../db/store';
import { badRequest } from '../errors';
import { NotFoundError } from '../usage';
import { organizationContact, setOrganizationContact } from '../devicePage';
import { fleetFailures } from '../remediation';
import { policyHistory, setPolicy, showPolicy } from '../policy';
import { grantException, listExceptions, removeException } from '../exceptions';
import { changeDeviceLabels, labelsAuditEvent } from '../deviceLabels';
import { createWebhook, deleteWebhook, deliveryLog, listWebhooks, type NewWebhookRequest } from '../webhooks';

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
  /** Records an action the request's admin has just done (audit.ts). */
  const audit = (request: FastifyRequest, event: AuditEvent) => recordAudit(store, auditWho(request), event);

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
    await audit(request, {
      action: 'device.create',
      org: created.org,
      target: { type: 'device', id: created.device_id },
      detail: { token_expires_at: created.token_expires_at },
    });
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

  app.get<{ Params: { id: string } }>(`${p}/devices/:id/changes`, guarded, async (request) => {
    const q = queryOf(request, ['check', 'before', 'limit']);
    return deviceStatusChanges(store, adminOf(request).scope, request.params.id, {
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
    await audit(request, { action: 'device.revoke', target: { type: 'device', id: request.params.id }, detail: { outcome } });
    return { device_id: request.params.id, outcome };
  });

  // The body is the device's whole new set of labels; a bad one is 400 and nothing is stored.
  app.put<{ Params: { id: string } }>(`${p}/devices/:id/labels`, guarded, async (request) => {
    queryOf(request, []);
    const body = request.body as Record<string, unknown> | undefined;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object {labels}');
    const unknown = Object.keys(body).find((key) => key !== 'labels');
    if (unknown !== undefined) throw badRequest(`unknown field "${unknown}"`);
    const { labels } = body;
    if (typeof labels !== 'object' || labels === null || Array.isArray(labels))
      throw badRequest('labels must be an object of strings, e.g. {"team": "finance"}');
    const view = await changeDeviceLabels(store, adminOf(request).scope, request.params.id, { replace: labels as Labels });
    // This process's own commit is no external change: the policy cache is dropped here.
    context.policies.forgetAll();
    const event = labelsAuditEvent(view);
    if (event) await audit(request, event);
    return view;
  });

  app.post(`${p}/enroll-secrets`, guarded, async (request, reply) => {
    queryOf(request, []);
    const secretAsked = secretRequest(request.body);
    const created = await createSecret(store, secretAsked, new Date(), adminOf(request).scope);
    await audit(request, {
      action: 'enroll_secret.create',
      org: secretAsked.org,
      target: { type: 'enroll_secret', id: created.secret_id },
      detail: { expires_at: created.expires_at, max_uses: created.max_uses },
    });
    return reply.code(201).send(created);
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
    await audit(request, { action: 'enroll_secret.revoke', target: { type: 'enroll_secret', id: request.params.id }, detail: { outcome } });
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
    const set = await setPolicy(store, principal.scope, { org: q.org, label: q.label, document: request.body, actor: principal.actor });
    await audit(request, { action: 'policy.set', org: set.org, detail: { label: set.label, version: set.version } });
    // This process's own commit is no external change: the policy cache is dropped here.
    context.policies.forgetAll();
    return set;
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
    await audit(request, {
      action: 'exception.grant',
      org: granted.org,
      target: { type: 'exception', id: granted.exception_id },
      detail: { check_key: granted.check_key, device_id: granted.device_id, label: granted.label, expires_at: granted.expires_at },
    });
    return reply.code(201).send(granted);
  });

  app.delete<{ Params: { id: string } }>(`${p}/exceptions/:id`, guarded, async (request, reply) => {
    const q = queryOf(request, ['org']);
    if (q.org === undefined) throw badRequest('org is required');
    await removeException(store, adminOf(request).scope, { org: q.org, id: request.params.id });
    await audit(request, { action: 'exception.revoke', org: q.org, target: { type: 'exception', id: request.params.id } });
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
    const set = await setOrganizationContact(store, adminOf(request).scope, request.params.org, contact, new Date());
    await audit(request, { action: 'org.contact', org: set.org, detail: { cleared: set.contact === null } });
    return set;
  });

  app.post(`${p}/webhooks`, guarded, async (request, reply) => {
    queryOf(request, []);
    const principal = adminOf(request);
    const created = await createWebhook(store, principal.scope, { ...webhookRequest(request.body), actor: principal.actor });
    await audit(request, {
      action: 'webhook.create',
      org: created.org,
      target: { type: 'webhook', id: created.webhook_id },
      detail: { url: created.url, format: created.format, events: created.events.join(','), include_evidence: created.include_evidence },
    });
    return reply.code(201).send(created);
  });

  app.get(`${p}/webhooks`, guarded, async (request) => {
    const q = queryOf(request, ['org']);
    return { webhooks: await listWebhooks(store, adminOf(request).scope, q.org) };
  });

  app.delete<{ Params: { id: string } }>(`${p}/webhooks/:id`, guarded, async (request) => {
    queryOf(request, []);
    const { org } = await deleteWebhook(store, adminOf(request).scope, request.params.id);
    await audit(request, { action: 'webhook.delete', org, target: { type: 'webhook', id: request.params.id } });
    return { webhook_id: request.params.id, outcome: 'deleted' };
  });

  app.get<{ Params: { id: string } }>(`${p}/webhooks/:id/deliveries`, guarded, async (request) => {
    queryOf(request, []);
    const { scope } = adminOf(request);
    if (!(await listWebhooks(store, scope, undefined)).some((w) => w.webhook_id === request.params.id))
      throw new NotFoundError(`no webhook ${JSON.stringify(request.params.id)} within your reach`);
    return { deliveries: await deliveryLog(store, scope, request.params.id) };
  });

  app.get(`${p}/audit`, guarded, async (request, reply) => {
    const { format, ...q } = queryOf(request, ['org', 'action', 'before', 'limit', 'format']);
    if (wantsCsv(format)) {
      if (q.before !== undefined || q.limit !== undefined)
        throw badRequest('format=csv exports every matching entry: it takes no before or limit');
      const now = new Date();
      return sendCsv(reply, await auditCsv(store, adminOf(request), { org: q.org, action: q.action }, now), now);
    }
    return listAudit(store, adminOf(request).scope, {
      org: q.org,
      action: q.action,
      before: wholeNumber('before', q.before),
      limit: wholeNumber('limit', q.limit),
    });
  });
}

const EXCEPTION_FIELDS = ['device_id', 'label', 'check_key', 'reason', 'expires'];
const WEBHOOK_FIELDS = ['org', 'url', 'format', 'events', 'include_evidence'];

/** POST /webhooks' body as the service layer's request; its values are checked there. */
function webhookRequest(body: unknown): NewWebhookRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object {org, url, format?, events?, include_evidence?}');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !WEBHOOK_FIELDS.includes(key));
  if (unknown !== undefined) throw badRequest(`unknown field "${unknown}"`);
  const { org, url, format, events, include_evidence: includeEvidence } = fields;
  if (typeof org !== 'string') throw badRequest('org must be a string');
  if (typeof url !== 'string') throw badRequest('url must be a string');
  if (format !== undefined && typeof format !== 'string') throw badRequest('format must be json or slack');
  if (events !== undefined && (!Array.isArray(events) || events.some((e) => typeof e !== 'string')))
    throw badRequest('events must be an array of event types');
  if (includeEvidence !== undefined && typeof includeEvidence !== 'boolean') throw badRequest('include_evidence must be true or false');
  return { org, url, format, events: events as string[] | undefined, includeEvidence };
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

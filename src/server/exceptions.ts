// Policy exceptions (docs/server.md, "Policy"): an administrator accepts one check's FAIL on one
// device (or every device with a label) for a reason, until a date. The agent still reports the true
// status; the server shows such a FAIL as "excepted until …", apart from PASS and FAIL, and the fleet
// overview counts it apart (deviceListSql.ts's exceptedCondition, for both engines). An exception lapses by itself: only those not yet expired are read.
import type { DeviceRecord, OrgScope, PolicyExceptionRecord, Store } from './db/store';
import { organizationInScope } from './admin';
import { parseDuration } from './duration';
import { parseId, type DeviceId, type OrganizationId } from './ids';
import { parseLabel } from './policy';
import { NotFoundError, UsageError } from './usage';

const MAX_REASON_LENGTH = 500;
const MAX_EXCEPTION_MS = 366 * 86_400_000;

export interface ExceptionView {
  exception_id: string;
  org: string;
  device_id: string | null;
  label: string | null;
  check_key: string;
  reason: string;
  expires_at: string;
  created_by: string;
  created_at: string;
}

export interface ExceptionRequest {
  org: string;
  device?: string;
  label?: string;
  check: string;
  reason: string;
  /** An ISO 8601 time, or a duration from now (30d, 12h). */
  expires: string;
  actor: string;
}

/** When an exception given as a time or a duration ends; in the future, at most a year away. */
function expiryOf(text: string, now: Date): string {
  const duration = parseDuration(text);
  const at = duration !== undefined ? now.getTime() + duration : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) throw new UsageError('expires must be an ISO 8601 date or time, or a duration such as 30d');
  if (at <= now.getTime()) throw new UsageError('expires must be in the future');
  if (at - now.getTime() > MAX_EXCEPTION_MS) throw new UsageError('an exception lasts at most a year: grant it again when it ends');
  return new Date(at).toISOString();
}

export async function grantException(store: Store, scope: OrgScope, request: ExceptionRequest, now = new Date()): Promise<ExceptionView> {
  const org = await organizationInScope(store, scope, request.org);
  if ((request.device === undefined) === (request.label === undefined)) throw new UsageError('give either a device or a label');
  let deviceId: DeviceId | null = null;
  if (request.device !== undefined) {
    const device = parseId('device', request.device) && (await store.findDevice(request.device));
    if (!device || device.orgId !== org.id)
      throw new NotFoundError(`no device ${JSON.stringify(request.device)} in organization ${org.name}`);
    deviceId = device.id;
  }
  const label = request.label === undefined ? null : parseLabel(request.label);
  if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(request.check)) throw new UsageError('check must be a check key such as DISK_ENCRYPTION');
  const reason = request.reason.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  if (reason === '' || reason.length > MAX_REASON_LENGTH || /[\u0000-\u001f\u007f]/.test(reason))
    throw new UsageError(`reason must be 1 to ${MAX_REASON_LENGTH} printable characters`);
  const record: Omit<PolicyExceptionRecord, 'id'> = {
    orgId: org.id,
    deviceId,
    label,
    checkKey: request.check,
    reason,
    expiresAt: expiryOf(request.expires, now),
    createdBy: request.actor,
    createdAt: now.toISOString(),
  };
  const id = await store.createPolicyException(record);
  return view({ ...record, id }, org.name);
}

/** The exceptions that have not lapsed, soonest to end first. */
export async function listExceptions(store: Store, scope: OrgScope, request: { org: string }, now = new Date()): Promise<ExceptionView[]> {
  const org = await organizationInScope(store, scope, request.org);
  return (await store.activePolicyExceptions(org.id, now.toISOString())).map((e) => view(e, org.name));
}

export async function removeException(store: Store, scope: OrgScope, request: { org: string; id: string }): Promise<void> {
  const org = await organizationInScope(store, scope, request.org);
  if (!(await store.deletePolicyException(org.id, request.id)))
    throw new NotFoundError(`no exception ${JSON.stringify(request.id)} in organization ${org.name}`);
}

function view(e: PolicyExceptionRecord, org: string): ExceptionView {
  return {
    exception_id: e.id,
    org,
    device_id: e.deviceId,
    label: e.label,
    check_key: e.checkKey,
    reason: e.reason,
    expires_at: e.expiresAt,
    created_by: e.createdBy,
    created_at: e.createdAt,
  };
}

/**
 * Per device, per check: until when a FAIL is excepted (the latest expiry when several apply), from
 * the device exceptions (a device's own view adds its labels' exceptions; the fleet summary counts
 * both in SQL, src/server/db/deviceListSql.ts).
 */
async function exceptedUntil(store: Store, orgId: OrganizationId | null, now: Date): Promise<Map<string, Map<string, string>>> {
  const byDevice = new Map<string, Map<string, string>>();
  for (const e of await store.activePolicyExceptions(orgId, now.toISOString())) {
    if (e.deviceId === null) continue;
    const checks = byDevice.get(e.deviceId) ?? new Map<string, string>();
    const until = checks.get(e.checkKey);
    if (until === undefined || until < e.expiresAt) checks.set(e.checkKey, e.expiresAt);
    byDevice.set(e.deviceId, checks);
  }
  return byDevice;
}

/** The results with `excepted_until` set on each FAIL an exception covers. */
export async function withExceptions<R extends { check_key: string; status: string }>(
  store: Store,
  device: Pick<DeviceRecord, 'id' | 'orgId'>,
  results: R[],
  now = new Date(),
): Promise<(R & { excepted_until?: string })[]> {
  const checks = (await exceptedUntil(store, device.orgId, now)).get(device.id) ?? new Map<string, string>();
  // A label's exceptions apply to this device when it carries the label.
  const byLabel = (await store.activePolicyExceptions(device.orgId, now.toISOString())).filter((e) => e.label !== null);
  if (byLabel.length > 0) {
    const labels = await store.deviceLabels(device.id);
    for (const e of byLabel) {
      const [key, value] = [e.label!.slice(0, e.label!.indexOf('=')), e.label!.slice(e.label!.indexOf('=') + 1)];
      const until = checks.get(e.checkKey);
      if (labels[key] === value && (until === undefined || until < e.expiresAt)) checks.set(e.checkKey, e.expiresAt);
    }
  }
  if (checks.size === 0) return results;
  return results.map((r) => {
    const until = r.status === 'FAIL' ? checks.get(r.check_key) : undefined;
    return until === undefined ? r : { ...r, excepted_until: until };
  });
}

// Policy exceptions (docs/server.md, "Policy"): an administrator accepts one check's FAIL on one
// device (or every device with a label) for a reason, until a date. The agent still reports the true
// status; the server shows such a FAIL as "excepted until …", apart from PASS and FAIL, and the fleet
// overview counts it apart. An exception lapses by itself: only those not yet expired are read.
import type { DeviceRecord, OrgScope, PolicyExceptionRecord, Store } from './db/store';
import { findDevice, organizationInScope } from './admin';
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
  // A value that is no exception id names none, and is answered so before any query (as admin.ts's findDevice does).
  if (parseId('policyException', request.id) === undefined || !(await store.deletePolicyException(org.id, request.id)))
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

/** Keeps the later end when several exceptions cover one check. */
function extend(checks: Map<string, string>, e: PolicyExceptionRecord): void {
  const until = checks.get(e.checkKey);
  if (until === undefined || until < e.expiresAt) checks.set(e.checkKey, e.expiresAt);
}

/** A label exception's "key=value" (parseLabel's form: the key holds no "="). */
function labelParts(label: string): [key: string, value: string] {
  const at = label.indexOf('=');
  return [label.slice(0, at), label.slice(at + 1)];
}

/**
 * Per device, per check: until when a FAIL is excepted (the latest expiry when several apply), from
 * the device exceptions and the label exceptions of the devices carrying the label (the fleet summary's count).
 */
export async function exceptedUntil(store: Store, orgId: OrganizationId | null, now: Date): Promise<Map<string, Map<string, string>>> {
  const byDevice = new Map<string, Map<string, string>>();
  const add = (deviceId: string, e: PolicyExceptionRecord) => {
    const checks = byDevice.get(deviceId) ?? new Map<string, string>();
    extend(checks, e);
    byDevice.set(deviceId, checks);
  };
  for (const e of await store.activePolicyExceptions(orgId, now.toISOString())) {
    if (e.deviceId !== null) add(e.deviceId, e);
    else for (const deviceId of await store.devicesWithLabel(e.orgId, ...labelParts(e.label!))) add(deviceId, e);
  }
  return byDevice;
}

/** The exceptions in force for one device: its own, and those of the labels it carries. */
async function applyingTo(store: Store, device: Pick<DeviceRecord, 'id' | 'orgId'>, now: Date): Promise<PolicyExceptionRecord[]> {
  const active = await store.activePolicyExceptions(device.orgId, now.toISOString());
  const labels = active.some((e) => e.label !== null) ? await store.deviceLabels(device.id) : {};
  return active.filter((e) => {
    if (e.label === null) return e.deviceId === device.id;
    const [key, value] = labelParts(e.label);
    return labels[key] === value;
  });
}

/** The exceptions in force for a device (the console's device page), soonest to end first. */
export async function deviceExceptions(store: Store, scope: OrgScope, deviceId: string, now = new Date()): Promise<ExceptionView[]> {
  const device = await findDevice(store, deviceId, scope);
  return (await applyingTo(store, device, now)).map((e) => view(e, device.orgName));
}

/** The exception that lasts longest, per check, of those in force for the device (the device page shows its reason). */
export async function exceptionsByCheck(
  store: Store,
  device: Pick<DeviceRecord, 'id' | 'orgId'>,
  now = new Date(),
): Promise<Map<string, PolicyExceptionRecord>> {
  const byCheck = new Map<string, PolicyExceptionRecord>();
  for (const e of await applyingTo(store, device, now)) {
    const held = byCheck.get(e.checkKey);
    if (held === undefined || held.expiresAt < e.expiresAt) byCheck.set(e.checkKey, e);
  }
  return byCheck;
}

/** The results with `excepted_until` set on each FAIL an exception covers (the device's own, or one of a label it carries). */
export async function withExceptions<R extends { check_key: string; status: string }>(
  store: Store,
  device: Pick<DeviceRecord, 'id' | 'orgId'>,
  results: R[],
  now = new Date(),
): Promise<(R & { excepted_until?: string })[]> {
  const checks = await exceptionsByCheck(store, device, now);
  if (checks.size === 0) return results;
  return results.map((r) => {
    const until = r.status === 'FAIL' ? checks.get(r.check_key)?.expiresAt : undefined;
    return until === undefined ? r : { ...r, excepted_until: until };
  });
}

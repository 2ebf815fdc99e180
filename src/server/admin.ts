// The admin operations: one service layer behind the admin CLI (`device create|list|show|revoke`)
// and the admin API and console, so they cannot disagree. Every operation takes the caller's scope
// (one organization or all): a device outside it is answered as if it did not exist. They work on
// the same database as a running `serve` (WAL, busy timeout, IMMEDIATE transactions).
import { hashCredential, newCredential } from './credentials';
import type {
  DeviceFilter,
  DeviceListRow,
  DeviceRecord,
  DeviceSortKey,
  DeviceState,
  Labels,
  LatestPostureResult,
  OrgScope,
  Organization,
  Store,
  StoredPostureResult,
} from './db/store';
import {
  CREATED_STATE,
  failStanding,
  graceEndsAt,
  graceSecondsFor,
  revoke,
  type GraceSettings,
  type RevokeOutcome,
} from './deviceLifecycle';
import { graceCutoffsAt, orgGrace } from './policy';
import { DEFAULT_PUBLIC_URL, PUBLIC_URL_SETTING, enrollmentLink } from './publicUrl';
import { withRemediation, type Remediation } from './remediation';
import { idForm, parseId } from './ids';
import { withExceptions } from './exceptions';
import { labelTarget } from './enrollSecrets';
import { dailyRows } from './complianceDays';
import { NotFoundError, UsageError } from './usage';
import { CHECK_KEYS, PLATFORMS, STATUSES } from '../protocol/constants';
import { HeartbeatRequest } from '../protocol/schemas';

/** The admin CLI's reach: the whole database. */
export const ALL_ORGANIZATIONS: OrgScope = { orgId: null };

const MAX_LABEL_LENGTH = 128;

export interface CreatedDevice {
  device_id: string;
  org: string;
  enrollment_token: string;
  server_url: string;
  enrollment_link: string;
  token_expires_at: string;
}

export interface DeviceSummary {
  device_id: string;
  org: string;
  name: string | null;
  state: string;
  hardware_uuid: string | null;
  serial_number: string | null;
  hostname: string | null;
  platform: string | null;
  os_version: string | null;
  agent_version: string | null;
  created_at: string;
  enrolled_at: string | null;
  activated_at: string | null;
  last_seen_at: string | null;
  revoked_at: string | null;
  /** Set while the device still has an unused enrollment token. */
  token_expires_at: string | null;
  /** The enrollment secret that registered it (null: created by an admin). */
  enroll_secret_id: string | null;
  /** Re-enrollment: the record this one replaced, and the one that replaced this one. */
  supersedes: string | null;
  superseded_by: string | null;
  /** Another record reporting this one's hardware_uuid from another host at the same time (a clone). */
  duplicate_of: string | null;
}

export interface PostureView {
  /** Order of arrival on this server (history pages with `before`). */
  id: number;
  correlation_id: string;
  check_key: string;
  status: string;
  evidence: Record<string, unknown> | null;
  observed_at: string;
  received_at: string;
  /** What the result means and how to fix it (src/server/remediation.ts); rendered here, never sent by devices. */
  remediation: Remediation;
  /** A FAIL an administrator's exception covers (src/server/exceptions.ts): until when. */
  excepted_until?: string;
}

export interface DeviceDetails extends DeviceSummary {
  postures: PostureView[];
  /** Per check key: since when its latest result fails (null when it does not). */
  failing_since: Record<string, string | null>;
}

function validLabel(what: string, value: string): string {
  const label = value.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  if (label === '' || label.length > MAX_LABEL_LENGTH || /[\u0000-\u001f\u007f]/.test(label)) {
    throw new UsageError(`${what} must be 1 to ${MAX_LABEL_LENGTH} printable characters`);
  }
  return label;
}

export async function createDevice(
  store: Store,
  input: { org: string; name?: string; tokenTtlMs: number; publicUrl?: string },
  now = new Date(),
  scope: OrgScope = ALL_ORGANIZATIONS,
): Promise<CreatedDevice> {
  const org = validLabel('--org', input.org);
  const name = input.name === undefined ? null : validLabel('--name', input.name);
  if (scope.orgId !== null && (await store.findOrganization(org))?.id !== scope.orgId) throw outOfReach('organization', org);
  if (!Number.isFinite(input.tokenTtlMs) || input.tokenTtlMs < MIN_TOKEN_TTL_MS || input.tokenTtlMs > MAX_TOKEN_TTL_MS) {
    throw new UsageError('the token lifetime must be from 1 second to 365 days');
  }
  const token = newCredential();
  const tokenExpiresAt = new Date(now.getTime() + input.tokenTtlMs).toISOString();
  const deviceId = await store.createDevice({
    orgName: org,
    name,
    state: CREATED_STATE,
    tokenHash: hashCredential(token),
    tokenExpiresAt,
    now: now.toISOString(),
  });
  const serverUrl = input.publicUrl ?? (await store.getSetting(PUBLIC_URL_SETTING)) ?? DEFAULT_PUBLIC_URL;
  return {
    device_id: deviceId,
    org,
    enrollment_token: token,
    server_url: serverUrl,
    enrollment_link: enrollmentLink(serverUrl, token),
    token_expires_at: tokenExpiresAt,
  };
}

const MIN_TOKEN_TTL_MS = 1_000;
const MAX_TOKEN_TTL_MS = 365 * 86_400_000;
export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;
const DEVICE_STATES: readonly DeviceState[] = ['PENDING', 'ACTIVE', 'REVOKED'];
const SORT_KEYS: readonly DeviceSortKey[] = ['created_at', 'hostname', 'last_seen_at', 'failing_checks', 'agent_version'];

/** The device list's query parameters, as the admin API and the console name them (besides the API's limit and format). */
export const DEVICE_LIST_PARAMETERS = [
  'org',
  'state',
  'platform',
  'failing',
  'hostname',
  'last_seen_before',
  'last_seen_after',
  'check',
  'status',
  'result_before',
  'rule',
  'excepted',
  'agent_version',
  'os_version',
  'label',
  'min_failing',
  'sort',
  'order',
  'cursor',
] as const;

/** What a device list asks for, as the CLI flags and the API's query parameters name it. */
export interface DeviceListRequest {
  org?: string;
  state?: string;
  platform?: string;
  /** A check key whose latest result is FAIL; `any` for any check. */
  failing?: string;
  hostname?: string;
  last_seen_before?: string;
  last_seen_after?: string;
  /** One check's latest result: `status` (or MISSING), received before `result_before` (stale), its `rule`, `excepted`. */
  check?: string;
  status?: string;
  result_before?: string;
  rule?: string;
  /** true or false: a FAIL an exception covers (or not). */
  excepted?: string;
  agent_version?: string;
  os_version?: string;
  /** key=value */
  label?: string;
  /** At least this many failing checks. */
  min_failing?: string;
  sort?: string;
  order?: string;
  cursor?: string;
  limit?: number;
}

/** A device as the list shows it: the working screen's columns beside the record's. */
export interface DeviceListItem extends DeviceSummary {
  /**
   * How many checks fail by their latest result (stale ones included: their last known status), as
   * the overview counts FAIL: past their grace period, no exception covering them.
   */
  failing_checks: number;
  /** Check key → the status of its latest result. */
  checks: Record<string, string>;
  /** The checks whose FAIL is within its grace period (no exception covering it): not failing yet. */
  in_grace: string[];
  /** The checks whose FAIL an exception covers. */
  excepted: string[];
  labels: Record<string, string>;
}

/** A check's status as the list shows it (console cells, CSV): a FAIL in grace or excepted apart, as the overview counts it. */
export function listedStatus(device: DeviceListItem, checkKey: string): string | undefined {
  const status = Object.hasOwn(device.checks, checkKey) ? device.checks[checkKey] : undefined;
  if (status !== 'FAIL') return status;
  if (device.in_grace.includes(checkKey)) return 'FAIL (in grace)';
  return device.excepted.includes(checkKey) ? 'FAIL (excepted)' : status;
}

export interface DevicePage {
  devices: DeviceListItem[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export async function listDevicePage(store: Store, scope: OrgScope, request: DeviceListRequest, now = new Date()): Promise<DevicePage> {
  const filter = deviceFilter(request, now);
  const sort = oneOf('sort', request.sort ?? 'created_at', SORT_KEYS);
  const order = oneOf('order', request.order ?? 'asc', ['asc', 'desc'] as const);
  const limit = request.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE)
    throw new UsageError(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  const after = request.cursor === undefined ? null : parseCursor(request.cursor, sort, order);
  const grace = { cutoffs: await graceCutoffsAt(store, scope.orgId, now), now: now.toISOString() };
  const rows = await store.listDevicePage({ scope, filter, grace, sort, descending: order === 'desc', after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    devices: page.map(listItem),
    next_cursor: rows.length > limit && last ? encodeCursor(sort, order, sortValue(last, sort), last.id) : null,
  };
}

/** Every device the request matches, page after page (the CLI's `device list`). */
export async function listAllDevices(
  store: Store,
  scope: OrgScope,
  request: Omit<DeviceListRequest, 'cursor' | 'limit'>,
): Promise<DeviceListItem[]> {
  const devices: DeviceListItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await listDevicePage(store, scope, { ...request, cursor, limit: MAX_PAGE_SIZE });
    devices.push(...page.devices);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return devices;
}

function deviceFilter(request: DeviceListRequest, now: Date): DeviceFilter {
  const filter: DeviceFilter = {};
  if (request.org !== undefined) filter.orgName = validLabel('org', request.org);
  if (request.state !== undefined) filter.state = oneOf('state', request.state.toUpperCase(), DEVICE_STATES);
  if (request.platform !== undefined)
    filter.platform = oneOf('platform', request.platform.toUpperCase(), [...PLATFORMS, 'UNKNOWN'] as const);
  if (request.failing !== undefined) filter.failingCheck = request.failing === 'any' ? '*' : validCheckKey(request.failing);
  if (request.hostname !== undefined && request.hostname !== '') filter.hostnameContains = validLabel('hostname', request.hostname);
  if (request.last_seen_before !== undefined) filter.lastSeenBefore = validTime('last_seen_before', request.last_seen_before);
  if (request.last_seen_after !== undefined) filter.lastSeenAfter = validTime('last_seen_after', request.last_seen_after);
  if (request.agent_version !== undefined) filter.agentVersion = validLabel('agent_version', request.agent_version);
  if (request.os_version !== undefined) filter.osVersion = validLabel('os_version', request.os_version);
  if (request.label !== undefined) {
    const [key, value] = labelTarget(request.label);
    filter.label = { key, value };
  }
  if (request.min_failing !== undefined) {
    if (!/^[1-9]\d{0,3}$/.test(request.min_failing)) throw new UsageError('min_failing must be a whole number from 1 to 9999');
    filter.minFailing = Number(request.min_failing);
  }
  const { check, status, result_before: before, rule, excepted } = request;
  if (check === undefined) {
    if (status !== undefined || before !== undefined || rule !== undefined || excepted !== undefined)
      throw new UsageError('status, result_before, rule and excepted filter one check: give check too');
    return filter;
  }
  filter.check = { key: validCheckKey(check, 'check') };
  if (status !== undefined) filter.check.status = oneOf('status', status.toUpperCase(), [...STATUSES, 'IN_GRACE', 'MISSING'] as const);
  if (filter.check.status === 'MISSING' && (before !== undefined || rule !== undefined || excepted !== undefined))
    throw new UsageError('status MISSING (no result) takes no result_before, rule or excepted');
  if (before !== undefined) filter.check.receivedBefore = validTime('result_before', before);
  if (rule !== undefined) filter.check.rule = validLabel('rule', rule);
  if (excepted !== undefined)
    filter.check.excepted = { is: oneOf('excepted', excepted, ['true', 'false'] as const) === 'true', now: now.toISOString() };
  return filter;
}

function oneOf<T extends string>(what: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${what} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function validCheckKey(value: string, what: 'failing' | 'check' = 'failing'): string {
  if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(value))
    throw new UsageError(`${what} must be a check key such as DISK_ENCRYPTION${what === 'failing' ? ', or "any"' : ''}`);
  return value;
}

function validTime(what: string, value: string): string {
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) throw new UsageError(`${what} must be an ISO 8601 date or time`);
  return new Date(time).toISOString();
}

function sortValue(device: DeviceListRow, sort: DeviceSortKey): string {
  if (sort === 'created_at') return device.createdAt;
  if (sort === 'failing_checks') return String(device.failingChecks);
  return (sort === 'hostname' ? device.hostname : sort === 'agent_version' ? device.agentVersion : device.lastSeenAt) ?? '';
}

/** Opaque to clients: the sort it belongs to and the last row's (sort value, id). */
function encodeCursor(sort: string, order: string, value: string, id: string): string {
  return Buffer.from(JSON.stringify([sort, order, value, id])).toString('base64url');
}

function parseCursor(cursor: string, sort: DeviceSortKey, order: string): { value: string; id: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || !parsed.every((part) => typeof part === 'string')) {
    throw new UsageError('cursor is not one this server handed out');
  }
  const [cursorSort, cursorOrder, value, id] = parsed as [string, string, string, string];
  if (cursorSort !== sort || cursorOrder !== order) throw new UsageError('cursor belongs to another sort order; start again without it');
  // Checked here, not left to the engines: SQLite would compare a bad value as text and PostgreSQL
  // would cast it (or fail), so the same tampered cursor would page differently on each.
  const rule = CURSOR_VALUES[sort];
  if (!rule.valid(value)) throw tamperedCursor(`its ${sort} is ${rule.otherwise}`);
  if (parseId('device', id) === undefined) throw tamperedCursor('its device id is malformed');
  return { value, id };
}

/** The sort values encodeCursor hands out: stored timestamps in toISOString's form, '' for a missing hostname or last_seen_at. */
const CURSOR_VALUES: Record<DeviceSortKey, { valid(value: string): boolean; otherwise: string }> = {
  created_at: { valid: isStoredTime, otherwise: 'not a timestamp' },
  last_seen_at: { valid: (value) => value === '' || isStoredTime(value), otherwise: 'neither a timestamp nor empty' },
  hostname: {
    valid: (value) => value === '' || HeartbeatRequest.shape.hostname.safeParse(value).success,
    otherwise: 'not one a device can report',
  },
  failing_checks: { valid: (value) => /^(0|[1-9]\d{0,5})$/.test(value), otherwise: 'not a count' },
  agent_version: {
    valid: (value) => value === '' || HeartbeatRequest.shape.agent_version.safeParse(value).success,
    otherwise: 'not one a device can report',
  },
};

function tamperedCursor(fault: string): UsageError {
  return new UsageError(`cursor is not one this server handed out (${fault}); start again without it`);
}

function isStoredTime(value: string): boolean {
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

/** A check's latest result, with when its status began (src/server/statusSince.ts). */
export interface LatestView extends PostureView {
  /** The first observation of the current status after a different one (RFC 3339). */
  status_since: string;
  /** status_since while the check fails; null when its latest status is not FAIL. */
  failing_since: string | null;
  /** A FAIL within its grace period: when the grace ends (it counts as failing from then on). */
  in_grace_until?: string;
}

/** A device with the latest result of each of its checks, and what each means. */
export interface DeviceView extends DeviceSummary {
  latest: LatestView[];
  /** From its enrollment secret, or set by an admin (deviceLabels.ts). */
  labels: Labels;
}

export async function getDevice(store: Store, scope: OrgScope, deviceId: string): Promise<DeviceView> {
  const device = await findDevice(store, deviceId, scope);
  const latest = withRemediation(device.platform, (await store.latestResults(device)).map(latestView));
  return {
    ...summarize(device),
    latest: withGrace(await withExceptions(store, device, latest), await orgGrace(store, device.orgId)),
    labels: await store.deviceLabels(device.id),
  };
}

/** Each FAIL within its grace period gets `in_grace_until` (failStanding). */
function withGrace<R extends LatestView>(latest: R[], grace: GraceSettings, now = new Date()): R[] {
  return latest.map((r) => {
    const graceSeconds = graceSecondsFor(grace, r.check_key);
    if (failStanding(r.status, r.status_since, graceSeconds, now) !== 'in_grace') return r;
    return { ...r, in_grace_until: new Date(graceEndsAt(r.status_since, graceSeconds)!).toISOString() };
  });
}

function latestView(result: LatestPostureResult): Omit<LatestView, 'remediation'> {
  return {
    ...postureView(result),
    status_since: result.statusSince,
    failing_since: result.status === 'FAIL' ? result.statusSince : null,
  };
}

export async function showDevice(store: Store, deviceId: string): Promise<DeviceDetails> {
  const device = await findDevice(store, deviceId, ALL_ORGANIZATIONS);
  const postures = withRemediation(device.platform, (await store.listPostures(device)).map(postureView));
  const latest = await store.latestResults(device);
  return {
    ...summarize(device),
    postures: await withExceptions(store, device, postures),
    failing_since: Object.fromEntries(latest.map((r) => [r.checkKey, latestView(r).failing_since])),
  };
}

export const MAX_HISTORY_PAGE = 500;

export interface PostureHistory {
  device_id: string;
  results: PostureView[];
  /** Pass as `before` for older results; null when there are none. */
  next_before: number | null;
}

/** The device's results newest first, of one check or all; `before` pages back. */
export async function deviceHistory(
  store: Store,
  scope: OrgScope,
  deviceId: string,
  request: { check?: string; before?: number; limit?: number },
): Promise<PostureHistory> {
  const device = await findDevice(store, deviceId, scope);
  const { checkKey, limit } = historyRequest(request);
  const rows = await store.postureHistory(device, { checkKey, beforeId: request.before, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const explained = await explainedNewestFirst(store, device, page.map(postureView));
  return { device_id: device.id, results: explained, next_before: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}

function historyRequest(request: { check?: string; before?: number; limit?: number }): { checkKey: string | undefined; limit: number } {
  const limit = request.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE)
    throw new UsageError(`limit must be a whole number from 1 to ${MAX_HISTORY_PAGE}`);
  if (request.before !== undefined && (!Number.isSafeInteger(request.before) || request.before < 1))
    throw new UsageError('before must be a positive whole number');
  return { checkKey: request.check === undefined ? undefined : validCheckKey(request.check), limit };
}

/** Results (newest first) with what each means; the steps follow the OS release of the device's latest OS_VERSION result. */
async function explainedNewestFirst<P extends Omit<PostureView, 'remediation'>>(
  store: Store,
  device: DeviceRecord,
  newestFirst: P[],
): Promise<(P & { remediation: Remediation })[]> {
  const osVersion = (await store.latestResults(device)).filter((r) => r.checkKey === 'OS_VERSION').map(postureView);
  return withRemediation(device.platform, [...osVersion, ...[...newestFirst].reverse()])
    .slice(osVersion.length)
    .reverse() as (P & { remediation: Remediation })[];
}

/** A change of a check's status: the first result with the new status, and the status before (null: the check's first result). */
export interface StatusChange extends PostureView {
  previous_status: string | null;
}

export interface StatusChanges {
  device_id: string;
  changes: StatusChange[];
  /** Pass as `before` for older changes; null when there are none. */
  next_before: number | null;
}

/**
 * The device's history as status changes, newest first (of one check or all): each result whose
 * status differs from the check's result before it (when it was observed: observed_at), not every
 * repeated one; `before` pages back by result id. The raw log is deviceHistory.
 */
export async function deviceStatusChanges(
  store: Store,
  scope: OrgScope,
  deviceId: string,
  request: { check?: string; before?: number; limit?: number },
): Promise<StatusChanges> {
  const device = await findDevice(store, deviceId, scope);
  const { checkKey, limit } = historyRequest(request);
  const found = await store.postureStatusChanges(device, { checkKey, beforeId: request.before, limit: limit + 1 });
  const page = found.slice(0, limit).map((change) => ({ ...postureView(change), previous_status: change.previousStatus }));
  return {
    device_id: device.id,
    changes: await explainedNewestFirst(store, device, page),
    next_before: found.length > limit ? (page.at(-1)?.id ?? null) : null,
  };
}

export async function revokeDevice(
  store: Store,
  deviceId: string,
  now = new Date(),
  scope: OrgScope = ALL_ORGANIZATIONS,
): Promise<RevokeOutcome> {
  return revoke(store, await findDevice(store, deviceId, scope), now.toISOString());
}

export async function findDevice(store: Store, deviceId: string, scope: OrgScope): Promise<DeviceRecord> {
  // Every edge (admin API, console, CLI) comes through here. A value that is no device id names no
  // device, and is answered so before any query: each engine would meet it differently (PostgreSQL
  // refuses a NUL, SQLite looks it up). Not echoed: it may hold control characters.
  if (parseId('device', deviceId) === undefined) throw new NotFoundError(`no such device: a device id is ${idForm('device')}`);
  const device = await store.findDevice(deviceId);
  // Another organization's device is answered exactly like a missing one.
  if (!device || (scope.orgId !== null && device.orgId !== scope.orgId)) throw outOfReach('device', deviceId);
  return device;
}

function outOfReach(what: string, name: string): NotFoundError {
  return new NotFoundError(`no ${what} ${JSON.stringify(name)} in this database${what === 'organization' ? ' within your reach' : ''}`);
}

/** The organization a scoped caller may name, or (all organizations) any that exists. */
export async function organizationInScope(store: Store, scope: OrgScope, name: string): Promise<Organization> {
  const org = await store.findOrganization(validLabel('org', name));
  if (!org || (scope.orgId !== null && org.id !== scope.orgId)) throw outOfReach('organization', name);
  return org;
}

export interface ComplianceOptions {
  org?: string;
  heartbeatIntervalSeconds: number;
  postureIntervalSeconds: number;
  now?: Date;
}

/**
 * The summary's checks other than the official ones: those reported by the most devices, at most
 * this many, so that custom keys (up to --max-check-keys − 9 per device, each device its own) cannot
 * flood every admin's overview. The official checks are always shown.
 */
export const MAX_OTHER_CHECKS_SHOWN = 20;

const OFFICIAL_CHECKS: ReadonlySet<string> = new Set(CHECK_KEYS);

/** A device not heard from for this long is offline (stale is twice its heartbeat interval). */
const OFFLINE_AFTER_MS = 3 * 86_400_000;

/**
 * Per check, ACTIVE devices by the status of their latest result, whatever its age (a stale result
 * counts with its last known status); EXCEPTED: FAIL results an active exception of the device or
 * one of its labels covers, counted apart from FAIL (src/server/exceptions.ts); MISSING: no result;
 * STALE: of those counted, the results older than twice the posture interval. Each number is the
 * row count of one device list (complianceLinks). IN_GRACE: FAIL results (not excepted) still within
 * their check's grace period (deviceLifecycle.ts, failStanding), counted apart from FAIL: not failing yet.
 */
type StatusCounts = Record<(typeof STATUSES)[number] | 'EXCEPTED' | 'MISSING' | 'STALE' | 'IN_GRACE', number>;

export interface ComplianceSummary {
  org: string | null;
  generated_at: string;
  devices: { total: number; by_state: Record<string, number>; by_platform: Record<string, number> };
  /** ACTIVE devices, and those not seen for longer than twice the heartbeat interval (stale) or OFFLINE_AFTER_MS (offline). */
  presence: {
    active: number;
    stale: number;
    offline: number;
    stale_after_seconds: number;
    offline_after_seconds: number;
    /** The cutoffs these counts used: a device list with last_seen_before set to one lists exactly them. */
    stale_before: string;
    offline_before: string;
  };
  /** A check's result received before this is stale (twice the posture interval). */
  results_stale_before: string;
  /** ACTIVE devices per agent version, and per platform and OS version, most first. */
  agent_versions: { agent_version: string | null; devices: number }[];
  os_releases: { platform: string | null; os_version: string | null; devices: number }[];
  /**
   * Per check, ACTIVE devices by the status of their latest result; older than twice the posture
   * interval counts as stale. The official checks, and the MAX_OTHER_CHECKS_SHOWN others that the
   * most devices report.
   */
  checks: ({ check_key: string } & StatusCounts)[];
}

export async function complianceSummary(store: Store, scope: OrgScope, options: ComplianceOptions): Promise<ComplianceSummary> {
  const org = options.org === undefined ? undefined : (await organizationInScope(store, scope, options.org)).name;
  const now = (options.now ?? new Date()).getTime();
  const staleAfterMs = 2 * options.heartbeatIntervalSeconds * 1000;
  const cutoffs = {
    staleBefore: new Date(now - staleAfterMs).toISOString(),
    offlineBefore: new Date(now - OFFLINE_AFTER_MS).toISOString(),
    resultsFreshSince: new Date(now - 2 * options.postureIntervalSeconds * 1000).toISOString(),
    exceptionsAt: new Date(now).toISOString(),
    graces: await graceCutoffsAt(store, scope.orgId, new Date(now)),
  };
  const counts = await store.complianceCounts(scope, org, cutoffs);
  const byState: Record<string, number> = Object.fromEntries(DEVICE_STATES.map((state) => [state, 0]));
  const byPlatform: Record<string, number> = {};
  for (const row of counts.devices) {
    byState[row.state] = (byState[row.state] ?? 0) + row.count;
    const platform = row.platform ?? 'UNKNOWN';
    byPlatform[platform] = (byPlatform[platform] ?? 0) + row.count;
  }
  const checks = new Map<string, { check_key: string } & StatusCounts>();
  const reporting = new Map<string, number>();
  for (const row of counts.checks) {
    const entry = checks.get(row.checkKey) ?? { check_key: row.checkKey, ...emptyCounts() };
    entry[row.excepted ? 'EXCEPTED' : row.inGrace ? 'IN_GRACE' : row.status] += row.count;
    if (!row.fresh) entry.STALE += row.count;
    checks.set(row.checkKey, entry);
    reporting.set(row.checkKey, (reporting.get(row.checkKey) ?? 0) + row.count);
  }
  const others = [...reporting.keys()].filter((key) => !OFFICIAL_CHECKS.has(key));
  others.sort((a, b) => reporting.get(b)! - reporting.get(a)! || a.localeCompare(b));
  for (const key of others.slice(MAX_OTHER_CHECKS_SHOWN)) checks.delete(key);
  for (const entry of checks.values())
    entry.MISSING = counts.active - entry.EXCEPTED - entry.IN_GRACE - STATUSES.reduce((sum, status) => sum + entry[status], 0);
  return {
    org: org ?? null,
    generated_at: new Date(now).toISOString(),
    devices: { total: counts.devices.reduce((sum, row) => sum + row.count, 0), by_state: byState, by_platform: byPlatform },
    presence: {
      active: counts.active,
      stale: counts.stale,
      offline: counts.offline,
      stale_after_seconds: staleAfterMs / 1000,
      offline_after_seconds: OFFLINE_AFTER_MS / 1000,
      stale_before: cutoffs.staleBefore,
      offline_before: cutoffs.offlineBefore,
    },
    results_stale_before: cutoffs.resultsFreshSince,
    agent_versions: counts.agentVersions.map((v) => ({ agent_version: v.agentVersion, devices: v.count })),
    os_releases: counts.osReleases.map((r) => ({ platform: r.platform, os_version: r.osVersion, devices: r.count })),
    checks: [...checks.values()].sort((a, b) => a.check_key.localeCompare(b.check_key)),
  };
}

function emptyCounts(): StatusCounts {
  return { PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_APPLICABLE: 0, EXCEPTED: 0, MISSING: 0, STALE: 0, IN_GRACE: 0 };
}

export const MAX_SERIES_DAYS = 90;
const DAY_MS = 86_400_000;

export interface ComplianceDay {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** Per check: devices whose last result of that day had each status. */
  checks: Record<string, Record<(typeof STATUSES)[number], number>>;
  /** Over every check: PASS results / results, that day (null when nothing was reported). */
  pass_ratio: number | null;
}

/**
 * One entry per day of the last `days` days, oldest first, days without reports included; but no
 * day that began before `retentionMs` ago (today aside): retention has deleted all or part of its
 * results, and what is left of it would pass for the whole day.
 */
export async function complianceSeries(
  store: Store,
  scope: OrgScope,
  options: { org?: string; days?: number; retentionMs: number; now?: Date },
): Promise<{ org: string | null; days: ComplianceDay[] }> {
  const org = options.org === undefined ? undefined : (await organizationInScope(store, scope, options.org)).name;
  const dayCount = options.days ?? 30;
  if (!Number.isInteger(dayCount) || dayCount < 1 || dayCount > MAX_SERIES_DAYS)
    throw new UsageError(`days must be a whole number from 1 to ${MAX_SERIES_DAYS}`);
  const now = (options.now ?? new Date()).getTime();
  const today = now - (now % DAY_MS);
  const firstWholeDayRetained = Math.ceil((now - options.retentionMs) / DAY_MS) * DAY_MS;
  const first = Math.max(today - (dayCount - 1) * DAY_MS, Math.min(today, firstWholeDayRetained));
  const rows = await dailyRows(store, scope, org, first, now);
  const days = new Map<string, ComplianceDay>();
  for (let t = first; t <= today; t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    // No prototype: a check key is the device's text, and "__proto__" must stay a key like any other.
    days.set(day, { day, checks: Object.create(null) as ComplianceDay['checks'], pass_ratio: null });
  }
  for (const row of rows) {
    const entry = days.get(row.day);
    if (!entry) continue;
    const counts = (entry.checks[row.checkKey] ??= { PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_APPLICABLE: 0 });
    counts[row.status] += row.count;
  }
  for (const entry of days.values()) {
    const all = Object.values(entry.checks);
    const total = all.reduce((sum, c) => sum + c.PASS + c.FAIL + c.UNKNOWN, 0);
    entry.pass_ratio = total === 0 ? null : all.reduce((sum, c) => sum + c.PASS, 0) / total;
  }
  return { org: org ?? null, days: [...days.values()] };
}

function summarize(device: DeviceRecord): DeviceSummary {
  return {
    device_id: device.id,
    org: device.orgName,
    name: device.name,
    state: device.state,
    hardware_uuid: device.hardwareUuid,
    serial_number: device.serialNumber,
    hostname: device.hostname,
    platform: device.platform,
    os_version: device.osVersion,
    agent_version: device.agentVersion,
    created_at: device.createdAt,
    enrolled_at: device.enrolledAt,
    activated_at: device.activatedAt,
    last_seen_at: device.lastSeenAt,
    revoked_at: device.revokedAt,
    token_expires_at: device.tokenExpiresAt,
    enroll_secret_id: device.enrollSecretId,
    supersedes: device.supersedes,
    superseded_by: device.supersededBy,
    duplicate_of: device.duplicateOf,
  };
}

function listItem(device: DeviceListRow): DeviceListItem {
  return {
    ...summarize(device),
    failing_checks: device.failingChecks,
    checks: device.checks,
    in_grace: device.inGrace,
    excepted: device.excepted,
    labels: device.labels,
  };
}

function postureView(result: StoredPostureResult): Omit<PostureView, 'remediation'> {
  return {
    id: result.id,
    correlation_id: result.reportId,
    check_key: result.checkKey,
    status: result.status,
    evidence: result.evidence,
    observed_at: result.observedAt,
    received_at: result.receivedAt,
  };
}

// The server's posture policy (docs/server.md, "Policy"): one document per organization, refined
// per device label, validated with the agent's own schema (checks/policy.ts), versioned with a change
// history; the lifecycle data set served with it (the agent's built-in tables until an admin imports
// a newer one). The admin CLI, the admin API and the console share these operations; what agents
// fetch is served from memory by PolicyCache.
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { darwinLifecycle } from '../../checks/darwin/lifecycle';
import { freebsdLifecycle } from '../../checks/freebsd/lifecycle';
import { LifecycleDataSchema, type LifecycleData } from '../../checks/lifecycleTable';
import { linuxLifecycle } from '../../checks/linux/lifecycle';
import { PolicyError, resolvePolicy, validatePolicyDocument, type Policy } from '../../checks/policy';
import { windowsLifecycle } from '../../checks/windows/lifecycle';
import { PLATFORMS } from '../protocol/constants';
import { policyToken, type Platform, type PolicyResponse } from '../protocol/schemas';
import { organizationInScope } from './admin';
import type { Labels, OrgScope, Organization, PolicyChangeRecord, Store } from './db/store';
import type { DeviceCache } from './deviceCache';
import { labelTarget } from './enrollSecrets';
import type { DeviceId, OrganizationId } from './ids';
import { graceCutoffs, type GraceCutoffs, type GraceSettings } from './deviceLifecycle';
import { UsageError } from './usage';

/** The data sets this server was built with: lifecycle version 0. */
const BUILT_IN_LIFECYCLE: Record<Platform, LifecycleData> = {
  DARWIN: darwinLifecycle,
  LINUX: linuxLifecycle,
  FREEBSD: freebsdLifecycle,
  WINDOWS: windowsLifecycle,
};

/** A lifecycle file for `lifecycle import`: per platform, a data set in the agent's format; an absent platform keeps the built-in one. */
const LifecycleFile = z.partialRecord(z.enum(PLATFORMS), LifecycleDataSchema);

const DEFAULT_HISTORY = 50;
/** Devices whose labels PolicyCache keeps (about 100 bytes each). */
const MAX_CACHED_LABELS = 100_000;
const MAX_HISTORY = 1000;

export interface PolicyView {
  org: string;
  /** The organization's policy version: moves with any change of its documents, and of its devices' labels. */
  version: number;
  /** null: the organization's own document; "key=value": a label's refinement. */
  label: string | null;
  /** The document as the administrator wrote it ({} when none is set). */
  document: Record<string, unknown>;
  /** Every setting with the defaults filled in: what an agent with no local overrides applies. */
  effective: Policy;
  /** The labels that have a refinement of their own. */
  labels: string[];
}

export interface PolicyChangeView {
  version: number;
  label: string | null;
  changed_by: string;
  changed_at: string;
  /** The settings (dotted paths) whose values differ from the document before. */
  changed: string[];
  removed: boolean;
  document: Record<string, unknown> | null;
}

/** A label as `--label` and `?label=` give it: "key=value" (labelTarget's rule, the value trimmed). */
export function parseLabel(text: string | undefined): string | null {
  if (text === undefined || text === '') return null;
  return labelTarget(text).join('=');
}

function parseDocument(json: string): Record<string, unknown> {
  return JSON.parse(json) as Record<string, unknown>;
}

async function orgFor(store: Store, scope: OrgScope, name: string, create: boolean): Promise<Organization> {
  // The whole database's admin may set the policy of an organization that has no device yet.
  if (create && scope.orgId === null) return store.ensureOrganization(name.trim(), new Date().toISOString());
  return organizationInScope(store, scope, name);
}

export async function showPolicy(store: Store, scope: OrgScope, request: { org: string; label?: string }): Promise<PolicyView> {
  const label = parseLabel(request.label);
  const org = await organizationInScope(store, scope, request.org);
  const { version, documents } = await store.orgPolicy(org.id);
  const own = documents.find((d) => d.label === null);
  const refinement = label === null ? undefined : documents.find((d) => d.label === label);
  const base = own ? parseDocument(own.document) : {};
  const document = label === null ? base : refinement ? parseDocument(refinement.document) : {};
  return {
    org: org.name,
    version,
    label,
    document,
    effective: resolvePolicy(label === null ? base : mergeDocuments(base, document)),
    labels: documents.flatMap((d) => (d.label === null ? [] : [d.label])),
  };
}

/**
 * Validates and stores a policy document (null removes a label's refinement, or resets the
 * organization's to the defaults). An invalid document is refused (UsageError: the CLI's exit 2,
 * the API's 400) with the field's path and why; nothing is stored.
 */
export async function setPolicy(
  store: Store,
  scope: OrgScope,
  request: { org: string; label?: string; document: unknown; actor: string },
): Promise<{ org: string; label: string | null; version: number }> {
  const label = parseLabel(request.label);
  let text: string | null = null;
  if (request.document !== null) {
    try {
      validatePolicyDocument(request.document);
    } catch (err) {
      if (err instanceof PolicyError) throw new UsageError(err.message);
      throw err;
    }
    text = JSON.stringify(request.document);
    // The overview counts a grace period organization-wide: it is the organization's setting, not a label's.
    const checks = (request.document as { checks?: Record<string, unknown> }).checks;
    const graceSetting = ['graceSeconds', 'graceSecondsByCheck'].find((key) => checks !== undefined && Object.hasOwn(checks, key));
    if (label !== null && graceSetting !== undefined)
      throw new UsageError(`invalid policy at checks.${graceSetting}: a grace period is the organization's setting, not a label's`);
  }
  const org = await orgFor(store, scope, request.org, true);
  const version = await store.putPolicy({ orgId: org.id, label, document: text, changedBy: request.actor, now: new Date().toISOString() });
  return { org: org.name, label, version };
}

export async function policyHistory(
  store: Store,
  scope: OrgScope,
  request: { org: string; label?: string; limit?: number },
): Promise<PolicyChangeView[]> {
  const limit = request.limit ?? DEFAULT_HISTORY;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY)
    throw new UsageError(`limit must be a whole number from 1 to ${MAX_HISTORY}`);
  const org = await organizationInScope(store, scope, request.org);
  const changes = await store.policyHistory(org.id, request.label === undefined ? undefined : parseLabel(request.label), limit);
  return changes.map(changeView);
}

function changeView(change: PolicyChangeRecord): PolicyChangeView {
  const before = change.previous === null ? {} : parseDocument(change.previous);
  const after = change.document === null ? {} : parseDocument(change.document);
  return {
    version: change.version,
    label: change.label,
    changed_by: change.changedBy,
    changed_at: change.changedAt,
    changed: changedPaths(before, after, []),
    removed: change.document === null,
    document: change.document === null ? null : after,
  };
}

/** The dotted paths of the leaves that differ between two documents. */
function changedPaths(before: unknown, after: unknown, path: string[]): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => changedPaths(before[key], after[key], [...path, key]));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [path.join('.') || '(root)'];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A label's refinement over the organization's document: objects merged key by key, anything else replaced. */
function mergeDocuments(base: Record<string, unknown>, refinement: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(refinement)) {
    const below = merged[key];
    merged[key] = isPlainObject(below) && isPlainObject(value) ? mergeDocuments(below, value) : value;
  }
  return merged;
}

// ---- lifecycle data sets ------------------------------------------------------------------------

export interface LifecycleVersionView {
  version: number;
  imported_by: string | null;
  imported_at: string | null;
  /** Per platform: the data set's commit date, and whether it is the built-in one. */
  platforms: Record<Platform, { committed_at: string; built_in: boolean }>;
}

/** Validates a lifecycle file (`lifecycle import`) and stores it as the next version. */
export async function importLifecycle(store: Store, json: unknown, actor: string): Promise<LifecycleVersionView> {
  const parsed = LifecycleFile.safeParse(json, { error: en().localeError });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`invalid lifecycle data at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  if (Object.keys(parsed.data).length === 0) throw new UsageError(`invalid lifecycle data: no platform (${PLATFORMS.join(', ')})`);
  await store.importLifecycleSet({ data: JSON.stringify(parsed.data), importedBy: actor, now: new Date().toISOString() });
  return lifecycleVersion(store);
}

export async function lifecycleVersion(store: Store): Promise<LifecycleVersionView> {
  const { version, sets, record } = await currentLifecycle(store);
  return {
    version,
    imported_by: record?.importedBy ?? null,
    imported_at: record?.importedAt ?? null,
    platforms: Object.fromEntries(
      PLATFORMS.map((p) => [p, { committed_at: sets[p].dataset.committedAt, built_in: sets[p] === BUILT_IN_LIFECYCLE[p] }]),
    ) as LifecycleVersionView['platforms'],
  };
}

async function currentLifecycle(store: Store) {
  const record = await store.latestLifecycleSet();
  const imported = record ? (JSON.parse(record.data) as Partial<Record<Platform, LifecycleData>>) : {};
  const sets = Object.fromEntries(PLATFORMS.map((p) => [p, imported[p] ?? BUILT_IN_LIFECYCLE[p]])) as Record<Platform, LifecycleData>;
  return { version: record?.version ?? 0, sets, record };
}

// ---- what agents fetch --------------------------------------------------------------------------

interface OrgEntry {
  version: number;
  /** The version its latest change of device labels took: labels cached before it are read again. */
  labelsVersion: number;
  /** The organization's own document, and the refinements by label. */
  base: Record<string, unknown>;
  refinements: Map<string, Record<string, unknown>>;
  /** Served bodies by platform (and, once devices carry labels, by label set). */
  bodies: Map<string, string>;
}

/**
 * What `serve` keeps of the policy between requests, so that a heartbeat's `policy_version` and the
 * policy route cost no database read. Everything is dropped when the store's policyGeneration moves
 * (any process's policy, label, exception or lifecycle change, committed in the same transaction).
 * It is read again only after someone else may have committed one: on SQLite when the device cache
 * saw another connection commit (DeviceCache.onExternalChange: its one read per event-loop turn,
 * which every request here was authenticated through), so a change made elsewhere is served from
 * the next request on; on PostgreSQL when a notification of a change arrived (the store's
 * watchPolicyGeneration: milliseconds after the commit, at most its fallback period). This
 * process's own changes call forgetAll.
 */
export class PolicyCache {
  private generation: string | undefined;
  /** Whether someone else may have committed since policyGeneration was last read. */
  private stale = true;
  /** The read of policyGeneration the requests that came after the latest external change wait for. */
  private generationRead: Promise<void> = Promise.resolve();
  private generationSettled = true;
  /** Moves at every forgetAll. */
  private epoch = 0;
  /** policy_version by organization, computed since the last forgetAll. */
  private readonly tokens = new Map<OrganizationId, string>();
  private readonly orgs = new Map<OrganizationId, Promise<OrgEntry>>();
  private lifecycle: Promise<Awaited<ReturnType<typeof currentLifecycle>>> | undefined;
  /** Each device's labels, with the organization's labelsVersion known before they were read. */
  private readonly labels = new Map<DeviceId, { labels: Labels; asOf: number }>();

  constructor(
    private readonly store: Store,
    devices: Pick<DeviceCache, 'onExternalChange'>,
  ) {
    const changed = () => (this.stale = true);
    // PostgreSQL tells of changes by notification; elsewhere the device cache's per-turn read of external commits does.
    if (!store.watchPolicyGeneration(changed)) devices.onExternalChange(changed);
  }

  /**
   * The heartbeat's `policy_version` for a device of the organization, without waiting when it is
   * known (no change seen since it was computed): a heartbeat then costs no promise for it.
   */
  token(orgId: OrganizationId): string | Promise<string> {
    return (!this.stale && this.generationSettled && this.tokens.get(orgId)) || this.computeToken(orgId);
  }

  private async computeToken(orgId: OrganizationId): Promise<string> {
    await this.fresh();
    const epoch = this.epoch;
    const [org, lifecycle] = await Promise.all([this.org(orgId), this.lifecycleSets()]);
    const token = policyToken(org.version, lifecycle.version);
    // Not kept when a change was seen meanwhile: it may have been computed from what came before.
    if (epoch === this.epoch && !this.stale) this.tokens.set(orgId, token);
    return token;
  }

  /**
   * The policy route's body (JSON) for a device of the organization on `platform`: the organization's
   * document refined by those of the device's labels that have one (in label order).
   */
  async body(orgId: OrganizationId, deviceId: DeviceId, platform: Platform): Promise<string> {
    await this.fresh();
    const [org, lifecycle] = await Promise.all([this.org(orgId), this.lifecycleSets()]);
    // Labels are read only in an organization with refinements, once per device and change of its organization's labels.
    const labels = org.refinements.size === 0 ? {} : await this.labelsOf(deviceId, org.labelsVersion);
    const matched = [...org.refinements.keys()].filter(
      (label) => labels[label.slice(0, label.indexOf('='))] === label.slice(label.indexOf('=') + 1),
    );
    // Joined by a control character, which no label holds: two different matches never share a key.
    const key = [platform, ...matched].join('\n');
    let body = org.bodies.get(key);
    if (body === undefined) {
      const response: PolicyResponse = {
        version: org.version,
        policy: matched.reduce((document, label) => mergeDocuments(document, org.refinements.get(label)!), org.base),
        lifecycle: { version: lifecycle.version, ...lifecycle.sets[platform] },
      };
      body = JSON.stringify(response);
      org.bodies.set(key, body);
    }
    return body;
  }

  /**
   * The device's labels, read again when its organization's labels changed since (labelsVersion):
   * stamped with the labelsVersion known before the read, an entry that raced a change is read again.
   */
  private async labelsOf(deviceId: DeviceId, labelsVersion: number): Promise<Labels> {
    const cached = this.labels.get(deviceId);
    if (cached !== undefined && cached.asOf >= labelsVersion) return cached.labels;
    const labels = await this.store.deviceLabels(deviceId);
    this.labels.delete(deviceId);
    if (this.labels.size >= MAX_CACHED_LABELS) this.labels.delete(this.labels.keys().next().value!);
    this.labels.set(deviceId, { labels, asOf: labelsVersion });
    return labels;
  }

  /** Drops everything: after this process's own change, which the device cache does not report as an external one. */
  forgetAll(): void {
    this.epoch += 1;
    this.tokens.clear();
    this.orgs.clear();
    this.lifecycle = undefined;
  }

  private async fresh(): Promise<void> {
    if (this.stale) {
      this.stale = false;
      this.generationSettled = false;
      this.generationRead = this.store.policyGeneration().then(
        (generation) => {
          this.generationSettled = true;
          if (generation !== this.generation) {
            this.forgetAll();
            this.generation = generation;
          }
        },
        (error: unknown) => {
          this.generationSettled = true;
          this.stale = true;
          throw error;
        },
      );
    }
    await this.generationRead;
  }

  private org(orgId: OrganizationId): Promise<OrgEntry> {
    let entry = this.orgs.get(orgId);
    if (!entry) {
      entry = this.store.orgPolicy(orgId).then(({ version, labelsVersion, documents }) => {
        const own = documents.find((d) => d.label === null);
        return {
          version,
          labelsVersion,
          base: own ? parseDocument(own.document) : {},
          refinements: new Map(documents.flatMap((d) => (d.label === null ? [] : [[d.label, parseDocument(d.document)] as const]))),
          bodies: new Map(),
        };
      });
      entry.catch(() => this.orgs.delete(orgId));
      this.orgs.set(orgId, entry);
    }
    return entry;
  }

  private lifecycleSets() {
    if (!this.lifecycle) {
      this.lifecycle = currentLifecycle(this.store);
      this.lifecycle.catch(() => (this.lifecycle = undefined));
    }
    return this.lifecycle;
  }
}

/**
 * The organization's grace settings (checks.graceSeconds, graceSecondsByCheck): from its own
 * document, which alone may set them (setPolicy refuses them in a label's refinement).
 */
export async function orgGrace(store: Store, orgId: OrganizationId): Promise<GraceSettings> {
  const own = (await store.orgPolicy(orgId)).documents.find((d) => d.label === null);
  return resolvePolicy(own === undefined ? {} : parseDocument(own.document)).checks;
}

/**
 * The grace cutoffs at `now` (deviceLifecycle.ts, graceCutoffs) of one organization, or (null) of
 * every organization with a policy of its own: what the overview's counts and the device list's
 * FAIL and IN_GRACE filters decide by, in SQL.
 */
export async function graceCutoffsAt(store: Store, orgId: OrganizationId | null, now: Date): Promise<GraceCutoffs[]> {
  return (await store.ownPolicyDocuments(orgId)).map((own) =>
    graceCutoffs(own.orgId, resolvePolicy(parseDocument(own.document)).checks, now),
  );
}

// What a device's posture results mean and how to fix them, for the admin views: the agent's own
// catalogue (checks/<os>/remediation.ts) bundled into the server. A platform, check or word the
// catalogue does not know (a newer agent, another implementation of the API) gets generic texts.
// The texts are rendered here from stored evidence; devices never send them.
import { osHintFrom } from '../../checks/remediation';
import { explainResult } from '../../checks/remediationCatalogue';
import type { PostureStatus } from '../protocol/schemas';
import type { OrgScope, Store } from './db/store';
import { graceCutoffsAt } from './policy';

export interface Remediation {
  /** The entry's word: `rule` on PASS/FAIL, `reason` otherwise (null when the result has none). */
  word: string | null;
  summary: string;
  fix: string;
  admin: string;
  /** True when the catalogue had no entry and the texts are generic. */
  generic: boolean;
}

interface StoredResult {
  check_key: string;
  status: string;
  evidence: Record<string, unknown> | null;
}

/**
 * Each result with its remediation. `postures` are one device's, oldest first; the steps are those
 * for the OS release its latest OS_VERSION result names.
 */
export function withRemediation<P extends StoredResult>(
  platform: string | null,
  postures: readonly P[],
): Array<P & { remediation: Remediation }> {
  const latestOs = [...postures].reverse().find((p) => p.check_key === 'OS_VERSION');
  const os = osHintFrom(latestOs ? [{ check_key: 'OS_VERSION', evidence: latestOs.evidence ?? {} }] : []);
  return postures.map((p) => ({
    ...p,
    remediation: explainResult(
      platform ?? '',
      { check_key: p.check_key, status: p.status as PostureStatus, evidence: p.evidence ?? {} },
      { os },
    ),
  }));
}

/** The newest result of each check, in the order the checks first appear (`postures` oldest first). */
export function latestPerCheck<P extends StoredResult>(postures: readonly P[]): P[] {
  const latest = new Map<string, P>();
  for (const p of postures) latest.set(p.check_key, p);
  return [...latest.values()];
}

/** One (platform, check, word) that devices fail, with the devices and the fleet-wide fix. */
export interface FleetFailure {
  platform: string;
  check_key: string;
  word: string | null;
  devices: string[];
  /** Each device's hostname, in the order of `devices` (null before its first heartbeat). */
  hostnames: (string | null)[];
  summary: string;
  admin: string;
  generic: boolean;
}

/**
 * Which active devices fail which check, by their latest result (past its grace period), grouped by platform, check and
 * rule, most devices first: one query, whatever the fleet's size. The summary is the entry's,
 * without any one device's figures.
 */
export async function fleetFailures(store: Store, org?: string, scope: OrgScope = { orgId: null }): Promise<FleetFailure[]> {
  const groups = new Map<string, { failure: Omit<FleetFailure, 'devices' | 'hostnames'>; devices: [string, string | null][] }>();
  const explanations = new Map<string, ReturnType<typeof explainResult>>();
  const now = new Date();
  const grace = { cutoffs: await graceCutoffsAt(store, scope.orgId, now), now: now.toISOString() };
  for (const result of await store.failingResults(scope, org, grace)) {
    const platform = result.platform ?? '';
    // One explanation per (platform, check, rule): thousands of devices fail alike.
    const ruleKey = JSON.stringify([platform, result.checkKey, result.rule]);
    let explained = explanations.get(ruleKey);
    if (!explained)
      explanations.set(
        ruleKey,
        (explained = explainResult(platform, { check_key: result.checkKey, status: 'FAIL', evidence: { rule: result.rule } })),
      );
    const { word, summary, admin, generic } = explained;
    const key = JSON.stringify([platform, result.checkKey, word]);
    const group = groups.get(key) ?? { failure: { platform, check_key: result.checkKey, word, summary, admin, generic }, devices: [] };
    group.devices.push([result.deviceId, result.hostname]);
    groups.set(key, group);
  }
  const failures = [...groups.values()].map(({ failure, devices }) => {
    devices.sort(([a], [b]) => (a < b ? -1 : 1));
    return { ...failure, devices: devices.map(([id]) => id), hostnames: devices.map(([, hostname]) => hostname) };
  });
  return failures.sort((a, b) => b.devices.length - a.devices.length || a.check_key.localeCompare(b.check_key));
}

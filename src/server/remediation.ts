// What a device's posture results mean and how to fix them, for the admin views: the agent's own
// catalogue (checks/<os>/remediation.ts) bundled into the server. A platform, check or word the
// catalogue does not know (a newer agent, another implementation of the API) gets generic texts.
// The texts are rendered here from stored evidence; devices never send them.
import { osHintFrom } from '../../checks/remediation';
import { explainResult } from '../../checks/remediationCatalogue';
import type { PostureStatus } from '../protocol/schemas';
import type { DeviceRecord, OrgScope, Store } from './db/store';

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
  summary: string;
  admin: string;
  generic: boolean;
}

/**
 * Which active devices fail which check, by their latest result, grouped by platform, check and
 * rule, most devices first. The summary is the entry's, without any one device's figures.
 */
export async function fleetFailures(store: Store, org?: string, scope: OrgScope = { orgId: null }): Promise<FleetFailure[]> {
  const groups = new Map<string, FleetFailure>();
  for await (const device of failingDevices(store, scope, org)) {
    const platform = device.platform ?? '';
    for (const result of (await store.latestResults(device)).filter((r) => r.status === 'FAIL')) {
      const { word, summary, admin, generic } = explainResult(platform, {
        check_key: result.checkKey,
        status: 'FAIL',
        evidence: { rule: result.evidence?.rule },
      });
      const key = JSON.stringify([platform, result.checkKey, word]);
      const group = groups.get(key) ?? { platform, check_key: result.checkKey, word, devices: [], summary, admin, generic };
      group.devices.push(device.id);
      groups.set(key, group);
    }
  }
  for (const group of groups.values()) group.devices.sort();
  return [...groups.values()].sort((a, b) => b.devices.length - a.devices.length || a.check_key.localeCompare(b.check_key));
}

const FAILING_PAGE = 500;

/** ACTIVE devices with at least one FAIL as their latest result, page by page. */
async function* failingDevices(store: Store, scope: OrgScope, orgName: string | undefined): AsyncGenerator<DeviceRecord> {
  let after: { value: string; id: string } | null = null;
  for (;;) {
    const page = await store.listDevicePage({
      scope,
      filter: { orgName, state: 'ACTIVE', failingCheck: '*' },
      sort: 'created_at',
      descending: false,
      after,
      limit: FAILING_PAGE,
    });
    yield* page;
    const last = page.at(-1);
    if (page.length < FAILING_PAGE || !last) return;
    after = { value: last.createdAt, id: last.id };
  }
}

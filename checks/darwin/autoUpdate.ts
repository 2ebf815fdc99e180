// AUTO_UPDATE on macOS (research §6.1): the Software Update settings, profile values first. Check,
// download, security responses and system data files are always required; installing macOS updates
// too unless policy.autoUpdate.acceptDownloadOnly. Checking is not required from macOS 15, which
// removed its switch (AutomaticCheckEnabled no longer stops checks); a DDM declaration's AlwaysOn
// is in force over every file.
// Settings are the intent; the effect is the release installed (issue 32). Once the settings pass,
// sw_vers is held against its line's newest release in the lifecycle data (`latest`,
// `latestReleaseDate`): a newer release out longer than policy.autoUpdate.maxPendingDays FAILs.
import type { Evidence } from '../types';
import { defineCheck } from '../types';
import type { Policy } from '../policy';
import { compareVersions } from '../release';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { darwinLifecycle } from './lifecycle';
import {
  checkSwitchRemoved,
  collectSoftwareUpdate,
  resolveSetting,
  SOFTWARE_UPDATE_KEYS,
  type SoftwareUpdateFacts,
  type SoftwareUpdateKey,
} from './softwareUpdate';
import { parseSwVers } from './swVers';

const DAY_MS = 86_400_000;
const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`);

function requiredKeys(policy: Policy, facts: SoftwareUpdateFacts): SoftwareUpdateKey[] {
  const noCheckSwitch = checkSwitchRemoved(facts);
  return SOFTWARE_UPDATE_KEYS.filter(
    (key) =>
      (key !== 'AutomaticallyInstallMacOSUpdates' || !policy.autoUpdate.acceptDownloadOnly) &&
      (key !== 'AutomaticCheckEnabled' || !noCheckSwitch),
  );
}

function evaluateSettings(facts: SoftwareUpdateFacts, policy: Policy) {
  const settings = Object.fromEntries(SOFTWARE_UPDATE_KEYS.map((key) => [key, resolveSetting(facts, key)]));
  const required = requiredKeys(policy, facts);
  const evidence = {
    source: 'preferences',
    managed: facts.managed.state === 'present',
    ddm: facts.ddm?.state === 'present',
    check_switch_removed: checkSwitchRemoved(facts),
    accept_download_only: policy.autoUpdate.acceptDownloadOnly,
    keys: Object.fromEntries(SOFTWARE_UPDATE_KEYS.map((key) => [key, { value: settings[key]!.value, from: settings[key]!.from }])),
  };
  const disabled = required.filter((key) => settings[key]!.value === false);
  if (disabled.length > 0) return fail({ ...evidence, disabled_keys: disabled, rule: 'required_setting_off' });
  const unreadable = required.filter((key) => settings[key]!.value === null);
  if (unreadable.length > 0) {
    const first = settings[unreadable[0]!]!;
    return unknown('reason' in first ? first.reason : 'parse_error', { ...evidence, unreadable_keys: unreadable });
  }
  // Every required setting on: what decides is whether updates did install (judgeInstalled).
  return { on: { ...evidence, disabled_keys: [] } };
}

/**
 * The settings let updates install: the installed release shows whether they did. The data set dates
 * only each line's newest release, so: older than it and it is out more than maxPendingDays → FAIL
 * `update_pending`; older than it but it is recent → UNKNOWN `update_pending_recent` (an earlier
 * release the Mac also lacks may have waited longer: not known); the newest → PASS `up_to_date`,
 * unless the line is still patched and the data set ends more than maxPendingDays ago (UNKNOWN
 * `lifecycle_data_outdated`: a release since may be pending); newer than the data set → PASS
 * `newer_than_table`. A policy's own `osVersion.lifecycle` is taken as current.
 */
function judgeInstalled(settings: Evidence, facts: SoftwareUpdateFacts, policy: Policy, now: Date) {
  const maxPendingDays = policy.autoUpdate.maxPendingDays;
  const evidence: Evidence = { ...settings, max_pending_days: maxPendingDays };
  const swVers = facts.swVers;
  if (swVers.error || swVers.exitCode !== 0) return unknown(commandFailureReason(swVers), { ...evidence, version_source: 'sw_vers' });
  const release = parseSwVers(swVers.stdout);
  if (!release) return unknown('unrecognized_version', { ...evidence, version_source: 'sw_vers' });
  const override = policy.osVersion.lifecycle;
  const data = policy.osVersion.lifecycleData ?? darwinLifecycle;
  const table = (override ?? data.products).macos ?? [];
  Object.assign(evidence, {
    installed_version: release.productVersion,
    cycle: release.cycle,
    lifecycle_checked_at: override ? 'policy' : data.dataset.committedAt,
  });
  const line = table.find((c) => c.cycle === release.cycle);
  if (!line) {
    // Apple patches its newest major: one beyond every listed line is the current release.
    const newest = table.reduce<string | undefined>(
      (a, c) => (a === undefined || compareVersions(c.cycle, a) > 0 ? c.cycle : a),
      undefined,
    );
    if (newest !== undefined && compareVersions(release.cycle, newest) > 0)
      return pass({ ...evidence, newest_listed: newest, rule: 'newer_than_table' });
    return unknown('unknown_release', evidence);
  }
  if (!line.latest || !line.latestReleaseDate) return unknown('latest_release_unknown', evidence);
  Object.assign(evidence, { latest: line.latest, latest_released: line.latestReleaseDate });
  const order = compareVersions(release.productVersion, line.latest);
  if (order > 0) return pass({ ...evidence, rule: 'newer_than_table' });
  const deadline = dayMs(line.latestReleaseDate) + maxPendingDays * DAY_MS;
  if (order < 0) {
    evidence.pending_days = Math.max(0, Math.floor((now.getTime() - dayMs(line.latestReleaseDate)) / DAY_MS));
    return deadline <= now.getTime() ? fail({ ...evidence, rule: 'update_pending' }) : unknown('update_pending_recent', evidence);
  }
  const stillPatched = line.eol === false || (typeof line.eol === 'string' && dayMs(line.eol) > now.getTime());
  if (!override && stillPatched && dayMs(data.dataset.committedAt) + maxPendingDays * DAY_MS <= now.getTime()) {
    return unknown('lifecycle_data_outdated', evidence);
  }
  return pass({ ...evidence, rule: 'up_to_date' });
}

export function evaluateAutoUpdate(facts: SoftwareUpdateFacts, policy: Policy, now: Date) {
  const settings = evaluateSettings(facts, policy);
  return 'on' in settings ? judgeInstalled(settings.on, facts, policy, now) : settings;
}

export const autoUpdate = defineCheck({
  key: 'AUTO_UPDATE',
  platform: 'DARWIN',
  collect: (ctx) => collectSoftwareUpdate(ctx),
  evaluate: (facts, policy, now) => evaluateAutoUpdate(facts, policy, now),
});

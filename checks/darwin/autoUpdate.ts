// AUTO_UPDATE on macOS (research §6.1): the Software Update settings, profile values first. Check,
// download, security responses and system data files are always required; installing macOS updates
// too unless policy.autoUpdate.acceptDownloadOnly. Checking is not required from macOS 15, which
// removed its switch (AutomaticCheckEnabled no longer stops checks); a DDM declaration's AlwaysOn
// is in force over every file.
import { defineCheck } from '../types';
import type { Policy } from '../policy';
import { fail, pass, unknown } from '../verdict';
import {
  checkSwitchRemoved,
  collectSoftwareUpdate,
  resolveSetting,
  SOFTWARE_UPDATE_KEYS,
  type SoftwareUpdateFacts,
  type SoftwareUpdateKey,
} from './softwareUpdate';

function requiredKeys(policy: Policy, facts: SoftwareUpdateFacts): SoftwareUpdateKey[] {
  const noCheckSwitch = checkSwitchRemoved(facts);
  return SOFTWARE_UPDATE_KEYS.filter(
    (key) =>
      (key !== 'AutomaticallyInstallMacOSUpdates' || !policy.autoUpdate.acceptDownloadOnly) &&
      (key !== 'AutomaticCheckEnabled' || !noCheckSwitch),
  );
}

export function evaluateAutoUpdate(facts: SoftwareUpdateFacts, policy: Policy) {
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
  return pass({ ...evidence, disabled_keys: [], rule: 'required_settings_on' });
}

export const autoUpdate = defineCheck({
  key: 'AUTO_UPDATE',
  platform: 'DARWIN',
  collect: (ctx) => collectSoftwareUpdate(ctx),
  evaluate: (facts, policy) => evaluateAutoUpdate(facts, policy),
});

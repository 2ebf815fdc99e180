// OS_VERSION on Windows: build, patch level (UBR), feature update and edition from the registry
// (research §5.4), judged by the shared lifecycle rule against the edition's own servicing channel:
// the policy's build floor for general-availability clients (minBuild) or for Windows Server
// (minServerBuild); none for LTSC editions, which get no feature updates and whose own support date
// decides (LTSC 2019 on build 17763 is serviced until 2029). With policy.osVersion.maxPatchAgeDays.WINDOWS,
// a supported release is also judged by its patch level: the release date of the installed
// cumulative update (UBR), from the recorded table in updateHistory.ts.
import type { Policy } from '../policy';
import { windowsLifecycle } from './lifecycle';
import { judgeRelease } from '../release';
import type { Evidence, PassOrFail } from '../types';
import { fail, pass, unknown } from '../verdict';
import { windowsRelease, type WindowsRelease } from './osRelease';
import { defineProbeCheck, registryKey, sectionUnknown, type Section } from './probe';
import { type RegistryValues } from './registry';
import { patchRelease, updateLineFor, UPDATE_HISTORY_RECORDED_THROUGH } from './updateHistory';

const DAY_MS = 86_400_000;

export interface OsVersionFacts {
  currentVersion: Section<RegistryValues | null>;
}

/** Server editions have their own floor: their builds (14393, 17763, 20348) are not client feature updates; LTSC has none. */
function buildFloor(release: WindowsRelease, policy: Policy): number | null {
  const floors = policy.osVersion.minimum.WINDOWS;
  if (release.ltsc) return null;
  return release.family === 'server' ? floors.minServerBuild : floors.minBuild;
}

export function evaluateOsVersion(facts: OsVersionFacts, policy: Policy, now: Date) {
  const base = { source: 'registry' };
  const { currentVersion } = facts;
  if (!currentVersion.ok) return sectionUnknown(currentVersion, base);
  const release = currentVersion.value === null ? null : windowsRelease(currentVersion.value);
  if (release === null) return unknown('unrecognized_version', base);
  const releaseFacts = {
    ...base,
    name: release.name,
    build: release.build,
    ubr: release.ubr,
    display_version: release.displayVersion,
    edition: release.edition,
    installation_type: release.installationType,
    servicing_channel:
      release.family === 'server' ? 'server' : release.ltsc ? 'ltsc' : release.family === 'client' ? 'general_availability' : null,
    ...(release.evaluation ? { evaluation_edition: true } : {}),
  };
  const floor = buildFloor(release, policy);
  const verdict = judgeRelease(
    {
      product: release.lifecycleProduct ?? 'windows-unrecognized-edition',
      cycle: release.cycle ?? release.displayVersion ?? String(release.build),
      version: release.ubr === null ? String(release.build) : `${release.build}.${release.ubr}`,
      facts: releaseFacts,
    },
    {
      minimum: floor === null ? undefined : String(floor),
      extendedSupport: {
        name: 'Windows ESU',
        setting: 'osVersion.acceptExtendedSupport.windowsEsu',
        accepted: policy.osVersion.acceptExtendedSupport.windowsEsu,
      },
    },
    policy,
    now,
    windowsLifecycle,
  );
  const maxAgeDays = policy.osVersion.maxPatchAgeDays.WINDOWS;
  return verdict.status === 'PASS' && maxAgeDays !== null ? judgePatchAge(verdict, release, maxAgeDays, now) : verdict;
}

/**
 * A supported release whose installed cumulative update is older than the policy allows FAILs
 * (`patch_too_old`). A UBR the table does not list was released between its neighbours' dates: the
 * verdict is the one both bounds agree on, else UNKNOWN; newer than the table, only its newest row's
 * date is known.
 */
function judgePatchAge<Word extends string>(supported: PassOrFail<Word>, release: WindowsRelease, maxAgeDays: number, now: Date) {
  const line = updateLineFor(release);
  const evidence: Evidence = { ...supported.evidence, max_patch_age_days: maxAgeDays };
  const stillSupported = () => pass({ ...evidence, rule: supported.evidence.rule });
  if (line === null) return unknown('patch_line_not_in_table', { ...evidence, rule: 'patch_line_not_in_table' });
  evidence.update_line = line.name;
  if (release.ubr === null) return unknown('ubr_missing', { ...evidence, rule: 'ubr_missing' });
  const tooOld = (date: string) => Date.parse(`${date}T00:00:00Z`) + maxAgeDays * DAY_MS <= now.getTime();
  const patch = patchRelease(line, release.ubr);
  if (patch.exact) {
    evidence.patch_released = patch.released;
    evidence.patch_age_days = Math.floor((now.getTime() - Date.parse(`${patch.released}T00:00:00Z`)) / DAY_MS);
    return tooOld(patch.released) ? fail({ ...evidence, rule: 'patch_too_old' }) : stillSupported();
  }
  evidence.patch_released_after = patch.notBefore;
  evidence.patch_released_before = patch.notAfter;
  if (patch.notAfter !== null && tooOld(patch.notAfter)) return fail({ ...evidence, rule: 'patch_too_old' });
  if (patch.notBefore !== null && !tooOld(patch.notBefore)) return stillSupported();
  if (patch.notAfter === null) {
    return unknown('patch_table_outdated', {
      ...evidence,
      newest_listed: patch.newestListed,
      table_recorded_through: UPDATE_HISTORY_RECORDED_THROUGH,
      rule: 'patch_table_outdated',
    });
  }
  return unknown('patch_date_undetermined', { ...evidence, rule: 'patch_date_undetermined' });
}

export const osVersionCheck = defineProbeCheck(
  'OS_VERSION',
  (probe): OsVersionFacts => ({ currentVersion: registryKey(probe, 'os') }),
  evaluateOsVersion,
);

// OS_VERSION on Windows: build, patch level (UBR), feature update and edition from the registry
// (research §5.4), judged by the shared lifecycle rule against the edition's own servicing channel:
// the policy's build floor for general-availability clients (minBuild) or for Windows Server
// (minServerBuild); none for LTSC editions, which get no feature updates and whose own support date
// decides (LTSC 2019 on build 17763 is serviced until 2029).
import type { Policy } from '../policy';
import { judgeRelease } from '../release';
import type { Verdict } from '../types';
import { unknown } from '../verdict';
import { windowsRelease, type WindowsRelease } from './osRelease';
import { defineProbeCheck, registryKey, sectionUnknown, type Section } from './probe';
import { type RegistryValues } from './registry';

export interface OsVersionFacts {
  currentVersion: Section<RegistryValues | null>;
}

/** Server editions have their own floor: their builds (14393, 17763, 20348) are not client feature updates; LTSC has none. */
function buildFloor(release: WindowsRelease, policy: Policy): number | null {
  const floors = policy.osVersion.minimum.WINDOWS;
  if (release.ltsc) return null;
  return release.family === 'server' ? floors.minServerBuild : floors.minBuild;
}

export function evaluateOsVersion(facts: OsVersionFacts, policy: Policy, now: Date): Verdict {
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
  return judgeRelease(
    {
      product: release.lifecycleProduct ?? 'windows-unrecognized-edition',
      cycle: release.cycle ?? release.displayVersion ?? String(release.build),
      version: release.ubr === null ? String(release.build) : `${release.build}.${release.ubr}`,
      facts: releaseFacts,
    },
    { minimum: floor === null ? undefined : String(floor), acceptExtendedSupport: policy.osVersion.acceptExtendedSupport.windowsEsu },
    policy,
    now,
  );
}

export const osVersionCheck = defineProbeCheck(
  'OS_VERSION',
  (probe): OsVersionFacts => ({ currentVersion: registryKey(probe, 'os') }),
  evaluateOsVersion,
);

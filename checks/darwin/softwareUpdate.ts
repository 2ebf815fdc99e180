// The five Software Update settings, shared by AUTO_UPDATE and MALWARE_PROTECTION (XProtect's data
// arrives through ConfigDataInstall). What is in force comes first: a Declarative Device Management
// software-update declaration (macOS 15+, SoftwareUpdateDDMStatePersistence.plist) that sets a
// setting AlwaysOn, then a configuration profile's value, then the system file; a key set nowhere
// has the platform default, reported as from:"default".
import type { CheckContext, CommandResult } from '../types';
import type { CommandFailureReason, FsFailureReason } from '../verdict';
import { plistBool, plistDict, plistInt } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';
import { releaseFrom, runSwVers } from './swVers';

/** macOS 15 removed the "check for updates" switch: checking is always on, whatever AutomaticCheckEnabled says. */
export function checkSwitchRemoved(facts: SoftwareUpdateFacts): boolean {
  const release = releaseFrom(facts.swVers);
  return release !== null && release.productName === 'macOS' && Number(release.cycle) >= 15;
}

const SOFTWARE_UPDATE_PLIST = '/Library/Preferences/com.apple.SoftwareUpdate.plist';
const MANAGED_SOFTWARE_UPDATE_PLIST = `${MANAGED_PREFERENCES}/com.apple.SoftwareUpdate.plist`;
/** Where softwareupdated keeps the DDM software-update declarations it has accepted. */
const DDM_STATE_PLIST = '/var/db/softwareupdate/SoftwareUpdateDDMStatePersistence.plist';

/**
 * The DDM global setting that carries each key (`SUCorePersistedStatePolicyFields.
 * SUCoreDDMDeclarationGlobalSettings`); 1 is AutomaticActions "AlwaysOn" (macOS Security
 * Compliance Project rules system_settings_*_enforce, macOS 26).
 */
const DDM_SETTING: Partial<Record<SoftwareUpdateKey, string>> = {
  AutomaticDownload: 'automaticallyDownload',
  AutomaticallyInstallMacOSUpdates: 'automaticallyInstallOSUpdates',
  CriticalUpdateInstall: 'automaticallyInstallSystemAndSecurityUpdates',
  ConfigDataInstall: 'automaticallyInstallSystemAndSecurityUpdates',
};
const DDM_ALWAYS_ON = 1;

export const SOFTWARE_UPDATE_KEYS = [
  'AutomaticCheckEnabled',
  'AutomaticDownload',
  'AutomaticallyInstallMacOSUpdates',
  'CriticalUpdateInstall',
  'ConfigDataInstall',
] as const;
export type SoftwareUpdateKey = (typeof SOFTWARE_UPDATE_KEYS)[number];

/**
 * What macOS does when neither file sets a key (a documented assumption, research §6.1): checking,
 * downloading, security responses and system data files are on out of the box; installing macOS
 * updates is opt-in, and turning it on (Setup Assistant or System Settings) writes the key.
 */
const PLATFORM_DEFAULTS: Record<SoftwareUpdateKey, boolean> = {
  AutomaticCheckEnabled: true,
  AutomaticDownload: true,
  AutomaticallyInstallMacOSUpdates: false,
  CriticalUpdateInstall: true,
  ConfigDataInstall: true,
};

export interface SoftwareUpdateFacts {
  managed: PlistFile;
  system: PlistFile;
  /** Absent on Macs no DDM software-update declaration reached (and before macOS 14). */
  ddm?: PlistFile;
  /** `sw_vers`: from macOS 15 on, automatic checking can no longer be switched off; AUTO_UPDATE judges the installed release by it. */
  swVers: CommandResult;
}

export type UpdateSetting =
  | { value: boolean; from: 'ddm' | 'mdm' | 'system' | 'default' }
  /** Set to something that is not a boolean, or the file holding it could not be read. */
  | { value: null; from: 'ddm' | 'mdm' | 'system'; reason: CommandFailureReason | FsFailureReason | 'ddm_setting_unrecognized' };

export function collectSoftwareUpdate(ctx: CheckContext): Promise<SoftwareUpdateFacts> {
  return ctx.shared('darwin:software-update', async () => {
    const [managed, system, ddm, swVers] = await Promise.all([
      readPlistFile(ctx, MANAGED_SOFTWARE_UPDATE_PLIST),
      readPlistFile(ctx, SOFTWARE_UPDATE_PLIST),
      readPlistFile(ctx, DDM_STATE_PLIST),
      runSwVers(ctx),
    ]);
    return { managed, system, ddm, swVers };
  });
}

/** The DDM global settings dictionary, when a declaration set any. */
function ddmSettings(facts: SoftwareUpdateFacts) {
  if (facts.ddm?.state !== 'present') return undefined;
  return plistDict(plistDict(facts.ddm.dict.SUCorePersistedStatePolicyFields)?.SUCoreDDMDeclarationGlobalSettings);
}

/** One key's effective value: DDM's AlwaysOn, else the profile's, else the system file's, else the platform default. */
export function resolveSetting(facts: SoftwareUpdateFacts, key: SoftwareUpdateKey): UpdateSetting {
  const ddmKey = DDM_SETTING[key];
  const ddmValue = ddmKey === undefined ? undefined : ddmSettings(facts)?.[ddmKey];
  if (ddmValue !== undefined) {
    // Only AlwaysOn has a documented number; any other value is DDM deciding in a way we cannot read.
    return plistInt(ddmValue) === DDM_ALWAYS_ON
      ? { value: true, from: 'ddm' }
      : { value: null, from: 'ddm', reason: 'ddm_setting_unrecognized' };
  }
  for (const [file, from] of [
    [facts.managed, 'mdm'],
    [facts.system, 'system'],
  ] as const) {
    if (file.state === 'unreadable') return { value: null, from, reason: file.reason };
    if (file.state === 'present' && key in file.dict) {
      const value = plistBool(file.dict[key]);
      return value === undefined ? { value: null, from, reason: 'parse_error' } : { value, from };
    }
  }
  return { value: PLATFORM_DEFAULTS[key], from: 'default' };
}

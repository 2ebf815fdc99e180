// The five Software Update settings, shared by AUTO_UPDATE and MALWARE_PROTECTION (XProtect's data
// arrives through ConfigDataInstall). A configuration profile's value wins over the system one; a
// key set in neither file has the platform default, reported as from:"default".
import type { CheckContext, Reason } from '../types';
import { plistBool } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';

export const SOFTWARE_UPDATE_PLIST = '/Library/Preferences/com.apple.SoftwareUpdate.plist';
export const MANAGED_SOFTWARE_UPDATE_PLIST = `${MANAGED_PREFERENCES}/com.apple.SoftwareUpdate.plist`;

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
export const PLATFORM_DEFAULTS: Record<SoftwareUpdateKey, boolean> = {
  AutomaticCheckEnabled: true,
  AutomaticDownload: true,
  AutomaticallyInstallMacOSUpdates: false,
  CriticalUpdateInstall: true,
  ConfigDataInstall: true,
};

export interface SoftwareUpdateFacts {
  managed: PlistFile;
  system: PlistFile;
}

export type UpdateSetting =
  | { value: boolean; from: 'mdm' | 'system' | 'default' }
  /** Set to something that is not a boolean, or the file holding it could not be read. */
  | { value: null; from: 'mdm' | 'system'; reason: Reason };

export function collectSoftwareUpdate(ctx: CheckContext): Promise<SoftwareUpdateFacts> {
  return ctx.shared('darwin:software-update', async () => {
    const [managed, system] = await Promise.all([
      readPlistFile(ctx, MANAGED_SOFTWARE_UPDATE_PLIST),
      readPlistFile(ctx, SOFTWARE_UPDATE_PLIST),
    ]);
    return { managed, system };
  });
}

/** One key's effective value: the profile's, else the system file's, else the platform default. */
export function resolveSetting(facts: SoftwareUpdateFacts, key: SoftwareUpdateKey): UpdateSetting {
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

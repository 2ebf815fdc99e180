// Which key store an enrollment made for the system service uses. The service runs without a
// desktop session: on Linux, FreeBSD and Windows the secret store of the person installing is not
// the service's (no Secret Service for a root daemon; Credential Manager is per account and the
// service runs as SYSTEM), so the key goes to the file store, owner-only in the service's state
// directory. On macOS root enrolls into the System keychain, which the LaunchDaemon reads.
import { resolve } from 'node:path';
import type { KeyStoreChoice } from '../agent/state';
import type { Platform } from '../protocol/schemas';
import { currentPlatform } from './current';
import { platformPaths } from './paths';

export function serviceKeystore(platform: Platform, explicit?: KeyStoreChoice): KeyStoreChoice {
  if (explicit !== undefined) return explicit;
  return platform === 'DARWIN' ? 'auto' : 'file';
}

/**
 * `auto` in the system service's state directory means the store the service can read: an
 * administrator's `sudo device-agent enroll` must not leave the key in their own desktop keyring
 * or Credential Manager, where the service would never find it.
 */
export function keystoreForStateDir(choice: KeyStoreChoice, stateDir: string, systemStateDir: string, platform: Platform): KeyStoreChoice {
  return choice === 'auto' && resolve(stateDir) === resolve(systemStateDir) ? serviceKeystore(platform) : choice;
}

/** keystoreForStateDir on this machine: what every command that enrolls uses. */
export function keystoreFor(choice: KeyStoreChoice, stateDir: string, env: NodeJS.ProcessEnv = process.env): KeyStoreChoice {
  return keystoreForStateDir(choice, stateDir, platformPaths().systemStateDir(env), currentPlatform());
}

// Choosing and reopening the key store. `auto` means the OS secret store when one can be reached,
// else the file; the choice is recorded with the enrollment and later commands reopen that one.
import { resolve } from 'node:path';
import { keyringTarget } from '../../../platform/keyringModule';
import { isPrivileged } from '../../../platform/privilege';
import type { StateLayout } from '../layout';
import { fileKeyStore } from './file';
import { KeyringUnreachableError, openKeyringStore, type KeyringEntryId } from './keyring';
import type { KeyStore, KeyStoreBackend, KeyStoreChoice } from './types';

export type { KeyStore, KeyStoreBackend, KeyStoreChoice } from './types';
export type { KeyringEntryId } from './keyring';

const KEYRING_SERVICE = 'device-agent';

function entryNamed(account: string, privileged: boolean): KeyringEntryId {
  const target = keyringTarget(privileged);
  return { service: KEYRING_SERVICE, account, ...(target ? { target } : {}) };
}

/** Entry name for a state directory: two state directories never share a key. */
export function keyringEntryFor(stateDir: string, privileged: boolean = isPrivileged()): KeyringEntryId {
  // Loaded here only: node:crypto costs 3-5 ms of start-up, and `status` never needs it (see
  // probeEntry; an enrollment's own entry is recorded with it).
  const { createHash } = process.getBuiltinModule('node:crypto');
  const digest = createHash('sha256').update(resolve(stateDir)).digest('hex').slice(0, 32);
  return entryNamed(`state-${digest}`, privileged);
}

/**
 * An entry that is opened and never written: opening one is what tells whether a secret store
 * answers, whatever its name (`status` before any enrollment names the store one would use).
 */
export function probeEntry(): KeyringEntryId {
  return entryNamed('probe', isPrivileged());
}

export interface SelectedKeyStore {
  store: KeyStore;
  /** The keyring entry, when the store is the keyring. */
  keyringEntry?: KeyringEntryId;
  /** Why `auto` fell back to the file store. */
  fallbackReason?: string;
}

/** The store for a new enrollment, in `entry` (default: the state directory's) when it is the keyring. */
export async function selectKeyStore(choice: KeyStoreChoice, layout: StateLayout, entry?: KeyringEntryId): Promise<SelectedKeyStore> {
  if (choice === 'file') return { store: fileKeyStore(layout.apiKey) };
  const keyringEntry = entry ?? keyringEntryFor(layout.dir);
  try {
    return { store: await openKeyringStore(keyringEntry), keyringEntry };
  } catch (err) {
    if (choice === 'auto' && err instanceof KeyringUnreachableError) {
      return { store: fileKeyStore(layout.apiKey), fallbackReason: err.reason };
    }
    throw err;
  }
}

/** The store an enrollment recorded. */
export async function openRecordedKeyStore(
  backend: KeyStoreBackend,
  keyringEntry: KeyringEntryId | undefined,
  layout: StateLayout,
): Promise<KeyStore> {
  if (backend === 'file') return fileKeyStore(layout.apiKey);
  return openKeyringStore(keyringEntry ?? keyringEntryFor(layout.dir));
}

// `keyring` key store: the OS secret store through @napi-rs/keyring (Keychain, Credential Manager,
// Secret Service). On Linux the entry is pinned to the Secret Service: the library would otherwise
// fall back silently to the kernel keyring, which forgets keys at reboot.
import type { AsyncEntry } from '@napi-rs/keyring';
import { loadKeyring } from '../../../platform/keyringModule';
import { KeyStoreUnavailableError, firstLine } from '../../errors';
import type { KeyStore } from './types';

/** Names the entry; recorded with the enrollment so that later commands find the same one. */
export interface KeyringEntryId {
  service: string;
  account: string;
  target?: string;
}

/** No secret store can be reached at all (no session bus, no provider): `auto` picks the file store. */
export class KeyringUnreachableError extends KeyStoreUnavailableError {
  override name = 'KeyringUnreachableError';
  constructor(reason: string) {
    super('keyring', reason);
  }
}

const OPTIONS = { linux: { store: 'secret-service' as const } };
/** A hung D-Bus peer must not hang the agent. */
const OPERATION_TIMEOUT_MS = 10_000;
/** Written by prepare(): not a credential, replaced by the key or deleted. */
const PLACEHOLDER = 'device-agent: enrollment in progress';

/** Opens the entry; throws KeyringUnreachableError when there is no secret store to talk to. */
export async function openKeyringStore(id: KeyringEntryId): Promise<KeyStore> {
  let entry: AsyncEntry;
  try {
    const keyring = await loadKeyring();
    entry = id.target
      ? keyring.AsyncEntry.withTarget(id.target, id.service, id.account, OPTIONS)
      : new keyring.AsyncEntry(id.service, id.account, OPTIONS);
  } catch (err) {
    throw new KeyringUnreachableError(unreachableReason(firstLine(err)));
  }

  async function attempt<T>(operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await operation(AbortSignal.timeout(OPERATION_TIMEOUT_MS));
    } catch (err) {
      const reason =
        err instanceof DOMException && err.name === 'TimeoutError' ? `no answer within ${OPERATION_TIMEOUT_MS / 1000} s` : firstLine(err);
      const hint = /\block|unlock/i.test(reason)
        ? ' (it is locked: unlock it, e.g. by logging in to the desktop session, and try again)'
        : '';
      throw new KeyStoreUnavailableError('keyring', `${reason}${hint}`);
    }
  }

  return {
    backend: 'keyring',
    // A locked store fails to read or delete an existing entry ("unlock prompt was dismissed")
    // rather than answering "none" (verified with gnome-keyring in test/agent/keyring.test.ts).
    get: () => attempt((signal) => entry.getPassword(signal)),
    async set(key) {
      await attempt((signal) => entry.setPassword(key, signal));
    },
    async delete() {
      await attempt((signal) => entry.deletePassword(signal));
    },
    async prepare() {
      await attempt((signal) => entry.setPassword(PLACEHOLDER, signal));
    },
  };
}

/** The library's D-Bus wording, said plainly for the two usual cases (no bus, no provider). */
function unreachableReason(message: string): string {
  if (message.includes('DBUS_SESSION_BUS_ADDRESS')) return 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)';
  if (message.includes('org.freedesktop.secrets')) return 'no Secret Service provider (such as gnome-keyring) on the session bus';
  return message;
}

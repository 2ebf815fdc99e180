// Where the device API key lives. Every method throws KeyStoreUnavailableError when the store
// cannot answer (locked, unreachable, unreadable): callers never mistake that for "no key".
export type KeyStoreBackend = 'keyring' | 'file';
export type KeyStoreChoice = KeyStoreBackend | 'auto';
export const KEYSTORE_CHOICES: readonly KeyStoreChoice[] = ['auto', 'keyring', 'file'];

export interface KeyStore {
  readonly backend: KeyStoreBackend;
  /** The stored key, or null when the store is readable and holds none. */
  get(): Promise<string | null>;
  set(key: string): Promise<void>;
  /** Removes the key; resolves once it is gone (also when there was none). */
  delete(): Promise<void>;
  /**
   * Proves that a key can be stored now, before the one-time enrollment token is spent (a locked
   * secret store refuses writes but answers reads with "nothing here").
   */
  prepare(): Promise<void>;
}

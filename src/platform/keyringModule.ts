// The one place that loads @napi-rs/keyring (a native addon, external to the bundle), lazily so that
// commands that never touch the secret store do not pay for it. Packaging extends this file to load
// the addon from beside a single-file executable.
export type KeyringModule = typeof import('@napi-rs/keyring');

let loaded: Promise<KeyringModule> | undefined;

export function loadKeyring(): Promise<KeyringModule> {
  loaded ??= import('@napi-rs/keyring');
  return loaded;
}

/**
 * Keychain target for entries. A root daemon on macOS must use the System keychain (root's login
 * keychain is usually absent or locked); elsewhere the library's default store is the right one.
 */
export function keyringTarget(privileged: boolean): string | undefined {
  return process.platform === 'darwin' && privileged ? 'System' : undefined;
}

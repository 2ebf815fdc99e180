// The one place that loads @napi-rs/keyring (a native addon, external to the bundle), lazily so that
// commands that never touch the secret store do not pay for it. A single-file executable cannot
// require packages: it loads the addon's prebuilt `keyring.node`, shipped beside the executable
// (scripts/package.mjs), with process.dlopen. The .cjs bundle uses node_modules, or the same
// `keyring.node` beside the bundle where it is shipped without node_modules (FreeBSD).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isSea } from 'node:sea';

export type KeyringModule = typeof import('@napi-rs/keyring');

/** File name of the addon beside the executable or the bundle. */
const KEYRING_ADDON_FILE = 'keyring.node';

let loaded: Promise<KeyringModule> | undefined;

export function loadKeyring(): Promise<KeyringModule> {
  loaded ??= load();
  return loaded;
}

async function load(): Promise<KeyringModule> {
  if (isSea()) return loadAddonBeside(process.execPath);
  try {
    return await import('@napi-rs/keyring');
  } catch (err) {
    const script = process.argv[1];
    if (script && existsSync(join(dirname(script), KEYRING_ADDON_FILE))) return loadAddonBeside(script);
    throw err;
  }
}

function loadAddonBeside(file: string): KeyringModule {
  const addon = join(dirname(file), KEYRING_ADDON_FILE);
  if (!existsSync(addon)) throw new Error(`the OS secret store addon is missing: ${addon} ships beside the program`);
  const module = { exports: {} as KeyringModule };
  process.dlopen(module, addon);
  return module.exports;
}

/**
 * Keychain target for entries. A root daemon on macOS must use the System keychain (root's login
 * keychain is usually absent or locked); elsewhere the library's default store is the right one.
 */
export function keyringTarget(privileged: boolean): string | undefined {
  return process.platform === 'darwin' && privileged ? 'System' : undefined;
}

// Types of scripts/package.mjs for the TypeScript that imports it (installers/build.ts, tests).
export interface TargetSpec {
  runtime: [name: string, version: string, binary: string];
  keyring: string;
  exe: string;
  serviceHost?: boolean;
  macho?: boolean;
  /** Linux: the binutils strip for the target's architecture, and the Debian package that has it. */
  strip?: [tool: string, debianPackage: string];
}
export const TARGETS: Record<string, TargetSpec>;
/** `npm pack <name>@<version>` into .cache/npm, extracted; returns the package directory. */
export function fetchPackage(name: string, version: string): string;
/** The target's Node runtime as its executable starts from it (Linux: stripped; Windows: unsigned), in .cache/npm. */
export function preparedRuntime(target: string): string;
/** Builds the bundle and the requested targets (`--targets a,b`; default all this machine can build). */
export function packageAll(argv?: string[]): Promise<Record<string, string>>;
/** Version of the keyring addon's prebuilt packages (the one in node_modules). */
export const KEYRING_VERSION: string;
/** dist/sea: one directory per target, and the bundle. */
export const OUT: string;
/** dist/sea/device-agent.cjs: the agent bundle the executables carry (also shipped as is for FreeBSD). */
export const BUNDLE: string;
/**
 * A single executable at `exe` for `target` running `main` with `assets` (name → file); `workDir`
 * holds its blob. The build machine's own target gets a code cache for the main script.
 */
export function singleExecutable(options: {
  target: string;
  main: string;
  assets?: Record<string, string>;
  exe: string;
  workDir: string;
}): Promise<void>;

// What each platform's paths module provides; kept apart from paths.ts, which wires the modules,
// so that no per-OS module imports the file that imports it.
export interface PlatformPaths {
  /** State directory of the system service (root / elevated). */
  systemStateDir(env: NodeJS.ProcessEnv): string;
  /** Per-user state directory for a non-privileged user without --state-dir. */
  userStateDir(env: NodeJS.ProcessEnv, home: string): string;
}

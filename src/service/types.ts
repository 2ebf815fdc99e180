// What each platform's service module provides (one module per platform: systemd.ts, launchd.ts,
// rcd.ts, windows.ts). Modules are pure: they turn a ServiceSpec into files and commands.
import type { Platform } from '../protocol/schemas';
import type { PathStyle, PlanStep } from './plan';

/** Where an installed agent lives on a platform. */
export interface ProgramLayout {
  /** Directory holding the executable and the files that travel with it. */
  readonly dir: string;
  readonly executable: string;
  /**
   * Files shipped beside the executable, by name: the keyring addon, and on Windows the service
   * host. `install` copies them from beside the running executable.
   */
  readonly companions: readonly string[];
  /** A link on the default PATH to the executable (POSIX). */
  readonly pathLink?: string;
}

/** A POSIX layout: the executable and its companions in `<prefix>/<libexec>/device-agent`, linked from `<prefix>/bin`. */
export function posixProgramLayout(prefix: '/usr' | '/usr/local', libexec: 'lib' | 'libexec'): ProgramLayout {
  const dir = `${prefix}/${libexec}/device-agent`;
  return { dir, executable: `${dir}/device-agent`, companions: ['keyring.node'], pathLink: `${prefix}/bin/device-agent` };
}

export interface ServiceSpec {
  /** The program the service starts, before its own arguments (an executable, or node + script). */
  readonly program: readonly string[];
  readonly stateDir: string;
  /** Where the program's companions live (the Windows service host is one of them). */
  readonly programDir: string;
}

export interface ServiceModule {
  readonly platform: Platform;
  readonly style: PathStyle;
  /** The standard installed layout; `env` supplies Windows' %ProgramFiles%. */
  programLayout(env: NodeJS.ProcessEnv): ProgramLayout;
  /**
   * Make a new state directory private beyond its POSIX mode (Windows ACLs), before enrollment
   * writes anything into it.
   */
  secureStateDir?(stateDir: string): PlanStep[];
  /** Run before the program files are replaced (Windows cannot replace a running executable). */
  beforeProgramCopy?(spec: ServiceSpec): PlanStep[];
  /** Define, enable and start the service. */
  installSteps(spec: ServiceSpec): PlanStep[];
  /** Stop and remove the service; every step tolerates a service that is already gone. */
  uninstallSteps(spec: ServiceSpec): PlanStep[];
  /** Where the service's logs go, said after an install. */
  logLocation(spec: ServiceSpec): string;
}

/** Arguments the service passes to the agent. */
export function daemonArgs(spec: ServiceSpec): string[] {
  return [...spec.program, 'run', '--state-dir', spec.stateDir];
}

export const SERVICE_NAME = 'device-agent';
export const SERVICE_DESCRIPTION = 'Device posture agent: reports this device to its Device Agent API server';

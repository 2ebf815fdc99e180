// The whole of `device-agent install` and `uninstall` on one platform, as a plan: enrollment, the
// program files, the link handler and the service, in the order they must happen.
import { posix, win32 } from 'node:path';
import { InvalidInputError } from '../agent/errors';
import { linkHandlerFor } from '../linkHandler';
import type { LinkHandlerSpec } from '../linkHandler/types';
import type { Platform } from '../protocol/schemas';
import { serviceFor } from './index';
import type { Plan, PlanStep } from './plan';
import type { RunningProgram } from './program';
import type { ProgramLayout, ServiceModule, ServiceSpec } from './types';

export interface PlanContext {
  platform: Platform;
  env: NodeJS.ProcessEnv;
  running: RunningProgram;
  /** Absolute, for the target platform. */
  stateDir: string;
  /** Present when install must enroll first. */
  enrollment?: { server: string; credentialSource: string };
  /** The user who ran sudo (their desktop gets the link handler as default). */
  sudoUser?: string;
}

const PLATFORM_NAMES: Record<Platform, string> = { LINUX: 'linux', DARWIN: 'darwin', WINDOWS: 'windows', FREEBSD: 'freebsd' };

function platformName(platform: Platform): string {
  return PLATFORM_NAMES[platform];
}

export function parsePlatformName(name: string): Platform {
  const entry = Object.entries(PLATFORM_NAMES).find(([, value]) => value === name.toLowerCase());
  if (!entry) throw new InvalidInputError(`unknown platform "${name}": use one of ${Object.values(PLATFORM_NAMES).join(', ')}`);
  return entry[0] as Platform;
}

/** Paths end up in unit files, plists, scripts and registry values: absolute, one line, printable. */
function checkPath(path: string, what: string, platform: Platform): void {
  const absolute = platform === 'WINDOWS' ? win32.isAbsolute(path) && /^[A-Za-z]:\\|^\\\\/.test(path) : posix.isAbsolute(path);
  if (!absolute) throw new InvalidInputError(`the ${what} must be an absolute path: ${path}`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) throw new InvalidInputError(`the ${what} must not contain control characters`);
}

interface ProgramPlacement {
  layout: ProgramLayout;
  /** The command that starts the installed agent. */
  program: string[];
  steps: PlanStep[];
  notes: string[];
}

function placeProgram(context: PlanContext, service: ServiceModule): ProgramPlacement {
  const layout = service.programLayout(context.env);
  const steps: PlanStep[] = [{ kind: 'mkdir', path: layout.dir, mode: 0o755 }];
  if (context.running.kind === 'script') {
    return {
      layout,
      program: [context.running.node, context.running.script],
      steps,
      notes: [
        `the service runs the script ${context.running.script} with the Node.js at ${context.running.node}: ` +
          'both must stay where they are (a single-file executable, from npm run package, installs itself instead)',
      ],
    };
  }
  const path = service.style === 'windows' ? win32 : posix;
  const sourceDir = path.dirname(context.running.path);
  steps.push({ kind: 'copy', from: context.running.path, to: layout.executable, mode: 0o755 });
  // Companions are data to POSIX (the addon is mapped, not executed; Windows ignores modes).
  for (const name of layout.companions) {
    steps.push({ kind: 'copy', from: path.join(sourceDir, name), to: path.join(layout.dir, name), mode: 0o644 });
  }
  if (layout.pathLink) steps.push({ kind: 'symlink', path: layout.pathLink, target: layout.executable });
  return { layout, program: [layout.executable], steps, notes: [] };
}

function specs(context: PlanContext, placement: ProgramPlacement): { service: ServiceSpec; link: LinkHandlerSpec } {
  const base = { program: placement.program, programDir: placement.layout.dir };
  return {
    service: { ...base, stateDir: context.stateDir },
    link: { ...base, ...(context.sudoUser ? { sudoUser: context.sudoUser } : {}) },
  };
}

export function installPlan(context: PlanContext): Plan {
  checkPath(context.stateDir, 'state directory', context.platform);
  const service = serviceFor(context.platform);
  const placement = placeProgram(context, service);
  const spec = specs(context, placement);
  const steps: PlanStep[] = [
    { kind: 'mkdir', path: context.stateDir, mode: 0o700 },
    ...(service.secureStateDir?.(context.stateDir) ?? []),
    // Enrollment before the system changes: a refused token leaves no service behind.
    ...(context.enrollment ? [{ kind: 'enroll' as const, ...context.enrollment }] : []),
    ...(service.beforeProgramCopy?.(spec.service) ?? []),
    ...placement.steps,
    ...linkHandlerFor(context.platform).installSteps(spec.link),
    ...service.installSteps(spec.service),
  ];
  return {
    action: 'install',
    platform: platformName(context.platform),
    style: service.style,
    steps,
    notes: [...placement.notes, `the service logs to ${service.logLocation(spec.service)}`],
  };
}

export function uninstallPlan(context: PlanContext): Plan {
  checkPath(context.stateDir, 'state directory', context.platform);
  const service = serviceFor(context.platform);
  const placement = placeProgram(context, service);
  const spec = specs(context, placement);
  const { layout } = placement;
  const programFiles = [layout.executable, ...(layout.pathLink ? [layout.pathLink] : [])].join(' and ');
  return {
    action: 'uninstall',
    platform: platformName(context.platform),
    style: service.style,
    steps: [
      // The service first, so that nothing uses the key or the state directory while they go.
      ...service.uninstallSteps(spec.service),
      ...linkHandlerFor(context.platform).uninstallSteps(spec.link),
      { kind: 'unenroll', stateDir: context.stateDir },
      { kind: 'remove', path: context.stateDir, recursive: true },
    ],
    notes: [`the program itself stays (${programFiles}): your package manager removes it, or delete it by hand`],
  };
}

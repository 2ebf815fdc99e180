// `device-agent install`: enroll (when given a server and a token or enrollment secret), put the program in the
// platform's standard place, register the link handler, define and start the system service. The
// parts shared with `uninstall` are exported: the target platform (the running one; another one only
// for --dry-run, which is how tests print every platform's plan), the service's state directory,
// the rights check, and running or printing the plan.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { enroll } from '../../agent/enrollment';
import { AlreadyEnrolledError, InvalidInputError, NotEnrolledError, StateCorruptError } from '../../agent/errors';
import { openAgentState } from '../../agent/state';
import { createLogger, type Logger } from '../../agent/logger';
import { currentPlatform } from '../../platform/current';
import { platformPaths } from '../../platform/paths';
import { isPrivileged } from '../../platform/privilege';
import type { Platform } from '../../protocol/schemas';
import { executePlan, PlanStepError, type ExecutionResult, type ExecutorHooks } from '../../service/executor';
import { installPlan, parsePlatformName } from '../../service/installPlan';
import { serviceKeystore } from '../../platform/serviceKeystore';
import { runningProgram } from '../../service/program';
import { renderDryRun, type Plan, type PlanStep } from '../../service/plan';
import type { CommonOptions } from '../commonOptions';
import { reenrollSecretFile, resolveEnrollmentInput, type EnrollmentCredentials } from '../enrollmentInput';
import { explain as explainEnrollmentFailure } from './enroll';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface ServiceCliOptions extends CommonOptions {
  dryRun?: boolean;
  /** Hidden: print the plan of another platform (with --dry-run only). */
  platform?: string;
}

export interface ServiceTarget {
  platform: Platform;
  /** The plan is for this machine (not another platform's dry run). */
  native: boolean;
  stateDir: string;
  logger: Logger;
  dryRun: boolean;
}

export async function serviceTarget(options: ServiceCliOptions, action: string): Promise<ServiceTarget> {
  const logger = await createLogger({ level: options.logLevel });
  const dryRun = options.dryRun === true;
  const platform = options.platform === undefined ? currentPlatform() : parsePlatformName(options.platform);
  const native = platform === currentPlatform();
  if (!native && !dryRun) throw new InvalidInputError(`--platform ${options.platform} only works with --dry-run`);
  if (!dryRun && !isPrivileged()) {
    throw new InvalidInputError(
      `${action} changes the system service and needs administrator rights: re-run it with sudo (or from an elevated shell)`,
    );
  }
  // Always the service's own state directory: never a per-user one.
  const stateDir =
    options.stateDir !== undefined && options.stateDir !== ''
      ? native
        ? resolve(options.stateDir)
        : options.stateDir
      : platformPaths(platform).systemStateDir(native ? process.env : {});
  return { platform, native, stateDir, logger, dryRun };
}

/** Prints the plan (dry run) or carries it out, saying what each step did. */
export async function carryOut(plan: Plan, target: ServiceTarget, hooks: Omit<ExecutorHooks, 'report'>): Promise<ExecutionResult | null> {
  if (target.dryRun) {
    process.stdout.write(renderDryRun(plan));
    return null;
  }
  try {
    return await executePlan(plan, { ...hooks, report: (line) => process.stdout.write(`  ${line}\n`) });
  } catch (err) {
    if (err instanceof PlanStepError) {
      throw new CommandFailure(
        `${plan.action} stopped: ${err.message}. The steps above were done; \`device-agent uninstall\` undoes them.`,
        EXIT.internal,
      );
    }
    throw err;
  }
}

export interface InstallCliOptions extends ServiceCliOptions {
  server?: string;
  token?: string;
  tokenFile?: string;
  enrollSecret?: string;
  enrollSecretFile?: string;
  reenrollWithSecret?: boolean;
  /** False with --no-enroll. */
  enroll: boolean;
}

export default async function installCommand(options: InstallCliOptions, command: Command): Promise<ExitCode> {
  const target = await serviceTarget(options, 'install');
  const requested = await requestedEnrollment(options, command);
  const reenrollFrom = requested ? reenrollSecretFile(options.reenrollWithSecret, options.enrollSecretFile) : undefined;
  const existing = target.native ? await existingEnrollment(target) : null;
  const notes: string[] = [];
  let enrollment: EnrollmentCredentials | undefined;
  if (requested && existing?.serverUrl === requested.serverUrl) {
    notes.push(`already enrolled with ${existing.serverUrl}: the enrollment ${'token' in requested ? 'token' : 'secret'} was not used`);
  } else if (requested && existing?.serverUrl) {
    throw new AlreadyEnrolledError(
      `${target.stateDir} is already enrolled with ${existing.serverUrl}: run \`device-agent uninstall\` (or \`device-agent unenroll\`) first to move this device to ${requested.serverUrl}`,
    );
  } else if (requested) {
    enrollment = requested;
  } else if (!existing?.serverUrl && options.enroll) {
    throw new NotEnrolledError(
      `${target.stateDir} holds no enrollment${existing?.unreadable ? ' (or it cannot be read as this user)' : ''}: ` +
        'pass --server <url> with --enroll-secret-file <path>, --token-file <path> or --token - to enroll first, ' +
        'or --no-enroll to install a service that waits for an enrollment',
    );
  }

  const plan = installPlan({
    platform: target.platform,
    env: target.native ? process.env : {},
    running: runningProgram(),
    stateDir: target.stateDir,
    ...(enrollment ? { enrollment: { server: enrollment.serverUrl, credentialSource: enrollment.from } } : {}),
    ...(process.env.SUDO_USER && process.env.SUDO_USER !== 'root' && target.native ? { sudoUser: process.env.SUDO_USER } : {}),
  });
  const withNotes: Plan = { ...plan, notes: [...notes, ...plan.notes] };
  if (!target.dryRun) {
    checkSources(plan.steps);
    process.stdout.write(`Installing device-agent (${plan.platform}):\n`);
  }
  const stateDirExisted = existsSync(target.stateDir);
  const done = await carryOut(withNotes, target, {
    enroll: async (step) => {
      const result = await enroll(await openAgentState(target.stateDir), {
        serverUrl: step.server,
        credential: enrollment!,
        keystore: serviceKeystore(target.platform, command.getOptionValueSource('keystore') === 'default' ? undefined : options.keystore),
        force: false,
        caFile: options.caFile,
        logger: target.logger,
        reenrollSecretFile: reenrollFrom,
      }).catch(async (err: unknown) => {
        // Leave no service state directory behind a refused enrollment (it would make later
        // non-root commands ask for elevation).
        if (!stateDirExisted) await rm(target.stateDir, { recursive: true, force: true });
        throw explainEnrollmentFailure(err);
      });
      return `enrolled with ${result.serverUrl} (API key in ${result.keystore === 'keyring' ? 'the OS secret store' : 'a file readable by the service only'})`;
    },
    unenroll: () => Promise.reject(new Error('install never unenrolls')),
  });
  if (done) {
    process.stdout.write(`device-agent is installed and its service is running.\n`);
    for (const note of withNotes.notes) process.stdout.write(`Note: ${note}.\n`);
    if (!enrollment && !existing?.serverUrl) {
      process.stdout.write(
        'The service waits for an enrollment: run `device-agent enroll` (as administrator) or open an enrollment link.\n',
      );
    }
  }
  return EXIT.ok;
}

/** The server and credential, when any of the enrollment inputs was given (flags or environment). */
async function requestedEnrollment(options: InstallCliOptions, command: Command): Promise<EnrollmentCredentials | null> {
  const tokenSource = command.getOptionValueSource('token');
  const secretSource = command.getOptionValueSource('enrollSecret');
  const onCommandLine =
    command.getOptionValueSource('server') === 'cli' ||
    tokenSource === 'cli' ||
    options.tokenFile !== undefined ||
    secretSource === 'cli' ||
    options.enrollSecretFile !== undefined;
  if (!options.enroll) {
    // DEVICE_AGENT_SERVER/TOKEN/ENROLL_SECRET in the environment give way to an explicit --no-enroll.
    if (onCommandLine)
      throw new InvalidInputError(
        '--no-enroll cannot be combined with --server, --token, --token-file, --enroll-secret or --enroll-secret-file',
      );
    return null;
  }
  const given = [options.server, options.token, options.tokenFile, options.enrollSecret, options.enrollSecretFile];
  if (given.every((value) => value === undefined)) return null;
  return resolveEnrollmentInput({
    server: options.server,
    serverSource: command.getOptionValueSource('server'),
    token: options.token,
    tokenSource,
    tokenFile: options.tokenFile,
    enrollSecret: options.enrollSecret,
    enrollSecretSource: secretSource,
    enrollSecretFile: options.enrollSecretFile,
  });
}

async function existingEnrollment(target: ServiceTarget): Promise<{ serverUrl?: string; unreadable?: boolean }> {
  try {
    const record = await (await openAgentState(target.stateDir, { readOnly: true, verify: false })).enrollment();
    return record?.state === 'enrolled' ? { serverUrl: record.server_url } : {};
  } catch (err) {
    // A dry run by a non-root user cannot look inside the service's state; the real run can.
    if (err instanceof StateCorruptError && target.dryRun) return { unreadable: true };
    throw err;
  }
}

/** Before changing anything: every file to copy must be there (the release archive ships them together). */
function checkSources(steps: readonly PlanStep[]): void {
  for (const step of steps) {
    if (step.kind === 'copy' && !existsSync(step.from)) {
      throw new InvalidInputError(`${step.from} is missing: install from the release archive, which ships it beside the executable`);
    }
  }
}

// `device-agent run [--once]`: the daemon, or its loop run for one round (one heartbeat + posture
// cycle + flush), loaded by ./run once the daemon's V8 settings are applied. Logs go to standard
// output (JSON, or human-readable on a terminal) for journald, launchd or the service wrapper.
import { retryPolicyFromEnv, RetrySettingError, type RetryPolicy } from '../../agent/backoff';
import { createApiClient } from '../../agent/client';
import { Daemon, type RunOutcome } from '../../agent/daemon';
import { heartbeatBody } from '../../agent/daemonIdentity';
import { LockHeldError } from '../../agent/errors';
import { createLogger, type Logger } from '../../agent/logger';
import { postureCollector } from '../../agent/postureCycle';
import { requestDevicePage } from '../../agent/devicePage';
import type { LastCycle } from '../../agent/lastCycle';
import { notificationsWanted } from '../../agent/notifications';
import type { PostureResult } from '../../protocol/schemas';
import { selfCommand } from '../../service/program';
import { firstLine } from '../../agent/errors';
import type { EndpointHandlers, LocalEndpoint } from '../../agent/localEndpoint';
import { openAgentState, resolveStateDir, type AgentState, type EnrollmentRecord } from '../../agent/state';
import { consoleUid, localEndpointDir } from '../../platform/localEndpoint';
import { isPrivileged } from '../../platform/privilege';
import { readDeviceIdentity } from '../../identity';
import type { CommonOptions } from '../commonOptions';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface RunCliOptions extends CommonOptions {
  once?: boolean;
  policy?: string;
  /** False with --no-notifications. */
  notifications?: boolean;
}

/** After the daemon stopped, the process exits even if a posture check is still running. */
const EXIT_AFTER_STOP_MS = 500;

export default async function runDaemon(options: RunCliOptions): Promise<ExitCode> {
  let retry;
  try {
    retry = retryPolicyFromEnv(process.env);
  } catch (err) {
    if (err instanceof RetrySettingError) throw new CommandFailure(err.message, EXIT.usage);
    throw err;
  }
  const collect = await postureCollector({ policyFile: options.policy });
  const log = await createLogger({ level: options.logLevel, destination: process.stdout });
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  const state = await openAgentState(stateDir);

  let lock;
  try {
    lock = await state.holdDaemonLock();
  } catch (err) {
    if (!(err instanceof LockHeldError)) throw err;
    throw new CommandFailure(
      `another device-agent run (pid ${err.holderPid}) is already using the state directory ${stateDir}`,
      EXIT.internal,
    );
  }
  try {
    const daemon = new Daemon({
      state,
      // --ca-file / DEVICE_AGENT_CA_FILE, else the CA remembered at enrollment.
      connect: (enrollment) => {
        const ca = options.caFile ?? enrollment.ca_file;
        return createApiClient({ serverUrl: enrollment.server_url, ...(ca ? { caFile: ca } : {}) });
      },
      log,
      retry,
      identity: async () => heartbeatBody(await readDeviceIdentity()),
      collect,
      ...(options.once ? {} : { onCycle: await notifierFor(options, log) }),
      reenroll: (revoked) => reenroll(state, revoked, { caFile: options.caFile, log, retry }),
    });
    log.info({ event: 'starting', state_dir: stateDir, mode: options.once ? 'once' : 'daemon', retry }, 'device-agent run');
    if (options.once) return exitCode(await daemon.run(new AbortController().signal, { once: true }));
    const endpoint = await localEndpointFor(daemon, state, options, log);
    try {
      return exitCode(await runUntilSignal(daemon, log));
    } finally {
      await endpoint?.close();
    }
  } finally {
    await lock.release();
  }
}

/**
 * The admin's opt-in after a 401 (docs/agent.md, "Re-enrollment after a 401"): the same enrollment
 * again, with the secret read afresh from the recorded file. Loaded only when it happens.
 */
async function reenroll(
  state: AgentState,
  revoked: EnrollmentRecord,
  options: { caFile?: string; log: Logger; retry: RetryPolicy },
): Promise<void> {
  const { readEnrollSecretFile } = await import('../enrollmentInput');
  const { enroll } = await import('../../agent/enrollment');
  const secretFile = revoked.reenroll_secret_file!;
  await enroll(state, {
    serverUrl: revoked.server_url,
    credential: { enrollSecret: await readEnrollSecretFile(secretFile) },
    keystore: revoked.keystore,
    force: false,
    caFile: options.caFile ?? revoked.ca_file,
    logger: options.log,
    retry: options.retry,
    reenrollSecretFile: secretFile,
  });
}

/**
 * Desktop notifications of the checks each cycle turned FAIL or PASS again (notifications.ts): to
 * the user at the screen, through their session bus; a notification that cannot be shown is logged.
 */
async function notifierFor(
  options: RunCliOptions,
  log: Logger,
): Promise<((cycle: { results: PostureResult[]; lastCycle?: LastCycle; notifications?: boolean }) => void) | undefined> {
  if (!notificationsWanted(options.notifications)) return undefined;
  const { PostureChanges } = await import('../../agent/notifications');
  const { platformNotifier } = await import('../../platform/notifier');
  const notifier = await platformNotifier(process.platform, selfCommand(), isPrivileged());
  if (notifier === undefined) return undefined;
  const changes = new PostureChanges(notifier);
  return (cycle) => {
    const enabled = cycle.notifications !== false;
    if (!enabled) log.debug({ event: 'notifications_off' }, 'desktop notifications: turned off by the policy');
    changes.cycle(cycle.results, cycle.lastCycle, new Date(), enabled).then(
      (sent) => {
        for (const n of sent) log.info({ event: 'notification', check_key: n.check_key, change: n.change }, 'desktop notification');
      },
      (err: unknown) => log.warn({ event: 'notification_failed', error: firstLine(err) }, 'cannot show a desktop notification'),
    );
  };
}

/** At most one posture cycle asked for through the local endpoint per this many ms. */
const ASKED_CYCLE_INTERVAL_MS = 60_000;

/**
 * The service's local endpoint (src/agent/localEndpoint.ts), for users who cannot read its state:
 * only a daemon running as root or SYSTEM (the system service) offers one: a Unix socket, or a named
 * pipe on Windows.
 */
async function localEndpointFor(
  daemon: Daemon,
  state: AgentState,
  options: RunCliOptions,
  log: Logger,
): Promise<LocalEndpoint | undefined> {
  const dir = process.platform === 'win32' ? null : localEndpointDir();
  if (!isPrivileged() || (dir === null && process.platform !== 'win32')) return undefined;
  let lastAsked = Number.NEGATIVE_INFINITY;
  const handlers: EndpointHandlers = {
    devicePage: () => requestDevicePage(state, { ...(options.caFile ? { caFile: options.caFile } : {}) }),
    check: async () => {
      const now = performance.now();
      if (now - lastAsked < ASKED_CYCLE_INTERVAL_MS) return 'rate_limited';
      lastAsked = now;
      return daemon.requestCycle();
    },
  };
  try {
    if (dir === null) return await (await import('../../agent/windowsPipeEndpoint')).startPipeEndpoint({ handlers, log });
    const { startSocketEndpoint } = await import('../../agent/unixSocketEndpoint');
    return await startSocketEndpoint({ dir, consoleUid: () => consoleUid(), log, handlers });
  } catch (err) {
    log.warn(
      { event: 'local_endpoint_unavailable', error: firstLine(err) },
      'no local endpoint: my-device and check --report work for root only',
    );
    return undefined;
  }
}

async function runUntilSignal(daemon: Daemon, log: Logger): Promise<RunOutcome> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      log.warn({ event: 'forced_exit', signal }, 'second signal: exiting now (queued results are safe on disk)');
      process.exit(EXIT.ok);
    }
    log.info({ event: 'signal', signal }, `received ${signal}`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await daemon.run(stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // A posture check still running in the background must not hold the process past the stop budget.
    setTimeout(() => process.exit(process.exitCode ?? EXIT.ok), EXIT_AFTER_STOP_MS).unref();
  }
}

/** The contract's exit code for how `run` ended. */
function exitCode(outcome: RunOutcome): ExitCode {
  switch (outcome.kind) {
    case 'stopped':
    case 'delivered':
      return EXIT.ok;
    case 'not_enrolled':
      throw new CommandFailure('this device is not enrolled: run `device-agent enroll` first', EXIT.notEnrolled);
    case 'revoked':
      throw new CommandFailure(outcome.message, EXIT.credentialsRejected);
    case 'unreachable':
      throw new CommandFailure(`${outcome.message} (after the bounded retries; ${outcome.queued} results stay queued)`, EXIT.unreachable);
    case 'refused':
      throw new CommandFailure(outcome.message, EXIT.internal);
  }
}

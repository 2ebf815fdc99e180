// `device-agent run [--once]`: the daemon, or one heartbeat + posture cycle + flush, loaded by ./run
// once the daemon's V8 settings are applied. Logs go to standard output (JSON, or human-readable on
// a terminal) for journald, launchd or the service wrapper.
import { createApiClient } from '../../agent/client';
import { loadCredentials, wipeCredentials } from '../../agent/credentials';
import { Daemon, type OnceOutcome, type Session } from '../../agent/daemon';
import { heartbeatBody } from '../../agent/daemonIdentity';
import { watchFileChanges } from '../../agent/daemonWatch';
import { ensurePrivateDirectory } from '../../agent/atomicFile';
import { retryPolicyFromEnv, RetrySettingError } from '../../agent/backoff';
import { LockHeldError } from '../../agent/errors';
import { LocalFault } from '../../agent/daemonStatus';
import { lastCycleOf, recordLastCycle, type LastCycle } from '../../agent/lastCycle';
import { acquireLock } from '../../agent/lock';
import { createLogger, type Logger } from '../../agent/logger';
import { resolveStateDir, stateLayout, verifyStateDir } from '../../agent/stateDir';
import { readDeviceIdentity } from '../../identity';
import { currentPlatform } from '../../platform/current';
import type { PostureResult } from '../../protocol/schemas';
import type { CommonOptions } from '../commonOptions';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface RunCliOptions extends CommonOptions {
  once?: boolean;
  policy?: string;
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
  const collectPostures = await postureCollector(options.policy);
  const log = await createLogger({ level: options.logLevel, destination: process.stdout });
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  // For `status`; informative only, so a failure to record it never loses the cycle, and a full
  // disk is logged once per episode like the daemon's other local faults.
  const lastCycleFault = new LocalFault(log, 'last_cycle_write_failed', 'record the last posture cycle');
  const collect = async () => {
    const { results, lastCycle } = await collectPostures();
    await recordLastCycle(stateDir, lastCycle).then(
      () => lastCycleFault.succeeded(),
      (err: unknown) => lastCycleFault.failed(err),
    );
    return results;
  };
  const layout = stateLayout(stateDir);
  await verifyStateDir(stateDir);
  await ensurePrivateDirectory(stateDir);

  let lock;
  try {
    lock = await acquireLock(layout.daemonLock, { wait: false });
  } catch (err) {
    if (!(err instanceof LockHeldError)) throw err;
    throw new CommandFailure(
      `another device-agent run (pid ${err.holderPid}) is already using the state directory ${stateDir}`,
      EXIT.internal,
    );
  }
  try {
    const daemon = new Daemon({
      stateDir,
      log,
      retry,
      loadSession: () => loadSession(stateDir, options.caFile),
      wipe: (reason, revokedAt) => wipeCredentials(stateDir, { reason, revokedAt }),
      identity: async () => heartbeatBody(await readDeviceIdentity()),
      collect,
      watchEnrollment: (onChange) => watchFileChanges(layout.enrollment, onChange),
    });
    log.info({ event: 'starting', state_dir: stateDir, mode: options.once ? 'once' : 'daemon', retry }, 'device-agent run');
    if (options.once) return onceExit(await daemon.once());
    await runUntilSignal(daemon, log);
    return EXIT.ok;
  } finally {
    await lock.release();
  }
}

async function loadSession(stateDir: string, caFile: string | undefined): Promise<Session | null> {
  const credentials = await loadCredentials(stateDir);
  if (!credentials) return null;
  // --ca-file / DEVICE_AGENT_CA_FILE, else the CA remembered at enrollment.
  const ca = caFile ?? credentials.enrollment.ca_file;
  const api = createApiClient({ serverUrl: credentials.enrollment.server_url, ...(ca ? { caFile: ca } : {}) });
  return {
    serverUrl: credentials.enrollment.server_url,
    apiKey: credentials.apiKey,
    keystore: credentials.enrollment.keystore,
    api,
    close: () => api.close(),
  };
}

/** The checks of this platform with the administrator's policy; loaded once, run every cycle. */
async function postureCollector(
  policyFile: string | undefined,
): Promise<() => Promise<{ results: PostureResult[]; lastCycle: LastCycle }>> {
  const [
    { loadChecks },
    { runChecks },
    { createSystemHost },
    { DEFAULT_POLICY, loadPolicyFile },
    { loadRemediation },
    { explain, osHintFrom, policyValues },
  ] = await Promise.all([
    import('../../../checks/registry'),
    import('../../../checks/engine'),
    import('../../../checks/host'),
    import('../../../checks/policy'),
    import('../../../checks/platformRemediation'),
    import('../../../checks/remediation'),
  ]);
  let policy = DEFAULT_POLICY;
  try {
    if (policyFile) policy = loadPolicyFile(policyFile);
  } catch (err) {
    throw new CommandFailure(err instanceof Error ? err.message : String(err), EXIT.usage); // PolicyError: the file is the input
  }
  const platform = currentPlatform();
  const [checks, remedies] = await Promise.all([loadChecks(platform), loadRemediation(platform)]);
  const host = createSystemHost();
  return async () => {
    const startedAt = new Date();
    const results = await runChecks(checks, { host, policy });
    const context = { policy: policyValues(policy), os: osHintFrom(results) };
    return {
      results,
      lastCycle: lastCycleOf(
        results,
        results.map((r) => explain(remedies, r, context)),
        startedAt,
      ),
    };
  };
}

async function runUntilSignal(daemon: Daemon, log: Logger): Promise<void> {
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
    await daemon.run(stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // A posture check still running in the background must not hold the process past the stop budget.
    setTimeout(() => process.exit(process.exitCode ?? EXIT.ok), EXIT_AFTER_STOP_MS).unref();
  }
}

function onceExit(outcome: OnceOutcome): ExitCode {
  switch (outcome.kind) {
    case 'ok':
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

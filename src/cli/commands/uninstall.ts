// `device-agent uninstall`: stop and remove the service and the link handler, revoke the API key at
// the server (best effort), wipe the key, the queue and the state directory, and say what was
// removed. Every step tolerates what is already gone, so running it again is harmless.
import { KeyStoreUnavailableError, NotEnrolledError } from '../../agent/errors';
import { openAgentState } from '../../agent/state';
import { unenroll } from '../../agent/unenrollment';
import { uninstallPlan } from '../../service/installPlan';
import { runningProgram } from '../../service/program';
import { EXIT, type ExitCode } from '../exitCodes';
import { carryOut, serviceTarget, type ServiceCliOptions } from './install';

export default async function uninstallCommand(options: ServiceCliOptions): Promise<ExitCode> {
  const target = await serviceTarget(options, 'uninstall');
  const plan = uninstallPlan({
    platform: target.platform,
    env: target.native ? process.env : {},
    running: runningProgram(),
    stateDir: target.stateDir,
  });
  if (!target.dryRun) process.stdout.write(`Uninstalling device-agent (${plan.platform}):\n`);
  let keyLeft: string | undefined;
  const done = await carryOut(plan, target, {
    enroll: () => Promise.reject(new Error('uninstall never enrolls')),
    unenroll: async (step) => {
      try {
        const state = await openAgentState(step.stateDir, { deferRecovery: true });
        const result = await unenroll(state, { caFile: options.caFile, logger: target.logger });
        const from = result.serverUrl ? ` from ${result.serverUrl}` : '';
        return `unenrolled${from}: ${result.revocation.detail}; the API key and the queued results were deleted`;
      } catch (err) {
        if (err instanceof NotEnrolledError) return `no enrollment in ${step.stateDir}: no API key to revoke or delete`;
        if (err instanceof KeyStoreUnavailableError) {
          keyLeft = err.message;
          return `could not delete the API key: ${err.message}`;
        }
        throw err;
      }
    },
  });
  if (!done) return EXIT.ok;
  process.stdout.write(
    done.removed.length > 0 ? `Removed: ${done.removed.join(', ')}.\n` : 'Nothing was left to remove: device-agent was not installed.\n',
  );
  for (const note of plan.notes) process.stdout.write(`Note: ${note}.\n`);
  if (keyLeft !== undefined) {
    process.stderr.write(`device-agent: the API key may still be in its key store (${keyLeft}); everything else was removed\n`);
    return EXIT.internal;
  }
  return EXIT.ok;
}

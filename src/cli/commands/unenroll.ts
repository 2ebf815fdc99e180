// `device-agent unenroll`: revoke at the server (best effort), then always wipe locally.
import { unenroll } from '../../agent/unenrollment';
import { commandContext } from '../commandContext';
import type { CommonOptions } from '../commonOptions';
import { EXIT, type ExitCode } from '../exitCodes';

export default async function unenrollCommand(options: CommonOptions): Promise<ExitCode> {
  // An enrollment or wipe cut short is finished by the unenroll transaction, which revokes its key first.
  const context = await commandContext(options, { deferRecovery: true });
  const result = await unenroll(context.state, { caFile: context.caFile, logger: context.logger });
  const from = result.serverUrl ? ` from ${result.serverUrl}` : '';
  const wiped = 'The API key, the enrollment record and any queued results were deleted from this device.';
  const { outcome, detail } = result.revocation;
  const server =
    outcome === 'revoked'
      ? 'The server confirmed: the API key is revoked.'
      : outcome === 'already_revoked'
        ? 'The server had already revoked the API key.'
        : `The server did not confirm (${detail}): an administrator may need to revoke the device.`;
  process.stdout.write(`Unenrolled${from}. ${server}\n${wiped}\n`);
  return EXIT.ok;
}

// `device-agent check --report`: asks the running service for a posture cycle now, uploaded at once
// (after fixing something, so that "My device" shows the new result). Through the service's local
// endpoint, which answers root and the console user; at most one such cycle a minute.
import { askLocalEndpoint, EndpointAbsentError, EndpointRefusedError } from '../../agent/localEndpoint';
import { localEndpointAddress } from '../../platform/localEndpoint';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

const SAID: Record<string, string> = {
  delivered: 'The service checked this device and the server has the results: reload the device page (device-agent my-device).',
  deferred:
    'The service checked this device; the server could not be reached, so the results wait in the queue and go out with the next upload.',
  held: 'The service checked this device; the results wait in the queue until the server accepts uploads again (see device-agent status).',
  not_ready: 'The service has not reached the server yet (no successful heartbeat): it reports as soon as it does.',
  failed: 'The service could not run the checks; see its log.',
};

export default async function checkReportCommand(): Promise<ExitCode> {
  const address = localEndpointAddress();
  if (address === null)
    throw new CommandFailure(
      'check --report needs the device-agent service, whose local endpoint this platform does not have yet',
      EXIT.usage,
    );
  let answer;
  try {
    answer = await askLocalEndpoint(address, { op: 'check' });
  } catch (err) {
    if (err instanceof EndpointRefusedError) throw new CommandFailure(err.message, EXIT.usage);
    if (err instanceof EndpointAbsentError)
      throw new CommandFailure(`${err.message}; without it, \`sudo device-agent run --once\` checks and reports once`, EXIT.usage);
    throw new CommandFailure((err as Error).message, EXIT.internal);
  }
  if (!answer.ok)
    throw new CommandFailure(`the device-agent service: ${answer.message}`, answer.error === 'rate_limited' ? EXIT.usage : EXIT.internal);
  const cycle = 'cycle' in answer ? answer.cycle : '';
  process.stdout.write(`${SAID[cycle] ?? `The service's cycle ended: ${cycle}.`}\n`);
  return cycle === 'delivered' ? EXIT.ok : cycle === 'deferred' ? EXIT.unreachable : EXIT.internal;
}

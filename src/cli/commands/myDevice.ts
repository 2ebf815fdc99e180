// `device-agent my-device [--print-url]`: this device's page on the server ("My device": its checks,
// how to fix what fails, who manages it), opened in the browser with the platform's opener, or its
// one-time URL printed. The URL is never logged. A server without the device page extension: says
// so and prints `status` instead. A user who cannot read the service's state gets the URL from the
// service's local endpoint (the console user and root only: src/agent/localEndpoint.ts).
import { openableUrl, requestDevicePage, type DevicePageAnswer } from '../../agent/devicePage';
import { askLocalEndpoint, EndpointRefusedError } from '../../agent/localEndpoint';
import { openInBrowser } from '../../platform/browser';
import { currentPlatform } from '../../platform/current';
import { stateContext } from '../commandContext';
import type { CommonOptions } from '../commonOptions';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';
import { serviceEndpoint } from '../serviceEndpoint';

export interface MyDeviceCliOptions extends CommonOptions {
  printUrl?: boolean;
}

export default async function myDeviceCommand(options: MyDeviceCliOptions): Promise<ExitCode> {
  const endpoint = serviceEndpoint(options);
  const page = endpoint === null ? await fromState(options) : await fromService(endpoint);
  if (!page.offered) {
    process.stdout.write('The server does not offer a device page');
    if (endpoint !== null) {
      process.stdout.write('. Run `sudo device-agent status` for what the agent last did.\n');
      return EXIT.ok;
    }
    process.stdout.write("; this device's status instead:\n\n");
    return (await import('./status')).default({ ...options, json: false });
  }
  const lasts = `It works once, until ${page.expiresAt}.`;
  if (options.printUrl) {
    process.stdout.write(`${page.url}\n`);
    process.stderr.write(`The link opens this device's page in a browser. ${lasts}\n`);
    return EXIT.ok;
  }
  try {
    await openInBrowser(currentPlatform(), page.url);
  } catch (err) {
    throw new CommandFailure(
      `could not open the browser (${(err as Error).message}); run device-agent my-device --print-url and open the link yourself`,
      EXIT.internal,
    );
  }
  process.stdout.write(`Opened this device's page in your browser. ${lasts}\n`);
  return EXIT.ok;
}

async function fromState(options: MyDeviceCliOptions): Promise<DevicePageAnswer> {
  // Read only: an enrollment or wipe cut short is reported by `status`, not finished here.
  const context = await stateContext(options, { readOnly: true });
  return requestDevicePage(context.state, { caFile: context.caFile });
}

async function fromService(address: string): Promise<DevicePageAnswer> {
  let answer;
  try {
    answer = await askLocalEndpoint(address, { op: 'device-page' });
  } catch (err) {
    if (err instanceof EndpointRefusedError) throw new CommandFailure(err.message, EXIT.usage);
    throw new CommandFailure((err as Error).message, EXIT.internal);
  }
  if (answer.ok && 'url' in answer) return { offered: true, url: openableUrl(answer.url), expiresAt: String(answer.expires_at) };
  if (!answer.ok && answer.error === 'not_offered') return { offered: false };
  throw new CommandFailure(
    `the device-agent service could not get the page: ${answer.ok ? 'unexpected answer' : answer.message}`,
    EXIT.internal,
  );
}

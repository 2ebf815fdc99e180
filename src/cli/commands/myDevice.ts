// `device-agent my-device [--print-url]`: this device's page on the server ("My device": its checks,
// how to fix what fails, who manages it), opened in the browser with the platform's opener, or its
// one-time URL printed. The URL is never logged. A server without the device page extension: says
// so and prints `status` instead.
import { requestDevicePage } from '../../agent/devicePage';
import { openInBrowser } from '../../platform/browser';
import { currentPlatform } from '../../platform/current';
import { stateContext } from '../commandContext';
import type { CommonOptions } from '../commonOptions';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface MyDeviceCliOptions extends CommonOptions {
  printUrl?: boolean;
}

export default async function myDeviceCommand(options: MyDeviceCliOptions): Promise<ExitCode> {
  // Read only: an enrollment or wipe cut short is reported by `status`, not finished here.
  const context = await stateContext(options, { readOnly: true });
  const page = await requestDevicePage(context.state, { caFile: context.caFile });
  if (!page.offered) {
    process.stdout.write("The server does not offer a device page; this device's status instead:\n\n");
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

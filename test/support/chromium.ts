// Debian's Chromium for the console's browser tests, launched headless by playwright-core with
// what a test run needs off: no sandbox (root in CI), no GPU, no QUIC, and nothing that calls home.
import { chromium, type Browser } from 'playwright-core';

export function launchChromium(executablePath: string | undefined): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

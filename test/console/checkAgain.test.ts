// "Check again" end to end: a real daemon reports from this machine to the real server (heartbeats
// every 2 s, posture cycles hourly), `my-device --print-url` gives the page, Debian's Chromium
// (playwright-core) presses "Check again"; the page says it waits and reloads itself; the daemon's next
// heartbeat answer carries the request, the daemon runs a cycle and uploads it at once, and the page
// then shows the results as those of the check asked for.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  enrollWithToken,
  makeStateDir,
  removeStateDir,
  runAgent,
  daemonEnv,
  startDaemon,
  stopDaemon,
  until,
  type RunningDaemon,
} from '../support/agent';
import { launchChromium } from '../support/chromium';
import { CHROMIUM, SCREENSHOTS, onlyFrom, requireChromium } from '../support/consoleBrowser';
import { startServer, type RunningServer } from '../support/server';

const inChromium = requireChromium(
  '"Check again" on the page in Chromium: the real daemon checks at its next heartbeat and the page shows the new results',
);

let server: RunningServer;
let browser: Browser | undefined;
let daemon: RunningDaemon | undefined;
let stateDir: string;

beforeAll(async () => {
  server = await startServer({ args: ['--heartbeat-interval', '2', '--posture-interval', '3600'] });
  stateDir = await makeStateDir();
});

afterAll(async () => {
  await browser?.close();
  if (daemon) await stopDaemon(daemon);
  await server?.stop();
  await removeStateDir(stateDir);
});

test.skipIf(inChromium.skip)(
  inChromium.title,
  async () => {
    const created = await server.createDevice({ org: 'acme' });
    await enrollWithToken(stateDir, server.url, created.enrollment_token);
    daemon = startDaemon(stateDir);
    const events = (event: string) => daemon!.lines.filter((line) => line.event === event);
    const delivered = () => events('posture_cycle').filter((line) => line.outcome === 'delivered').length;
    // The first cycle follows the first heartbeat; the next scheduled one is an hour away.
    await until(delivered, (n) => n === 1, 90_000, 'the first cycle delivered');
    const firstReport = Math.max(...(await server.showDevice(created.device_id)).postures.map((p) => Date.parse(p.received_at)));

    const printed = await runAgent(['my-device', '--print-url', '--state-dir', stateDir], { env: daemonEnv() });
    expect(printed.code, printed.stderr).toBe(0);
    browser = await launchChromium(CHROMIUM);
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    await onlyFrom(context, server);
    const page = await context.newPage();
    await page.goto(printed.stdout.trim());
    await page.locator('#check-again-button').click();
    await page.waitForURL(`${server.url}/my-device`);
    expect(await page.locator('#check-again-status').textContent()).toMatch(/You asked for a new check/);
    expect(await page.locator('#check-again-button').count()).toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-device-check-again-waiting.png'), fullPage: true });

    // The page reloads itself (every 10 s) until the cycle the request caused has arrived.
    await page.locator('#check-again-status', { hasText: 'These are the results of the new check' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#check-again-button').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-device-check-again-done.png'), fullPage: true });

    const asked = events('check_requested');
    expect(asked).toHaveLength(1);
    const requestedAt = Date.parse(String(asked[0]!.requested_at));
    const latest = Math.max(...(await server.showDevice(created.device_id)).postures.map((p) => Date.parse(p.received_at)));
    expect(latest).toBeGreaterThan(firstReport);
    expect(latest).toBeGreaterThanOrEqual(requestedAt);
    expect(delivered()).toBe(2);
    // Later heartbeats carry the same request: no second cycle.
    const heartbeats = events('heartbeat_accepted').length;
    await until(
      () => events('heartbeat_accepted').length,
      (n) => n >= heartbeats + 2,
      30_000,
      'two more heartbeats',
    );
    expect(events('check_requested')).toHaveLength(1);
    expect(events('posture_cycle')).toHaveLength(2);
    await context.close();
  },
  180_000,
);

// "My device" end to end: the real agent enrolls with the real server and reports from this machine,
// `device-agent my-device --print-url` obtains the one-time URL, and Debian's Chromium (playwright-
// core) opens it: the page shows the device's failing checks first with their fix texts and the
// organization's contact, on the URL without the code; the same URL in a second browser is refused
// with the expired page; no change to the URL reaches another device. Against a server without the
// extension (a proxy answering 404) the command says so and prints the status instead.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEVICE_PAGE_ROUTE } from '../../src/protocol/schemas';
import { daemonEnv, enrollWithToken, makeStateDir, removeStateDir, runAgent } from '../support/agent';
import { startFaultProxy } from '../support/faultProxy';
import { launchChromium } from '../support/chromium';
import { CHROMIUM, SCREENSHOTS, onlyFrom, requireChromium } from '../support/consoleBrowser';
import { startServer, tryServerCli, type RunningServer } from '../support/server';

const inChromium = requireChromium(
  "my-device --print-url opened in Chromium: this device's failing checks and fixes; the URL works once and reaches no other device",
);

let server: RunningServer;
let browser: Browser;
const stateDirs: string[] = [];

beforeAll(async () => {
  server = await startServer();
  if (inChromium.skip) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium(CHROMIUM);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  for (const dir of stateDirs) await removeStateDir(dir);
});

/** A browser of its own (its own cookies), loading nothing but this server. */
async function freshBrowser(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await onlyFrom(context, server);
  return context;
}

/** A real agent enrolled in `org`, after one round of `run --once` (real checks of this machine). */
async function reportingAgent(org: string): Promise<{ stateDir: string; deviceId: string }> {
  const stateDir = await makeStateDir();
  stateDirs.push(stateDir);
  const created = await server.createDevice({ org });
  await enrollWithToken(stateDir, server.url, created.enrollment_token);
  const once = await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 });
  expect(once.code, once.stderr).toBe(0);
  return { stateDir, deviceId: created.device_id };
}

async function printedUrl(stateDir: string): Promise<string> {
  const printed = await runAgent(['my-device', '--print-url', '--state-dir', stateDir], { env: daemonEnv() });
  expect(printed.code, printed.stderr).toBe(0);
  expect(printed.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/my-device\?code=[A-Za-z0-9_-]{43}\n$/);
  expect(printed.stderr).toMatch(/works once, until \d{4}-\d\d-\d\dT/);
  return printed.stdout.trim();
}

test.skipIf(inChromium.skip)(
  inChromium.title,
  async () => {
    const mine = await reportingAgent('acme');
    const contact = await tryServerCli(['org', 'contact', '--org', 'acme', '--set', 'helpdesk@acme.test', '--db', server.dbPath]);
    expect(contact.code, contact.stderr).toBe(0);
    const shown = await server.showDevice(mine.deviceId);
    const failing = shown.postures.filter((p) => p.status === 'FAIL');
    // This test needs one FAIL on the machine it runs on (a container has no inbound filtering).
    expect(failing.length, JSON.stringify(shown.postures.map((p) => [p.check_key, p.status]))).toBeGreaterThan(0);
    const url = await printedUrl(mine.stateDir);

    const first = await freshBrowser();
    const page = await first.newPage();
    const answer = await page.goto(url);
    // The code was exchanged for a session and dropped from the address.
    expect(page.url()).toBe(`${server.url}/my-device`);
    expect(answer?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe(shown.hostname);
    expect(await page.locator('#organization').textContent()).toBe('acme');
    expect(await page.locator('#contact').textContent()).toBe('helpdesk@acme.test');
    // Failing checks first, each with its summary and this device's fix.
    const ids = await Promise.all((await page.locator('article.result').all()).map((article) => article.getAttribute('id')));
    expect(ids.slice(0, failing.length).sort()).toEqual(failing.map((f) => `check-${f.check_key}`).sort());
    for (const f of failing) {
      const block = page.locator(`#check-${f.check_key}`);
      expect(await block.locator('.summary').textContent()).toBe(f.remediation.summary);
      expect(await block.locator('details[open] .prose').textContent()).toBe(f.remediation.fix.replaceAll('`', ''));
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'my-device.png'), fullPage: true });

    // The same URL in another browser (a copied link, a history entry): expired.
    const second = await freshBrowser();
    const again = await second.newPage();
    const refused = await again.goto(url);
    expect(refused?.status()).toBe(410);
    expect(await again.locator('h1').textContent()).toBe('This link has expired');
    expect(await again.locator('main').textContent()).toContain('device-agent my-device');
    await again.screenshot({ path: join(SCREENSHOTS, 'my-device-expired.png'), fullPage: true });
    // Without the code, that browser has no page either.
    expect((await again.goto(`${server.url}/my-device`))?.status()).toBe(410);

    // Another device of another organization: its URL, with this browser's session, shows only itself;
    // and this device's session asked for the other device's id shows only this device.
    const other = await reportingAgent('globex');
    await page.goto(`${server.url}/my-device?device=${other.deviceId}`);
    expect(await page.locator('#organization').textContent()).toBe('acme');
    expect(await page.content()).not.toContain(other.deviceId);
    const otherUrl = new URL(await printedUrl(other.stateDir));
    const code = otherUrl.searchParams.get('code')!;
    const tampered = await again.goto(`${server.url}/my-device?code=${code.slice(1)}${code[0]}`);
    expect(tampered?.status()).toBe(410);
    await again.goto(otherUrl.href);
    expect(await again.locator('#organization').textContent()).toBe('globex');
    expect(await again.locator('#contact').textContent()).toContain('has not said how to reach its admin');
    await first.close();
    await second.close();
  },
  180_000,
);

test('a server without the device page: the command says so and prints the status', async () => {
  const proxy = await startFaultProxy(server.url);
  try {
    proxy.add({
      route: DEVICE_PAGE_ROUTE.split('/').at(-1),
      fault: { kind: 'answer', status: 404, body: { error: 'not_found', message: 'no such route' } },
    });
    const stateDir = await makeStateDir();
    stateDirs.push(stateDir);
    // An organization of its own: the agents of this file share this machine's hardware UUID.
    const created = await server.createDevice({ org: 'initech' });
    await enrollWithToken(stateDir, proxy.url, created.enrollment_token);
    const once = await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 });
    expect(once.code, once.stderr).toBe(0);
    const outcome = await runAgent(['my-device', '--print-url', '--state-dir', stateDir], { env: daemonEnv() });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/^The server does not offer a device page; this device's status instead:\n\nEnrolled: +yes\n/);
    expect(outcome.stdout).toContain(`Server:`);
    expect(outcome.stdout).not.toContain('/my-device');
    expect(proxy.seen('device-page')).toHaveLength(1);
  } finally {
    await proxy.stop();
  }
}, 120_000);

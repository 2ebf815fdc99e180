// The console in a real browser (Debian's Chromium driven by playwright-core; nothing downloaded)
// against the real server, with the real agent: sign in, see the device the agent enrolled and
// reported from, filter to failing devices, read a FAIL's reason, enroll a second agent with the
// token the enroll page shows, revoke it and see the agent wipe its key. A screenshot of each page
// goes to test-output/console/.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { daemonEnv, makeStateDir, removeStateDir, runAgent, enrollWithToken } from '../support/agent';
import { consoleInChromium } from '../support/consoleBrowser';

const inChromium = consoleInChromium(
  'sign in, see the real agent, filter to failing, read a FAIL, enroll a second agent from the console, revoke it',
  { email: 'admin@example.test', password: 'browser test password', reach: { allOrgs: true } },
);
const stateDirs: string[] = [];

afterAll(async () => {
  for (const dir of stateDirs) await removeStateDir(dir);
});

async function agentReports(stateDir: string): Promise<void> {
  const once = await runAgent(['run', '--once', '--state-dir', stateDir], { env: daemonEnv(), timeoutMs: 60_000 });
  expect(once.code, once.stderr).toBe(0);
}

test.skipIf(inChromium.skip)(
  inChromium.title,
  async () => {
    const { server, page } = inChromium;
    // A real agent enrolls (admin CLI token) and reports once.
    const first = await makeStateDir();
    stateDirs.push(first);
    const created = await server.createDevice({ org: 'acme', name: 'first-agent' });
    await enrollWithToken(first, server.url, created.enrollment_token);
    await agentReports(first);
    const shown = await server.showDevice(created.device_id);
    const failing = shown.postures.find((p) => p.status === 'FAIL');
    // This test needs one FAIL on the machine it runs on (a container has no inbound filtering).
    expect(failing, JSON.stringify(shown.postures.map((p) => [p.check_key, p.status]))).toBeDefined();

    // Sign in.
    await page.goto(`${server.url}/console`);
    await expect.poll(() => page.url()).toBe(`${server.url}/console/sign-in`);
    await inChromium.shoot('sign-in');
    await inChromium.signIn();
    expect(await page.locator('h1').textContent()).toContain('Fleet overview');
    expect(await page.locator('figure.chart svg rect').count()).toBe(30);
    await expect.poll(() => page.locator('body').textContent()).toContain(`${failing!.check_key}`);
    await inChromium.shoot('overview');

    // Devices, filtered to failing ones: the agent's machine is there.
    await page.getByRole('link', { name: 'Devices', exact: true }).click();
    await page.waitForURL(`${server.url}/console/devices`);
    await page.getByLabel('Failing').selectOption(failing!.check_key);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/failing=/);
    const rows = page.locator('table.devices tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(shown.hostname!);
    await inChromium.shoot('devices-failing');

    // The device page: identity and the FAIL with its reason and fix.
    await rows.first().getByRole('link').click();
    await page.waitForURL(`${server.url}/console/devices/${created.device_id}`);
    const result = page.locator(`#check-${failing!.check_key}`);
    expect(await result.locator('.summary').textContent()).toBe(failing!.remediation.summary);
    expect(await result.textContent()).toContain('FAIL');
    expect(await page.locator('dl.identity').textContent()).toContain(shown.hardware_uuid!);
    await inChromium.shoot('device');

    // Enroll a second device from the console and a real agent with the token shown (its own
    // organization: both agents share this machine's hardware UUID).
    await page.getByRole('link', { name: 'Enroll a device' }).click();
    await page.getByLabel('Organization').fill('second-org');
    await page.getByLabel('Label').fill('second-agent');
    await page.getByLabel('Token lifetime').selectOption('1h');
    await page.getByRole('button', { name: /Create the device/ }).click();
    await page.waitForURL(/\/console\/enroll\/created\/dev_/);
    const token = (await page.locator('#enrollment-token').textContent())!.trim();
    expect(token).toMatch(/^[0-9a-f]{96}$/);
    expect(await page.locator('figure.qr svg').count()).toBe(1);
    await inChromium.shoot('enroll-created');
    const secondId = (await page.locator('main a[href^="/console/devices/dev_"]').first().textContent())!.trim();
    const second = await makeStateDir();
    stateDirs.push(second);
    await enrollWithToken(second, server.url, token);
    await agentReports(second);
    expect(existsSync(join(second, 'api-key'))).toBe(true);

    // Revoke it, with confirmation; the agent wipes its key at its next contact.
    await page.goto(`${server.url}/console/devices/${secondId}`);
    expect(await page.locator('h1').textContent()).toContain('ACTIVE');
    await page.getByRole('link', { name: /Revoke this device/ }).click();
    await inChromium.shoot('revoke-confirm');
    await page.getByRole('button', { name: /^Revoke / }).click();
    await page.waitForURL(`${server.url}/console/devices/${secondId}`);
    expect(await page.locator('h1').textContent()).toContain('REVOKED');
    await inChromium.shoot('device-revoked');
    const after = await runAgent(['run', '--once', '--state-dir', second], { env: daemonEnv(), timeoutMs: 60_000 });
    expect(after.code).toBe(3);
    expect(existsSync(join(second, 'api-key'))).toBe(false);
    expect(existsSync(join(second, 'enrollment.json'))).toBe(false);

    // The enroll form again, for its screenshot; then sign out.
    await page.goto(`${server.url}/console/enroll`);
    await inChromium.shoot('enroll');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.url}/console/sign-in`);
  },
  180_000,
);

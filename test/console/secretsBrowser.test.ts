// The console's enrollment secrets in a real browser (Debian's Chromium driven by playwright-core)
// against the real server: create a secret (shown once, with install commands), machines register
// with it over HTTP, the list counts them, a re-enrolled machine and a clone show on their device
// pages, revoking the secret stops registrations. Screenshots go to test-output/console/.
import { expect, test } from 'vitest';
import { consoleInChromium } from '../support/consoleBrowser';
import { enroll, expectError, heartbeat, heartbeatBody, register } from '../server/client';

const inChromium = consoleInChromium(
  'create an enrollment secret in the console, see its uses, a re-enrolled machine and a clone, revoke it',
  { email: 'secrets@example.test', password: 'browser test password', reach: { org: 'acme' } },
);

test.skipIf(inChromium.skip)(
  inChromium.title,
  async () => {
    const { server, page } = inChromium;
    await inChromium.signIn();

    // Create: the organization is the account's own; labels one per line; a note with markup stays text.
    await page.getByRole('link', { name: 'Enrollment secrets' }).click();
    await page.waitForURL(`${server.url}/console/secrets`);
    expect(await page.getByLabel('Organization').inputValue()).toBe('acme');
    await page.getByLabel('Expires').selectOption('7d');
    await page.getByLabel('At most this many devices').fill('3');
    await page.getByLabel(/Labels/).fill('team=finance\nsite=paris');
    await page.getByLabel('Note').fill('<b>finance</b> laptops');
    await page.getByRole('button', { name: 'Create the secret' }).click();
    await page.waitForURL(`${server.url}/console/secrets`);
    const secret = (await page.locator('#enroll-secret').textContent())!.trim();
    expect(secret).toMatch(/^das_[0-9a-f]{64}$/);
    const commands = (await page.locator('section.way pre').allTextContents()).join('\n');
    for (const line of [
      `DEVICE_AGENT_ENROLL_SECRET=${secret}`,
      `ENROLLSECRET=${secret}`,
      '<key>EnrollSecret</key>',
      '--enroll-secret-file ./enroll-secret',
      '/usr/local/etc/device-agent/enroll.env',
    ])
      expect(commands).toContain(line);
    await inChromium.shoot('secret-created');

    // Three machines register: one is re-imaged and registers again (it supersedes), one is a clone.
    const laptop = heartbeatBody({ hostname: '<i>laptop</i>' });
    const first = await register(server, secret, laptop);
    expect(first.status, first.text).toBe(200);
    const key = String((await enroll(server, first.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, key, laptop)).status).toBe(200);
    const again = await register(server, secret, laptop);
    expect(again.status).toBe(200);
    const againKey = String((await enroll(server, again.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, againKey, laptop)).status).toBe(200);
    const clone = await register(server, secret, { ...laptop, hostname: 'clone', serial_number: 'OTHER' });
    expect(clone.status).toBe(200);

    // The list counts them and never shows the secret; the note is text.
    await page.goto(`${server.url}/console/secrets`);
    const row = page.locator('tr[data-secret]');
    expect(await row.locator('td.uses').textContent()).toBe('3 of 3');
    expect(await row.textContent()).toContain('<b>finance</b> laptops');
    expect(await row.locator('b').count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(secret);
    expect(await row.textContent()).toContain('team=finance');
    await inChromium.shoot('secrets');

    // The re-enrolled machine's new record links its old one; the clone pair is flagged.
    await page.goto(`${server.url}/console/devices/${String(again.body?.device_id)}`);
    expect(await page.locator('main').textContent()).toMatch(/Re-enrolled on .*previous record is/s);
    expect(await page.locator('h1').textContent()).toContain('<i>laptop</i>');
    expect(await page.locator('h1 i').count()).toBe(0);
    expect(await page.locator('main').textContent()).toMatch(/Duplicate: .*same hardware UUID/s);
    await inChromium.shoot('device-reenrolled-duplicate');
    await page.goto(`${server.url}/console/devices/${String(first.body?.device_id)}`);
    expect(await page.locator('main').textContent()).toMatch(/replaced by/);

    // Revoke from the list: POST, redirect, the list again; registrations stop.
    await page.goto(`${server.url}/console/secrets`);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${server.url}/console/secrets`);
    expect(await page.locator('tr[data-secret]').textContent()).toContain('revoked');
    expect(await page.locator('tr[data-secret] button').count()).toBe(0);
    expectError(await register(server, secret), 401, 'unauthorized');
    await inChromium.shoot('secret-revoked');
  },
  180_000,
);

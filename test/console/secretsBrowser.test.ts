// The console's enrollment secrets in a real browser (Debian's Chromium driven by playwright-core)
// against the real server: create a secret (shown once, with install commands), machines register
// with it over HTTP, the list counts them, a re-enrolled machine and a clone show on their device
// pages, revoking the secret stops registrations. Screenshots go to test-output/console/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { addAccount } from '../support/admin';
import { requireTools } from '../support/requireTools';
import { launchChromium } from '../support/chromium';
import { startServer, type RunningServer } from '../support/server';
import { findTool } from '../support/systemTools';
import { enroll, expectError, heartbeat, heartbeatBody, register } from '../server/client';

const secretsInChromium = requireTools(
  process.env.CHROMIUM_PATH === undefined ? ['chromium'] : [],
  'create an enrollment secret in the console, see its uses, a re-enrolled machine and a clone, revoke it',
);
const CHROMIUM = process.env.CHROMIUM_PATH ?? findTool('chromium');
const SCREENSHOTS = fileURLToPath(new URL('../../test-output/console/', import.meta.url));
const ADMIN = { email: 'secrets@example.test', password: 'browser test password' };

let server: RunningServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (secretsInChromium.skip) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer();
  const added = await addAccount(server, ADMIN.email, { org: 'acme' }, ADMIN.password);
  expect(added.code, added.stderr).toBe(0);
  browser = await launchChromium(CHROMIUM);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.route('**/*', (route) => (route.request().url().startsWith(server.url) ? route.continue() : route.abort()));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

test.skipIf(secretsInChromium.skip)(
  secretsInChromium.title,
  async () => {
    await page.goto(`${server.url}/console/sign-in`);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/console/overview`);

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
    await shoot('secret-created');

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
    await shoot('secrets');

    // The re-enrolled machine's new record links its old one; the clone pair is flagged.
    await page.goto(`${server.url}/console/devices/${String(again.body?.device_id)}`);
    expect(await page.locator('main').textContent()).toMatch(/Re-enrolled on .*previous record is/s);
    expect(await page.locator('h1').textContent()).toContain('<i>laptop</i>');
    expect(await page.locator('h1 i').count()).toBe(0);
    expect(await page.locator('main').textContent()).toMatch(/Duplicate: .*same hardware UUID/s);
    await shoot('device-reenrolled-duplicate');
    await page.goto(`${server.url}/console/devices/${String(first.body?.device_id)}`);
    expect(await page.locator('main').textContent()).toMatch(/replaced by/);

    // Revoke from the list: POST, redirect, the list again; registrations stop.
    await page.goto(`${server.url}/console/secrets`);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${server.url}/console/secrets`);
    expect(await page.locator('tr[data-secret]').textContent()).toContain('revoked');
    expect(await page.locator('tr[data-secret] button').count()).toBe(0);
    expectError(await register(server, secret), 401, 'unauthorized');
    await shoot('secret-revoked');
  },
  180_000,
);

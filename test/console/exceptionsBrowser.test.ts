// Policy exceptions in the console in a real browser (Debian's Chromium driven by playwright-core)
// against the real server: a refused grant shows why in the form with what was typed and stores
// nothing; a device's exception and a label's are granted (POST, redirect, the page again), show as
// "excepted until" and count apart in the overview; ending one puts the FAIL back; a label set on
// the device's page puts it under the label's exception. Screenshots go to test-output/console/.
import type { Locator } from 'playwright-core';
import { expect, test } from 'vitest';
import type { ExceptionView } from '../../src/server/exceptions';
import { consoleInChromium } from '../support/consoleBrowser';
import { parseJson } from '../support/json';
import { runServerCli } from '../support/server';
import { createSecret, enroll, enrolledDevice, heartbeat, heartbeatBody, postures, register, result } from '../server/client';

const ADMIN = { email: 'exceptions@example.test', password: 'browser test password' };
const inChromium = consoleInChromium(
  'grant exceptions for a device and a label in the console, see a refused one, see them counted apart, end one',
  { ...ADMIN, reach: { org: 'acme' } },
);

async function failsDiskEncryption(apiKey: string): Promise<void> {
  const uploaded = await postures(inChromium.server, apiKey, {
    results: [result({ check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'root_not_encrypted' } })],
  });
  expect(uploaded.status, uploaded.text).toBe(204);
}

async function exceptionsInForce(): Promise<ExceptionView[]> {
  return parseJson<ExceptionView[]>(
    (await runServerCli(['exception', 'list', '--db', inChromium.server.dbPath, '--org', 'acme', '--json'])).stdout,
  );
}

/** The overview's DISK_ENCRYPTION row: [FAIL, FAIL excepted], found by the columns' headers. */
async function diskRow(): Promise<[string, string]> {
  const { server, page } = inChromium;
  await page.goto(`${server.url}/console/overview`);
  const table = page.locator('table.checks');
  const headers = (await table.locator('thead th').allTextContents()).map((text) => text.trim());
  const cells = await table
    .locator('tr', { has: page.locator('th', { hasText: 'DISK_ENCRYPTION' }) })
    .locator('th, td')
    .allTextContents();
  return [cells[headers.indexOf('FAIL')]!.trim(), cells[headers.indexOf('FAIL excepted')]!.trim()];
}

async function grant(form: Locator, fields: { label?: string; check: string; reason: string; until: string }): Promise<void> {
  if (fields.label !== undefined) await form.getByLabel(/^Label/).fill(fields.label);
  await form.getByLabel('Check').selectOption(fields.check);
  await form.getByLabel('Reason').fill(fields.reason);
  await form.getByLabel(/^Until/).fill(fields.until);
  await form.getByRole('button', { name: 'Grant the exception' }).click();
}

test.skipIf(inChromium.skip)(
  inChromium.title,
  async () => {
    const { server, page } = inChromium;
    const laptop = await enrolledDevice(server, { org: 'acme' });
    const secret = await createSecret(server, ['--label', 'site=remote'], 'acme');
    const identity = heartbeatBody({ hostname: 'remote-kiosk' });
    const registered = await register(server, secret.enroll_secret, identity);
    const kioskKey = String((await enroll(server, registered.body?.enrollment_token)).body?.api_key);
    const kioskId = String((await heartbeat(server, kioskKey, identity)).body?.device_id);
    for (const apiKey of [laptop.apiKey, kioskKey]) await failsDiskEncryption(apiKey);

    await inChromium.signIn();
    expect(await diskRow()).toEqual(['2', '0']);

    // A refused grant: the form again, with why and what was typed; nothing stored.
    const laptopPage = `${server.url}/console/devices/${laptop.deviceId}`;
    await page.goto(laptopPage);
    const deviceForm = page.locator('#exceptions form.stack');
    await grant(deviceForm, { check: 'DISK_ENCRYPTION', reason: 'encrypted at the <b>hardware</b> refresh', until: '2020-01-01' });
    await page.waitForURL(`${laptopPage}/exceptions`);
    expect(await page.locator('#exceptions [role=alert]').textContent()).toBe('expires must be in the future');
    expect(await deviceForm.getByLabel('Check').inputValue()).toBe('DISK_ENCRYPTION');
    expect(await deviceForm.getByLabel('Reason').inputValue()).toBe('encrypted at the <b>hardware</b> refresh');
    expect(await deviceForm.getByLabel(/^Until/).inputValue()).toBe('2020-01-01');
    await inChromium.shoot('exception-refused');
    expect(await exceptionsInForce()).toEqual([]);

    // Granted: POST, redirect, the device's page; its FAIL shows excepted until the end.
    await deviceForm.getByLabel(/^Until/).fill('30d');
    await deviceForm.getByRole('button', { name: 'Grant the exception' }).click();
    await page.waitForURL(`${laptopPage}#exceptions`);
    const [own] = await exceptionsInForce();
    expect(own).toMatchObject({ device_id: laptop.deviceId, check_key: 'DISK_ENCRYPTION', created_by: `account:${ADMIN.email}` });
    expect(await page.locator(`tr[data-exception="${own!.exception_id}"]`).textContent()).toContain(
      'encrypted at the <b>hardware</b> refresh',
    );
    expect(await page.locator('#check-DISK_ENCRYPTION .status-excepted').textContent()).toBe(`excepted until ${own!.expires_at}`);
    await inChromium.shoot('exception-granted');
    expect(await diskRow()).toEqual(['1', '1']);

    // A label's, from the policy page: the kiosk carries the label.
    await page.getByRole('link', { name: 'Policy' }).click();
    const labelForm = page.locator('#exceptions form.stack');
    await grant(labelForm, { label: 'site=remote', check: 'DISK_ENCRYPTION', reason: 'remote site', until: '90d' });
    await page.waitForURL(`${server.url}/console/policy?org=acme#exceptions`);
    expect(await page.locator('#exceptions tbody').textContent()).toContain('devices with site=remote');
    await inChromium.shoot('exception-label');
    expect(await diskRow()).toEqual(['0', '2']);
    await page.goto(`${server.url}/console/devices/${kioskId}`);
    expect(await page.locator('#check-DISK_ENCRYPTION .status-excepted').count()).toBe(1);

    // Ending the device's exception from its page: its FAIL counts as FAIL again.
    await page.goto(laptopPage);
    await page.locator(`tr[data-exception="${own!.exception_id}"]`).getByRole('button', { name: 'End now' }).click();
    await page.waitForURL(`${laptopPage}#exceptions`);
    expect(await page.locator(`tr[data-exception="${own!.exception_id}"]`).count()).toBe(0);
    expect(await page.locator('#check-DISK_ENCRYPTION .status-excepted').count()).toBe(0);
    expect(await diskRow()).toEqual(['1', '1']);
    expect((await exceptionsInForce()).map((e) => e.label)).toEqual(['site=remote']);

    // Labels set on the device's page: a refused set comes back with why and what was typed; a
    // saved one (POST, redirect, the page again) puts the laptop under the label's exception.
    await page.goto(laptopPage);
    const labelsForm = page.locator('#labels form');
    await labelsForm.getByLabel(/^Labels/).fill('site remote');
    await labelsForm.getByRole('button', { name: 'Save the labels' }).click();
    await page.waitForURL(`${laptopPage}/labels`);
    expect(await page.locator('#labels [role=alert]').textContent()).toBe('a label is key=value, e.g. team=finance');
    expect(await labelsForm.getByLabel(/^Labels/).inputValue()).toBe('site remote');
    expect(await diskRow()).toEqual(['1', '1']);
    await page.goto(laptopPage);
    await labelsForm.getByLabel(/^Labels/).fill('site=remote\nteam=field');
    await labelsForm.getByRole('button', { name: 'Save the labels' }).click();
    await page.waitForURL(`${laptopPage}#labels`);
    expect(await labelsForm.getByLabel(/^Labels/).inputValue()).toBe('site=remote\nteam=field');
    expect(await page.locator('#check-DISK_ENCRYPTION .status-excepted').count()).toBe(1);
    await inChromium.shoot('labels-saved');
    expect(await diskRow()).toEqual(['0', '2']);
  },
  180_000,
);

// The console as an admin's working screen, in real Chromium (playwright-core) at 1280 and 390 px,
// over a fleet of a few hundred devices enrolled through the real agent API (test/console/fleet.ts):
// the device list's columns and sorting, "failing since" on the device page, every number of the
// overview equal to the row count of the list it links to, and no horizontal page overflow on a
// phone. Screenshots go to test-output/console/ (docs/screenshots/ keeps a copy).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ComplianceSummary, DevicePage } from '../../src/server/admin';
import { addAccount, createAdminToken } from '../support/admin';
import { launchChromium } from '../support/chromium';
import { CHROMIUM, SCREENSHOTS, onlyFrom, requireChromium, signIn } from '../support/consoleBrowser';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, startServer, type RunningServer } from '../support/server';
import { call, createSecret, enroll } from '../server/client';
import { enrollFleet, type FleetDevice } from './fleet';

const inChromium = requireChromium(
  'the working screen over a fleet: list columns and sorting, failing since, overview numbers = linked list rows, 390 px',
);
const ADMIN = { email: 'admin@example.test', password: 'working screen password' };
/** Devices enrolled first, then left to go stale; and those enrolled after. */
const OLD = 40;
const FLEET = 300;
/** Short intervals: the first devices are stale (2 × 15 s) before the others enroll. */
const INTERVAL_SECONDS = 15;

let server: RunningServer;
let browser: Browser;
let fleet: FleetDevice[];
let token: string;
let observed: number;
/** The one device with an exception of its own (FIREWALL_ENABLED). */
let exceptedDevice: FleetDevice;
const began = (hoursAgo: number) => new Date(observed - hoursAgo * 3_600_000).toISOString();

async function api<T>(path: string): Promise<T> {
  const answer = await call(server, `/api/admin/v1${path}`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
  expect(answer.status, `${path}: ${answer.text}`).toBe(200);
  return parseJson<T>(answer.text);
}

async function signedInPage(width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await onlyFrom(page, server);
  await signIn(page, server, ADMIN);
  return page;
}

beforeAll(async () => {
  if (inChromium.skip) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({
    args: [
      ...NO_RATE_LIMITS,
      ...['--rate-limit-registrations', '0', '--rate-limit-registrations-per-secret', '0'],
      ...['--heartbeat-interval', String(INTERVAL_SECONDS), '--posture-interval', String(INTERVAL_SECONDS)],
    ],
  });
  expect((await addAccount(server, ADMIN.email, { allOrgs: true }, ADMIN.password)).code).toBe(0);
  token = (await createAdminToken(server, { allOrgs: true })).admin_token;
  const secrets = {
    finance: (await createSecret(server, ['--label', 'team=finance'])).enroll_secret,
    eng: (await createSecret(server, ['--label', 'team=eng'])).enroll_secret,
  };
  observed = Date.now();
  const old = await enrollFleet(server, secrets, 0, OLD, observed);
  // The first devices go stale: not seen (nor reporting) for twice the intervals.
  for (let waited = 0; (await api<ComplianceSummary>('/compliance')).presence.stale < OLD; waited += 1) {
    if (waited > 180) throw new Error('the first devices never went stale');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  fleet = [...old, ...(await enrollFleet(server, secrets, OLD, FLEET, observed))];
  // Exceptions: a label's (every eng device's FIREWALL_ENABLED) and one device's.
  const grant = async (json: object) => {
    const answer = await call(server, '/api/admin/v1/exceptions?org=acme', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json: { check_key: 'FIREWALL_ENABLED', reason: 'accepted for the test', expires: '30d', ...json },
    });
    expect(answer.status, answer.text).toBe(201);
  };
  await grant({ label: 'team=eng' });
  // A grace of 90 min for DISK_ENCRYPTION: its FAILs that began an hour ago are in grace, those of two hours ago fail.
  const policy = await call(server, '/api/admin/v1/policy?org=acme', {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    json: { checks: { graceSecondsByCheck: { DISK_ENCRYPTION: 5400 } } },
  });
  expect(policy.status, policy.text).toBe(200);
  // A device created and never heard from: no platform yet.
  const created = await call(server, '/api/admin/v1/devices', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    json: { org: 'acme' },
  });
  expect(created.status, created.text).toBe(201);
  exceptedDevice = fleet.find((d) => d.team === 'finance' && d.latest.FIREWALL_ENABLED?.status === 'FAIL')!;
  await grant({ device_id: exceptedDevice.deviceId });
  browser = await launchChromium(CHROMIUM);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The devices a console list shows over all its pages, through the admin API's same query. */
async function listed(href: string): Promise<string[]> {
  const query = new URL(href, server.url).searchParams;
  query.set('limit', '500');
  return (await api<DevicePage>(`/devices?${query.toString()}`)).devices.map((d) => d.device_id);
}

test.skipIf(inChromium.skip)(
  `${inChromium.title} (1280 px)`,
  async () => {
    const page = await signedInPage(1280);
    await page.screenshot({ path: join(SCREENSHOTS, 'working-overview.png'), fullPage: false });

    // Every number on the overview is a link to the list of exactly the devices it counts.
    const links = await Promise.all(
      (await page.locator('main a.count').all()).map(async (a) => ({
        text: (await a.textContent())!.trim(),
        href: (await a.getAttribute('href'))!,
      })),
    );
    expect(links.length).toBeGreaterThan(40);
    for (const { text, href } of links) {
      const count = Number(/^\d+/.exec(text)![0]);
      expect((await listed(href)).length, `${text} → ${href}`).toBe(count);
    }
    // Stale devices keep their last known status: the FAIL count of a check counts the old devices' FAILs too.
    const summary = await api<ComplianceSummary>('/compliance');
    expect(summary.presence.stale).toBeGreaterThanOrEqual(OLD);
    const disk = summary.checks.find((c) => c.check_key === 'DISK_ENCRYPTION')!;
    const diskFails = fleet.filter((d) => d.latest.DISK_ENCRYPTION?.status === 'FAIL');
    // FAIL counts the failures past their grace; those within it are counted (and linked) apart.
    const hourAgo = new Date(observed - 3_600_000).toISOString();
    expect(disk.IN_GRACE).toBe(diskFails.filter((d) => d.latest.DISK_ENCRYPTION!.since === hourAgo).length);
    expect(disk.IN_GRACE * disk.FAIL).toBeGreaterThan(0);
    expect(disk.FAIL + disk.IN_GRACE + disk.EXCEPTED).toBe(diskFails.length);
    expect(links.some((l) => l.href.includes('status=IN_GRACE'))).toBe(true);
    expect(links.some((l) => l.href.includes('platform=UNKNOWN'))).toBe(true);
    expect(diskFails.filter((d) => d.index < OLD).length).toBeGreaterThan(0);
    expect(disk.STALE).toBeGreaterThanOrEqual(OLD);
    // One number followed in the browser, page after page: the rows are as many as it said.
    const fail = page.locator('table.checks tr', { hasText: 'DISK_ENCRYPTION' }).locator('td').nth(1).locator('a');
    const said = Number(await fail.textContent());
    await fail.click();
    let rows = 0;
    for (;;) {
      rows += await page.locator('table.devices tbody tr').count();
      const next = page.getByRole('link', { name: 'Next page' });
      if ((await next.count()) === 0) break;
      await next.click();
    }
    expect(rows).toBe(said);

    // The list: its columns, sorted by failing count (most first), then by agent version.
    await page.goto(`${server.url}/console/devices?state=ACTIVE&sort=failing_checks&order=desc`);
    const headers = await page.locator('table.devices thead th').allTextContents();
    expect(headers.map((h) => h.replace(/[▲▼]/, '').trim())).toEqual([
      'Hostname',
      'Failing',
      'Checks',
      'Platform and OS',
      'Agent',
      'Last seen',
      'Labels',
      'State',
      'Organization',
      'Created',
    ]);
    const failingCounts = (await page.locator('table.devices td.failing').all()).map(async (c) =>
      Number(await c.getAttribute('data-failing')),
    );
    const counts = await Promise.all(failingCounts);
    // Counted as the overview counts FAIL: DISK_ENCRYPTION's FAILs of an hour ago are in grace, FIREWALL_ENABLED's excepted ones apart.
    const inGrace = (d: FleetDevice, check: string) => check === 'DISK_ENCRYPTION' && d.latest[check]!.since === began(1);
    const excepted = (d: FleetDevice, check: string) => check === 'FIREWALL_ENABLED' && (d.team === 'eng' || d === exceptedDevice);
    const failingNow = (d: FleetDevice) =>
      Object.entries(d.latest).filter(([check, r]) => r.status === 'FAIL' && !inGrace(d, check) && !excepted(d, check)).length;
    const expectedCounts = fleet.map(failingNow).sort((a, b) => b - a);
    expect(counts).toEqual(expectedCounts.slice(0, counts.length));
    const first = page.locator('table.devices tbody tr').first();
    const firstId = await first.getAttribute('data-device');
    const firstDevice = fleet.find((d) => d.deviceId === firstId)!;
    const cells = await Promise.all(
      (await first.locator('.cell').all()).map(async (c) => [await c.getAttribute('data-check'), await c.getAttribute('data-status')]),
    );
    expect(Object.fromEntries(cells)).toEqual(
      Object.fromEntries(Object.entries(firstDevice.latest).map(([check, r]) => [check, r.status])),
    );
    expect(await first.textContent()).toContain(`team=${firstDevice.team}`);
    expect(await first.textContent()).toContain(firstDevice.agentVersion);
    expect(await first.textContent()).toContain(firstDevice.osVersion);
    await page.screenshot({ path: join(SCREENSHOTS, 'working-devices.png'), fullPage: false });
    // A FAIL in grace keeps its status, and says it is in grace.
    await page.goto(`${server.url}/console/devices?state=ACTIVE&check=DISK_ENCRYPTION&status=IN_GRACE&excepted=false`);
    const graceCell = page.locator('table.devices tbody tr').first().locator('.cell[data-check="DISK_ENCRYPTION"]');
    expect(await graceCell.getAttribute('data-status')).toBe('FAIL');
    expect(await graceCell.getAttribute('title')).toBe('DISK_ENCRYPTION: FAIL (in grace)');
    expect(await graceCell.getAttribute('class')).toContain('status-in-grace');
    await page.goto(`${server.url}/console/devices?state=ACTIVE&sort=agent_version&order=desc&limit=50`);
    const versions = await page.locator('table.devices tbody tr td:nth-child(5)').allTextContents();
    expect(versions.map((v) => v.trim())).toEqual(
      fleet
        .map((d) => d.agentVersion)
        .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
        .slice(0, versions.length),
    );

    // The device page: "Failing since" on each failing check, the first observation of FAIL.
    await page.goto(`${server.url}/console/devices/${firstDevice.deviceId}`);
    for (const [check, r] of Object.entries(firstDevice.latest).filter(([, r]) => r.status === 'FAIL')) {
      expect(await page.locator(`#check-${check} .since time`).getAttribute('datetime'), check).toBe(r.since);
    }
    // Its history: status changes, each observed when it began, the raw log one click away.
    const changes = await page.locator('table.history tbody tr').count();
    const changed = Object.values(firstDevice.latest).filter((r) => r.since !== new Date(observed - 2 * 3_600_000).toISOString()).length;
    expect(changes).toBe(Object.keys(firstDevice.latest).length + changed);
    await page.locator('#history-log').click();
    expect(await page.locator('table.history tbody tr').count()).toBe(2 * Object.keys(firstDevice.latest).length);
    await page.locator('#history-changes').click();
    expect(await page.locator('table.history tbody tr').count()).toBe(changes);
    await page.screenshot({ path: join(SCREENSHOTS, 'working-device-history.png'), fullPage: false });
    await page.goto(`${server.url}/console/devices/${firstDevice.deviceId}`);
    await page.screenshot({ path: join(SCREENSHOTS, 'working-device.png'), fullPage: false });
    await page.close();
  },
  600_000,
);

test.skipIf(inChromium.skip)(
  `${inChromium.title} (390 px)`,
  async () => {
    const page = await signedInPage(390);
    for (const [name, path] of [
      ['overview', '/console/overview'],
      ['devices', '/console/devices?state=ACTIVE&sort=failing_checks&order=desc'],
      ['device', `/console/devices/${fleet[OLD]!.deviceId}`],
    ] as const) {
      await page.goto(`${server.url}${path}`);
      // The page itself never scrolls sideways; wide tables scroll within their box.
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, name).toBe(0);
      await page.screenshot({ path: join(SCREENSHOTS, `working-${name}-390.png`), fullPage: false });
    }
    await page.close();
  },
  300_000,
);

test.skipIf(inChromium.skip)(
  'Device created: POST, redirect, GET; reloading creates no second device and shows the token no more',
  async () => {
    const page = await signedInPage(1280);
    const before = (await api<ComplianceSummary>('/compliance')).devices.total;
    await page.goto(`${server.url}/console/enroll`);
    await page.getByLabel('Organization').fill('acme');
    await page.getByLabel('Label').fill('reloaded');
    await page.getByRole('button', { name: /Create the device/ }).click();
    await page.waitForURL(/\/console\/enroll\/created\/dev_[0-9a-f]{32}$/);
    const token = (await page.locator('#enrollment-token').textContent())!.trim();
    expect(token).toMatch(/^[0-9a-f]{96}$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'working-enroll-created.png'), fullPage: false });
    const reloaded = await page.reload();
    expect(reloaded?.request().method()).toBe('GET');
    expect(reloaded?.status()).toBe(200);
    expect(await page.locator('#enrollment-token').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    expect(await page.locator('#token-shown-once').count()).toBe(1);
    expect((await api<ComplianceSummary>('/compliance')).devices.total).toBe(before + 1);
    // The token shown was the device's: the agent API takes it (once).
    expect((await enroll(server, token)).status).toBe(200);
    await page.close();
  },
  120_000,
);

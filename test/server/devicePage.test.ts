// The device page over real HTTP against the real server: the agent route (API key, ACTIVE only, 404
// before the extension existed is the agent's business), the one-time code (used once, expired,
// malformed, a HEAD does not spend it), the page session bound to one device (nothing in the URL
// names a device), the organization contact set with the admin CLI, the console's CSP and escaping
// of device-reported text, and no code in the server's log.
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEVICE_PAGE_ROUTE } from '../../src/protocol/schemas';
import { createAdminToken } from '../support/admin';
import { ON_POSTGRES } from '../support/postgres';
import { startServer, tryServerCli, type RunningServer } from '../support/server';
import { call, enrolledDevice, heartbeat, heartbeatBody, postures, result, type Answer, type EnrolledDevice } from './client';

let server: RunningServer;
let acme: EnrolledDevice;
let globex: EnrolledDevice;
const HOSTILE_HOSTNAME = '<img src=x onerror=alert(1)>"\u202e';

beforeAll(async () => {
  // Many links for one device within a minute: the per-device limit is rateLimits.test.ts's.
  server = await startServer({ args: ['--rate-limit-device-pages', '0'] });
  [acme, globex] = await Promise.all([enrolledDevice(server, { org: 'acme' }), enrolledDevice(server, { org: 'globex' })]);
  const beat = await heartbeat(server, acme.apiKey, heartbeatBody({ hardware_uuid: acme.hardwareUuid, hostname: HOSTILE_HOSTNAME }));
  expect(beat.status, beat.text).toBe(200);
  for (const [device, status] of [
    [acme, 'FAIL'],
    [globex, 'PASS'],
  ] as const) {
    const sent = await postures(server, device.apiKey, {
      results: [
        result({ check_key: 'FIREWALL_ENABLED', status, evidence: status === 'FAIL' ? { rule: 'no_inbound_filtering' } : { rule: 'ok' } }),
        result({ check_key: 'TIME_SYNC', status: 'PASS', evidence: { note: '<b>bold</b>' } }),
      ],
    });
    expect(sent.status, sent.text).toBe(204);
  }
});
afterAll(async () => {
  await server?.stop();
});

/** A one-time URL of the device's page, as the agent gets it. */
async function pageUrl(device: EnrolledDevice): Promise<URL> {
  const answer = await call(server, DEVICE_PAGE_ROUTE, { apiKey: device.apiKey, json: {} });
  expect(answer.status, answer.text).toBe(200);
  const body = answer.body as unknown as { url: string; expires_at: string };
  const minutes = (Date.parse(body.expires_at) - Date.now()) / 60_000;
  expect(minutes).toBeGreaterThan(4);
  expect(minutes).toBeLessThanOrEqual(5);
  return new URL(body.url);
}

const get = (path: string, cookie?: string, method = 'GET'): Promise<Answer> =>
  call(server, path, { method, headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });

/** Visits the URL: the code becomes a session cookie and a redirect to the page without the code. */
async function redeem(url: URL): Promise<string> {
  const answer = await get(`${url.pathname}${url.search}`);
  expect(answer.status, answer.text).toBe(303);
  expect(answer.headers.location).toBe('/my-device');
  const cookie = [answer.headers['set-cookie']].flat().find((line) => line?.startsWith('device_agent_page='))!;
  expect(cookie).toMatch(/; Path=\/my-device/);
  expect(cookie).toMatch(/; HttpOnly/);
  expect(cookie).toMatch(/; SameSite=Strict/);
  return cookie.split(';')[0]!;
}

function expectExpired(answer: Answer): void {
  expect(answer.status).toBe(410);
  expect(answer.headers['content-type']).toMatch(/^text\/html/);
  expect(answer.text).toContain('This link has expired');
  expect(answer.text).toContain('device-agent my-device');
}

describe('the agent route', () => {
  test('the URL is under the origin the agent reached, with a code of 32 random bytes', async () => {
    const url = await pageUrl(acme);
    expect(url.origin).toBe(server.url);
    expect(url.pathname).toBe('/my-device');
    expect(url.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await pageUrl(acme)).href).not.toBe(url.href);
  });

  test('no key, an unknown key: 401; a device before its first heartbeat: 409; GET: 405', async () => {
    expect((await call(server, DEVICE_PAGE_ROUTE, { json: {} })).status).toBe(401);
    expect((await call(server, DEVICE_PAGE_ROUTE, { json: {}, apiKey: 'a'.repeat(96) })).status).toBe(401);
    const pending = await enrolledDevice(server, { org: 'acme', activate: false });
    const answer = await call(server, DEVICE_PAGE_ROUTE, { json: {}, apiKey: pending.apiKey });
    expect(answer.status, answer.text).toBe(409);
    const wrong = await call(server, DEVICE_PAGE_ROUTE, { method: 'GET' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
  });
});

describe('codes and page sessions', () => {
  test('a code works once; the session shows its device, failing checks first, with the fix for this device', async () => {
    const url = await pageUrl(acme);
    const cookie = await redeem(url);
    const page = await get('/my-device', cookie);
    expect(page.status).toBe(200);
    const firewall = page.text.indexOf('id="check-FIREWALL_ENABLED"');
    const time = page.text.indexOf('id="check-TIME_SYNC"');
    expect(firewall).toBeGreaterThan(-1);
    expect(time).toBeGreaterThan(firewall);
    expect(page.text).toContain('How to fix it on this device');
    // The admin's fleet-wide texts and the history are the console's, not the user's.
    expect(page.text).not.toContain('How to fix it for the fleet');
    expect(page.text).not.toContain('/console/devices');
    expect(page.text).toContain('1 check fails on this device.');
    // Used once: the same URL again, from anyone, is the expired page.
    expectExpired(await get(`${url.pathname}${url.search}`));
    // The session still shows the page.
    expect((await get('/my-device', cookie)).status).toBe(200);
  });

  test('nothing in the URL reaches another device: a changed code, another parameter, no session', async () => {
    const url = await pageUrl(acme);
    const code = url.searchParams.get('code')!;
    const changed = `${code.slice(0, -1)}${code.endsWith('A') ? 'B' : 'A'}`;
    expectExpired(await get(`/my-device?code=${changed}`));
    expectExpired(await get('/my-device?code=short'));
    expectExpired(await get(`/my-device?code=${code}&code=${code}`));
    expectExpired(await get('/my-device'));
    expectExpired(await get('/my-device', 'device_agent_page=not-a-session'));
    // A session of acme's device asked for globex's device: the page is acme's, whatever the query says.
    const cookie = await redeem(await pageUrl(acme));
    const page = await get(`/my-device?device=${globex.deviceId}&device_id=${globex.deviceId}`, cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('acme');
    expect(page.text).not.toContain('globex');
    expect(page.text).not.toContain(globex.deviceId);
    // The code that the changed one was made from still works: a wrong guess does not spend it.
    await redeem(url);
  });

  test('a HEAD (a link preview) does not spend the code', async () => {
    const url = await pageUrl(acme);
    expect((await get(`${url.pathname}${url.search}`, undefined, 'HEAD')).status).toBe(405);
    await redeem(url);
  });

  test.skipIf(ON_POSTGRES)('an expired code gets the expired page, and is spent', async () => {
    const url = await pageUrl(acme);
    const db = new Database(server.dbPath);
    try {
      db.prepare("UPDATE device_page_grants SET expires_at = '2020-01-01T00:00:00.000Z' WHERE kind = 'code'").run();
    } finally {
      db.close();
    }
    expectExpired(await get(`${url.pathname}${url.search}`));
  });

  test("a revoked device's page is gone with its key", async () => {
    const device = await enrolledDevice(server, { org: 'acme' });
    const cookie = await redeem(await pageUrl(device));
    const url = await pageUrl(device);
    await server.revokeDevice(device.deviceId);
    expectExpired(await get('/my-device', cookie));
    expectExpired(await get(`${url.pathname}${url.search}`));
  });
});

describe('the page', () => {
  test("the console's CSP, no script, and device-reported text escaped", async () => {
    const page = await get('/my-device', await redeem(await pageUrl(acme)));
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none';style-src 'self';img-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
    );
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).not.toMatch(/<script|<img|<b>|(src|href)="(https?:)?\/\//i);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;');
    // The bidirectional override is shown visibly, never applied (displayText.ts).
    expect(page.text).not.toContain('\u202e');
    expect(page.text).toContain('&lt;b&gt;bold&lt;/b&gt;');
    // The expired page too.
    const expired = await get('/my-device');
    expect(expired.headers['content-security-policy']).toBe(page.headers['content-security-policy']);
  });

  test("the organization's contact, set and cleared with the admin CLI, is shown to its devices only", async () => {
    const db = ['--db', server.dbPath];
    const set = await tryServerCli(['org', 'contact', '--org', 'acme', '--set', 'it@acme.test, <ext. 42>', '--json', ...db]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ org: 'acme', contact: 'it@acme.test, <ext. 42>' });
    const acmePage = await get('/my-device', await redeem(await pageUrl(acme)));
    expect(acmePage.text).toContain('it@acme.test, &lt;ext. 42&gt;');
    const globexPage = await get('/my-device', await redeem(await pageUrl(globex)));
    expect(globexPage.text).not.toContain('it@acme.test');
    expect(globexPage.text).toContain('has not said how to reach its admin');

    const refused = await tryServerCli(['org', 'contact', '--org', 'acme', '--set', 'two\nlines', ...db]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/printable characters on one line/);
    expect((await tryServerCli(['org', 'contact', '--org', 'nobody', '--set', 'x', ...db])).code).toBe(2);
    const cleared = await tryServerCli(['org', 'contact', '--org', 'acme', '--clear', ...db]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toBe('acme: (no contact set)\n');
  });

  test("the admin API sets and reads the contact, within the token's organization", async () => {
    const { admin_token: acmeToken } = await createAdminToken(server, { org: 'acme' });
    const path = '/api/admin/v1/organizations/acme/contact';
    const put = await call(server, path, {
      method: 'PUT',
      json: { contact: 'desk@acme.test' },
      headers: { authorization: `Bearer ${acmeToken}` },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ org: 'acme', contact: 'desk@acme.test' });
    const got = await call(server, path, { method: 'GET', headers: { authorization: `Bearer ${acmeToken}` } });
    expect(got.body).toEqual({ org: 'acme', contact: 'desk@acme.test' });
    expect((await get('/my-device', await redeem(await pageUrl(acme)))).text).toContain('desk@acme.test');
    // Another organization is out of this token's reach; a malformed body changes nothing; no token: 401.
    const globexPath = '/api/admin/v1/organizations/globex/contact';
    expect(
      (await call(server, globexPath, { method: 'PUT', json: { contact: 'x' }, headers: { authorization: `Bearer ${acmeToken}` } })).status,
    ).toBe(404);
    expect(
      (await call(server, path, { method: 'PUT', json: { contact: 42 }, headers: { authorization: `Bearer ${acmeToken}` } })).status,
    ).toBe(400);
    expect((await call(server, path, { method: 'PUT', json: { contact: null } })).status).toBe(401);
    const cleared = await call(server, path, { method: 'PUT', json: { contact: null }, headers: { authorization: `Bearer ${acmeToken}` } });
    expect(cleared.body).toEqual({ org: 'acme', contact: null });
  });

  test('no code nor session secret in the server log', async () => {
    const url = await pageUrl(acme);
    const cookie = await redeem(url);
    await get('/my-device', cookie);
    const logs = server.logs();
    expect(logs).not.toContain(url.searchParams.get('code')!);
    expect(logs).not.toContain(cookie.split('=')[1]!);
  });
});

describe("the admin's exception on the page", () => {
  test("a FAIL the admin accepted shows the admin's reason and its end; another device's exception is not shown", async () => {
    const device = await enrolledDevice(server, { org: 'acme' });
    const sent = await postures(server, device.apiKey, {
      results: [
        result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'no_inbound_filtering' } }),
        result({ check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'root_not_encrypted' } }),
      ],
    });
    expect(sent.status, sent.text).toBe(204);
    const db = ['--db', server.dbPath];
    const reason = 'Replacement laptop <ordered> for May';
    const granted = await tryServerCli([
      'exception',
      'add',
      '--org',
      'acme',
      '--device',
      device.deviceId,
      '--check',
      'DISK_ENCRYPTION',
      '--reason',
      reason,
      '--expires',
      '30d',
      '--json',
      ...db,
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    const expiresAt = (JSON.parse(granted.stdout) as { expires_at: string }).expires_at;
    const elsewhere = await tryServerCli([
      'exception',
      'add',
      '--org',
      'acme',
      '--device',
      acme.deviceId,
      '--check',
      'FIREWALL_ENABLED',
      '--reason',
      'not this device',
      '--expires',
      '30d',
      ...db,
    ]);
    expect(elsewhere.code, elsewhere.stderr).toBe(0);

    const page = (await get('/my-device', await redeem(await pageUrl(device)))).text;
    const disk = page.slice(page.indexOf('id="check-DISK_ENCRYPTION"'));
    const note = /<p class="note exception">Your admin accepts this until <time datetime="([^"]+)"[^]*?<\/time\s*>: ([^<]*)<\/p>/.exec(
      disk,
    );
    expect(note?.[1]).toBe(expiresAt);
    expect(note?.[2]).toBe('Replacement laptop &lt;ordered&gt; for May');
    // Exactly one note on the page: the firewall FAIL of this device has no exception.
    expect(page.match(/class="note exception"/g)).toHaveLength(1);
    expect(page).not.toContain('not this device');
  });
});

describe('check again', () => {
  const checkAgain = (cookie?: string) =>
    call(server, '/my-device/check', {
      raw: '',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    });

  test("the page's request reaches the device's heartbeat answers, once a minute, and the page follows it to its results", async () => {
    const device = await enrolledDevice(server, { org: 'acme' });
    const beatOf = () => heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid }));
    const first = await beatOf();
    expect(first.body).not.toHaveProperty('check_requested_at');
    const cookie = await redeem(await pageUrl(device));
    const before = await get('/my-device', cookie);
    expect(before.text).toContain('id="check-again-button"');
    expect(before.text).not.toContain('http-equiv="refresh"');

    const asked = await checkAgain(cookie);
    expect(asked.status, asked.text).toBe(303);
    expect(asked.headers.location).toBe('/my-device');
    const beat = await beatOf();
    expect(beat.status, beat.text).toBe(200);
    const requestedAt = (beat.body as { check_requested_at?: string }).check_requested_at!;
    expect(Date.now() - Date.parse(requestedAt)).toBeLessThan(60_000);
    // The spec's fields are all there, unchanged.
    expect(Object.keys(beat.body!)).toEqual(
      expect.arrayContaining(['device_id', 'heartbeat_interval_seconds', 'posture_interval_seconds', 'server_time']),
    );
    // Another device's heartbeat does not carry it.
    expect((await heartbeat(server, globex.apiKey, heartbeatBody({ hardware_uuid: globex.hardwareUuid }))).body).not.toHaveProperty(
      'check_requested_at',
    );

    // Waiting: the page says so, reloads itself, and offers no second request.
    const waiting = await get('/my-device', cookie);
    expect(waiting.text).toMatch(/id="check-again-status"[^>]*>\s*You asked for a new check/);
    expect(waiting.text).toContain('<meta http-equiv="refresh" content="10" />');
    expect(waiting.text).not.toContain('id="check-again-button"');
    expect(waiting.text).toContain('every 5 minutes');

    // A second request within the minute: 429 with Retry-After, the page with a notice; nothing recorded.
    const again = await checkAgain(cookie);
    expect(again.status).toBe(429);
    const retryAfter = Number(again.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(again.text).toContain(`try again in ${retryAfter} s`);
    expect((await beatOf()).body).toMatchObject({ check_requested_at: requestedAt });

    // The device reports: the page shows the results as those of the check asked for, and the button again.
    const sent = await postures(server, device.apiKey, { results: [result({ check_key: 'FIREWALL_ENABLED', status: 'PASS' })] });
    expect(sent.status, sent.text).toBe(204);
    const answered = await get('/my-device', cookie);
    expect(answered.text).toMatch(/id="check-again-status">\s*These are the results of the new check you asked for/);
    expect(answered.text).not.toContain('http-equiv="refresh"');
    expect(answered.text).toContain('id="check-again-button"');
  });

  test('without a valid session the request is refused with the expired page and records nothing', async () => {
    expectExpired(await checkAgain());
    expectExpired(await checkAgain('device_agent_page=not-a-session'));
    const device = await enrolledDevice(server, { org: 'acme' });
    const cookie = await redeem(await pageUrl(device));
    await server.revokeDevice(device.deviceId);
    expectExpired(await checkAgain(cookie));
    // A body is not read: a large one is refused before the session is.
    const huge = await call(server, '/my-device/check', {
      raw: 'x'.repeat(4096),
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(huge.status).toBe(413);
  });
});

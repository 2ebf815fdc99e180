// The console's defences over real HTTP against the real server: CSRF refused, tokens and sessions
// renewed at sign-in and sign-out, another organization's session refused, the cookie's attributes,
// CSP on every page, sign-in limits per address and per account (behind a trusted proxy, rotating
// X-Forwarded-For), account management from the CLI, and no secret in any page but the one-time
// enrollment page, nor in the server's log.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addAccount, ConsoleClient, runAdmin } from '../support/admin';
import { anyNumber, anyString, objectContaining } from '../support/matchers';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { enrolledDevice, postures, result, type EnrolledDevice } from '../server/client';

const ACME = { email: 'ops@acme.test', password: 'acme console password' };
const GLOBEX = { email: 'ops@globex.test', password: 'globex console password' };
const RATE_LIMIT = 20;

let server: RunningServer;
let acmeDevice: EnrolledDevice;
let globexDevice: EnrolledDevice;

beforeAll(async () => {
  server = await startServer({ args: ['--rate-limit-sign-ins', String(RATE_LIMIT)] });
  const added = await Promise.all([
    addAccount(server, ACME.email, { org: 'acme' }, ACME.password),
    addAccount(server, GLOBEX.email, { org: 'globex' }, GLOBEX.password),
  ]);
  for (const outcome of added) expect(outcome.code, outcome.stderr).toBe(0);
  [acmeDevice, globexDevice] = await Promise.all([enrolledDevice(server, { org: 'acme' }), enrolledDevice(server, { org: 'globex' })]);
  await postures(server, acmeDevice.apiKey, {
    results: [result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'no_inbound_filtering' } })],
  });
});
afterAll(async () => {
  await server?.stop();
});

async function signedIn(account: { email: string; password: string }): Promise<ConsoleClient> {
  const client = new ConsoleClient(server);
  const answer = await client.signIn(account.email, account.password);
  expect(answer.status, answer.text).toBe(303);
  expect(answer.headers.location).toBe('/console/overview');
  return client;
}

describe('sign-in and sessions', () => {
  test('the session cookie is HttpOnly and SameSite=Strict; sign-out ends the session on the server', async () => {
    const client = new ConsoleClient(server);
    const answer = await client.signIn(ACME.email, ACME.password);
    const cookie = [answer.headers['set-cookie']].flat().find((line) => line?.startsWith('device_agent_session='));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    const secret = client.cookie('device_agent_session')!;
    expect((await client.get('/console/overview')).status).toBe(200);
    const csrf = await client.csrfToken('/console/overview');
    expect((await client.post('/console/sign-out', { _csrf: csrf })).status).toBe(303);
    // The old cookie, replayed, no longer opens anything.
    const replay = new ConsoleClient(server);
    replay.setCookie('device_agent_session', secret);
    const after = await replay.get('/console/overview');
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/console/sign-in');
  });

  test('a wrong password or unknown email: 401 and the same message', async () => {
    const client = new ConsoleClient(server);
    const wrong = await client.signIn(ACME.email, 'not the password');
    const unknown = await client.signIn('nobody@acme.test', ACME.password);
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.text).toContain('Wrong email or password.');
    expect(unknown.text).toContain('Wrong email or password.');
    expect(client.cookie('device_agent_session')).toBeUndefined();
  });

  test('without a session every page leads to the sign-in page', async () => {
    const client = new ConsoleClient(server);
    for (const path of ['/console/overview', '/console/devices', `/console/devices/${acmeDevice.deviceId}`, '/console/enroll']) {
      const answer = await client.get(path);
      expect([answer.status, answer.headers.location]).toEqual([303, '/console/sign-in']);
    }
  });
});

describe('CSRF', () => {
  test('a state-changing request without the CSRF token, or with a wrong one, is refused (403) and changes nothing', async () => {
    const client = await signedIn(ACME);
    const forms: Record<string, string>[] = [{ confirm: 'yes' }, { confirm: 'yes', _csrf: 'forged-token' }];
    for (const form of forms) {
      const answer = await client.post(`/console/devices/${acmeDevice.deviceId}/revoke`, form);
      expect(answer.status, answer.text).toBe(403);
      const created = await client.post('/console/enroll', { ...form, org: 'acme', ttl: '1d' });
      expect(created.status).toBe(403);
      expect(created.text).not.toMatch(/[0-9a-f]{96}/);
    }
    expect((await server.showDevice(acmeDevice.deviceId)).state).toBe('ACTIVE');
    // A sign-in form posted from elsewhere (no CSRF cookie nor token) is refused too.
    const stranger = new ConsoleClient(server);
    expect((await stranger.post('/console/sign-in', { email: ACME.email, password: ACME.password })).status).toBe(403);
  });

  /** A POST that passes the CSRF check and then changes nothing: 400 (no confirmation); 403 without a valid token. */
  const probe = (client: ConsoleClient, csrf: string) => client.post(`/console/devices/${acmeDevice.deviceId}/revoke`, { _csrf: csrf });

  test('a token minted before signing in is refused after, even with its own secret cookie sent back; the secret is renewed', async () => {
    const client = new ConsoleClient(server);
    const before = await client.csrfToken('/console/sign-in');
    const secretBefore = client.cookie('device_agent_csrf')!;
    expect(secretBefore).toBeDefined();
    const signIn = await client.post('/console/sign-in', { _csrf: before, email: ACME.email, password: ACME.password });
    expect(signIn.status).toBe(303);
    expect(client.cookie('device_agent_csrf')).toBeUndefined();
    const fresh = await client.csrfToken('/console/overview');
    expect(client.cookie('device_agent_csrf')).not.toBe(secretBefore);
    expect((await probe(client, fresh)).status).toBe(400);
    expect((await probe(client, before)).status).toBe(403);
    // A cookie set from elsewhere (a sibling domain) brings the old secret back: the token is still
    // bound to no session, so it stays refused.
    client.setCookie('device_agent_csrf', secretBefore);
    expect((await probe(client, before)).status).toBe(403);
    expect((await server.showDevice(acmeDevice.deviceId)).state).toBe('ACTIVE');
  });

  test("signing out clears the session and the CSRF secret: the session's tokens are refused after", async () => {
    const client = await signedIn(ACME);
    const token = await client.csrfToken('/console/overview');
    const secret = client.cookie('device_agent_csrf')!;
    expect((await client.post('/console/sign-out', { _csrf: token })).status).toBe(303);
    expect([client.cookie('device_agent_session'), client.cookie('device_agent_csrf')]).toEqual([undefined, undefined]);
    client.setCookie('device_agent_csrf', secret);
    expect((await client.post('/console/sign-in', { _csrf: token, email: ACME.email, password: ACME.password })).status).toBe(403);
    expect(client.cookie('device_agent_session')).toBeUndefined();
  });

  test('signing in again gives a new session identifier and ends the one the browser held', async () => {
    const client = await signedIn(ACME);
    const first = client.cookie('device_agent_session')!;
    const again = await client.post('/console/sign-in', {
      _csrf: await client.csrfToken('/console/overview'),
      email: ACME.email,
      password: ACME.password,
    });
    expect(again.status).toBe(303);
    const second = client.cookie('device_agent_session');
    expect(second).toMatch(/^[0-9a-f]{96}$/);
    expect(second).not.toBe(first);
    expect((await client.get('/console/overview')).status).toBe(200);
    const replay = new ConsoleClient(server);
    replay.setCookie('device_agent_session', first);
    expect((await replay.get('/console/overview')).headers.location).toBe('/console/sign-in');
  });
});

describe('tenancy', () => {
  test("another organization's session cannot see or revoke this organization's device", async () => {
    const globex = await signedIn(GLOBEX);
    for (const path of [`/console/devices/${acmeDevice.deviceId}`, `/console/devices/${acmeDevice.deviceId}/revoke`]) {
      expect((await globex.get(path)).status).toBe(404);
    }
    const csrf = await globex.csrfToken('/console/overview');
    expect((await globex.post(`/console/devices/${acmeDevice.deviceId}/revoke`, { _csrf: csrf, confirm: 'yes' })).status).toBe(404);
    expect((await server.showDevice(acmeDevice.deviceId)).state).toBe('ACTIVE');
    const list = await globex.get('/console/devices');
    expect(list.text).toContain(globexDevice.deviceId);
    expect(list.text).not.toContain(acmeDevice.deviceId);
    expect((await globex.get('/console/overview?org=acme')).status).toBe(404);
    // Creating a device: always in the account's own organization, whatever the form says.
    const posted = await globex.post('/console/enroll', { _csrf: csrf, org: 'acme', ttl: '1d', name: 'sneaky' });
    expect(posted.status).toBe(303);
    const created = await globex.get(String(posted.headers.location));
    expect(created.status).toBe(200);
    expect(created.text).toContain('in organization globex');
  });
});

describe('pages', () => {
  test('every page carries a strict CSP and loads nothing from elsewhere', async () => {
    const client = await signedIn(ACME);
    const csrf = await client.csrfToken('/console/overview');
    const pages = [
      await client.get('/console/sign-in'),
      await client.get('/console/overview'),
      await client.get('/console/devices?failing=any'),
      await client.get(`/console/devices/${acmeDevice.deviceId}`),
      await client.get(`/console/devices/${acmeDevice.deviceId}/revoke`),
      await client.get('/console/enroll'),
      await client.post('/console/enroll', { _csrf: csrf, org: 'acme', ttl: '1h' }),
      await client.get(String((await client.post('/console/enroll', { _csrf: csrf, org: 'acme', ttl: '1h' })).headers.location)),
      await client.get('/console/devices/dev_00000000000000000000000000000000'),
    ];
    for (const page of pages) {
      expect(page.headers['content-security-policy']).toBe(
        "default-src 'none';style-src 'self';img-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
      );
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.text).not.toMatch(/<script|(src|href)="(https?:)?\/\//i);
      expect(page.text).not.toMatch(/ style="/);
    }
    expect(pages.at(-1)!.status).toBe(404);
  });

  test('an address the console does not have answers its own 404 page, signed in or not, never JSON', async () => {
    const client = await signedIn(ACME);
    for (const answer of [await client.get('/console/no-such-page'), await new ConsoleClient(server).get('/console/devices/x/y/z')]) {
      expect(answer.status).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.text).toContain('There is no console page at this address.');
      expect(answer.text).toContain('href="/console/overview"');
    }
  });

  test("a FAIL's reason and fix are on the device page, as the catalogue says (and as the API's device view)", async () => {
    const client = await signedIn(ACME);
    const page = await client.get(`/console/devices/${acmeDevice.deviceId}`);
    const shown = await server.showDevice(acmeDevice.deviceId);
    const firewall = shown.postures.find((p) => p.check_key === 'FIREWALL_ENABLED')!;
    const escape = (text: string) =>
      text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
    expect(page.text).toContain(escape(firewall.remediation.summary));
    // The fix's `code spans` are code elements, never literal backticks.
    expect(firewall.remediation.fix).toContain('`');
    const prose = /<p class="prose">([^]*?)<\/p>/.exec(page.text)![1]!;
    expect(prose).not.toContain('`');
    expect(prose.replace(/<\/?code>/g, '')).toBe(escape(firewall.remediation.fix.replaceAll('`', '')));
    expect(prose).toMatch(/<code>[^<]+<\/code>/);
    expect(page.text).toContain('no_inbound_filtering');
  });

  test('device-reported text is escaped, never markup', async () => {
    const client = await signedIn(ACME);
    await postures(server, acmeDevice.apiKey, {
      results: [result({ check_key: 'SCREEN_LOCK', status: 'UNKNOWN', evidence: { reason: '<img src=x onerror=alert(1)>' } })],
    });
    const page = await client.get(`/console/devices/${acmeDevice.deviceId}`);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img src=x');
  });

  test('the enrollment token appears on the enrollment page once, and in no other page nor in the log', async () => {
    const client = await signedIn(ACME);
    const csrf = await client.csrfToken('/console/enroll');
    const posted = await client.post('/console/enroll', { _csrf: csrf, org: 'acme', ttl: '1d', name: 'one-time' });
    expect(posted.status).toBe(303);
    // The POST's answer carries the token only in its cookie, for the page it redirects to.
    expect(posted.text).not.toMatch(/[0-9a-f]{96}/);
    const enrolled = await client.get(String(posted.headers.location));
    expect(enrolled.status).toBe(200);
    const token = /id="enrollment-token">([0-9a-f]{96})</.exec(enrolled.text)?.[1];
    expect(token).toMatch(/^[0-9a-f]{96}$/);
    const deviceId = /href="\/console\/devices\/(dev_[0-9a-f]{32})"/.exec(enrolled.text)?.[1];
    expect(enrolled.text).toContain('<svg'); // the QR code
    expect(enrolled.text).toContain(`ENROLLMENT_TOKEN=${token}`);
    expect(posted.headers.location).toBe(`/console/enroll/created/${deviceId}`);
    for (const path of [
      String(posted.headers.location),
      '/console/overview',
      '/console/devices',
      `/console/devices/${deviceId}`,
      `/console/devices/${deviceId}/revoke`,
      '/console/enroll',
    ]) {
      const page = await client.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain(token);
      expect(page.text).not.toMatch(/[0-9a-f]{96}/);
    }
    expect(server.logs()).not.toContain(token);
    expect(server.logs()).not.toContain(ACME.password);
    expect(server.logs()).not.toContain(client.cookie('device_agent_session'));
  });
});

describe('accounts from the CLI', () => {
  test('admin add: the password from standard input, never argv; bad input is exit 2; passwd ends sessions', async () => {
    const short = await addAccount(server, 'short@acme.test', { org: 'acme' }, 'short');
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/password must be 12/);
    const both = await addAccount(server, 'x@acme.test', { org: 'acme' }, ACME.password, ['--all-orgs']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exactly one of --org <name> and --all-orgs/);
    const again = await addAccount(server, ACME.email, { org: 'acme' }, ACME.password);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists already/);

    const client = await signedIn(ACME);
    const passwd = await runAdmin(['passwd', '--db', server.dbPath, '--email', ACME.email], `${ACME.password}\n`);
    expect(passwd.code, passwd.stderr).toBe(0);
    expect((await client.get('/console/overview')).status).toBe(303);
  });
});

describe('rate limit', () => {
  test('sign-in attempts beyond the budget from one address are refused with 429 and Retry-After, even with the right password', async () => {
    // A server of its own with a budget of 2 a minute: one attempt comes back every 30 s, far more
    // than these few take even on a busy machine, so the count is exact.
    const limited = await startServer({ args: ['--rate-limit-sign-ins', '2'] });
    try {
      const added = await addAccount(limited, GLOBEX.email, { org: 'globex' }, GLOBEX.password);
      expect(added.code, added.stderr).toBe(0);
      const client = new ConsoleClient(limited);
      const started = Date.now();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await client.signIn(GLOBEX.email, 'wrong password!!')).status);
      const right = await client.signIn(GLOBEX.email, GLOBEX.password);
      expect(Date.now() - started, 'no attempt came back meanwhile').toBeLessThan(30_000);
      expect(statuses).toEqual([401, 401, 429]);
      expect(right.status).toBe(429);
      expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(right.headers['retry-after'])).toBeLessThanOrEqual(30);
      expect(client.cookie('device_agent_session')).toBeUndefined();
    } finally {
      await limited.stop();
    }
  });

  test('two servers on one database share one budget per address: attempts spread over both are refused alike', async () => {
    // What --workers and servers behind one load balancer do: each process answers a share of one address's attempts.
    const first = await startServer({ args: ['--rate-limit-sign-ins', '2'] });
    const second = await startServer({ dbPath: first.dbPath, args: ['--rate-limit-sign-ins', '2'] });
    try {
      expect((await addAccount(first, GLOBEX.email, { org: 'globex' }, GLOBEX.password)).code).toBe(0);
      const started = Date.now();
      const statuses: number[] = [];
      for (const server of [first, second, first, second]) {
        statuses.push((await new ConsoleClient(server).signIn(GLOBEX.email, 'wrong password!!')).status);
      }
      expect(Date.now() - started, 'no attempt came back meanwhile').toBeLessThan(30_000);
      expect(statuses).toEqual([401, 401, 429, 429]);
      const right = await new ConsoleClient(first).signIn(GLOBEX.email, GLOBEX.password);
      expect(right.status).toBe(429);
      expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(right.headers['retry-after'])).toBeLessThanOrEqual(30);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});

describe('per-account sign-in delay, behind a trusted proxy', () => {
  const VICTIM = { email: 'victim@acme.test', password: 'the victim console password' };
  const GUESS = 'a wrong guess 0123';
  let proxied: RunningServer;
  let address = 0;

  beforeAll(async () => {
    // Two attempts a minute per address: only X-Forwarded-For, new for each attempt, gets past it.
    proxied = await startServer({ args: ['--trust-proxy', '127.0.0.1', '--rate-limit-sign-ins', '2'] });
    expect((await addAccount(proxied, VICTIM.email, { org: 'acme' }, VICTIM.password)).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await proxied?.stop();
  });

  /** One sign-in through the "proxy", from a client address never used before. */
  async function attempt(email: string, password: string, client = new ConsoleClient(proxied)) {
    address += 1;
    const from = `198.51.100.${address}`;
    const csrf = await client.csrfToken('/console/sign-in');
    const answer = await client.post('/console/sign-in', { _csrf: csrf, email, password }, { 'x-forwarded-for': from });
    return { ...answer, from, client };
  }

  test('rotating addresses: a sign-in clears the count; after 5 attempts even the right password waits; the other sessions are told', async () => {
    const other = new ConsoleClient(proxied);
    expect((await attempt(VICTIM.email, VICTIM.password, other)).status).toBe(303);
    const guess = () => attempt(' Victim@ACME.test ', GUESS);

    const first: Awaited<ReturnType<typeof attempt>>[] = [];
    for (let i = 0; i < 4; i += 1) first.push(await guess());
    expect(first.map((g) => g.status)).toEqual([401, 401, 401, 401]);
    expect((await attempt(VICTIM.email, VICTIM.password)).status).toBe(303);
    expect((await other.get('/console/overview')).text).not.toContain('id="sign-in-attempts"');

    const guesses: Awaited<ReturnType<typeof attempt>>[] = [];
    for (let i = 0; i < 5; i += 1) guesses.push(await guess());
    expect(guesses.map((g) => g.status)).toEqual([401, 401, 401, 401, 401]);
    const blocked = await attempt(VICTIM.email, VICTIM.password);
    expect(blocked.status).toBe(429);
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(blocked.text).toContain(`Too many failed sign-ins for this account; try again in ${retryAfter} s.`);
    expect(blocked.client.cookie('device_agent_session')).toBeUndefined();

    const notice = (await other.get('/console/overview')).text;
    expect(notice).toContain('id="sign-in-attempts"');
    expect(notice).toMatch(/5 sign-in attempts on this account since [-\d: ]+ UTC, the\s+last from 198\.51\.100\.\d+ at/);
    expect(notice).toContain(`last from ${guesses.at(-1)!.from} at`);
    expect(notice).toContain('further attempts wait until');

    // The log is written beside the answer, not before it: wait for the last refusal's line.
    const refusals = () =>
      logEntries(proxied.logs()).filter((e) => e.event === 'console_sign_in_refused' && e.actor === `account:${VICTIM.email}`);
    await expect.poll(() => refusals().map((e) => e.attempts)).toEqual([1, 2, 3, 4, 1, 2, 3, 4, 5]);
    expect(refusals().map((e) => e.address)).toEqual([...first, ...guesses].map((g) => g.from));
    expect(refusals().filter((e) => e.next_attempt_at !== undefined)).toEqual([
      objectContaining({ attempts: 5, next_attempt_at: anyString() }),
    ]);
    expect(proxied.logs()).not.toContain(GUESS);
    expect(proxied.logs()).not.toContain(VICTIM.password);
  });

  test('two servers on one database count against one budget: guesses spread over both wait alike', async () => {
    const SHARED = { email: 'shared@acme.test', password: 'the shared console password' };
    expect((await addAccount(proxied, SHARED.email, { org: 'acme' }, SHARED.password)).code).toBe(0);
    const twin = await startServer({ dbPath: proxied.dbPath, args: ['--trust-proxy', '127.0.0.1', '--rate-limit-sign-ins', '2'] });
    try {
      const watcher = new ConsoleClient(twin);
      expect((await attempt(SHARED.email, SHARED.password, watcher)).status).toBe(303);
      const servers = [proxied, twin];
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await attempt(SHARED.email, GUESS, new ConsoleClient(servers[i % 2]!))).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      // Either server makes the sixth wait, even for the right password.
      for (const server of servers) {
        const blocked = await attempt(SHARED.email, SHARED.password, new ConsoleClient(server));
        expect(blocked.status).toBe(429);
        expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // The session held on one server is told of the attempts made on both.
      expect((await watcher.get('/console/overview')).text).toMatch(/5 sign-in attempts on this account since/);
    } finally {
      await twin.stop();
    }
  });

  test('an unknown email waits the same (the delay tells nothing), and the log does not name it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await attempt('nobody@acme.test', GUESS)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const unnamed = () => logEntries(proxied.logs()).filter((e) => e.event === 'console_sign_in_refused' && e.actor === undefined);
    await expect.poll(() => unnamed().length).toBe(5);
    expect(unnamed()[0]).toEqual({
      level: 'warn',
      time: anyString(),
      pid: anyNumber(),
      hostname: anyString(),
      event: 'console_sign_in_refused',
      msg: 'console sign-in refused',
    });
    expect(proxied.logs()).not.toContain('nobody@acme.test');
  });
});

// Webhooks against the real server, its real database (SQLite, or PostgreSQL in the `postgres`
// project) and a real HTTP receiver in this process: each request's HMAC verified with the secret
// shown at creation; a 503 retried with the same event; a check's grace period holding its FAIL back
// until it ends (and a FAIL that recovers within its grace never sent); recoveries; evidence only
// where the admin asked for it; a stale device in Slack's format, queued while the receiver fails,
// delivered by the next server process on the same database (the outbox survives a restart).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CreatedWebhook, DeliveryView } from '../../src/server/webhooks';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import type { AuditPage } from '../../src/server/audit';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, startServer, type RunningServer } from '../support/server';
import { call, createSecret, enroll, enrolledDevice, heartbeat, heartbeatBody, postures, register, result, type Answer } from './client';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  answered: number;
}

/** An HTTP receiver: answers each path's scripted statuses in turn (then 204), and lets a test wait for requests. */
class Receiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, number[]>();
  private readonly waiters = new Set<() => void>();
  private server!: Server;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        const answered = this.scripts.get(path)?.shift() ?? 204;
        this.received.push({ path, headers: req.headers, body, at: Date.now(), answered });
        res.writeHead(answered).end();
        for (const wake of this.waiters) wake();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** The next statuses `path` answers with. */
  script(path: string, statuses: number[]): void {
    this.scripts.set(path, statuses);
  }

  /** Resolves with the requests to `path` once `accept` takes them (a wait on requests, not on time). */
  async until(path: string, accept: (requests: Received[]) => boolean, what: string, timeoutMs = 90_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const requests = this.received.filter((r) => r.path === path);
      if (accept(requests)) return requests;
      if (Date.now() > deadline)
        throw new Error(`${what}: not received within ${timeoutMs} ms; got ${JSON.stringify(requests.map((r) => r.body))}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 1_000);
        this.waiters.add(wake);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** What a receiver does: recompute the HMAC of `<timestamp>.<body>` with the secret and compare in constant time. */
function verified(request: Received, secret: string): boolean {
  const timestamp = String(request.headers['x-device-agent-timestamp']);
  const given = String(request.headers['x-device-agent-signature']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest('hex')}`;
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

interface Payload {
  id: string;
  type: string;
  occurred_at: string;
  org: string;
  device: { device_id: string; hostname: string };
  check?: { check_key: string; status: string; status_since: string; grace_seconds: number; evidence?: unknown };
}

const receiver = new Receiver();
let server: RunningServer;
let token: string;

const api = (path: string, options: { method?: string; json?: unknown } = {}) =>
  call(server, `/api/admin/v1${path}`, {
    method: options.method ?? 'GET',
    json: options.json,
    headers: { authorization: `Bearer ${token}` },
  });

function ok<T>(answer: Answer): T {
  expect(answer.status, answer.text).toBeLessThan(300);
  return parseJson<T>(answer.text);
}

beforeAll(async () => {
  await receiver.start();
  server = await startServer({ args: ['--webhook-interval', '1s', ...NO_RATE_LIMITS] });
  token = (await createAdminToken(server, { org: 'acme' })).admin_token;
});
afterAll(async () => {
  await server?.stop();
  await receiver.close();
});

describe('webhooks', () => {
  test('signed, retried after a 503, held back by a grace period, and recoveries sent; evidence only when asked for', async () => {
    // A grace of 4 s for DISK_ENCRYPTION, an hour for SCREEN_LOCK, none for the rest.
    ok(
      await api('/policy?org=acme', {
        method: 'PUT',
        json: { checks: { graceSecondsByCheck: { DISK_ENCRYPTION: 4, SCREEN_LOCK: 3600 } } },
      }),
    );
    const plain = ok<CreatedWebhook>(
      await api('/webhooks', {
        method: 'POST',
        json: { org: 'acme', url: receiver.url('/plain'), events: ['check.failing', 'check.recovered'] },
      }),
    );
    const withEvidence = ok<CreatedWebhook>(
      await api('/webhooks', {
        method: 'POST',
        json: { org: 'acme', url: receiver.url('/evidence'), events: ['check.failing'], include_evidence: true },
      }),
    );
    expect(plain.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    // The list never shows the secret, nor the URL's path.
    const listed = await api('/webhooks');
    expect(listed.text).not.toContain(plain.secret);
    expect(ok<{ webhooks: { url: string }[] }>(listed).webhooks.map((w) => w.url)).toEqual([
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/…$/),
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/…$/),
    ]);
    receiver.script('/plain', [503]);
    // A grace period is the organization's: a label's refinement may not set one.
    const refused = await api('/policy?org=acme&label=team=lab', { method: 'PUT', json: { checks: { graceSeconds: 60 } } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('checks.graceSeconds');

    const device = await enrolledDevice(server, { org: 'acme' });
    const failedAt = new Date().toISOString();
    const uploaded = await postures(server, device.apiKey, {
      results: [
        result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { rule: 'no_firewall' }, observed_at: failedAt }),
        result({ check_key: 'DISK_ENCRYPTION', status: 'FAIL', evidence: { rule: 'not_encrypted' }, observed_at: failedAt }),
        result({ check_key: 'SCREEN_LOCK', status: 'FAIL', evidence: { rule: 'idle_too_long' }, observed_at: failedAt }),
      ],
    });
    expect(uploaded.status, uploaded.text).toBe(204);
    // The overview counts a FAIL within its grace apart from FAIL, and the device page shows until when (the webhooks' rule).
    const inGrace = (summary: { checks: { check_key: string; FAIL: number; IN_GRACE: number }[] }, key: string) =>
      summary.checks.filter((c) => c.check_key === key).map((c) => [c.FAIL, c.IN_GRACE])[0];
    const early = ok<{ checks: { check_key: string; FAIL: number; IN_GRACE: number }[] }>(await api('/compliance?org=acme'));
    expect(inGrace(early, 'SCREEN_LOCK')).toEqual([0, 1]);
    expect(inGrace(early, 'FIREWALL_ENABLED')).toEqual([1, 0]);
    const view = ok<{ latest: { check_key: string; in_grace_until?: string }[] }>(await api(`/devices/${device.deviceId}`));
    expect(Object.fromEntries(view.latest.map((r) => [r.check_key, r.in_grace_until ?? null]))).toMatchObject({
      SCREEN_LOCK: new Date(Date.parse(failedAt) + 3_600_000).toISOString(),
      FIREWALL_ENABLED: null,
    });

    // The FIREWALL_ENABLED FAIL (no grace): answered 503, then sent again, the same event, signed afresh.
    const firewall = await receiver.until(
      '/plain',
      (requests) => requests.filter((r) => r.body.includes('FIREWALL_ENABLED')).length >= 2,
      'the failing event and its retry',
    );
    const [first, retry] = firewall.filter((r) => r.body.includes('FIREWALL_ENABLED'));
    expect([first!.answered, retry!.answered]).toEqual([503, 204]);
    expect(retry!.body).toBe(first!.body);
    expect(retry!.headers['x-device-agent-delivery']).toBe(first!.headers['x-device-agent-delivery']);
    for (const r of [first!, retry!]) {
      expect(verified(r, plain.secret)).toBe(true);
      expect(verified(r, withEvidence.secret)).toBe(false);
      expect(Math.abs(Number(r.headers['x-device-agent-timestamp']) - r.at / 1000)).toBeLessThan(30);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-device-agent-event']).toBe('check.failing');
    }
    const failing = parseJson<Payload>(first!.body);
    expect(failing).toMatchObject({
      type: 'check.failing',
      org: 'acme',
      device: { device_id: device.deviceId, hostname: 'test-host' },
      check: { check_key: 'FIREWALL_ENABLED', status: 'FAIL', status_since: failedAt, grace_seconds: 0 },
    });
    expect(failing.id).toMatch(/^evt_[0-9a-f]{32}$/);
    // Evidence only to the webhook that asked for it.
    expect(failing.check).not.toHaveProperty('evidence');
    const [evidenceCopy] = await receiver.until(
      '/evidence',
      (requests) => requests.some((r) => r.body.includes('FIREWALL_ENABLED')),
      'the evidence copy',
    );
    expect(parseJson<Payload>(evidenceCopy!.body).check?.evidence).toEqual({ rule: 'no_firewall' });
    expect(verified(evidenceCopy!, withEvidence.secret)).toBe(true);

    // DISK_ENCRYPTION: sent once its 4 s grace from the FAIL's beginning ended, not before.
    const [disk] = (
      await receiver.until('/plain', (requests) => requests.some((r) => r.body.includes('DISK_ENCRYPTION')), 'the graced FAIL')
    ).filter((r) => r.body.includes('DISK_ENCRYPTION'));
    const graceEnds = Date.parse(failedAt) + 4_000;
    expect(disk!.at).toBeGreaterThanOrEqual(graceEnds);
    expect(inGrace(ok(await api('/compliance?org=acme')), 'DISK_ENCRYPTION')).toEqual([1, 0]);
    expect(parseJson<Payload>(disk!.body)).toMatchObject({
      occurred_at: new Date(graceEnds).toISOString(),
      check: { check_key: 'DISK_ENCRYPTION', grace_seconds: 4 },
    });

    // Recovery: FIREWALL_ENABLED passes, SCREEN_LOCK passes within its hour of grace.
    const passed = await postures(server, device.apiKey, {
      results: [result({ check_key: 'FIREWALL_ENABLED', status: 'PASS' }), result({ check_key: 'SCREEN_LOCK', status: 'PASS' })],
    });
    expect(passed.status).toBe(204);
    const [recovered] = (
      await receiver.until('/plain', (requests) => requests.some((r) => r.body.includes('check.recovered')), 'the recovery')
    ).filter((r) => r.body.includes('check.recovered'));
    expect(parseJson<Payload>(recovered!.body)).toMatchObject({
      type: 'check.recovered',
      check: { check_key: 'FIREWALL_ENABLED', status: 'PASS' },
    });
    expect(verified(recovered!, plain.secret)).toBe(true);
    // SCREEN_LOCK failed and recovered within its grace: nothing was sent about it, to either webhook.
    expect(receiver.received.filter((r) => r.body.includes('SCREEN_LOCK'))).toEqual([]);

    // The delivery log: the retried delivery took two attempts.
    const log = ok<{ deliveries: DeliveryView[] }>(await api(`/webhooks/${plain.webhook_id}/deliveries`)).deliveries;
    expect(log.map((d) => [d.event_type, d.state, d.attempts, d.last_status])).toEqual([
      ['check.recovered', 'delivered', 1, 204],
      ['check.failing', 'delivered', 1, 204],
      ['check.failing', 'delivered', 2, 204],
    ]);
  });

  test('a stale device in Slack format, queued while the receiver fails, is delivered by the next server on the database', async () => {
    const quick = await startServer({ args: ['--webhook-interval', '1s', '--heartbeat-interval', '1'] });
    try {
      const all = (await createAdminToken(quick, { allOrgs: true })).admin_token;
      const device = await enrolledDevice(quick, { org: 'acme' });
      const hook = parseJson<CreatedWebhook>(
        (
          await call(quick, '/api/admin/v1/webhooks', {
            method: 'POST',
            json: { org: 'acme', url: receiver.url('/slack'), format: 'slack', events: ['device.stale'] },
            headers: { authorization: `Bearer ${all}` },
          })
        ).text,
      );
      receiver.script('/slack', [503, 503, 503, 503, 503, 503, 503, 503, 503, 503]);
      // Seen now, stale two heartbeat intervals (2 s) later: the first attempt is refused.
      expect(
        (await heartbeat(quick, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid, hostname: 'stale-host' }))).status,
      ).toBe(200);
      const [refused] = await receiver.until('/slack', (requests) => requests.length >= 1, 'the stale event');
      expect(refused!.answered).toBe(503);
      expect(parseJson<{ text: string }>(refused!.body).text).toContain(
        `stale-host (${device.deviceId}, acme) has not been heard from since`,
      );
      expect(verified(refused!, hook.secret)).toBe(true);
      await quick.stop();

      // The next process on the same database sends it, once the receiver takes it.
      receiver.script('/slack', []);
      const next = await startServer({ dbPath: quick.dbPath, args: ['--webhook-interval', '1s', '--heartbeat-interval', '1'] });
      try {
        const delivered = await receiver.until(
          '/slack',
          (requests) => requests.some((r) => r.answered === 204),
          'the delivery after the restart',
        );
        const bodies = delivered.map((r) => r.body);
        expect(new Set(bodies).size).toBe(1);
      } finally {
        await next.stop();
      }
    } finally {
      await quick.stop().catch(() => undefined);
    }
  });

  test('the console adds a webhook (its secret shown once), shows the delivery log, and deletes it; both audited', async () => {
    expect((await addAccount(server, 'hooks@acme.test', { org: 'acme' }, 'a long console password')).code).toBe(0);
    const browser = new ConsoleClient(server);
    expect((await browser.signIn('hooks@acme.test', 'a long console password')).status).toBe(303);
    const csrf = await browser.csrfToken('/console/webhooks');
    const refused = await browser.post('/console/webhooks', {
      _csrf: csrf,
      url: 'ftp://example.test/',
      format: 'json',
      'event_check.failing': 'yes',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('url must be an http(s) URL');
    const created = await browser.post('/console/webhooks', {
      _csrf: csrf,
      url: receiver.url('/console'),
      format: 'slack',
      'event_device.stale': 'yes',
    });
    expect(created.status).toBe(201);
    const secret = /id="webhook-secret">(whsec_[0-9a-f]{64})</.exec(created.text)?.[1];
    expect(secret).toBeDefined();
    const id = /<code>(whk_[0-9a-f]{32})<\/code>/.exec(created.text)?.[1];
    const list = await browser.get('/console/webhooks');
    expect(list.text).toContain(`data-webhook="${id}"`);
    expect(list.text).not.toContain(secret);
    // The delivery log lists what the first test sent.
    expect(list.text).toMatch(/data-delivery="\d+"/);
    expect(list.text).toContain('<code>check.recovered</code>');
    const deleted = await browser.post(`/console/webhooks/${id}/delete`, {
      _csrf: await browser.csrfToken('/console/webhooks'),
      confirm: 'yes',
    });
    expect(deleted.status).toBe(303);
    expect((await browser.get('/console/webhooks')).text).not.toContain(`data-webhook="${id}"`);
    const audit = ok<AuditPage>(await api('/audit?limit=10')).entries.filter((e) => e.target_id === id);
    expect(audit.map((e) => [e.action, e.actor, e.detail?.format ?? null])).toEqual([
      ['webhook.delete', 'account:hooks@acme.test', null],
      ['webhook.create', 'account:hooks@acme.test', 'slack'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  test('a machine that enrolls again with an enrollment secret raises device.reenrolled, naming the record it replaced', async () => {
    const hook = ok<CreatedWebhook>(
      await api('/webhooks', { method: 'POST', json: { org: 'acme', url: receiver.url('/reenrolled'), events: ['device.reenrolled'] } }),
    );
    const secret = await createSecret(server, [], 'acme');
    const identity = heartbeatBody({ hostname: 'reimaged-host' });
    const first = await register(server, secret.enroll_secret, identity);
    const key = String((await enroll(server, first.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, key, identity)).status).toBe(200);
    const again = await register(server, secret.enroll_secret, identity);
    expect(again.status).toBe(200);
    const [event] = await receiver.until('/reenrolled', (requests) => requests.length >= 1, 'the re-enrollment');
    expect(verified(event!, hook.secret)).toBe(true);
    expect(parseJson<Payload & { supersedes: string }>(event!.body)).toMatchObject({
      type: 'device.reenrolled',
      device: { device_id: String(again.body?.device_id), hostname: 'reimaged-host' },
      supersedes: String(first.body?.device_id),
    });
  });
});

// POST /register (issue 28) against the real server: an enrollment secret for a device record and
// its one-time token; refusals alike; validation; labels; re-enrollment and clones; the secret
// never in logs, answers or CLI output other than `secret create`'s.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BODY_LIMITS, EXTENSION_ROUTES } from '../../src/protocol/schemas';
import { until } from '../support/agent';
import { logEntries, runServerCli, startServer, tryServerCli, type RunningServer } from '../support/server';
import {
  call,
  createSecret,
  enroll,
  expectError,
  expectUsageError,
  heartbeat,
  heartbeatBody,
  listSecrets,
  register,
  type Answer,
} from './client';

let server: RunningServer;
/** Heartbeat interval 1 s: "seen within two intervals" passes in seconds (the default's 10 minutes are what clones need). */
let quickServer: RunningServer;
beforeAll(async () => {
  [server, quickServer] = await Promise.all([startServer(), startServer({ args: ['--heartbeat-interval', '1'] })]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), quickServer?.stop()]);
});

/** The one 401 every refused secret gets, whatever the reason. */
function expectSecretRefused(answer: Answer): void {
  expectError(answer, 401, 'unauthorized');
  expect(answer.body).toEqual({ error: 'unauthorized', message: 'the enrollment secret is not valid' });
  expect(answer.headers['www-authenticate']).toBeUndefined();
}

describe.concurrent('POST /register', () => {
  test('registers a PENDING device whose token enrolls it through the spec’s /enroll, then activates with a heartbeat', async () => {
    const secret = await createSecret(server, ['--label', 'team=finance', '--label', 'site=paris', '--note', 'rollout']);
    expect(secret.enroll_secret).toMatch(/^das_[0-9a-f]{64}$/);
    const identity = heartbeatBody();
    const answer = await register(server, secret.enroll_secret, identity);
    expect(answer.status, answer.text).toBe(200);
    expect(Object.keys(answer.body ?? {}).sort()).toEqual(['device_id', 'enrollment_token', 'secret_id']);
    expect(answer.body?.secret_id).toBe(secret.secret_id);
    expect(answer.body?.enrollment_token).toMatch(/^[0-9a-f]{96}$/);
    const deviceId = String(answer.body?.device_id);
    const registered = await server.showDevice(deviceId);
    expect(registered).toMatchObject({
      state: 'PENDING',
      org: 'acme',
      hardware_uuid: identity.hardware_uuid,
      hostname: identity.hostname,
      enroll_secret_id: secret.secret_id,
      supersedes: null,
      duplicate_of: null,
    });
    const enrolled = await enroll(server, answer.body?.enrollment_token);
    expect(enrolled.status, enrolled.text).toBe(200);
    expect((await enroll(server, answer.body?.enrollment_token)).status).toBe(401);
    const beat = await heartbeat(server, String(enrolled.body?.api_key), identity);
    expect(beat.status, beat.text).toBe(200);
    expect(beat.body?.device_id).toBe(deviceId);
    const listed = await listSecrets(server);
    expect(listed.find((s) => s.secret_id === secret.secret_id)).toMatchObject({
      uses: 1,
      labels: { team: 'finance', site: 'paris' },
      note: 'rollout',
      status: 'active',
    });
  });

  test('each registration is logged with the device id and the secret id, never the secret or the token', async () => {
    const secret = await createSecret(server);
    const answer = await register(server, secret.enroll_secret);
    expect(answer.status).toBe(200);
    const lines = () => logEntries(server.logs()).filter((l) => l.event === 'device_registered' && l.device_id === answer.body?.device_id);
    await until(lines, (found) => found.length > 0, 60_000, 'the registration logged');
    expect(lines()[0]).toMatchObject({ secret_id: secret.secret_id, outcome: 'created' });
    expect(server.logs()).not.toContain(secret.enroll_secret);
    expect(server.logs()).not.toContain(secret.enroll_secret.slice(4));
    expect(server.logs()).not.toContain(String(answer.body?.enrollment_token));
  });

  test('an unknown, revoked, expired, used-up or malformed secret gets one identical 401, and registers nothing', async () => {
    const revoked = await createSecret(server);
    const revokedOut = await runServerCli(['secret', 'revoke', revoked.secret_id, '--db', server.dbPath]);
    expect(revokedOut.stdout).toBe(`Revoked enrollment secret ${revoked.secret_id}.\n`);
    const expired = await createSecret(server, ['--expires', '1s']);
    const usedUp = await createSecret(server, ['--max-uses', '1']);
    expect((await register(server, usedUp.enroll_secret)).status).toBe(200);
    await until(
      () => Date.now(),
      (now) => now > Date.parse(String(expired.expires_at)),
      5_000,
      'the secret expired',
    );
    const unknown = `das_${'ab'.repeat(32)}`;
    const refused = [
      unknown,
      revoked.enroll_secret,
      expired.enroll_secret,
      usedUp.enroll_secret,
      // Malformed: no prefix, short, upper-case prefix, empty, a token's shape.
      revoked.enroll_secret.slice(4),
      revoked.enroll_secret.slice(0, -1),
      `DAS_${revoked.enroll_secret.slice(4)}`,
      '',
      'a'.repeat(96),
    ];
    const answers = await Promise.all(refused.map((secret) => register(server, secret)));
    for (const answer of answers) expectSecretRefused(answer);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const listed = await listSecrets(server);
    const byId = new Map(listed.map((s) => [s.secret_id, s]));
    expect(byId.get(revoked.secret_id)).toMatchObject({ uses: 0, status: 'revoked' });
    expect(byId.get(expired.secret_id)).toMatchObject({ uses: 0, status: 'expired' });
    expect(byId.get(usedUp.secret_id)).toMatchObject({ uses: 1, status: 'used_up' });
  });

  test('a malformed body is a 400 naming the field, never echoing the secret', async () => {
    const secret = await createSecret(server);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ enroll_secret: 42, ...heartbeatBody() }, /enroll_secret/],
      [{ ...heartbeatBody(), enroll_secret: secret.enroll_secret, platform: 'BEOS' }, /platform/],
      [{ ...heartbeatBody({ hostname: '' }), enroll_secret: secret.enroll_secret }, /hostname/],
      [{ enroll_secret: secret.enroll_secret, hostname: 'h', platform: 'LINUX', os_version: 'x', agent_version: '1' }, /hardware_uuid/],
      [{ ...heartbeatBody(), enroll_secret: secret.enroll_secret, agent_version: 'x'.repeat(65) }, /agent_version/],
    ];
    for (const [json, field] of cases) {
      const answer = await call(server, EXTENSION_ROUTES.register, { json });
      expectError(answer, 400, 'bad_request');
      expect(answer.body?.message).toMatch(field);
      expect(answer.text).not.toContain(secret.enroll_secret);
    }
    expectError(
      await call(server, EXTENSION_ROUTES.register, { raw: '{"enroll_secret":', headers: { 'content-type': 'application/json' } }),
      400,
      'bad_request',
    );
    expectError(
      await call(server, EXTENSION_ROUTES.register, { raw: '', headers: { 'content-type': 'application/json' } }),
      400,
      'bad_request',
    );
    const listed = await listSecrets(server);
    expect(listed.find((s) => s.secret_id === secret.secret_id)?.uses).toBe(0);
  });

  test('a body over 16 KiB is refused with 413; another method gets 405', async () => {
    const secret = await createSecret(server);
    const big = await register(server, secret.enroll_secret, { ...heartbeatBody(), pad: 'x'.repeat(BODY_LIMITS.register) });
    expectError(big, 413, 'payload_too_large');
    const get = await call(server, EXTENSION_ROUTES.register, { method: 'GET' });
    expectError(get, 405, 'method_not_allowed');
    expect(get.headers.allow).toBe('POST');
  });

  test('a registration retried before it enrolled keeps its device: a new token, no second record, no second use', async () => {
    const secret = await createSecret(server, ['--max-uses', '1']);
    const identity = heartbeatBody();
    const first = await register(server, secret.enroll_secret, identity);
    const again = await register(server, secret.enroll_secret, identity);
    expect(again.status, again.text).toBe(200);
    expect(again.body?.device_id).toBe(first.body?.device_id);
    expect(again.body?.enrollment_token).not.toBe(first.body?.enrollment_token);
    expect((await enroll(server, first.body?.enrollment_token)).status).toBe(401);
    expect((await enroll(server, again.body?.enrollment_token)).status).toBe(200);
  });

  test('re-enrollment: the same machine registering again supersedes its record, whose key stops working', async () => {
    const secret = await createSecret(server);
    const identity = heartbeatBody();
    const first = await register(server, secret.enroll_secret, identity);
    const key = String((await enroll(server, first.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, key, identity)).status).toBe(200);
    // The state directory is wiped and the agent registers again, from the same host.
    const second = await register(server, secret.enroll_secret, identity);
    expect(second.status, second.text).toBe(200);
    expect(second.body?.device_id).not.toBe(first.body?.device_id);
    const newKey = String((await enroll(server, second.body?.enrollment_token)).body?.api_key);
    expectError(await heartbeat(server, key, identity), 401, 'unauthorized');
    const beat = await heartbeat(server, newKey, identity);
    expect(beat.status, beat.text).toBe(200);
    const old = await server.showDevice(String(first.body?.device_id));
    const replacement = await server.showDevice(String(second.body?.device_id));
    expect(old).toMatchObject({ state: 'REVOKED', superseded_by: replacement.device_id });
    expect(replacement).toMatchObject({ state: 'ACTIVE', supersedes: old.device_id, hardware_uuid: identity.hardware_uuid });
    // The old record keeps its history.
    expect(old.activated_at).toEqual(expect.any(String));
  });

  test('clones: the same hardware_uuid from another host while the first is live is flagged on both records, and neither replaces the other', async () => {
    const secret = await createSecret(server);
    const original = heartbeatBody({ hostname: 'vm-template' });
    const first = await register(server, secret.enroll_secret, original);
    const key = String((await enroll(server, first.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, key, original)).status).toBe(200);
    const clone = { ...original, hostname: 'vm-clone-2', serial_number: 'OTHER' };
    const second = await register(server, secret.enroll_secret, clone);
    expect(second.status, second.text).toBe(200);
    const cloneKey = String((await enroll(server, second.body?.enrollment_token)).body?.api_key);
    // The clone's heartbeat meets the spec's hardware_uuid conflict; the original keeps working.
    expectError(await heartbeat(server, cloneKey, clone), 409, 'conflict');
    expect((await heartbeat(server, key, original)).status).toBe(200);
    const a = await server.showDevice(String(first.body?.device_id));
    const b = await server.showDevice(String(second.body?.device_id));
    expect(a).toMatchObject({ state: 'ACTIVE', duplicate_of: b.device_id, superseded_by: null });
    expect(b).toMatchObject({ state: 'PENDING', duplicate_of: a.device_id, supersedes: null, hardware_uuid: null });
    // Once the admin revokes the original, the clone's next heartbeat takes the hardware_uuid.
    await server.revokeDevice(a.device_id);
    expect((await heartbeat(server, cloneKey, clone)).status).toBe(200);
  });

  test('a machine re-imaged under a new hostname after its record went quiet supersedes it (not a clone)', async () => {
    const server = quickServer;
    const secret = await createSecret(server);
    const before = heartbeatBody({ hostname: 'old-name' });
    const first = await register(server, secret.enroll_secret, before);
    const key = String((await enroll(server, first.body?.enrollment_token)).body?.api_key);
    expect((await heartbeat(server, key, before)).status).toBe(200);
    const seen = Date.now();
    // Two heartbeat intervals (1 s each here) pass without a heartbeat.
    await until(
      () => Date.now(),
      (now) => now - seen > 2_500,
      10_000,
      'two intervals passed',
    );
    const second = await register(server, secret.enroll_secret, { ...before, hostname: 'new-name' });
    expect(second.status).toBe(200);
    expect(await server.showDevice(String(first.body?.device_id))).toMatchObject({
      state: 'REVOKED',
      superseded_by: second.body?.device_id,
    });
  });
});

describe('secret CLI', () => {
  test('create refuses bad input with exit 2 and stores nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['--max-uses', '0'], /--max-uses/],
      [['--expires', 'soon'], /--expires/],
      [['--label', 'novalue'], /key=value/],
      [['--label', '=x'], /key=value/],
      [['--label', 'a b=c'], /label key/],
      [['--label', 'k=v', '--label', 'k=w'], /once/],
    ];
    for (const [flags, message] of cases)
      expectUsageError(await tryServerCli(['secret', 'create', '--db', server.dbPath, '--org', 'refused-org', ...flags]), message);
    const listed = await runServerCli(['secret', 'list', '--db', server.dbPath, '--org', 'refused-org']);
    expect(listed.stdout).toBe('No enrollment secrets.\n');
  });

  test('revoke of an unknown or malformed id is exit 2; revoking twice says so', async () => {
    expectUsageError(await tryServerCli(['secret', 'revoke', 'nope', '--db', server.dbPath]), /no such enrollment secret/);
    expectUsageError(await tryServerCli(['secret', 'revoke', `ens_${'0'.repeat(32)}`, '--db', server.dbPath]), /no enrollment secret/);
    const secret = await createSecret(server);
    await runServerCli(['secret', 'revoke', secret.secret_id, '--db', server.dbPath]);
    const again = await runServerCli(['secret', 'revoke', secret.secret_id, '--db', server.dbPath]);
    expect(again.stdout).toBe(`Enrollment secret ${secret.secret_id} was already revoked.\n`);
  });

  test('list never shows a secret; create shows it once', async () => {
    const created = await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', 'shown-once']);
    const secret = /das_[0-9a-f]{64}/.exec(created.stdout)?.[0];
    expect(secret).toBeDefined();
    const listed = await runServerCli(['secret', 'list', '--db', server.dbPath]);
    const listedJson = await runServerCli(['secret', 'list', '--db', server.dbPath, '--json']);
    expect(listed.stdout + listedJson.stdout).not.toMatch(/das_/);
    expect(listed.stdout).toMatch(/shown-once\s+active\s+0\s/);
  });
});

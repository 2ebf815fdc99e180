// The console's enrollment-secret forms over real HTTP: CSRF refused on create and revoke, another
// organization's secret out of reach, bad input answered on the form and nothing created, no page
// without a session, and the secret on no page but the one that created it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addAccount, ConsoleClient } from '../support/admin';
import { startServer, type RunningServer } from '../support/server';
import { createSecret, listSecrets, register } from '../server/client';

const ACME = { email: 'secrets@acme.test', password: 'acme console password' };
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
  const added = await addAccount(server, ACME.email, { org: 'acme' }, ACME.password);
  expect(added.code, added.stderr).toBe(0);
});
afterAll(async () => {
  await server?.stop();
});

async function signedIn(): Promise<ConsoleClient> {
  const client = new ConsoleClient(server);
  expect((await client.signIn(ACME.email, ACME.password)).status).toBe(303);
  return client;
}

describe.concurrent('enrollment secrets in the console', () => {
  test('without a session the page leads to the sign-in page', async () => {
    const answer = await new ConsoleClient(server).get('/console/secrets');
    expect([answer.status, answer.headers.location]).toEqual([303, '/console/sign-in']);
  });

  test('create and revoke without the CSRF token, or with a wrong one, are refused (403) and change nothing', async () => {
    const client = await signedIn();
    const secret = await createSecret(server, [], 'acme');
    const forms: Record<string, string>[] = [{ confirm: 'yes' }, { confirm: 'yes', _csrf: 'forged-token' }];
    for (const form of forms) {
      const created = await client.post('/console/secrets', { ...form, org: 'acme', expires: '1d' });
      expect(created.status).toBe(403);
      expect(created.text).not.toMatch(/das_/);
      expect((await client.post(`/console/secrets/${secret.secret_id}/revoke`, form)).status).toBe(403);
    }
    expect((await register(server, secret.enroll_secret)).status).toBe(200);
  });

  test("another organization's secret is out of reach: revoking it is 404 and it keeps working", async () => {
    const client = await signedIn();
    const globex = await createSecret(server, [], 'globex');
    const csrf = await client.csrfToken('/console/secrets');
    const page = await client.get('/console/secrets');
    expect(page.text).not.toContain(globex.secret_id);
    expect((await client.post(`/console/secrets/${globex.secret_id}/revoke`, { _csrf: csrf, confirm: 'yes' })).status).toBe(404);
    expect((await register(server, globex.enroll_secret)).status).toBe(200);
    // Its own organization only, whatever the form says.
    const created = await client.post('/console/secrets', { _csrf: csrf, org: 'globex', expires: '1d' });
    expect(created.status).toBe(201);
    expect(created.text).toMatch(/for organization acme:/);
  });

  test('bad input is answered on the form (400) without a secret; a good form shows the secret once, and no other page does', async () => {
    const client = await signedIn();
    const csrf = await client.csrfToken('/console/secrets');
    const cases: [Record<string, string>, RegExp][] = [
      [{ expires: 'forever' }, /choose an expiry/],
      [{ expires: '1d', max_uses: '0' }, /cap on uses/],
      [{ expires: '1d', max_uses: 'many' }, /cap on uses/],
      [{ expires: '1d', labels: 'novalue' }, /key=value/],
      [{ expires: '1d', labels: 'a=1\na=2' }, /once/],
    ];
    for (const [form, message] of cases) {
      const answer = await client.post('/console/secrets', { _csrf: csrf, org: 'acme', ...form });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toMatch(message);
      expect(answer.text).not.toMatch(/das_/);
    }
    const created = await client.post('/console/secrets', { _csrf: csrf, org: 'acme', expires: '', labels: 'team=ops\r\n' });
    expect(created.status).toBe(201);
    const secret = /das_[0-9a-f]{64}/.exec(created.text)?.[0];
    expect(secret).toBeDefined();
    const id = /ens_[0-9a-f]{32}/.exec(created.text)?.[0];
    const listed = await listSecrets(server);
    expect(listed.find((s) => s.secret_id === id)).toMatchObject({ labels: { team: 'ops' }, expires_at: null });
    expect((await client.get('/console/secrets')).text).not.toContain(secret);
  });
});

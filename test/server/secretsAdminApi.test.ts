// The admin API's enrollment secrets (POST/GET /api/admin/v1/enroll-secrets, DELETE …/{id}) over
// real HTTP: created within the credential's organization only, listed with use counts and never
// the secret, revoked at once; the CLI and the API agree.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CreatedSecret, SecretView } from '../../src/server/enrollSecrets';
import { createAdminToken } from '../support/admin';
import { parseJson } from '../support/json';
import { startServer, type RunningServer } from '../support/server';
import { call, createSecret, expectError, listSecrets, register, type Answer } from './client';

const API = '/api/admin/v1/enroll-secrets';
let server: RunningServer;
let acmeToken: string;
let allToken: string;

const api = (path: string, token: string, options: { method?: string; json?: unknown } = {}) =>
  call(server, `${API}${path}`, { method: options.method ?? 'GET', json: options.json, headers: { authorization: `Bearer ${token}` } });

function body<T>(answer: Answer): T {
  expect(answer.status, answer.text).toBeLessThan(300);
  return parseJson<T>(answer.text);
}

beforeAll(async () => {
  server = await startServer();
  const tokens = await Promise.all([createAdminToken(server, { org: 'acme' }), createAdminToken(server, { allOrgs: true })]);
  [acmeToken, allToken] = tokens.map((t) => t.admin_token) as [string, string];
});
afterAll(async () => {
  await server?.stop();
});

describe.concurrent('enrollment secrets through the admin API', () => {
  test('an organization token creates a secret (201, shown once) that registers devices, listed with its use count', async () => {
    const created = await api('', acmeToken, {
      method: 'POST',
      json: { org: 'acme', max_uses: 10, expires_in_seconds: 3600, labels: { team: 'finance' }, note: 'laptops' },
    });
    expect(created.status, created.text).toBe(201);
    const secret = parseJson<CreatedSecret>(created.text);
    expect(Object.keys(secret).sort()).toEqual(['enroll_secret', 'expires_at', 'max_uses', 'secret_id']);
    expect(secret.max_uses).toBe(10);
    expect(Date.parse(String(secret.expires_at)) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await register(server, secret.enroll_secret)).status).toBe(200);
    const listed = await api('?org=acme', acmeToken);
    expect(listed.text).not.toContain(secret.enroll_secret);
    const view = body<{ secrets: SecretView[] }>(listed).secrets.find((s) => s.secret_id === secret.secret_id);
    expect(view).toMatchObject({ org: 'acme', uses: 1, max_uses: 10, labels: { team: 'finance' }, note: 'laptops', status: 'active' });
    // The CLI lists the same (one service layer).
    expect((await listSecrets(server)).find((s) => s.secret_id === secret.secret_id)).toEqual(view);
  });

  test('an organization token reaches its own secrets only; an all-organizations token reaches all', async () => {
    const globex = await createSecret(server, [], 'globex');
    expectError(await api('', acmeToken, { method: 'POST', json: { org: 'globex' } }), 404, 'not_found');
    expectError(await api('?org=globex', acmeToken), 404, 'not_found');
    const own = body<{ secrets: SecretView[] }>(await api('', acmeToken)).secrets;
    expect(own.every((s) => s.org === 'acme')).toBe(true);
    // Another organization's secret is answered like a missing one, and stays as it was.
    const foreign = await api(`/${globex.secret_id}`, acmeToken, { method: 'DELETE' });
    expectError(foreign, 404, 'not_found');
    expectError(await api(`/ens_${'0'.repeat(32)}`, acmeToken, { method: 'DELETE' }), 404, 'not_found');
    expect((await register(server, globex.enroll_secret)).status).toBe(200);
    const all = body<{ secrets: SecretView[] }>(await api('', allToken)).secrets;
    expect(all.map((s) => s.secret_id)).toContain(globex.secret_id);
  });

  test('DELETE revokes at once: the secret registers nothing more; twice says already_revoked; a malformed id is 404', async () => {
    const secret = body<CreatedSecret>(await api('', acmeToken, { method: 'POST', json: { org: 'acme' } }));
    expect(body(await api(`/${secret.secret_id}`, acmeToken, { method: 'DELETE' }))).toEqual({
      secret_id: secret.secret_id,
      outcome: 'revoked',
    });
    expectError(await register(server, secret.enroll_secret), 401, 'unauthorized');
    expect(body(await api(`/${secret.secret_id}`, acmeToken, { method: 'DELETE' }))).toEqual({
      secret_id: secret.secret_id,
      outcome: 'already_revoked',
    });
    expectError(await api('/not-a-secret-id', acmeToken, { method: 'DELETE' }), 404, 'not_found');
  });

  test('bad bodies are 400 naming what is wrong, and create nothing', async () => {
    // An all-organizations token would create the organization with the secret: none is created.
    const org = 'bad-bodies';
    const cases: [unknown, RegExp][] = [
      [[], /JSON object/],
      [{ org, color: 'red' }, /unknown field "color"/],
      [{ org: 7 }, /org must be a string/],
      [{ org, max_uses: 0 }, /cap on uses/],
      [{ org, max_uses: 'ten' }, /max_uses/],
      [{ org, expires_in_seconds: 1.5 }, /expires_in_seconds/],
      [{ org, expires_in_seconds: 0 }, /expiry/],
      [{ org, labels: ['team=finance'] }, /labels must be an object/],
      [{ org, labels: { 'bad key': 'x' } }, /label key/],
      [{ org, labels: { team: 5 } }, /label value/],
      [{ org, note: '' }, /note/],
    ];
    for (const [json, message] of cases) {
      const answer = await api('', allToken, { method: 'POST', json });
      expectError(answer, 400, 'bad_request');
      expect(answer.body?.message).toMatch(message);
    }
    expectError(await api(`?org=${org}`, allToken), 404, 'not_found');
  });

  test('no credential: 401', async () => {
    expectError(await call(server, API, { method: 'GET' }), 401, 'unauthorized');
    expectError(await call(server, API, { method: 'POST', json: { org: 'acme' } }), 401, 'unauthorized');
  });
});

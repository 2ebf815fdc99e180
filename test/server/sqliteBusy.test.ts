// The SQLite write lock held by another process (a long admin command, a backup tool) for longer
// than the busy timeout: writes answer 503 database_unavailable with Retry-After, the console's as
// an error page; reads go on; once the lock is released, writes succeed again.
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ConsoleClient, addAccount, createAdminToken } from '../support/admin';
import { startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, postures, result } from './client';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

test('writes answer 503 with Retry-After while another process holds the write lock; reads go on', async () => {
  const device = await enrolledDevice(server);
  const { admin_token: adminToken } = await createAdminToken(server, { allOrgs: true });
  const email = 'admin@example.com';
  const password = 'a long enough password for tests';
  expect((await addAccount(server, email, { allOrgs: true }, password)).code).toBe(0);
  const console = new ConsoleClient(server);
  expect((await console.signIn(email, password)).status).toBe(303);
  const csrf = await console.csrfToken('/console/enroll');

  const holder = new Database(server.dbPath);
  holder.exec('BEGIN IMMEDIATE');
  try {
    const upload = await postures(server, device.apiKey, { results: [result()] });
    expect({ status: upload.status, error: upload.body?.error, retryAfter: upload.headers['retry-after'] }).toEqual({
      status: 503,
      error: 'database_unavailable',
      retryAfter: '5',
    });
    const enrolled = await console.post('/console/enroll', { _csrf: csrf, org: 'acme', ttl: '1h' });
    expect(enrolled.status).toBe(503);
    expect(enrolled.headers['retry-after']).toBe('5');
    expect(enrolled.text).toContain('The database is unavailable for a moment');
    const listed = await call(server, '/api/admin/v1/devices', { method: 'GET', headers: { authorization: `Bearer ${adminToken}` } });
    expect(listed.status).toBe(200);
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  expect((await postures(server, device.apiKey, { results: [result()] })).status).toBe(204);
  expect(server.logs()).not.toMatch(/"stack"/);
});

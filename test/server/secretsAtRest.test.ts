// Enrollment secrets at rest (SQLite's own files, so SQLite only; PostgreSQL keeps the same hash
// column): the database and its write-ahead log hold the secret's SHA-256 and never the secret,
// nor the one-time token a registration answered with; the server's log neither.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashCredential } from '../../src/server/credentials';
import { startServer, type RunningServer } from '../support/server';
import { createSecret, register } from './client';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Every byte of the database's files as they are on disk now (the WAL holds the latest writes while the server runs). */
const databaseBytes = () =>
  Buffer.concat([server.dbPath, `${server.dbPath}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file))).toString(
    'latin1',
  );

test('the database files hold the hash of the secret and of the token, never either; the log neither', async () => {
  const secret = await createSecret(server, ['--label', 'team=finance']);
  const answer = await register(server, secret.enroll_secret);
  expect(answer.status, answer.text).toBe(200);
  const token = String(answer.body?.enrollment_token);
  const bytes = databaseBytes();
  // The check reads the right bytes: the hashes and the secret's id are there.
  expect(bytes).toContain(hashCredential(secret.enroll_secret));
  expect(bytes).toContain(hashCredential(token));
  expect(bytes).toContain(secret.secret_id);
  for (const plaintext of [secret.enroll_secret, secret.enroll_secret.slice(4), token]) {
    expect(bytes.includes(plaintext), 'a plaintext credential in the database files').toBe(false);
    expect(server.logs().includes(plaintext), 'a plaintext credential in the log').toBe(false);
  }
});

// Credentials at rest and in logs: only SHA-256 hashes are stored, nothing secret is logged, and
// the database files are owner-only.
import { readFileSync, statSync } from 'node:fs';
import { expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { runServerCli, startServer } from '../support/server';
import { call, enroll, enrolledDevice, heartbeat, postures, result, unenroll } from './client';

const DB_FILES = ['', '-wal', '-shm'];

function expectAbsent(haystack: Buffer | string, needles: readonly string[], where: string): void {
  const text = haystack.toString('latin1');
  for (const needle of needles) {
    expect(text.includes(needle) || text.includes(needle.toUpperCase()), `${where} contains a secret`).toBe(false);
  }
}

test('no plaintext token or key in the database files or the logs; files are owner-only', async () => {
  const server = await startServer({ args: ['--log-level', 'trace'] });
  try {
    const evidenceMarker = `evidence-marker-${process.pid}`;
    const secrets: string[] = [];

    // Every credential state: used token + active key, unused token, expired token, revoked and unenrolled keys.
    const active = await enrolledDevice(server);
    secrets.push(active.created.enrollment_token, active.apiKey);
    expect((await postures(server, active.apiKey, { results: [result({ evidence: { detail: evidenceMarker } })] })).status).toBe(204);
    const unused = await server.createDevice();
    const expired = await server.createDevice({ tokenTtl: '1s' });
    const revoked = await enrolledDevice(server);
    await server.revokeDevice(revoked.deviceId);
    const unenrolled = await enrolledDevice(server);
    expect((await unenroll(server, unenrolled.apiKey)).status).toBe(204);
    secrets.push(
      unused.enrollment_token,
      expired.enrollment_token,
      revoked.created.enrollment_token,
      revoked.apiKey,
      unenrolled.created.enrollment_token,
      unenrolled.apiKey,
    );

    // Error paths that carry credentials: refused tokens and keys, 400s, 404, 405, 413.
    const unknownToken = 'e'.repeat(96);
    secrets.push(unknownToken);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await enroll(server, expired.enrollment_token)).status).toBe(401);
    expect((await enroll(server, unknownToken)).status).toBe(401);
    expect((await enroll(server, active.created.enrollment_token)).status).toBe(401);
    expect((await heartbeat(server, revoked.apiKey)).status).toBe(401);
    expect((await call(server, ROUTES.enroll, { json: { token: [unused.enrollment_token] } })).status).toBe(400);
    expect((await call(server, ROUTES.heartbeat, { apiKey: active.apiKey, json: { token: unused.enrollment_token } })).status).toBe(400);
    expect((await call(server, `/api/agent/v1/enroll/${unused.enrollment_token}`, { apiKey: active.apiKey, json: {} })).status).toBe(404);
    expect((await call(server, `${ROUTES.heartbeat}?key=${active.apiKey}`, { method: 'GET', apiKey: active.apiKey })).status).toBe(405);
    const oversized = { token: unused.enrollment_token, pad: 'x'.repeat(20_000) };
    expect((await call(server, ROUTES.enroll, { json: oversized })).status).toBe(413);

    // The admin CLI shows devices without their credentials.
    const listed = await runServerCli(['device', 'list', '--db', server.dbPath, '--json']);
    const shown = await runServerCli(['device', 'show', active.deviceId, '--db', server.dbPath, '--json']);
    expectAbsent(listed.stdout + shown.stdout, secrets, 'admin output');

    for (const suffix of DB_FILES) {
      const path = server.dbPath + suffix;
      expect(statSync(path).mode & 0o777, `${path} mode`).toBe(0o600);
      expectAbsent(readFileSync(path), secrets, `${path} (while serving)`);
    }
    // The evidence is stored (it is what the server is for) …
    const stored = DB_FILES.map((suffix) => readFileSync(server.dbPath + suffix).toString('latin1')).join('');
    expect(stored).toContain(evidenceMarker);

    await server.stop();
    expectAbsent(readFileSync(server.dbPath), secrets, 'database after shutdown');

    // … but never logged, nor any credential or Authorization header.
    const logs = server.logs();
    expect(logs).toContain('"path":"/api/agent/v1/enroll"');
    expectAbsent(logs, [...secrets, evidenceMarker], 'server logs');
    expect(logs).not.toMatch(/bearer|authorization/i);
  } finally {
    await server.stop().catch(() => undefined);
  }
});

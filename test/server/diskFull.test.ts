// A full disk under the SQLite database, for real (a small tmpfs, root only): writes are refused
// with 503 database_unavailable and Retry-After, never 500; reads go on; once space returns, writes
// succeed again without a restart. Nothing the server acknowledged is lost.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { POSTURE_REPORT_HEADER } from '../../src/protocol/schemas';
import { createAdminToken } from '../support/admin';
import { NO_RATE_LIMITS, logEntries, startServer, type RunningServer } from '../support/server';
import { CAN_MOUNT, mountSmallDisk, type SmallDisk } from '../support/smallDisk';
import { call, enrolledDevice, postures, result, type Answer } from './client';

if (!CAN_MOUNT) console.warn('SKIPPED: the full-disk server test mounts a small tmpfs, which needs root');

let disk: SmallDisk;
let server: RunningServer;
beforeAll(async () => {
  if (!CAN_MOUNT) return;
  disk = await mountSmallDisk('device-agent-server-disk-', '8m');
  server = await startServer({ dbPath: join(disk.dir, 'server.db'), args: NO_RATE_LIMITS });
});
afterAll(async () => {
  await server?.stop();
  await disk?.unmount();
});

/** A large upload (about 100 KiB), so that the WAL outgrows what it had written before the disk filled. */
const largeBatch = () => ({
  results: Array.from({ length: 20 }, (_, i) => result({ check_key: `org.example.disk_${i}`, evidence: { padding: 'x'.repeat(4_000) } })),
});

describe.skipIf(!CAN_MOUNT)('a full disk under the SQLite database', () => {
  test('writes answer 503 with Retry-After, reads go on, writes succeed again once space returns', async () => {
    const device = await enrolledDevice(server);
    const { admin_token: adminToken } = await createAdminToken(server, { allOrgs: true });
    const acknowledged: string[] = [];
    const upload = async (): Promise<Answer> => {
      const answer = await postures(server, device.apiKey, largeBatch());
      if (answer.status === 204) acknowledged.push(String(answer.headers[POSTURE_REPORT_HEADER]));
      return answer;
    };
    expect((await upload()).status).toBe(204);

    await disk.fill();
    let refused: Answer | undefined;
    for (let i = 0; i < 200 && !refused; i += 1) {
      const answer = await upload();
      expect([204, 503], answer.text).toContain(answer.status);
      if (answer.status === 503) refused = answer;
    }
    expect(refused, 'no upload was refused on the full disk').toBeDefined();
    expect(refused!.body?.error).toBe('database_unavailable');
    expect(refused!.headers['retry-after']).toBe('5');

    // Reads are served from the full disk: the admin API, readiness.
    const admin = { method: 'GET', headers: { authorization: `Bearer ${adminToken}` } };
    const shown = await call(server, `/api/admin/v1/devices/${device.deviceId}`, admin);
    expect(shown.status, shown.text).toBe(200);
    expect((await call(server, '/api/admin/v1/devices', admin)).status).toBe(200);
    expect((await call(server, '/readyz', { method: 'GET' })).status).toBe(200);

    await disk.free();
    let accepted: Answer | undefined;
    for (const deadline = Date.now() + 30_000; !accepted && Date.now() < deadline;) {
      const answer = await upload();
      expect([204, 503], answer.text).toContain(answer.status);
      if (answer.status === 204) accepted = answer;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(accepted, 'no upload was accepted once space returned').toBeDefined();

    // Every acknowledged upload is stored.
    const reports = new Set<string>();
    for (let before: number | null = 0; before !== null;) {
      const query = before === 0 ? '' : `&before=${before}`;
      const page = await call(server, `/api/admin/v1/devices/${device.deviceId}/history?limit=500${query}`, admin);
      for (const row of page.body?.results as { correlation_id: string }[]) reports.add(row.correlation_id);
      before = page.body?.next_before as number | null;
    }
    expect(acknowledged.filter((id) => !reports.has(id))).toEqual([]);
    const logs = server.logs();
    expect(logEntries(logs).filter((l) => l.msg === 'request failed')).toEqual([]);
    expect(logs).toContain('the database is unavailable: answering 503');
  });
});

// Retention of posture results against the real server and its real database (SQLite's file, or
// PostgreSQL in the `postgres` project): by age and by a cap per device, applied by the background
// sweep while the server serves.
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { afterEach, describe, expect, test } from 'vitest';
import { POSTURE_REPORT_HEADER } from '../../src/protocol/schemas';
import { ON_POSTGRES, queryDatabase } from '../support/postgres';
import { request } from 'undici';
import { until } from '../support/agent';
import { addAccount, ConsoleClient, createAdminToken } from '../support/admin';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { enrolledDevice, postures, result } from './client';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(args: string[]): Promise<RunningServer> {
  const server = await startServer({ args });
  servers.push(server);
  return server;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Read straight from the database: quicker than `device show`, for timing-sensitive checks. */
async function column(server: RunningServer, sql: string): Promise<string[]> {
  if (ON_POSTGRES) return (await queryDatabase<{ value: string }>(server.dbPath, sql)).map((row) => String(row.value));
  const db = new Database(server.dbPath, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare<[], { value: string }>(sql)
      .all()
      .map((row) => row.value);
  } finally {
    db.close();
  }
}
const reportIds = (server: RunningServer) => column(server, 'SELECT id AS value FROM posture_reports');
const checkKeys = (server: RunningServer) => column(server, 'SELECT check_key AS value FROM posture_results ORDER BY id');

describe('retention', () => {
  test('results older than --retention are deleted in the background, and their emptied reports; newer ones stay', async () => {
    const server = await serve(['--retention', '6s', '--retention-interval', '1s']);
    const device = await enrolledDevice(server);
    const old = await postures(server, device.apiKey, { results: [result({ check_key: 'OLD_1' }), result({ check_key: 'OLD_2' })] });
    expect(old.status).toBe(204);
    const oldReport = old.headers[POSTURE_REPORT_HEADER] as string;
    // Ages 4 s apart: the sweeps (every second) in between find the old results past --retention, the newer one not.
    await sleep(4_000);
    expect((await postures(server, device.apiKey, { results: [result({ check_key: 'NEWER' })] })).status).toBe(204);

    // The first sweep that deletes results takes the two old results and their emptied report, and
    // keeps NEWER (later sweeps delete it in turn: the database is read after that first one). An
    // earlier sweep may have deleted the audit entry of the device's creation alone.
    const [first] = await until(
      () =>
        logEntries(server.logs()).filter(
          (entry) => entry.msg === 'retention: deleted old posture results' && Number(entry.deleted_results) > 0,
        ),
      (sweeps) => sweeps.length > 0,
      60_000,
      'a retention sweep that deletes',
    );
    expect(first).toMatchObject({ deleted_results: 2, deleted_reports: 1 });
    expect((await checkKeys(server)).filter((key) => key !== 'NEWER')).toEqual([]);
    expect(await reportIds(server)).not.toContain(oldReport);
  }, 120_000);

  test('a check key not reported within --retention leaves the latest results and frees its place under --max-check-keys', async () => {
    const server = await serve(['--retention', '3s', '--retention-interval', '1s', '--max-check-keys', '10', '--rate-limit-postures', '0']);
    const device = await enrolledDevice(server);
    const latestKeys = () =>
      column(server, `SELECT check_key AS value FROM latest_results WHERE device_id = '${device.deviceId}' ORDER BY check_key`);
    const send = async (...keys: string[]) =>
      (await postures(server, device.apiKey, { results: keys.map((check_key) => result({ check_key })) })).status;
    expect(await send('DISK_ENCRYPTION', 'GONE')).toBe(204);
    // Its one place for a key other than the official ones is taken.
    expect(await send('NEW')).toBe(400);

    // The device goes on reporting its official check, not GONE.
    await until(
      async () => {
        expect(await send('DISK_ENCRYPTION')).toBe(204);
        return await latestKeys();
      },
      (keys) => !keys.includes('GONE'),
      60_000,
      'GONE swept from the latest results',
    );
    expect(await send('DISK_ENCRYPTION')).toBe(204);
    expect(await latestKeys()).toEqual(['DISK_ENCRYPTION']);
    expect(server.logs()).toMatch(/"deleted_check_keys":1,/);
    expect(await send('NEW')).toBe(204);
    expect(await latestKeys()).toEqual(['DISK_ENCRYPTION', 'NEW']);
  }, 120_000);

  test('each device keeps at most --retention-results results, the newest; other devices are untouched', async () => {
    const server = await serve(['--retention-results', '5', '--retention-interval', '1s']);
    const busy = await enrolledDevice(server);
    const quiet = await enrolledDevice(server);
    for (let batch = 0; batch < 3; batch += 1) {
      const results = Array.from({ length: 4 }, (_, i) => result({ check_key: `B${batch}_${i}` }));
      expect((await postures(server, busy.apiKey, { results })).status).toBe(204);
    }
    expect((await postures(server, quiet.apiKey, { results: [result({ check_key: 'Q' })] })).status).toBe(204);

    await until(
      () => column(server, `SELECT id AS value FROM posture_results WHERE device_id = '${busy.deviceId}'`),
      (ids) => ids.length === 5,
      60_000,
      "the busy device's results trimmed to 5",
    );
    expect((await server.showDevice(busy.deviceId)).postures.map((p) => p.check_key)).toEqual(['B1_3', 'B2_0', 'B2_1', 'B2_2', 'B2_3']);
    expect((await server.showDevice(quiet.deviceId)).postures.map((p) => p.check_key)).toEqual(['Q']);
    // The report whose results were trimmed is young: kept, so a later batch of its cycle is accepted.
    expect(await reportIds(server)).toHaveLength(4);
  }, 120_000);

  test('the daily compliance series (API and console overview) holds no day that began before --retention ago', async () => {
    const server = await serve(['--retention', '2d']);
    // A fleet of one: an empty one shows how to enroll its first device instead of the chart.
    await enrolledDevice(server, { org: 'acme' });
    const { admin_token: token } = await createAdminToken(server, { allOrgs: true });
    const answer = await request(`${server.url}/api/admin/v1/compliance/daily?days=30`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.statusCode).toBe(200);
    const { days } = (await answer.body.json()) as { days: { day: string }[] };
    // Two days back began before the cutoff, unless it is midnight exactly: yesterday and today.
    const today = new Date().toISOString().slice(0, 10);
    expect(days.at(-1)!.day).toBe(today);
    expect([2, 3]).toContain(days.length);
    const account = { email: 'ops@acme.test', password: 'a long console password' };
    expect((await addAccount(server, account.email, { org: 'acme' }, account.password)).code).toBe(0);
    const browser = new ConsoleClient(server);
    expect((await browser.signIn(account.email, account.password)).status).toBe(303);
    expect((await browser.get('/console/overview')).text).toMatch(/Compliance over the last [23] days/);
  });

  test('bad retention values are refused at start with exit 2', async () => {
    await expect(startServer({ args: ['--retention', '0s'] })).rejects.toThrow(
      /option '--retention <duration>' argument '0s' is invalid\. expected a positive whole number followed by s, m, h or d/,
    );
    await expect(startServer({ args: ['--retention-results', '0'] })).rejects.toThrow(
      /option '--retention-results <n>' argument '0' is invalid\. expected a whole number from 1/,
    );
  });
});

// The console's working screen at scale: the device list and the overview, each beside a bare query
// of the same rows on the same database in the same run, and their ratio. Seeds BENCH_DEVICES
// devices (default 20,000; scripts/bench/seedFleet.ts), starts the real server, signs in to the
// console and times whole pages over loopback HTTP (server-side work, HTML and transfer); the bare
// queries run in this process on a read-only connection. A measurement, not a test.
//   npx tsx scripts/bench/working-screen.ts      (uses dist/: run `npm run build` first)
//   BENCH_DB=/tmp/fleet.db reuses a seeded database
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ConsoleClient } from '../../test/support/admin';
import { SERVER_BIN, seedFleet, serveFleet } from './seedFleet';
import { Sqlite } from './sqlite';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ADMIN = { email: 'bench@example.test', password: 'bench password of the console' };

/** Median milliseconds of `rounds` runs after one warm-up. */
async function median(run: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    const started = performance.now();
    await run();
    if (round > 0) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function addAccount(db: string): Promise<void> {
  const child = spawn(process.execPath, [SERVER_BIN, 'admin', 'add', '--db', db, '--email', ADMIN.email, '--all-orgs'], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  child.stdin.end(`${ADMIN.password}\n`);
  return new Promise((resolve, reject) =>
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`admin add: ${code}`)))),
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-working-screen-'));
  const db = process.env.BENCH_DB ?? join(dir, 'fleet.db');
  if (!existsSync(db)) await seedFleet(db, DEVICES);
  await addAccount(db).catch(() => undefined); // a reused BENCH_DB has the account already
  const { server, url } = await serveFleet(db);
  const client = new ConsoleClient({ url });
  const signedIn = await client.signIn(ADMIN.email, ADMIN.password);
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status}`);
  const bare = new Sqlite(db, { readonly: true });
  const page = (path: string) => async () => {
    const answer = await client.get(path);
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
  };
  // The same 50 rows a list page shows, read bare: the devices, and their latest results.
  const listRows =
    (order: string, where = '') =>
    () => {
      const devices = bare.prepare(`SELECT * FROM devices WHERE state = 'ACTIVE' ${where} ORDER BY ${order} LIMIT 50`).all() as {
        id: string;
      }[];
      const latest = bare.prepare('SELECT * FROM latest_results WHERE device_id = ?');
      for (const device of devices) latest.all(device.id);
    };
  // The overview's counts, read bare: devices by state and platform, latest results by check and status.
  const overviewRows = () => {
    bare.prepare('SELECT state, platform, COUNT(*) FROM devices GROUP BY state, platform').all();
    bare.prepare('SELECT check_key, status, COUNT(*) FROM latest_results GROUP BY check_key, status').all();
  };
  const cases: [string, () => unknown, () => unknown][] = [
    ['/console/devices (created_at)', page('/console/devices?state=ACTIVE'), listRows('created_at, id')],
    [
      '/console/devices (failing count, most first)',
      page('/console/devices?state=ACTIVE&sort=failing_checks&order=desc'),
      listRows("(SELECT COUNT(*) FROM latest_results f WHERE f.device_id = devices.id AND f.status = 'FAIL') DESC, id DESC"),
    ],
    [
      '/console/devices (FIREWALL_ENABLED FAIL)',
      page('/console/devices?state=ACTIVE&check=FIREWALL_ENABLED&status=FAIL'),
      listRows(
        'created_at, id',
        "AND EXISTS (SELECT 1 FROM latest_results l WHERE l.device_id = devices.id AND l.check_key = 'FIREWALL_ENABLED' AND l.status = 'FAIL')",
      ),
    ],
    ['/console/overview', page('/console/overview'), overviewRows],
  ];
  console.log(`${DEVICES} devices, SQLite; median of ${ROUNDS} after one warm-up`);
  for (const [name, whole, rows] of cases) {
    const pageMs = await median(whole);
    const bareMs = await median(rows);
    console.log(
      `  ${name.padEnd(48)} page ${pageMs.toFixed(1)} ms   bare query ${bareMs.toFixed(2)} ms   ratio ${(pageMs / bareMs).toFixed(1)}`,
    );
  }
  bare.close();
  server.kill('SIGTERM');
  if (process.env.BENCH_DB === undefined) rmSync(dir, { recursive: true, force: true });
}

await main();

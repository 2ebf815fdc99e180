// The admin API's device list at scale: seeds a database with BENCH_DEVICES devices (default
// 100,000) through the Store (create, enroll, heartbeat, one report of every check each, about 1 in
// 20 failing FIREWALL_ENABLED), starts the real server on it and times filtered pages over loopback
// HTTP. A measurement, not a test: it prints the figures.
//   npx tsx scripts/bench/admin-list.ts        (uses dist/: run `npm run build` first)
//   BENCH_DEVICES=20000 BENCH_DB=/tmp/fleet.db npx tsx scripts/bench/admin-list.ts   (an existing BENCH_DB is reused)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { SERVER_BIN, seedFleet, serveFleet } from './seedFleet';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-admin-'));
  const db = process.env.BENCH_DB ?? join(dir, 'fleet.db');
  if (!existsSync(db)) await seedFleet(db, DEVICES);
  const token = (
    JSON.parse(
      execFileSync(process.execPath, [SERVER_BIN, 'token', 'create', '--db', db, '--all-orgs', '--label', 'bench', '--json'], {
        encoding: 'utf8',
      }),
    ) as {
      admin_token: string;
    }
  ).admin_token;
  const { server, url } = await serveFleet(db);
  // The retention sweep runs once at start; let it finish before timing.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const queries = [
    'limit=50',
    'limit=50&org=globex&state=ACTIVE&platform=LINUX',
    'limit=50&failing=FIREWALL_ENABLED',
    'limit=50&org=acme&failing=FIREWALL_ENABLED&sort=last_seen_at&order=desc',
    'limit=50&hostname=host-0999',
    'limit=50&sort=hostname&order=desc&last_seen_before=2999-01-01',
  ];
  console.log(`${DEVICES} devices; ${ROUNDS} requests per query after one warm-up; ms per request over loopback HTTP`);
  for (const query of queries) {
    const times: number[] = [];
    let cursor: string | null = null;
    for (let round = 0; round <= ROUNDS; round += 1) {
      const started = performance.now();
      // Every other request asks for the next page (keyset pagination), the rest for the first.
      const answer = await request(`${url}/api/admin/v1/devices?${query}${round % 2 === 1 && cursor ? `&cursor=${cursor}` : ''}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await answer.body.json()) as { devices: unknown[]; next_cursor: string | null };
      if (answer.statusCode !== 200) throw new Error(`${query}: ${answer.statusCode} ${JSON.stringify(body)}`);
      if (round % 2 === 0) cursor = body.next_cursor;
      if (round > 0) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    console.log(`  ${query.padEnd(72)} median ${median.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`);
  }
  server.kill('SIGTERM');
  if (process.env.BENCH_DB === undefined) rmSync(dir, { recursive: true, force: true });
}

await main();

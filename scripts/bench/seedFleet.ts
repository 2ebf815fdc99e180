// A fleet database for the admin benches, seeded through the Store as the server writes it: each
// device created, enrolled, heartbeating (four platforms, three agent versions) and one report of
// every check; about 1 in 20 fails FIREWALL_ENABLED, 1 in 7 DISK_ENCRYPTION. And the built server
// serving it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CHECK_KEYS, PLATFORMS } from '../../src/protocol/constants';
import { hashCredential, newCredential } from '../../src/server/credentials';
import { migrate } from '../../src/server/db/migrations';
import { SqliteStore } from '../../src/server/db/sqliteStore';
import { CREATED_STATE, enroll, heartbeat, uploadPostures } from '../../src/server/deviceLifecycle';
import { Sqlite } from './sqlite';

const ORGS = ['acme', 'globex', 'initech', 'umbrella'];
const AGENT_VERSIONS = ['0.3.0', '0.2.1', '0.1.0'];

export async function seedFleet(db: string, devices: number): Promise<void> {
  const database = new Sqlite(db);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  migrate(database);
  const store = new SqliteStore(database);
  const started = Date.now();
  const now = new Date();
  for (let i = 0; i < devices; i += 1) {
    const token = newCredential();
    const at = new Date(now.getTime() - (devices - i) * 1000).toISOString();
    await store.createDevice({
      orgName: ORGS[i % ORGS.length]!,
      name: `device ${i}`,
      state: CREATED_STATE,
      tokenHash: hashCredential(token),
      tokenExpiresAt: '2999-01-01T00:00:00.000Z',
      now: at,
    });
    const enrollment = await enroll(store, token, at);
    if (enrollment.kind !== 'enrolled') throw new Error('seeding: the token exchange failed');
    const ref = { id: enrollment.deviceId, orgId: (await store.findDevice(enrollment.deviceId))!.orgId };
    await heartbeat(
      store,
      ref,
      {
        hardwareUuid: `hw-${i}`,
        serialNumber: `SN${i}`,
        hostname: `host-${String(i).padStart(6, '0')}`,
        platform: PLATFORMS[i % PLATFORMS.length]!,
        osVersion: '1.0',
        agentVersion: AGENT_VERSIONS[i % AGENT_VERSIONS.length]!,
      },
      at,
    );
    await uploadPostures(
      store,
      ref,
      CHECK_KEYS.map((checkKey) => {
        const failing = (checkKey === 'FIREWALL_ENABLED' && i % 20 === 0) || (checkKey === 'DISK_ENCRYPTION' && i % 7 === 0);
        return {
          checkKey,
          status: failing ? 'FAIL' : 'PASS',
          evidence: { rule: failing ? 'firewall_off' : 'ok' },
          observedAt: at,
          correlationId: null,
        };
      }),
      at,
    );
    if (i % 10_000 === 9_999) process.stderr.write(`seeded ${i + 1} devices (${Math.round((Date.now() - started) / 1000)} s)\n`);
  }
  await store.close();
}

export const SERVER_BIN = fileURLToPath(new URL('../../dist/device-agent-server.cjs', import.meta.url));

/** `serve` on the database (retention far off: nothing is swept), once it listens. */
export async function serveFleet(db: string): Promise<{ server: ChildProcess; url: string }> {
  const server = spawn(process.execPath, [SERVER_BIN, 'serve', '--db', db, '--port', '0', '--retention', '3650d'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => {
    let output = '';
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) resolve(match[1]!);
    });
  });
  return { server, url };
}

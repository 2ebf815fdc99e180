// Bundled and run by fleet.ts (through esbuild, like the server itself): creates PENDING devices
// with enrollment tokens through the server's own Store, as `device create` does, many in one
// process. Prints one token per line; the bench exchanges them over real HTTP (/enroll).
//   node provision.cjs <db> <org> <count>
import { hashCredential, newCredential } from '../../../src/server/credentials';
import { parseDatabaseLocation } from '../../../src/server/db/location';
import { openStore } from '../../../src/server/db/open';
import { CREATED_STATE } from '../../../src/server/deviceLifecycle';

const TOKEN_TTL_MS = 24 * 3_600_000;

async function main(): Promise<void> {
  const [db, org, count] = process.argv.slice(2);
  if (db === undefined || org === undefined || !/^\d+$/.test(count ?? '')) throw new Error('usage: provision <db> <org> <count>');
  const store = await openStore(parseDatabaseLocation(db));
  const now = new Date();
  const lines: string[] = [];
  for (let i = 0; i < Number(count); i += 1) {
    const token = newCredential();
    await store.createDevice({
      orgName: org,
      name: `bench-${i}`,
      state: CREATED_STATE,
      tokenHash: hashCredential(token),
      tokenExpiresAt: new Date(now.getTime() + TOKEN_TTL_MS).toISOString(),
      now: now.toISOString(),
    });
    lines.push(token);
  }
  await store.close();
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`provision failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

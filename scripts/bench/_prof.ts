import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTES } from '../../src/protocol/schemas';
import { enrollFleet, heartbeatBody, spawnReference, stop, wrk, perSecond } from './server/harness';
void (async () => {
  const dir = mkdtempSync(join(tmpdir(), 'prof-'));
  const db = join(dir, 'b.db');
  const first = await spawnReference(dir, db);
  const devices = await enrollFleet(dir, first.url, db, 10000);
  await stop(first.child);
  const ref = await spawnReference(dir, db, process.argv.slice(2), ['--cpu-prof', `--cpu-prof-dir=${dir}/prof`]);
  const r = await wrk({
    url: ref.url,
    path: ROUTES.heartbeat,
    requests: devices.map((d) => `${d.apiKey}\t${heartbeatBody(d)}`),
    connections: 32,
    seconds: 8,
    transport: 'keep-alive',
    dir,
  });
  await stop(ref.child);
  console.log(perSecond(r), dir);
})();

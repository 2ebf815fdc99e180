// The memory floor of the daemon (npm run bench:footprint): an idle Node that has loaded the parts
// of undici the agent uses (src/agent/undiciParts.ts), with the daemon's V8 settings, and sent one
// heartbeat to the server over HTTPS, trusting the CA file only, then waits like the daemon. The
// bench bundles it as scripts/build.mjs bundles the agent and samples it as it samples the daemon:
// the daemon cannot idle below this.
//   node http-client-stack.cjs <https server origin> <CA file>
import { readFileSync } from 'node:fs';
import { applyDaemonMemorySettings } from '../../../src/agent/daemonMemory';

async function main(origin: string, caFile: string): Promise<void> {
  // Before undici loads, as `run` does (src/cli/commands/run.ts).
  applyDaemonMemorySettings();
  const { Agent } = await import('../../../src/agent/undiciParts');
  const response = await new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } }).request({
    origin,
    path: '/v1/heartbeat',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-key' },
    body: JSON.stringify({ hardware_uuid: '00000000-0000-4000-8000-000000000000' }),
  });
  await response.body.text();
  setInterval(() => {}, 1e9);
}

void main(process.argv[2]!, process.argv[3]!);

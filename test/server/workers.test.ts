// `serve --workers N` on either engine: N processes share the port and all serve; a worker killed
// with SIGKILL is replaced while the others keep serving; SIGTERM stops them all cleanly (exit 0);
// a start that cannot work fails once instead of restarting workers in a loop.
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { NO_RATE_LIMITS, logEntries, startServer, tryServerCli } from '../support/server';
import { call, enrolledDevice, heartbeat, heartbeatBody } from './client';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(condition: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; !condition();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('serve --workers', () => {
  test('two workers share the port and both serve; a killed worker is replaced; SIGTERM stops all with exit 0', async () => {
    const server = await startServer({ args: ['--workers', '2', '--log-level', 'debug', ...NO_RATE_LIMITS] });
    const listeningPids = () => [
      ...new Set(
        logEntries(server.logs())
          .filter((l) => l.msg?.startsWith('listening'))
          .map((l) => Number(l.pid)),
      ),
    ];
    await until(() => listeningPids().length === 2, 'both workers to listen');

    const device = await enrolledDevice(server);
    const body = heartbeatBody({ hardware_uuid: device.hardwareUuid });
    // One connection per request (connection: close), so that the primary hands them out in turn.
    const beat = () => call(server, '/api/agent/v1/heartbeat', { apiKey: device.apiKey, json: body, headers: { connection: 'close' } });
    for (let i = 0; i < 8; i += 1) expect((await beat()).status).toBe(200);
    const servedBy = () =>
      new Set(
        logEntries(server.logs())
          .filter((l) => l.msg === 'request' && l.status === 200)
          .map((l) => Number(l.pid)),
      );
    expect(servedBy().size).toBe(2);

    const [victim, survivor] = listeningPids() as [number, number];
    process.kill(victim, 'SIGKILL');
    await until(() => server.logs().includes('a worker died; starting another'), 'the primary to notice');
    // The survivor keeps serving while the primary starts a replacement.
    for (let i = 0; i < 4; i += 1) expect((await beat()).status).toBe(200);
    await until(() => listeningPids().length === 3, 'a replacement worker to listen');
    const replacement = listeningPids().find((pid) => pid !== victim && pid !== survivor)!;
    expect((await heartbeat(server, device.apiKey, body)).status).toBe(200);

    // A signal to the whole process group (Ctrl-C, systemd) reaches the workers too: the primary
    // alone decides, so a worker that gets it directly keeps serving.
    process.kill(survivor, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isAlive(survivor)).toBe(true);
    expect((await beat()).status).toBe(200);

    await server.stop(); // rejects unless the primary exits 0
    expect([survivor, replacement].filter(isAlive)).toEqual([]);
    const stopped = logEntries(server.logs()).filter((l) => l.msg === 'stopped');
    expect(stopped).toHaveLength(3); // two workers and the primary
  });

  test('workers stop by themselves when their primary is killed (kill -9): no orphan keeps the port', async () => {
    const server = await startServer({ args: ['--workers', '2'] });
    const workerPids = () => [
      ...new Set(
        logEntries(server.logs())
          .filter((l) => l.msg?.startsWith('listening'))
          .map((l) => Number(l.pid)),
      ),
    ];
    await until(() => workerPids().length === 2, 'both workers to listen');
    server.kill('SIGKILL');
    await until(() => workerPids().every((pid) => !isAlive(pid)), 'the workers to stop');
  });

  test('a start that cannot work fails once with the workers exit code, without restarting them', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      // A database that works (created by a first, single-process start), so that only the port fails.
      const probe = await startServer();
      await probe.stop();
      const outcome = await tryServerCli(['serve', '--db', probe.dbPath, '--host', '127.0.0.1', '--port', String(port), '--workers', '2']);
      expect(outcome.code).toBe(2);
      expect(outcome.stderr).toContain(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      expect(outcome.stdout).not.toContain('a worker died');
    } finally {
      taken.close();
    }
  });
});

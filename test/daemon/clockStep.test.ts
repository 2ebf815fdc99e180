// End-to-end proof of the monotonic timers: the daemon runs in this process against the real
// server (heartbeat interval 1 s) with the system clock seam, and the wall clock of the process is
// stepped back an hour (Date faked, timers and performance.now real: what an NTP correction or a
// resumed VM does). Heartbeats go on at their interval; the skew report sees the step.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { createApiClient } from '../../src/agent/client';
import { Daemon } from '../../src/agent/daemon';
import { runtimeStatus as readRuntimeStatus } from '../support/agent';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { startServer, type RunningServer } from '../support/server';
import { openAgentState } from '../../src/agent/state';
import { enrollState, IDENTITY, makeStateDir, memoryLogger, results } from './inProcess';
import { removeStateDir, until } from '../support/agent';

let server: RunningServer;
let proxy: FaultProxy;
beforeAll(async () => {
  server = await startServer({ args: ['--heartbeat-interval', '1'] });
  proxy = await startFaultProxy(server.url);
});
afterAll(async () => {
  await proxy?.stop();
  await server?.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

it('keeps heartbeating at its interval when the wall clock steps back an hour', async () => {
  const device = await server.createDevice({ org: `org-${randomUUID()}` });
  const api = createApiClient({ serverUrl: proxy.url });
  const { api_key: apiKey } = await api.enroll(device.enrollment_token);
  const stateDir = await makeStateDir();
  const { log } = memoryLogger();
  const state = await openAgentState(stateDir);
  await enrollState(state, apiKey, proxy.url);
  const daemon = new Daemon({
    state,
    connect: (enrollment) => createApiClient({ serverUrl: enrollment.server_url }),
    log,
    retry: { baseMs: 50, maxMs: 400, attempts: 3 },
    identity: () => Promise.resolve({ ...IDENTITY, hardware_uuid: randomUUID() }),
    collect: () => Promise.resolve({ results: results('STEP', 2) }),
  });
  const stop = new AbortController();
  const running = daemon.run(stop.signal);
  try {
    const heartbeats = () => proxy.seen('heartbeat').filter((r) => r.status === 200).length;
    await until(heartbeats, (n) => n >= 2, 60_000, 'two heartbeats');

    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(Date.now() - 3600_000);
    const before = heartbeats();
    // Timers that followed the wall clock would wait an hour: two more heartbeats within a minute
    // (1 s apart, on a busy machine) show they follow the monotonic clock.
    await until(heartbeats, (n) => n >= before + 2, 60_000, 'two heartbeats after the step');
    const status = await readRuntimeStatus(stateDir);
    expect(status.clock_skew_ms).toBeGreaterThan(3590_000); // reports use the wall clock: the server is an hour ahead
  } finally {
    stop.abort();
    await running;
    await api.close();
    vi.useRealTimers();
    await removeStateDir(stateDir);
  }
});

// End-to-end proof of the monotonic timers: the daemon runs in this process against the real
// server (heartbeat interval 1 s) with the system clock seam, and the wall clock of the process is
// stepped back an hour (Date faked, timers and performance.now real: what an NTP correction or a
// resumed VM does). Heartbeats go on at their interval; the skew report sees the step.
import { randomUUID } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { createApiClient } from '../../src/agent/client';
import { Daemon } from '../../src/agent/daemon';
import { runtimeStatus as readRuntimeStatus, until } from '../support/agent';
import { daemonTestbed } from '../support/daemonTestbed';
import { openAgentState } from '../../src/agent/state';
import { enrollState, IDENTITY, memoryLogger, results } from './inProcess';

const testbed = daemonTestbed(['--heartbeat-interval', '1']);
afterEach(() => {
  vi.useRealTimers();
});

it('keeps heartbeating at its interval when the wall clock steps back an hour', async () => {
  const device = await testbed.server.createDevice({ org: `org-${randomUUID()}` });
  const api = createApiClient({ serverUrl: testbed.proxy.url });
  const { api_key: apiKey } = await api.enroll(device.enrollment_token);
  const { log } = memoryLogger();
  const state = await openAgentState(testbed.stateDir);
  await enrollState(state, apiKey, testbed.proxy.url);
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
    const heartbeats = () => testbed.proxy.seen('heartbeat').filter((r) => r.status === 200).length;
    await until(heartbeats, (n) => n >= 2, 60_000, 'two heartbeats');

    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(Date.now() - 3600_000);
    const before = heartbeats();
    // Timers that followed the wall clock would wait an hour: two more heartbeats within a minute
    // (1 s apart, on a busy machine) show they follow the monotonic clock.
    await until(heartbeats, (n) => n >= before + 2, 60_000, 'two heartbeats after the step');
    const status = await readRuntimeStatus(testbed.stateDir);
    expect(status.clock_skew_ms).toBeGreaterThan(3590_000); // reports use the wall clock: the server is an hour ahead
  } finally {
    stop.abort();
    await running;
    await api.close();
    vi.useRealTimers();
  }
});

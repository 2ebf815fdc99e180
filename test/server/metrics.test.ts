// The request metrics are tallied in plain numbers and handed to prom-client when scraped
// (src/server/metrics.ts): their text must be what prom-client's own Counter and Histogram report
// for the same requests, line for line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openStore } from '../../src/server/db/open';
import type { Store } from '../../src/server/db/store';
import { createMetrics } from '../../src/server/metrics';

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-metrics-'));
  store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const REQUEST_METRICS = [
  'device_agent_server_requests_total',
  'device_agent_server_request_duration_seconds',
  'device_agent_server_rate_limit_refusals_total',
];

/** The lines of the request metrics, in the registry's order. */
function requestLines(text: string): string[] {
  return text.split('\n').filter((line) => REQUEST_METRICS.some((name) => line.replace(/^# (HELP|TYPE) /, '').startsWith(name)));
}

function promClientReference() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'device_agent_server_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'device_agent_server_request_duration_seconds',
    help: 'Time from a request to its answer, by route and method',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'device_agent_server_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the per-device rate limits of this process, by route',
    labelNames: ['route'],
    registers: [registry],
  });
  return {
    registry,
    observe(route: string, method: string, status: number, seconds: number) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
      if (status === 429) refusals.inc({ route });
    },
  };
}

test('requests, their latency and the 429s read as prom-client reports them', async () => {
  const metrics = createMetrics(store);
  const reference = promClientReference();
  expect(requestLines(await metrics.registry.metrics())).toEqual(requestLines(await reference.registry.metrics()));
  const requests: [string, string, number, number][] = [
    ['/api/agent/v1/heartbeat', 'POST', 200, 0.0004],
    ['/api/agent/v1/heartbeat', 'POST', 200, 0.001],
    ['/api/agent/v1/heartbeat', 'POST', 200, 0.0010001],
    ['/api/agent/v1/heartbeat', 'POST', 429, 0.003],
    ['/api/agent/v1/heartbeat', 'POST', 429, 0.2],
    ['/api/agent/v1/heartbeat', 'GET', 405, 0.0001],
    ['/api/agent/v1/postures', 'POST', 204, 0.7],
    ['/api/agent/v1/postures', 'POST', 429, 10],
    ['/api/agent/v1/postures', 'POST', 204, 12.5],
    ['(unknown)', 'GET', 404, 0.02],
  ];
  for (const [route, method, status, seconds] of requests) {
    metrics.observeRequest(route, method, status, seconds);
    reference.observe(route, method, status, seconds);
  }
  const lines = requestLines(await metrics.registry.metrics());
  expect(lines).toEqual(requestLines(await reference.registry.metrics()));
  expect(lines).toContain('device_agent_server_rate_limit_refusals_total{route="/api/agent/v1/heartbeat"} 2');
  expect(lines).toContain(
    'device_agent_server_request_duration_seconds_bucket{le="0.001",route="/api/agent/v1/heartbeat",method="POST"} 2',
  );
  // A second scrape reports the same, and later requests add to it.
  metrics.observeRequest('/api/agent/v1/heartbeat', 'POST', 200, 0.002);
  reference.observe('/api/agent/v1/heartbeat', 'POST', 200, 0.002);
  expect(requestLines(await metrics.registry.metrics())).toEqual(requestLines(await reference.registry.metrics()));
});

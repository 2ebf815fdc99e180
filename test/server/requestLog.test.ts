// The request log's summary at info (each request's own line is at debug): how many requests each
// method, path and status had since the last summary, their mean and longest time.
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { RequestLog } from '../../src/server/requestLog';

function logged(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { lines, logger };
}

test('the summary counts requests by method, path and status, with their mean and longest time', () => {
  const { lines, logger } = logged('info');
  const log = new RequestLog(logger, 3_600_000);
  expect(log.perRequest).toBe(false);
  log.count('POST', '/api/agent/v1/heartbeat', 200, 1);
  log.count('POST', '/api/agent/v1/heartbeat', 200, 2);
  log.count('POST', '/api/agent/v1/heartbeat', 401, 3);
  log.count('POST', '/api/agent/v1/postures', 204, 10);
  log.count('GET', '/api/agent/v1/postures', 405, 0.2);
  log.stop();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    msg: 'requests',
    requests: 5,
    by_route: {
      'POST /api/agent/v1/heartbeat 200': 2,
      'POST /api/agent/v1/heartbeat 401': 1,
      'POST /api/agent/v1/postures 204': 1,
      'GET /api/agent/v1/postures 405': 1,
    },
    ms_mean: 3.2,
    ms_max: 10,
  });
  expect(Object.keys(lines[0]!.by_route as object)).toHaveLength(4);
});

test('each summary covers the requests since the one before; none when there were none', () => {
  const { lines, logger } = logged('debug');
  const log = new RequestLog(logger, 3_600_000);
  expect(log.perRequest).toBe(true);
  log.count('POST', '/api/agent/v1/heartbeat', 200, 4);
  (log as unknown as { summarize(): void }).summarize();
  log.count('POST', '/api/agent/v1/postures', 204, 6);
  log.stop();
  log.stop();
  expect(lines.map((line) => line.by_route)).toEqual([{ 'POST /api/agent/v1/heartbeat 200': 1 }, { 'POST /api/agent/v1/postures 204': 1 }]);
  expect(lines.map((line) => line.ms_max)).toEqual([4, 6]);
});

// "Check again" from the device page, as the daemon sees it (in process, fake clock:
// test/daemon/inProcess.ts): a heartbeat answer's check_requested_at that is new to the daemon makes a
// posture cycle due at once and uploaded then; the same value again is no new request; a new one
// within a minute of the last such cycle waits for the minute. The end to end path (page, server,
// spawned daemon) is test/console/checkAgain.test.ts.
import { afterEach, expect, it } from 'vitest';
import { FakeClock, ScriptedApi, startInProcess, type Harness } from './inProcess';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const HEARTBEAT_MS = 20_000;

it('a new request runs a cycle at once; the same value does not; the next one waits for a minute after the last', async () => {
  const clock = new FakeClock();
  const api = new ScriptedApi(clock, { heartbeat: HEARTBEAT_MS / 1000, posture: 3600 });
  let asked: string | undefined;
  const answer = api.heartbeatAnswer;
  api.heartbeatAnswer = (body) => ({ ...answer(body), ...(asked === undefined ? {} : { check_requested_at: asked }) });
  harness = await startInProcess({ clock, api });
  const h = harness;
  await h.settled();
  const start = api.calls[0]!.at;
  const uploads = () => api.seen('postures').map((c) => c.at - start);
  expect(uploads()).toEqual([0]);

  asked = '2026-01-01T00:00:10.000Z';
  await h.advance(HEARTBEAT_MS);
  expect(uploads()).toEqual([0, HEARTBEAT_MS]);
  expect(h.events('check_requested').map((line) => line.requested_at)).toEqual([asked]);
  // Heartbeats carry it until it lapses: no new cycle.
  await h.advance(HEARTBEAT_MS);
  expect(uploads()).toEqual([0, HEARTBEAT_MS]);

  // Another request 40 s after the last asked cycle: due a minute after that one.
  asked = '2026-01-01T00:00:35.000Z';
  await h.advance(HEARTBEAT_MS);
  expect(h.events('check_requested')).toHaveLength(2);
  expect(uploads()).toEqual([0, HEARTBEAT_MS]);
  await h.advance(HEARTBEAT_MS - 1);
  expect(uploads()).toEqual([0, HEARTBEAT_MS]);
  await h.advance(1);
  expect(uploads()).toEqual([0, HEARTBEAT_MS, HEARTBEAT_MS + 60_000]);
  // Nothing more until the posture interval.
  await h.advance(10 * HEARTBEAT_MS);
  expect(uploads()).toHaveLength(3);
  // Nor once the request has lapsed and heartbeats carry none.
  asked = undefined;
  await h.advance(10 * HEARTBEAT_MS);
  expect(uploads()).toHaveLength(3);
  expect(h.events('check_requested')).toHaveLength(2);
});

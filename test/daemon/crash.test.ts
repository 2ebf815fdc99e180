// Crash safety and backlog: SIGKILL the daemon in the middle of uploads, restart it, and prove that
// every queued result reached the server at least once, in batches of at most 100, and that the
// queue on disk stayed sound throughout.
import { expect, it } from 'vitest';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import { deviceDetails, postureBody } from '../support/daemonWire';
import { daemonTestbed } from '../support/daemonTestbed';
import { fakeResults, queueFiles, queueResults, stopDaemon, until } from '../support/agent';

// The backlog's 305 distinct check keys stand in for many cycles; the per-device cap on check keys
// (test/server/checkKeyCap.test.ts) is not what this test is about.
const testbed = daemonTestbed(['--max-check-keys', '10000']);

const backlog = [fakeResults('CYCLE_A', 120), fakeResults('CYCLE_B', 90), fakeResults('CYCLE_C', 95)];
const backlogKeys = backlog.flat().map((r) => r.check_key);
const isBacklog = (body: unknown) => postureBody(body)?.results?.some((r) => backlogKeys.includes(r.check_key));

it('delivers a backlog across SIGKILLs during uploads: at least once, batches of at most 100, queue always sound', async () => {
  const { deviceId } = await testbed.enrollNewDevice();
  await queueResults(testbed.stateDir, backlog);
  expect(await countQueuedResults(testbed.stateDir)).toBe(305);

  // Kill 1: while the first batch is at the server (slow answer): the server stores it, the agent never hears.
  testbed.proxy.add({ route: 'postures', fault: { kind: 'delay', ms: 1500 } });
  let daemon = testbed.startDaemon();
  await testbed.proxy.waitFor((r) => r.some((x) => x.route === 'postures' && isBacklog(x.body)), 60_000);
  daemon.child.kill('SIGKILL');
  await daemon.exited;
  await queueFiles(testbed.stateDir); // every entry parses
  expect(await countQueuedResults(testbed.stateDir)).toBe(305); // nothing acknowledged, nothing lost

  // Kill 2: after a few batches went through, during another one.
  testbed.proxy.clearRules();
  testbed.proxy.add({ route: 'postures', fault: { kind: 'delay', ms: 300 } });
  const before = testbed.proxy.seen('postures').length;
  daemon = testbed.startDaemon(); // takes over the lock the killed process left
  await testbed.proxy.waitFor((r) => r.filter((x) => x.route === 'postures' && isBacklog(x.body)).length >= before + 3, 60_000);
  daemon.child.kill('SIGKILL');
  await daemon.exited;
  await queueFiles(testbed.stateDir);
  const left = await countQueuedResults(testbed.stateDir);
  expect(left).toBeLessThan(305);
  expect(left).toBeGreaterThan(0);

  // Restart without faults: everything arrives.
  testbed.proxy.clearRules();
  daemon = testbed.startDaemon();
  await until(
    () => countQueuedResults(testbed.stateDir),
    (n) => n === 0,
    60_000,
    'queue drained',
  );
  const stopped = await stopDaemon(daemon);
  expect(stopped.code).toBe(0);

  const stored = new Set((await deviceDetails(testbed.server, deviceId)).postures.map((p) => p.check_key));
  expect(backlogKeys.filter((k) => !stored.has(k))).toEqual([]);
  const batches = testbed.proxy.seen('postures').filter((r) => isBacklog(r.body));
  expect(batches.length).toBeGreaterThanOrEqual(4);
  for (const batch of batches) expect(postureBody(batch.body).results.length).toBeLessThanOrEqual(100);
  expect((await queueFiles(testbed.stateDir)).filter((n) => n.endsWith('.json'))).toEqual([]);
});

// A full state directory, for real: a small tmpfs mounted for each test (root only), filled to the
// last byte while the spawned daemon talks to the real server through the fault proxy. A full disk
// is transient: the daemon keeps running, keeps its key, keeps heartbeating, logs each fault once,
// drops nothing, and catches up when space returns. A 401 on a full disk still wipes the key.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countQueuedResults } from '../../src/agent/state/postureQueue';
import { deviceDetails, WARN_OR_WORSE } from '../support/daemonWire';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { startServer, type RunningServer } from '../support/server';
import { CAN_MOUNT, mountSmallDisk, type SmallDisk } from '../support/smallDisk';
import {
  enrollNewDevice,
  fakeResults,
  queueResults,
  runtimeStatus,
  startDaemon,
  stopDaemon,
  until,
  type RunningDaemon,
} from '../support/agent';

if (!CAN_MOUNT) console.warn('SKIPPED: the full-disk daemon tests mount a small tmpfs, which needs root');

let server: RunningServer;
let proxy: FaultProxy;
let disk: SmallDisk;
let stateDir: string;
let daemon: RunningDaemon | undefined;

beforeAll(async () => {
  if (!CAN_MOUNT) return;
  server = await startServer({ args: ['--heartbeat-interval', '1', '--posture-interval', '1'] });
  proxy = await startFaultProxy(server.url);
});
afterAll(async () => {
  await proxy?.stop();
  await server?.stop();
});
beforeEach(async () => {
  if (!CAN_MOUNT) return;
  proxy.clearRules();
  proxy.requests.length = 0;
  disk = await mountSmallDisk('daemon-full-', '512k');
  stateDir = join(disk.dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  return async () => {
    if (daemon) await stopDaemon(daemon);
    daemon = undefined;
    await disk.unmount();
  };
});

const events = (name: string) => daemon!.lines.filter((l) => l.event === name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!CAN_MOUNT)('run (daemon) on a full disk', () => {
  it('starts on a full state directory: takes its lock, heartbeats, keeps the key, logs once, catches up when space returns', async () => {
    const { deviceId } = await enrollNewDevice(server, stateDir, proxy.url);
    await queueResults(stateDir, [fakeResults('BEFORE_FULL', 4)]);
    await disk.fill();

    daemon = startDaemon(stateDir);
    await proxy.waitFor((r) => r.filter((x) => x.route === 'heartbeat' && x.status === 200).length >= 3, 60_000);
    expect(daemon.child.exitCode).toBeNull();
    const lock = join(stateDir, 'daemon.lock');
    expect(lstatSync(lock).isSymbolicLink()).toBe(true);
    expect(readlinkSync(lock)).toBe(String(daemon.pid));
    expect(existsSync(join(stateDir, 'api-key'))).toBe(true);
    // The queued results go out (acknowledging is a delete); the new cycles wait in memory.
    await until(
      () => countQueuedResults(stateDir),
      (n) => n === 0,
      60_000,
      'queued results delivered',
    );
    await until(
      () => events('queue_write_failed').length,
      (n) => n > 0,
      60_000,
      'a cycle that cannot be stored',
    );
    await disk.fill(); // again: the delivered segment's delete gave back a page
    const logged = daemon.lines.length;
    const heartbeats = proxy.seen('heartbeat').length;
    // Several heartbeat and posture intervals on the full disk, however long a busy machine takes.
    await until(
      () => proxy.seen('heartbeat').length,
      (n) => n >= heartbeats + 3,
      60_000,
      'three more heartbeats on the full disk',
    );
    const repeated = daemon.lines.slice(logged).filter((l) => WARN_OR_WORSE.includes(l.level) || /_failed/.test(l.event ?? ''));
    expect(repeated).toEqual([]); // each fault was logged once, not on every attempt
    expect(events('queue_write_failed')).toHaveLength(1);
    expect(events('status_write_failed').length).toBeGreaterThanOrEqual(1);
    expect(events('queue_full')).toEqual([]);

    await disk.free();
    // The status file read before its next write would still be the one written between the two
    // fills: wait for a write after the last failure first.
    const statusFailures = events('status_write_failed').length;
    await until(
      () => events('status_write_failed_resolved').length,
      (n) => n === statusFailures,
      60_000,
      'a status write after each failed one',
    );
    const status = await runtimeStatus(stateDir);
    expect(status.daemon_state).toBe('active');
    expect(typeof status.last_upload_at).toBe('string');
    const stored = (await deviceDetails(server, deviceId)).postures.map((p) => p.check_key);
    expect(stored).toEqual(expect.arrayContaining(fakeResults('BEFORE_FULL', 4).map((r) => r.check_key)));
    await until(
      () => events('queue_write_failed_resolved').length,
      (n) => n === 1,
      60_000,
      'the held cycle stored',
    );
    expect(events('status_write_failed')).toHaveLength(statusFailures);
    expect((await stopDaemon(daemon)).code).toBe(0);
    expect(existsSync(lock)).toBe(false);
  });

  it('fills up while running: keeps heartbeating, holds the cycle it cannot store, drops nothing', async () => {
    await enrollNewDevice(server, stateDir, proxy.url);
    proxy.add({ route: 'postures', fault: { kind: 'answer', status: 503 } }); // keep results queued
    daemon = startDaemon(stateDir);
    await until(
      () => countQueuedResults(stateDir),
      (n) => n > 0,
      60_000,
      'a stored cycle',
    );
    await disk.fill();
    const queued = await countQueuedResults(stateDir);
    const t0 = Date.now();
    await until(
      () => events('queue_write_failed').length,
      (n) => n > 0,
      60_000,
      'a cycle that cannot be stored',
    );
    // Heartbeats go on while the cycle waits in memory.
    await until(
      () => proxy.seen('heartbeat').filter((r) => r.at >= t0 && r.status === 200).length,
      (n) => n >= 2,
      60_000,
      'two heartbeats on the full disk',
    );
    expect(events('queue_write_failed')).toHaveLength(1);
    expect(await countQueuedResults(stateDir)).toBe(queued); // nothing dropped, nothing lost
    expect(existsSync(join(stateDir, 'api-key'))).toBe(true);

    await disk.free();
    proxy.clearRules();
    await until(
      () => countQueuedResults(stateDir),
      (n) => n === 0,
      60_000,
      'everything delivered',
    );
    expect(events('queue_full')).toEqual([]);
  });

  it('after a 401 on a full disk: wipes the key, never sends it again, records why once space returns', async () => {
    const { deviceId } = await enrollNewDevice(server, stateDir, proxy.url);
    daemon = startDaemon(stateDir);
    await until(
      () => runtimeStatus(stateDir),
      (s) => s.daemon_state === 'active',
      60_000,
      'active',
    );
    await disk.fill();
    await server.revokeDevice(deviceId);
    await until(
      () => events('credentials_revoked').length,
      (n) => n > 0,
      60_000,
      'the 401',
    );
    const rejected = proxy.requests.findIndex((r) => r.status === 401);
    await sleep(2000);
    expect(proxy.requests.slice(rejected + 1)).toEqual([]);
    expect(existsSync(join(stateDir, 'api-key'))).toBe(false);
    expect(existsSync(join(stateDir, 'enrollment.json'))).toBe(false);
    expect(events('credentials_revoked')).toHaveLength(1);

    await disk.free();
    const status = await until(
      () => runtimeStatus(stateDir),
      (s) => typeof s.revoked_at === 'string',
      60_000,
      'the reason recorded',
    );
    expect(status).toMatchObject({ daemon_state: 'revoked', reason: expect.stringMatching(/401 on \/(heartbeat|postures)/) as unknown });
    expect(daemon.child.exitCode).toBeNull();
  });
});

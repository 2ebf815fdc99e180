// What the daemon tests run against: the real server, the fault proxy in front of it (for what a
// correct server does not do, and to count requests), and a fresh state directory for each test,
// with the daemons started on it stopped and the directory removed after the test.
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { enrollNewDevice, makeStateDir, removeStateDir, startDaemon, stopDaemon, type RunningDaemon } from './agent';
import { startFaultProxy, type FaultProxy } from './faultProxy';
import { startServer, type RunningServer } from './server';

export interface ServerBehindProxy {
  server: RunningServer;
  proxy: FaultProxy;
  /** Stops the proxy, then the server. */
  stop(): Promise<void>;
}

/** The real server (`serve` with `serverArgs`) and the fault proxy in front of it. */
export async function startServerBehindProxy(serverArgs: string[] = []): Promise<ServerBehindProxy> {
  const server = await startServer({ args: serverArgs });
  try {
    const proxy = await startFaultProxy(server.url);
    return {
      server,
      proxy,
      async stop() {
        await proxy.stop();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

export interface DaemonTestbed {
  /** The file's server and proxy (from its beforeAll on). */
  readonly server: RunningServer;
  readonly proxy: FaultProxy;
  /** This test's state directory: a path not yet created, in a temporary directory of its own. */
  readonly stateDir: string;
  /** A new device in an organization of its own, enrolled through the proxy into this test's state directory. */
  enrollNewDevice(): Promise<{ deviceId: string; org: string }>;
  /** `device-agent run` on this test's state directory (or `stateDir`); stopped after the test if still running. */
  startDaemon(env?: NodeJS.ProcessEnv, stateDir?: string): RunningDaemon;
}

/**
 * Registers the hooks of a daemon test file: the server and proxy for the file; for each test, the
 * proxy's rules and recorded requests cleared and a fresh state directory, its daemons stopped after.
 */
export function daemonTestbed(serverArgs: string[] = []): DaemonTestbed {
  let started: ServerBehindProxy | undefined;
  let stateDir: string | undefined;
  const daemons: RunningDaemon[] = [];
  const running = () => {
    if (started === undefined) throw new Error('the daemon testbed is used outside its tests');
    return started;
  };
  const currentStateDir = () => {
    if (stateDir === undefined) throw new Error('the daemon testbed is used outside its tests');
    return stateDir;
  };

  beforeAll(async () => {
    started = await startServerBehindProxy(serverArgs);
  });
  afterAll(() => started?.stop());
  beforeEach(async () => {
    running().proxy.clearRules();
    running().proxy.requests.length = 0;
    const dir = await makeStateDir();
    stateDir = dir;
    return async () => {
      for (const daemon of daemons.splice(0)) await stopDaemon(daemon);
      await removeStateDir(dir);
    };
  });

  return {
    get server() {
      return running().server;
    },
    get proxy() {
      return running().proxy;
    },
    get stateDir() {
      return currentStateDir();
    },
    enrollNewDevice() {
      return enrollNewDevice(running().server, currentStateDir(), running().proxy.url);
    },
    startDaemon(env = {}, dir = currentStateDir()) {
      const daemon = startDaemon(dir, env);
      daemons.push(daemon);
      return daemon;
    },
  };
}

// `device-agent run` after its first real posture cycle against the real server: what it loaded and
// what it keeps. The figures themselves (RSS, peak, heap beside an idle Node, on Node 20 and 24) are
// printed by `npm run bench:footprint`; this pins the causes: the modules the daemon does not load,
// and the V8 settings of src/agent/daemonMemory.ts (a young generation that does not grow, no
// optimizing compilation of undici's WebAssembly parser, which once doubled the peak).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostureCycle } from '../support/daemonWire';
import { startServer, type RunningServer } from '../support/server';
import { enrollNewDevice, makeStateDir, removeStateDir, startDaemon, stopDaemon, until } from '../support/agent';
import { bundleFilesLoaded, modulesOf } from '../support/bundleModules';

const MiB = 1024 * 1024;

let server: RunningServer;
let reports: string;
beforeAll(async () => {
  server = await startServer();
  reports = await mkdtemp(join(tmpdir(), 'daemon-footprint-'));
});
afterAll(async () => {
  await server?.stop();
  if (reports) await rm(reports, { recursive: true, force: true });
});

/** VmHWM (the peak resident set) of a live process, in bytes. */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

/** NODE_OPTIONS for a diagnostic report (javascriptHeap.heapSpaces) written on SIGUSR2 as `name`.json. */
const reportOptions = (name: string) =>
  `--report-on-signal --report-signal=SIGUSR2 --report-directory=${reports} --report-filename=${name}.json`;

async function heapSpaces(pid: number, name: string): Promise<Record<string, { memorySize: number }>> {
  process.kill(pid, 'SIGUSR2');
  const file = join(reports, `${name}.json`);
  const report = await until(
    () => (existsSync(file) ? readFileSync(file, 'utf8') : ''),
    (text) => text.endsWith('}\n') || text.endsWith('}'),
    60_000,
    `the diagnostic report ${name}`,
  );
  return (JSON.parse(report) as { javascriptHeap: { heapSpaces: Record<string, { memorySize: number }> } }).javascriptHeap.heapSpaces;
}

describe.skipIf(process.platform !== 'linux')('the daemon after its first posture cycle (Linux: /proc)', () => {
  it("loads this platform's checks and texts, undici's agents only, no server, no pretty printer; keeps a small young generation and peaks under twice an idle Node", async () => {
    const stateDir = await makeStateDir();
    const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
    try {
      await enrollNewDevice(server, stateDir, server.url);
      const daemon = startDaemon(stateDir, { NODE_DEBUG: 'module', NODE_OPTIONS: reportOptions('daemon') });
      let stderr = '';
      daemon.child.stderr!.on('data', (chunk: string) => (stderr += chunk));
      try {
        const cycle = await until(
          () => daemon.lines.find(isPostureCycle),
          (line) => line !== undefined,
          60_000,
          `a posture cycle; output: ${daemon.output().slice(-2000)}`,
        );
        expect(cycle!.outcome).toBe('delivered'); // the real cycle and upload happened
        // Every V8 setting is one this runtime knows (it would print "Error: unrecognized flag").
        expect(stderr).not.toMatch(/unrecognized flag/);

        const modules = modulesOf(bundleFilesLoaded(stderr));
        expect(modules).toContain('src/agent/daemon.ts');
        expect(modules).toContain('checks/linux/index.ts');
        expect(modules).toContain('checks/linux/remediation.ts');
        expect(modules).toContain('node_modules/undici/lib/dispatcher/agent.js');
        for (const unused of [
          'checks/darwin/index.ts',
          'checks/windows/index.ts',
          'checks/freebsd/index.ts',
          'checks/darwin/remediation.ts',
          'checks/windows/remediation.ts',
          'checks/freebsd/remediation.ts',
          'checks/remediationCatalogue.ts',
          'node_modules/undici/index.js',
          'node_modules/undici/lib/web/websocket/websocket.js',
          'node_modules/undici/lib/web/fetch/index.js',
          'node_modules/undici/lib/mock/mock-agent.js',
          'node_modules/undici/lib/cache/memory-cache-store.js',
          'node_modules/pino-pretty/index.js',
        ]) {
          expect(modules, unused).not.toContain(unused);
        }
        expect(modules.filter((module) => module.startsWith('src/server/'))).toEqual([]);

        // The young generation starts at 2 × 1 MiB; it used to grow to 8 or 16 MiB and stay.
        const spaces = await heapSpaces(daemon.pid, 'daemon');
        expect(spaces.new_space!.memorySize).toBeLessThanOrEqual(2 * MiB);
        // The bound on the peak (VmHWM covers start-up and the first cycle): twice an idle Node of
        // the same runtime. It was 2.6× while the WebAssembly parser was recompiled by the optimizing tier.
        expect(peakRss(daemon.pid) / peakRss(idle.pid!)).toBeLessThanOrEqual(2);
      } finally {
        await stopDaemon(daemon);
      }
    } finally {
      idle.kill('SIGKILL');
      await removeStateDir(stateDir);
    }
  });
});

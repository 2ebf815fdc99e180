// The agent's footprint, each figure beside a baseline measured in the same run:
//   - start-up wall time of CLI commands beside `node -e 0` (and the single executable when built);
//   - the daemon's resident memory and CPU while it heartbeats every second and runs the checks
//     every 5 s against the real reference server, beside an idle bare Node process.
// Linux only (reads /proc). Uses dist/: run `npm run build` first.
//   npx tsx scripts/bench/footprint.ts           BENCH_RUNS=20 BENCH_SECONDS=30 npx tsx …
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../test/support/server';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const AGENT = fileURLToPath(new URL('../../dist/device-agent.cjs', import.meta.url));
const SEA = fileURLToPath(new URL('../../dist/sea/linux-x64/device-agent', import.meta.url));
const CLOCK_TICKS = 100; // USER_HZ on Linux

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function startupMs(command: string, args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    spawnSync(command, args, { stdio: 'ignore' });
    times.push(performance.now() - t0);
  }
  return median(times);
}

function procStatus(pid: number): { rssKiB: number; hwmKiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

function cpuTicks(pid: number): number {
  // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function sample(child: ChildProcess, warmupMs: number): Promise<{ rssMiB: number; peakMiB: number; cpuPercent: number }> {
  await new Promise((r) => setTimeout(r, warmupMs));
  const pid = child.pid!;
  const ticks0 = cpuTicks(pid);
  const t0 = performance.now();
  const rss: number[] = [];
  for (let s = 0; s < SECONDS; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    rss.push(procStatus(pid).rssKiB);
  }
  const cpuSeconds = (cpuTicks(pid) - ticks0) / CLOCK_TICKS;
  const wallSeconds = (performance.now() - t0) / 1000;
  return { rssMiB: median(rss) / 1024, peakMiB: procStatus(pid).hwmKiB / 1024, cpuPercent: (100 * cpuSeconds) / wallSeconds };
}

const stateDir = mkdtempSync(join(tmpdir(), 'bench-footprint-'));
try {
  console.log(`Start-up (median of ${RUNS} runs, wall ms)`);
  const startup: Array<[string, number]> = [
    ['node -e 0  (baseline)', startupMs(process.execPath, ['-e', '0'])],
    ['device-agent --version', startupMs(process.execPath, [AGENT, '--version'])],
    ['device-agent status (not enrolled)', startupMs(process.execPath, [AGENT, 'status', '--state-dir', join(stateDir, 'none')])],
  ];
  if (existsSync(SEA)) startup.push(['single executable --version', startupMs(SEA, ['--version'])]);
  for (const [what, ms] of startup) console.log(`  ${what.padEnd(38)} ${ms.toFixed(1).padStart(7)} ms`);

  const server = await startServer({ args: ['--heartbeat-interval', '1', '--posture-interval', '5'] });
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  let daemon: ChildProcess | undefined;
  try {
    const device = await server.createDevice();
    const env = { ...process.env, DEVICE_AGENT_KEYSTORE: 'file', DEVICE_AGENT_LOG_LEVEL: 'warn' };
    const enrolled = spawnSync(process.execPath, [AGENT, 'enroll', '--server', server.url, '--token', '-', '--state-dir', stateDir], {
      input: device.enrollment_token,
      env,
    });
    if (enrolled.status !== 0) throw new Error(`enroll exited ${enrolled.status}: ${enrolled.stderr.toString()}`);
    daemon = spawn(process.execPath, [AGENT, 'run', '--state-dir', stateDir], { stdio: 'ignore', env });

    console.log(`\nResident memory and CPU over ${SECONDS} s (after 5 s warm-up)`);
    const [base, agent] = await Promise.all([sample(idle, 5000), sample(daemon, 5000)]);
    const row = (what: string, m: typeof base) =>
      console.log(
        `  ${what.padEnd(50)} RSS ${m.rssMiB.toFixed(1).padStart(6)} MiB  peak ${m.peakMiB.toFixed(1).padStart(6)} MiB  CPU ${m.cpuPercent.toFixed(2).padStart(5)} %`,
      );
    row('idle bare node (baseline)', base);
    row('device-agent run (heartbeat 1 s, checks every 5 s)', agent);
    const shown = await server.showDevice(device.device_id);
    console.log(`\n  device ${shown.state}, ${shown.postures?.length ?? 0} posture results stored during the run`);
  } finally {
    idle.kill();
    daemon?.kill('SIGTERM');
    await server.stop();
  }
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}

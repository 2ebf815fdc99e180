// `npm start`: the whole product on this machine in one command. Starts the reference server on an
// embedded SQLite database, creates a device, enrolls this machine's agent through the real CLI,
// runs the daemon with short intervals, and narrates what happens (read back from the server). It
// also opens a console account for the demo organization and prints the console's address.
// Everything lives in .device-agent-demo/; Ctrl-C stops both programs cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO_DIR = join(ROOT, '.device-agent-demo');
const DB = join(DEMO_DIR, 'server.db');
const STATE_DIR = join(DEMO_DIR, 'agent-state');
const SERVER_LOG = join(DEMO_DIR, 'server.log');
const AGENT_LOG = join(DEMO_DIR, 'agent.log');
const AGENT = join(ROOT, 'dist', 'device-agent.cjs');
const SERVER = join(ROOT, 'dist', 'device-agent-server.cjs');
const CONSOLE_EMAIL = 'admin@demo.local';
const HEARTBEAT_SECONDS = 10;
const POSTURE_SECONDS = 30;
const POLL_MS = 2000;

const rel = (path: string) => relative(process.cwd(), path) || '.';
const say = (text = '') => process.stdout.write(`${text}\n`);
const step = (label: string, text: string) => say(`  ${label.padEnd(20)} ${text}`);

const children: ChildProcess[] = [];
let stopping = false;

async function main(): Promise<void> {
  say('device-agent demo: reference server + agent on this machine\n');
  await build();
  await resetDemoDir();

  const server = await startServer();
  step('Reference server', `${server.url}  (SQLite database ${rel(DB)})`);

  const device = JSON.parse(
    await run(SERVER, ['device', 'create', '--db', DB, '--org', 'demo', '--name', hostname().slice(0, 60) || 'this-machine', '--json']),
  ) as { device_id: string; enrollment_token: string };
  step('Device created', `${device.device_id} in organization "demo" (state PENDING, one-time token issued)`);

  // A console account for this run: the password is new each time (the demo database is too) and
  // goes to the admin CLI on standard input, never on its command line.
  const password = randomBytes(12).toString('base64url');
  await run(SERVER, ['admin', 'add', '--db', DB, '--email', CONSOLE_EMAIL, '--org', 'demo'], `${password}\n`);
  step('Admin console', `${server.url}/console  (sign in as ${CONSOLE_EMAIL}, password ${password}: made for this run only)`);

  // The token goes through standard input: never on a command line, never printed.
  await run(AGENT, ['enroll', '--server', server.url, '--token', '-', '--state-dir', STATE_DIR], device.enrollment_token);
  const { keystore } = JSON.parse(await run(AGENT, ['status', '--json', '--state-dir', STATE_DIR])) as { keystore: string };
  const keyPlace = keystore === 'keyring' ? 'the OS secret store (keyring)' : `an owner-only file, ${rel(join(STATE_DIR, 'api-key'))}`;
  step('Agent enrolled', `API key kept in ${keyPlace}`);

  const agent = startAgent();
  step('Agent running', `pid ${agent.pid}: heartbeat every ${HEARTBEAT_SECONDS} s, posture checks every ${POSTURE_SECONDS} s`);
  say();
  say('  Where the data lives:');
  say(`    ${rel(DB).padEnd(40)} the server's devices and posture results`);
  say(`    ${(rel(STATE_DIR) + '/').padEnd(40)} the agent's enrollment, status.json and posture queue`);
  say(`    ${rel(SERVER_LOG).padEnd(40)} server log;  ${rel(AGENT_LOG)}: agent log (JSON lines)`);
  say('  Look around in another terminal:');
  say(`    node dist/device-agent.cjs status --state-dir ${rel(STATE_DIR)}`);
  say(`    node dist/device-agent-server.cjs device show ${device.device_id} --db ${rel(DB)}`);
  say('\n  Waiting for the first heartbeat… (Ctrl-C stops everything)\n');
  await narrate(device.device_id);
}

/** Follows the device on the server: activation, then each posture report as it arrives. */
async function narrate(deviceId: string): Promise<never> {
  let announcedActive = false;
  const seenReports = new Set<string>();
  let previousStatuses = '';
  for (;;) {
    const shown = JSON.parse(await run(SERVER, ['device', 'show', deviceId, '--db', DB, '--json'])) as DeviceView;
    if (!announcedActive && shown.state === 'ACTIVE') {
      announcedActive = true;
      step(
        'Heartbeat accepted',
        `device ${shown.state}: ${shown.hostname}, ${shown.platform}, ${shown.os_version} (agent ${shown.agent_version})`,
      );
    }
    for (const report of reports(shown.postures)) {
      if (seenReports.has(report.id)) continue;
      seenReports.add(report.id);
      const counts = countStatuses(report.results);
      const statuses = report.results.map((r) => `${r.check_key}=${r.status}`).join(',');
      step(`Posture report ${seenReports.size}`, `${time(report.receivedAt)}  ${report.results.length} results: ${counts}`);
      if (statuses !== previousStatuses) {
        for (const r of report.results) say(`      ${r.check_key.padEnd(20)} ${r.status.padEnd(15)} ${reasonOf(r)}`);
        previousStatuses = statuses;
      } else {
        say('      (same statuses as the previous report)');
      }
    }
    if (stopping) await new Promise(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

interface PostureView {
  correlation_id: string;
  check_key: string;
  status: string;
  evidence: Record<string, unknown> | null;
  received_at: string;
}
interface DeviceView {
  state: string;
  hostname: string | null;
  platform: string | null;
  os_version: string | null;
  agent_version: string | null;
  postures: PostureView[];
}

function reports(postures: PostureView[]): { id: string; receivedAt: string; results: PostureView[] }[] {
  const byId = new Map<string, PostureView[]>();
  for (const p of postures) byId.set(p.correlation_id, [...(byId.get(p.correlation_id) ?? []), p]);
  return [...byId.entries()]
    .map(([id, results]) => ({
      id,
      receivedAt: results
        .map((r) => r.received_at)
        .sort()
        .at(-1)!,
      results: results.sort((a, b) => a.check_key.localeCompare(b.check_key)),
    }))
    .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
}

function countStatuses(results: PostureView[]): string {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts.entries()].map(([status, n]) => `${n} ${status}`).join(', ');
}

/** The check's own short explanation (rule or reason), when it gives one. */
function reasonOf(result: PostureView): string {
  const evidence = result.evidence ?? {};
  const why = evidence.reason ?? evidence.rule;
  return typeof why === 'string' && why.length <= 60 ? `(${why})` : '';
}

const time = (iso: string) => new Date(iso).toLocaleTimeString();

async function build(): Promise<void> {
  await run(join(ROOT, 'scripts', 'build.mjs'), []);
}

/** A fresh start every time; a previous demo enrollment is unenrolled first so no key lingers in a keyring. */
async function resetDemoDir(): Promise<void> {
  if (existsSync(join(STATE_DIR, 'enrollment.json'))) {
    await run(AGENT, ['unenroll', '--state-dir', STATE_DIR]).catch(() => undefined);
  }
  await rm(DEMO_DIR, { recursive: true, force: true });
  await mkdir(DEMO_DIR, { recursive: true, mode: 0o700 });
  await chmod(DEMO_DIR, 0o700);
}

async function startServer(): Promise<{ url: string }> {
  const args = ['serve', '--db', DB, '--host', '127.0.0.1', '--port', '0'];
  args.push('--heartbeat-interval', String(HEARTBEAT_SECONDS), '--posture-interval', String(POSTURE_SECONDS));
  const child = spawnLogged(SERVER, args, SERVER_LOG);
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      for (let newline; (newline = pending.indexOf('\n')) !== -1;) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (typeof entry.url === 'string' && entry.msg?.startsWith('listening')) resolve({ url: entry.url });
        } catch {
          /* not a JSON line */
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with code ${code}; see ${rel(SERVER_LOG)}`)));
  });
}

function startAgent(): ChildProcess {
  const child = spawnLogged(AGENT, ['run', '--state-dir', STATE_DIR], AGENT_LOG);
  child.once('exit', (code, signal) => {
    if (!stopping) fail(`the agent stopped unexpectedly (${signal ?? `exit ${code}`}); see ${rel(AGENT_LOG)}`);
  });
  return child;
}

/** Spawns a program in its own process group (Ctrl-C reaches the demo, which stops it in order), logging to a file. */
function spawnLogged(program: string, args: string[], logFile: string): ChildProcess {
  const log = createWriteStream(logFile, { mode: 0o600 });
  const child = spawn(process.execPath, [program, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  children.push(child);
  return child;
}

/** Runs a program to completion and returns its standard output; rejects with its error message. */
function run(program: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Own process group too: a Ctrl-C must not cut a `device show` in half and look like a failure.
    const child = spawn(process.execPath, [program, ...args], { cwd: ROOT, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(stderr.trim() || `exit ${code}`))));
    child.stdin.end(input ?? '');
  });
}

/** SIGTERM to both programs, agent first (its last upload may need the server), then wait for them. */
async function stopAll(): Promise<number> {
  stopping = true;
  let worst = 0;
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
    child.kill('SIGTERM');
    worst = Math.max(worst, await exited);
  }
  return worst;
}

function fail(message: string): void {
  if (stopping) return;
  process.stderr.write(`\ndemo: ${message}\n`);
  void stopAll().then(() => process.exit(1));
}

// `on`, not `once`: tsx may relay the same Ctrl-C a second time, and an unhandled repeat would kill
// the demo before its children are stopped.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    say('\n  Stopping the agent and the server…');
    void stopAll().then((code) => {
      say(
        code === 0 ? `  Stopped cleanly. The data stays in ${rel(DEMO_DIR)}/ until the next \`npm start\`.` : '  Stopped (see the logs).',
      );
      process.exit(code === 0 ? 0 : 1);
    });
  });
}
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));

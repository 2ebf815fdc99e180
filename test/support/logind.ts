// A real systemd-logind for the tests that ask who is at the screen (test/agent/logindSeat.test.ts):
// this machine's logind binary on a real system bus of its own (dbus-daemon --system), in a private
// mount namespace whose /run/systemd and /run/dbus are fresh tmpfs, so nothing of this machine's /run
// is touched. Sessions are opened as a login opens them: by the real PAM module pam_systemd, through
// `runuser -l` (XDG_SEAT and XDG_VTNR name the seat and VT, as a display manager sets them).
// What is not real: the service manager. systemd is not PID 1 here, and logind asks it to start each
// session's scope and the user's units and waits for those jobs; a stand-in that owns
// org.freedesktop.systemd1 on that bus reports each job done, and a session's scope gone once logind
// abandons it at logout (real systemd: when its last process has exited). logind's files are read
// through /proc/<pid>/root, the namespace's view of them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { BusConnection } from '../../src/linkHandler/dbusWire';
import { until } from './agent';

const LOGIND = '/lib/systemd/systemd-logind';
const MANAGER = ['/org/freedesktop/systemd1', 'org.freedesktop.systemd1.Manager'] as const;

/** Why a real logind cannot run here, or null when it can. */
export function logindMissing(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (a mount namespace, PAM sessions of other users)';
  if (!existsSync(LOGIND)) return `${LOGIND} is not installed (apt-get install systemd)`;
  const pamSystemd = readdirSync('/lib').filter((dir) => existsSync(`/lib/${dir}/security/pam_systemd.so`));
  if (pamSystemd.length === 0) return 'pam_systemd is not installed (apt-get install libpam-systemd)';
  if (activeVt() === null) return 'no virtual terminal to tell the active one of (/sys/class/tty/tty0/active)';
  return null;
}

/** The VT the kernel shows (what logind reads to tell seat0's active session), e.g. 1 for tty1. */
function activeVt(): number | null {
  try {
    const match = /^tty(\d+)$/.exec(readFileSync('/sys/class/tty/tty0/active', 'utf8').trim());
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

interface LoginSession {
  /** logind's session id (XDG_SESSION_ID). */
  readonly id: string;
  /** Ends the login (runuser closes its PAM session) and waits until logind has removed the session. */
  logout(): Promise<void>;
}

export interface Logind {
  /** logind's record of seat0, as this process reads it. */
  readonly seatFile: string;
  /** A login of `user`: on seat0 at the active VT (at the screen), or without a seat (as over ssh). */
  login(user: string, where: 'seat0' | 'no seat'): Promise<LoginSession>;
  /** loginctl's answer, run in the namespace (it talks to this logind). */
  loginctl(args: readonly string[]): string;
  stop(): Promise<void>;
}

/** Decodes a systemd unit object path's last element (bus_label_escape: `_2d` is "-"). */
function unitName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/_([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The service manager's part, as much as logind needs of it. */
async function standInManager(address: string): Promise<BusConnection> {
  const bus = await BusConnection.open(address);
  const dbus = ['org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus'] as const;
  const [owned] = await bus.call(...dbus, 'RequestName', 'su', ['org.freedesktop.systemd1', 4]);
  if (owned !== 1) throw new Error('org.freedesktop.systemd1 is taken on the test bus');
  const gone = new Set<string>();
  let jobs = 0;
  bus.handleCalls((call) => {
    if (call.member === 'StartUnit' || call.member === 'StartTransientUnit' || call.member === 'StopUnit') {
      const job = `/org/freedesktop/systemd1/job/${++jobs}`;
      bus.reply(call, 'o', [job]);
      bus.emit(...MANAGER, 'JobRemoved', 'uoss', [jobs, job, call.body[0] as string, 'done']);
      return;
    }
    if (call.member === 'Subscribe') return bus.reply(call);
    if (call.member === 'Abandon' && call.path) {
      gone.add(call.path);
      bus.reply(call);
      bus.emit(...MANAGER, 'UnitRemoved', 'so', [unitName(call.path), call.path]);
      return;
    }
    if (call.member === 'Get' && call.body[1] === 'ActiveState')
      return bus.reply(call, 'v', [{ signature: 's', value: gone.has(call.path ?? '') ? 'inactive' : 'active' }]);
    bus.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', 'not part of the stand-in');
  });
  return bus;
}

/** Starts the namespace, its bus, the stand-in and logind; resolves once logind has written seat0. */
export async function startLogind(): Promise<Logind> {
  const missing = logindMissing();
  if (missing !== null) throw new Error(missing);
  /** What stop() ends, last started first. */
  const started: Array<() => Promise<void>> = [];
  const track = (child: ChildProcess) =>
    started.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    });
  const setup = [
    'mount -t tmpfs -o mode=0755 tmpfs /run/systemd',
    // What sd_booted() looks for: loginctl asks logind only on a system it thinks systemd booted.
    'mkdir /run/systemd/system',
    'mkdir -p /run/dbus',
    'mount -t tmpfs -o mode=0755 tmpfs /run/dbus',
    'exec dbus-daemon --system --nofork --nopidfile --print-address=1',
  ].join('\n');
  const holder = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-ec', setup], { stdio: ['ignore', 'pipe', 'ignore'] });
  track(holder);
  const stop = async () => {
    for (const end of started.splice(0).reverse()) await end();
  };
  try {
    const first = await createInterface({ input: holder.stdout })[Symbol.asyncIterator]().next();
    if (first.done) throw new Error('the test system bus did not start');
    const root = `/proc/${holder.pid}/root`;
    const manager = await standInManager(`unix:path=${root}/run/dbus/system_bus_socket`);
    started.push(() => manager.close());
    const inNamespace = (command: readonly string[]) => ['-t', String(holder.pid), '-m', ...command];
    const logind = spawn('nsenter', inNamespace([LOGIND]), { stdio: 'ignore' });
    track(logind);
    const seatFile = `${root}/run/systemd/seats/seat0`;
    await until(() => existsSync(seatFile), Boolean, 30_000, 'logind wrote seat0');
    return {
      seatFile,
      loginctl: (args) => {
        const run = spawnSync('nsenter', inNamespace(['loginctl', '--no-pager', ...args]), { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`loginctl ${args.join(' ')}: ${run.stderr}`);
        return run.stdout;
      },
      login: async (user, where) => {
        const seat = where === 'seat0' ? ['XDG_SEAT=seat0', `XDG_VTNR=${activeVt()}`] : [];
        const environment = ['env', ...seat, 'XDG_SESSION_TYPE=tty', 'XDG_SESSION_CLASS=user'];
        const login = spawn(
          'nsenter',
          inNamespace([...environment, 'runuser', '-l', user, '-s', '/bin/sh', '-c', 'echo "session $XDG_SESSION_ID"; exec sleep 3600']),
          { stdio: ['ignore', 'pipe', 'ignore'] },
        );
        track(login);
        const line = await createInterface({ input: login.stdout })[Symbol.asyncIterator]().next();
        const id = /^session (\S+)$/.exec(line.done ? '' : line.value)?.[1];
        if (id === undefined) throw new Error(`pam_systemd opened no session for ${user}`);
        return {
          id,
          logout: async () => {
            const exited = new Promise((resolve) => login.once('exit', resolve));
            login.kill('SIGTERM');
            await exited;
            await until(
              () => existsSync(`${root}/run/systemd/sessions/${id}`),
              (left) => !left,
              30_000,
              `session ${id} removed`,
            );
          },
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// The link handler's D-Bus client (src/linkHandler/dbusWire.ts) against a real dbus-daemon, with
// dbus-send and busctl as the other party: the sessions of test/support/dbusWireSessions.ts (the
// bus's own methods answering strings, integers, arrays, dictionaries, variants and errors; a
// service called with every basic type, replying, refusing, signalling) run live through a recording
// proxy; DEVICE_AGENT_RECORD=1 saves them to test/fixtures/dbus/sessions.json, which
// dbusWireBytes.test.ts (the mutation run's) replays without a bus.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTools } from '../support/requireTools';
import { BusConnection } from '../../src/linkHandler/dbusWire';
import { tempDir } from '../support/agent';
import { RECORDING, recordingProxy, saveRecordings } from '../support/dbusTranscript';
import { BUS, clientSession, expectClientSession, expectServiceSession, serviceSession, type Peer } from '../support/dbusWireSessions';

const onBus = requireTools(['dbus-daemon', 'dbus-send', 'busctl'], 'the D-Bus client on a real bus');

/** A tool's standard output; rejects when it fails. */
function ran(tool: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)));
  });
}

/** A session bus of its own on a socket at `address`. */
async function startBus(address: string): Promise<{ daemon: ChildProcess; address: string }> {
  const daemon = spawn('dbus-daemon', ['--session', '--nofork', `--address=${address}`, '--print-address=1'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const first = await createInterface({ input: daemon.stdout })[Symbol.asyncIterator]().next();
  return { daemon, address: first.done ? '' : first.value };
}

describe.skipIf(onBus.skip)(onBus.title, () => {
  let daemon: ChildProcess;
  let address: string;
  beforeAll(async () => {
    ({ daemon, address } = await startBus(`unix:path=${tempDir()}/bus`));
  });
  afterAll(() => {
    daemon?.kill();
  });

  it('takes the first unix socket path of an address list, escapes decoded; refuses an address without one', async () => {
    const path = address.slice('unix:path='.length, address.indexOf(','));
    const escaped = path.replace(/-/g, '%2d');
    const bus = await BusConnection.open(`tcp:host=127.0.0.1,port=1;unix:abstract=elsewhere;unix:guid=0,path=${escaped}`);
    expect((await bus.call(...BUS, 'GetId'))[0]).toMatch(/^[0-9a-f]{32}$/);
    await bus.close();
    for (const refused of ['tcp:host=127.0.0.1,port=1', 'unix:abstract=device-agent-test']) {
      await expect(BusConnection.open(refused)).rejects.toThrow('no unix socket path in the bus address');
    }
  });

  it('the recorded sessions, live through the recording proxy: the same reads (DEVICE_AGENT_RECORD=1 saves them)', async () => {
    const proxy = await recordingProxy(address.slice('unix:path='.length, address.indexOf(',')));
    try {
      const seen = (member: string) =>
        proxy.sessions.at(-1)!.some((chunk) => chunk.from === 'bus' && Buffer.from(chunk.hex, 'hex').includes(Buffer.from(member)));
      const peer: Peer = {
        run: (tool, args) => ran(tool, args),
        delivered: async (member) => {
          for (let i = 0; i < 200 && !seen(member); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
          expect(seen(member), `the bus passed on ${member}`).toBe(true);
        },
      };
      expectClientSession(await clientSession(proxy.address), process.getuid!());
      const service = await serviceSession(proxy.address, address, peer);
      expectServiceSession(service);
      expect(
        service
          .printed!.split('\n')
          .slice(1)
          .map((line) => line.trim().replace(/\s+/g, ' '))
          .filter(Boolean),
      ).toEqual([
        'byte 7',
        'object path "/org/example/Reply"',
        'signature "a{sv}"',
        'boolean true',
        `string "${'x'.repeat(300)}"`,
        'array [',
        'variant uint32 4000000000',
        ']',
      ]);
      expect(String(service.refused)).toContain('org.example.Error.Refused: no, because');
      const [client, service_] = proxy.sessions;
      const sessions = { client: client!, service: service_! };
      if (RECORDING) {
        const daemon = execFileSync('dbus-daemon', ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
        saveRecordings({
          source: `${daemon} and dbus-send, through the recording proxy of test/agent/dbusWire.test.ts (DEVICE_AGENT_RECORD=1), on ${process.platform} ${process.arch}, ${new Date().toISOString().slice(0, 10)}`,
          sessions,
        });
      }
    } finally {
      await proxy.close();
    }
  });
});

// The link handler's D-Bus client (src/linkHandler/dbusWire.ts) against a real dbus-daemon: the
// bus's own methods answer with strings, integers, arrays, dictionaries and variants; another
// connection calls a name this one claimed, and gets its replies and errors. The recorded sessions
// replayed without a bus (dbusWireBytes.test.ts, the mutation run's) are run here live through a
// recording proxy; DEVICE_AGENT_RECORD=1 saves them anew.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTools } from '../support/requireTools';
import { BusConnection, type Message, type Variant } from '../../src/linkHandler/dbusWire';
import { tempDir } from '../support/agent';
import { RECORDING, recordingProxy, saveRecordings } from '../support/dbusTranscript';
import { clientSession, expectClientSession, expectServiceSession, serviceSession, type Peer } from '../support/dbusWireSessions';

const onBus = requireTools(['dbus-daemon', 'dbus-send', 'busctl'], 'the D-Bus client on a real bus');
const BUS = ['org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus'] as const;

/** dbus-send's standard output; rejects when it fails. */
const sent = (args: string[]) => ran('dbus-send', args);

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

  it('says Hello and reads the bus’s replies: strings, arrays, a dictionary of variants', async () => {
    const bus = await BusConnection.open(address);
    try {
      const [id] = await bus.call(...BUS, 'GetId');
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      const [names] = (await bus.call(...BUS, 'ListNames')) as [string[]];
      expect(names).toContain('org.freedesktop.DBus');
      const unique = names.filter((name) => name.startsWith(':'));
      expect(unique.length).toBeGreaterThan(0);
      const [credentials] = (await bus.call(...BUS, 'GetConnectionCredentials', 's', [unique.at(-1)!])) as [Array<[string, Variant]>];
      const byKey = Object.fromEntries(credentials);
      expect(byKey.UnixUserID).toEqual({ signature: 'u', value: process.getuid!() });
      expect(byKey.ProcessID).toEqual({ signature: 'u', value: process.pid });
      const [hasOwner] = await bus.call(...BUS, 'NameHasOwner', 's', ['org.example.Nobody']);
      expect(hasOwner).toBe(false);
    } finally {
      await bus.close();
    }
  });

  it('an error reply rejects the call with its name and message', async () => {
    const bus = await BusConnection.open(address);
    try {
      await expect(bus.call(...BUS, 'GetNameOwner', 's', ['org.example.Nobody'])).rejects.toMatchObject({
        errorName: 'org.freedesktop.DBus.Error.NameHasNoOwner',
        message: expect.stringMatching(/^org\.freedesktop\.DBus\.Error\.NameHasNoOwner: .*org\.example\.Nobody/) as unknown,
      });
    } finally {
      await bus.close();
    }
  });

  it('answers calls to a name it claimed, including those that came before it was ready; long replies too', async () => {
    const server = await BusConnection.open(address);
    const client = await BusConnection.open(address);
    try {
      const [owner] = await server.call(...BUS, 'RequestName', 'su', ['org.example.Echo', 4]);
      expect(owner).toBe(1);
      // Sent before the server handles calls: kept and answered once it does.
      const early = client.call('org.example.Echo', '/org/example/Echo', 'org.example.Echo', 'Echo', 'sas', ['early', ['a', 'b']]);
      // Round trips in order: the bus has routed the call (the client's), and the server has read it (its own).
      await client.call(...BUS, 'GetId');
      await server.call(...BUS, 'GetId');
      const received: Message[] = [];
      server.handleCalls((call) => {
        received.push(call);
        if (call.member === 'Fail') return server.replyError(call, 'org.example.Error.Refused', 'no, because');
        // A reply longer than the writer's first buffer, with a nested variant and a boolean.
        const long = 'x'.repeat(1000);
        server.reply(call, 'sa{sv}b', [long, [['echo', { signature: 'as', value: call.body[1]! }]], true]);
      });
      const [text, dict, flag] = await early;
      expect(text).toBe('x'.repeat(1000));
      expect(dict).toEqual([['echo', { signature: 'as', value: ['a', 'b'] }]]);
      expect(flag).toBe(true);
      await expect(client.call('org.example.Echo', '/org/example/Echo', 'org.example.Echo', 'Fail')).rejects.toMatchObject({
        errorName: 'org.example.Error.Refused',
        message: 'org.example.Error.Refused: no, because',
      });
      expect(received.map((call) => [call.path, call.interface, call.member, call.signature])).toEqual([
        ['/org/example/Echo', 'org.example.Echo', 'Echo', 'sas'],
        ['/org/example/Echo', 'org.example.Echo', 'Fail', ''],
      ]);
      expect(received[0]!.body).toEqual(['early', ['a', 'b']]);
      expect(received[0]!.sender).toMatch(/^:1\.\d+$/);
    } finally {
      await Promise.all([server.close(), client.close()]);
    }
  });

  it('reads every basic type, arrays, a dictionary and a variant as dbus-send writes them; its replies dbus-send reads', async () => {
    const server = await BusConnection.open(address);
    try {
      const [owner] = await server.call(...BUS, 'RequestName', 'su', ['org.example.Types', 4]);
      expect(owner).toBe(1);
      const received: Message[] = [];
      server.handleCalls((call) => {
        received.push(call);
        server.reply(call, 'yogbsav', [7, '/org/example/Reply', 'a{sv}', true, 'ok', [{ signature: 'u', value: 4_000_000_000 }]]);
      });
      const printed = await sent([
        `--bus=${address}`,
        '--print-reply',
        '--dest=org.example.Types',
        '/org/example/Types',
        'org.example.Types.All',
        'byte:200',
        'boolean:true',
        'int16:-12345',
        'uint16:54321',
        'int32:-123456789',
        'uint32:4000000000',
        'int64:-9007199254740993',
        'uint64:18446744073709551615',
        'double:-1.5',
        'string:text',
        'objpath:/org/example/Path',
        'array:int32:1,-2',
        'dict:string:int64:k,-5',
        'variant:uint16:7',
      ]);
      expect(received.map((call) => [call.member, call.signature])).toEqual([['All', 'ybnqiuxtdsoaia{sx}v']]);
      expect(received[0]!.body).toEqual([
        200,
        true,
        -12345,
        54321,
        -123456789,
        4_000_000_000,
        -9007199254740993n,
        18446744073709551615n,
        -1.5,
        'text',
        '/org/example/Path',
        [1, -2],
        [['k', -5n]],
        { signature: 'q', value: 7 },
      ]);
      expect(
        printed
          .split('\n')
          .slice(1)
          .map((line) => line.trim().replace(/\s+/g, ' '))
          .filter(Boolean),
      ).toEqual([
        'byte 7',
        'object path "/org/example/Reply"',
        'signature "a{sv}"',
        'boolean true',
        'string "ok"',
        'array [',
        'variant uint32 4000000000',
        ']',
      ]);
    } finally {
      await server.close();
    }
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

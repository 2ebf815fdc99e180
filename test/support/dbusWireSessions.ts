// What the D-Bus client (src/linkHandler/dbusWire.ts) does in the recorded sessions: run against a
// real dbus-daemon through the recording proxy (test/agent/dbusWire.test.ts), and against the
// replayed recording (test/agent/dbusWireBytes.test.ts). Each returns what the client read, for the
// tests to check; the other party (dbus-send, live only) is behind `Peer`.
import { expect } from 'vitest';
import { BusConnection, type Message, type Variant, type WireValue } from '../../src/linkHandler/dbusWire';

export const BUS = ['org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus'] as const;

export interface Peer {
  /** Live: runs dbus-send or busctl with these arguments (on the bus itself, not recorded). Replayed: nothing (its messages are in the recording). */
  run(tool: 'dbus-send' | 'busctl', args: string[]): Promise<string | undefined>;
  /** Live: resolves once the bus has passed this client a message naming `member`. Replayed: at once. */
  delivered(member: string): Promise<void>;
}

/** The bus's own methods: Hello, replies of several types, an error reply; then the connection ends. */
export async function clientSession(address: string) {
  const bus = await BusConnection.open(address);
  const [id] = await bus.call(...BUS, 'GetId');
  const [names] = await bus.call(...BUS, 'ListNames');
  const [credentials] = await bus.call(...BUS, 'GetConnectionCredentials', 's', ['org.freedesktop.DBus']);
  const [hasOwner] = await bus.call(...BUS, 'NameHasOwner', 's', ['org.example.Nobody']);
  const refused = await bus.call(...BUS, 'GetNameOwner', 's', ['org.example.Nobody']).then(
    () => undefined,
    (err: unknown) => err,
  );
  await bus.close();
  return { id, names, credentials, hasOwner, refused };
}

export const ALL_TYPES_ARGS = [
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
];

/**
 * A service: claims a name and subscribes to signals; dbus-send calls it with every basic type
 * (before it handles calls: kept until it does), busctl once without wanting a reply, dbus-send once
 * to be refused, and sends a signal; the service replies (but to the call wanting none), refuses,
 * emits a signal of its own and ends.
 */
export async function serviceSession(address: string, busAddress: string, peer: Peer) {
  const server = await BusConnection.open(address);
  const [owner] = await server.call(...BUS, 'RequestName', 'su', ['org.example.Types', 4]);
  // Before AddMatch: a signal may follow its reply closely (in the same read, when replayed).
  const signals: Message[] = [];
  server.onSignal((signal) => signals.push(signal));
  await server.call(...BUS, 'AddMatch', 's', ["type='signal',interface='org.example.Signals'"]);
  const send = (args: string[]) => peer.run('dbus-send', [`--bus=${busAddress}`, ...args]);
  const typed = send(['--print-reply', '--dest=org.example.Types', '/org/example/Types', 'org.example.Types.All', ...ALL_TYPES_ARGS]);
  await peer.delivered('All');
  // busctl: dbus-send cannot ask for no reply.
  const quiet = ['call', 'org.example.Types', '/org/example/Types', 'org.example.Types', 'Quiet', 's', 'no reply', '--expect-reply=no'];
  await peer.run('busctl', [`--address=${busAddress}`, ...quiet]);
  await peer.delivered('Quiet');
  const refused = send(['--print-reply', '--dest=org.example.Types', '/org/example/Types', 'org.example.Types.Fail']).catch(
    (err: unknown) => err,
  );
  await peer.delivered('Fail');
  await send(['--type=signal', '/org/example/Signals', 'org.example.Signals.Changed', 'string:now']);
  await peer.delivered('Changed');
  // A round trip after them: every call above has been read (and kept, no handler yet).
  await server.call(...BUS, 'GetId');
  const calls: Message[] = [];
  server.handleCalls((call) => {
    calls.push(call);
    if (call.member === 'Fail') return server.replyError(call, 'org.example.Error.Refused', 'no, because');
    const reply: WireValue[] = [7, '/org/example/Reply', 'a{sv}', true, 'x'.repeat(300), [{ signature: 'u', value: 4_000_000_000 }]];
    server.reply(call, 'yogbsav', reply);
  });
  server.emit('/org/example/Types', 'org.example.Types', 'Done', 'si', ['bye', -1]);
  // Its replies and its signal are sent before this round trip's call.
  await server.call(...BUS, 'GetId');
  await server.close();
  return { owner, calls, signals, printed: await typed, refused: await refused };
}

/** What clientSession read, live or replayed. */
export function expectClientSession(read: Awaited<ReturnType<typeof clientSession>>, uid: number): void {
  expect(read.id).toMatch(/^[0-9a-f]{32}$/);
  expect(read.names).toEqual(expect.arrayContaining(['org.freedesktop.DBus', expect.stringMatching(/^:1\.\d+$/)]));
  const credentials = Object.fromEntries(read.credentials as Array<[string, Variant]>);
  expect(credentials.UnixUserID).toEqual({ signature: 'u', value: uid });
  expect(credentials.ProcessID).toEqual({ signature: 'u', value: expect.any(Number) as unknown });
  expect(read.hasOwner).toBe(false);
  expect(read.refused).toMatchObject({
    errorName: 'org.freedesktop.DBus.Error.NameHasNoOwner',
    message: expect.stringMatching(/^org\.freedesktop\.DBus\.Error\.NameHasNoOwner: .*org\.example\.Nobody/) as unknown,
  });
}

/** What serviceSession read, live or replayed. */
export function expectServiceSession(read: Awaited<ReturnType<typeof serviceSession>>): void {
  expect(read.owner).toBe(1);
  expect(read.calls.map((call) => [call.path, call.interface, call.member, call.signature])).toEqual([
    ['/org/example/Types', 'org.example.Types', 'All', 'ybnqiuxtdsoaia{sx}v'],
    ['/org/example/Types', 'org.example.Types', 'Quiet', 's'],
    ['/org/example/Types', 'org.example.Types', 'Fail', ''],
  ]);
  expect(read.calls[0]!.body).toEqual([
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
  expect(read.calls[1]!.body).toEqual(['no reply']);
  expect(read.calls.map((call) => call.flags & 1)).toEqual([0, 1, 0]);
  for (const call of read.calls) {
    expect(call.sender).toMatch(/^:1\.\d+$/);
    expect(call.destination).toBe('org.example.Types');
  }
  expect(read.signals.map((signal) => [signal.path, signal.interface, signal.member, signal.signature, signal.body])).toEqual([
    ['/org/example/Signals', 'org.example.Signals', 'Changed', 's', ['now']],
  ]);
}

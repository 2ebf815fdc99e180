// The link handler's D-Bus client (src/linkHandler/dbusWire.ts) on recorded bytes, no bus needed:
// the sessions test/agent/dbusWire.test.ts recorded between this client and a real dbus-daemon
// (with dbus-send and busctl as the other party; test/fixtures/dbus/sessions.json names the
// versions) are replayed to it. It must write what it wrote then, byte for byte, and read what
// the daemon sent as it did live. Malformed input is a recorded message with one thing broken.
import { describe, expect, it } from 'vitest';
import { BusConnection, decodeMessage, encodeMessage, messageLength, type Message } from '../../src/linkHandler/dbusWire';
import { busBytes, loadRecordings, replayingBus, type Chunk } from '../support/dbusTranscript';
import { BUS, clientSession, expectClientSession, expectServiceSession, serviceSession, type Peer } from '../support/dbusWireSessions';

// Read at collection: only the recording's JSON. Everything that runs dbusWire.ts runs inside a
// test, where Stryker's per-test coverage sees it (code run while collecting is not attributed).
const { sessions } = loadRecordings();
/**
 * A replay takes a few ms. A client that stops short (a mutant that never writes, or misreads a
 * reply's serial) would otherwise wait out the 2-minute default: the bound fails it in 15 s instead.
 */
const REPLAY = { timeout: 15_000 };
/** The replayed bus is the other party: nothing to run. */
const REPLAYED: Peer = { run: () => Promise.resolve(undefined), delivered: () => Promise.resolve() };
/** The recording ran as root: the daemon's credentials name uid 0. */
const RECORDED_UID = 0;

/** The whole messages in `bytes`, split as the client splits what it receives. */
function messages(bytes: Buffer): Buffer[] {
  const found: Buffer[] = [];
  for (let rest = bytes; rest.length > 0;) {
    const length = messageLength(rest)!;
    found.push(rest.subarray(0, length));
    rest = rest.subarray(length);
  }
  return found;
}

/** The bytes after SASL (the client's AUTH and BEGIN lines, the bus's OK line). */
function afterAuth(bytes: Buffer, from: Chunk['from']): Buffer {
  const marker = from === 'client' ? 'BEGIN\r\n' : '\r\n';
  return bytes.subarray(bytes.indexOf(marker) + marker.length);
}

async function replay<T>(session: Chunk[], run: (address: string) => Promise<T>) {
  const bus = await replayingBus(session);
  try {
    const read = await run(bus.address);
    return { read, ...bus.result() };
  } finally {
    await bus.close();
  }
}

describe('the recorded sessions, replayed', REPLAY, () => {
  it('the bus’s methods: the client writes what it wrote live and reads strings, arrays, variants, an error', async () => {
    const { read, mismatch, received } = await replay(sessions.client!, clientSession);
    expect(mismatch).toBeUndefined();
    expect(received).toEqual(busBytes(sessions.client!, 'client').subarray(0, received.length));
    expect(received.length).toBe(busBytes(sessions.client!, 'client').length);
    expectClientSession(read, RECORDED_UID);
  });

  it('a service: calls kept until handled, every basic type read, replies (none where none is wanted), an error, signals both ways', async () => {
    const { read, mismatch, received } = await replay(sessions.service!, (address) =>
      serviceSession(address, 'unix:path=/nowhere', REPLAYED),
    );
    expect(mismatch).toBeUndefined();
    expect(received.length).toBe(busBytes(sessions.service!, 'client').length);
    expectServiceSession(read);
  });

  it('the address may list other transports first and escape its path', async () => {
    const bus = await replayingBus(sessions.client!);
    try {
      const escaped = bus.address.replace('unix:path=', '').replace(/\//g, '%2f');
      const connection = await BusConnection.open(`tcp:host=127.0.0.1,port=1;unix:abstract=elsewhere;unix:guid=0,path=${escaped}`);
      expect((await connection.call(...BUS, 'GetId'))[0]).toMatch(/^[0-9a-f]{32}$/);
      await connection.close();
    } finally {
      await bus.close();
    }
    for (const refused of ['tcp:host=127.0.0.1,port=1', 'unix:abstract=device-agent-test', 'nonsense']) {
      await expect(BusConnection.open(refused)).rejects.toThrow('no unix socket path in the bus address');
    }
  });
});

describe('messages', () => {
  const sent = (from: Chunk['from']) =>
    [sessions.client!, sessions.service!].flatMap((session) => messages(afterAuth(busBytes(session, from), from)));

  it('what the client wrote decodes and encodes back to the same bytes', () => {
    const written = sent('client');
    // Hello and 5 calls; Hello, 2 calls, 2 replies (none to the call wanting none), a signal, a call.
    expect(written.length).toBe(14);
    for (const bytes of written) expect(encodeMessage(decodeMessage(bytes))).toEqual(bytes);
  });

  it('what the daemon wrote (libdbus) decodes, header fields and all', () => {
    const read = sent('bus');
    const decoded = read.map(decodeMessage);
    // Replies (2), errors (3), signals (4: NameAcquired, the peer's) and the peer's method calls (1).
    expect(new Set(decoded.map((message) => message.type))).toEqual(new Set([1, 2, 3, 4]));
    expect(decoded.find((message) => message.type === 3)).toMatchObject({
      errorName: 'org.freedesktop.DBus.Error.NameHasNoOwner',
      replySerial: 6,
      signature: 's',
      sender: 'org.freedesktop.DBus',
      destination: expect.stringMatching(/^:1\.\d+$/) as unknown,
    });
    expect(decoded.find((message) => message.member === 'NameAcquired')).toMatchObject({
      type: 4,
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      sender: 'org.freedesktop.DBus',
      signature: 's',
    });
  });

  it('the length of a message is known from its first 16 bytes, not before', () => {
    const message = sent('client')[0]!;
    expect(messageLength(message.subarray(0, 15))).toBeUndefined();
    expect(messageLength(message.subarray(0, 16))).toBe(message.length);
  });
});

describe('malformed input: a recorded message with one thing broken', REPLAY, () => {
  /** The client's Hello as recorded: its first 128 bytes after BEGIN. */
  const hello = () => Buffer.from(afterAuth(busBytes(sessions.client!, 'client'), 'client').subarray(0, 128));
  const broken = (edit: (bytes: Buffer) => void) => {
    const copy = hello();
    edit(copy);
    return copy;
  };

  it.each<[string, (bytes: Buffer) => void, string]>([
    ['not l or B first', (b) => (b[0] = 0x78), 'not a D-Bus message'],
    ['protocol version 2', (b) => (b[3] = 2), 'protocol version 2'],
    ['a body over 128 MiB', (b) => b.writeUInt32LE(128 * 1024 * 1024, 4), 'message too long'],
  ])('%s: refused from its fixed header', (_label, edit, message) => {
    expect(() => messageLength(broken(edit))).toThrow(message);
  });

  it.each<[string, (bytes: Buffer) => Buffer, string]>([
    ['cut short', (b) => b.subarray(0, b.length - 1), 'message ends inside a value'],
    [
      'a string not NUL-terminated',
      (b) => Buffer.from(b.toString('latin1').replace('/org/freedesktop/DBus\0', '/org/freedesktop/DBusX'), 'latin1'),
      'string not terminated',
    ],
    ['a header array over 64 MiB', (b) => (b.writeUInt32LE(64 * 1024 * 1024 + 1, 12), b), 'array too long'],
    ['a header array longer than the message', (b) => (b.writeUInt32LE(b.length, 12), b), 'message ends inside an array'],
    ['a body length that does not match', (b) => Buffer.concat([b, Buffer.alloc(8)]), 'body length mismatch'],
    [
      'a body longer than its signature',
      (b) => (b.writeUInt32LE(8, 4), Buffer.concat([b, Buffer.alloc(8)])),
      'body longer than its signature',
    ],
  ])('%s: refused', (_label, edit, message) => {
    expect(() => decodeMessage(edit(hello()))).toThrow(message);
  });

  it.each([
    ['h', 'unsupported signature h'],
    ['(ii', 'unterminated signature (ii'],
    [`${'a'.repeat(70)}i`, 'signature nested too deeply'],
    ['x', 'cannot write type x'],
  ])('signature %s: refused when encoding', (signature, message) => {
    const call: Message = { type: 1, flags: 0, serial: 1, path: '/', member: 'M', signature, body: [1] };
    expect(() => encodeMessage(call)).toThrow(message);
  });

  it('a broken message from the bus ends the connection: pending calls fail with the reason', async () => {
    // AUTH, OK, BEGIN and Hello, then Hello's reply (and NameAcquired) with its first byte broken.
    const session = sessions.client!.slice(0, 4);
    const reply = session[3]!;
    expect(reply.from).toBe('bus');
    session[3] = { from: 'bus', hex: `78${reply.hex.slice(2)}` };
    const { read } = await replay(session, (address) => BusConnection.open(address).catch((err: unknown) => err));
    expect(String(read)).toContain('not a D-Bus message');
  });

  it.each<[string, Chunk[], string]>([
    [
      'REJECTED',
      [{ from: 'bus', hex: Buffer.from('REJECTED EXTERNAL\r\n').toString('hex') }],
      'the bus refused the authentication (REJECTED)',
    ],
    ['nothing', [], 'the bus closed the connection during authentication'],
  ])('authentication answered %s: refused', async (_label, answer, message) => {
    const session: Chunk[] = [sessions.client![0]!, ...answer];
    const bus = await replayingBus(session);
    try {
      await expect(BusConnection.open(bus.address)).rejects.toThrow(message);
    } finally {
      await bus.close();
    }
  });
});

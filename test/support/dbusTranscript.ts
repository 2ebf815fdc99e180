// Byte-level recordings of D-Bus sessions, for the link handler's D-Bus client
// (src/linkHandler/dbusWire.ts): a proxy between a client and a real dbus-daemon records every chunk
// each side wrote (test/agent/dbusWire.test.ts, with DEVICE_AGENT_RECORD=1), and a replaying bus
// answers a client with the daemon's recorded chunks once the client has written, byte for byte,
// what it wrote when recorded (test/agent/dbusWireBytes.test.ts): no bus is needed to replay.
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './agent';

export interface Chunk {
  /** Who wrote it: the client under test, or the bus (dbus-daemon). */
  from: 'client' | 'bus';
  hex: string;
}

export interface Recordings {
  /** Where and with what the sessions were recorded. */
  source: string;
  sessions: Record<string, Chunk[]>;
}

export const RECORDINGS_FILE = join(__dirname, '..', 'fixtures', 'dbus', 'sessions.json');

export const RECORDING = process.env.DEVICE_AGENT_RECORD === '1';

export function loadRecordings(): Recordings {
  return JSON.parse(readFileSync(RECORDINGS_FILE, 'utf8')) as Recordings;
}

export function saveRecordings(recordings: Recordings): void {
  writeFileSync(RECORDINGS_FILE, `${JSON.stringify(recordings, null, 2)}\n`);
}

/** The whole messages the bus wrote in a session (its chunks joined, split by the messages' lengths). */
export function busBytes(session: Chunk[], from: Chunk['from'] = 'bus'): Buffer {
  return Buffer.concat(session.filter((chunk) => chunk.from === from).map((chunk) => Buffer.from(chunk.hex, 'hex')));
}

/** A unix socket in front of the bus at `busPath`: every connection through it is recorded, in order. */
export async function recordingProxy(busPath: string): Promise<{ address: string; sessions: Chunk[][]; close: () => Promise<void> }> {
  const sessions: Chunk[][] = [];
  const path = join(tempDir(), 'proxy');
  const sockets: Socket[] = [];
  const server = createServer((client) => {
    const session: Chunk[] = [];
    sessions.push(session);
    const bus = createConnection(busPath);
    sockets.push(client, bus);
    client.on('data', (data) => {
      session.push({ from: 'client', hex: data.toString('hex') });
      bus.write(data);
    });
    bus.on('data', (data) => {
      session.push({ from: 'bus', hex: data.toString('hex') });
      client.write(data);
    });
    client.on('end', () => bus.end());
    bus.on('end', () => client.end());
    client.on('error', () => bus.destroy());
    bus.on('error', () => client.destroy());
  });
  await listening(server, path);
  return { address: `unix:path=${path}`, sessions, close: () => closed(server, sockets) };
}

/**
 * A bus that replays one recorded session to the one client that connects: each of the bus's chunks
 * is written once the client has written everything it wrote before that chunk when recorded. The
 * client's bytes must equal the recording's (the AUTH line names the running user's uid instead);
 * `mismatch` says where they first differ. It hangs up once the session is over.
 */
export async function replayingBus(session: Chunk[]): Promise<{ address: string; result: () => ReplayResult; close: () => Promise<void> }> {
  const path = join(tempDir(), 'bus');
  const sockets: Socket[] = [];
  const state: ReplayResult = { expected: Buffer.alloc(0), received: Buffer.alloc(0), mismatch: undefined, written: 0 };
  const chunks = session.map((chunk) => ({ from: chunk.from, bytes: withOwnUid(Buffer.from(chunk.hex, 'hex')) }));
  const everything = Buffer.concat(chunks.filter((chunk) => chunk.from === 'client').map((chunk) => chunk.bytes));
  const server = createServer((socket) => {
    sockets.push(socket);
    let index = 0;
    const pump = () => {
      for (; index < chunks.length; index += 1) {
        const chunk = chunks[index]!;
        if (chunk.from === 'client') {
          state.expected = Buffer.concat([state.expected, chunk.bytes]);
          continue;
        }
        if (state.received.length < state.expected.length) return;
        socket.write(chunk.bytes);
        state.written += 1;
      }
      // The session is over once the client wrote all it did: the bus hangs up, as it does when the client has.
      if (state.received.length >= everything.length) socket.end();
    };
    socket.on('data', (data) => {
      state.received = Buffer.concat([state.received, data]);
      const at = firstDifference(state.received, everything);
      if (at !== undefined && state.mismatch === undefined) {
        state.mismatch = `byte ${at}: got ${state.received.subarray(at, at + 16).toString('hex')}, recorded ${everything.subarray(at, at + 16).toString('hex')}`;
        socket.destroy();
        return;
      }
      pump();
    });
    socket.on('end', () => socket.end());
    socket.on('error', () => undefined);
    pump();
  });
  await listening(server, path);
  return { address: `unix:path=${path}`, result: () => state, close: () => closed(server, sockets) };
}

export interface ReplayResult {
  /** What the client wrote when recorded, up to the last bus chunk written or due. */
  expected: Buffer;
  received: Buffer;
  mismatch: string | undefined;
  /** Bus chunks written so far. */
  written: number;
}

/** The index of the first byte where `received` departs from `expected`, or undefined while it is a prefix of it or equal. */
function firstDifference(received: Buffer, expected: Buffer): number | undefined {
  for (let i = 0; i < received.length; i += 1) if (i >= expected.length || received[i] !== expected[i]) return i;
  return undefined;
}

/** SASL EXTERNAL names the client's uid (hex of its decimal digits): the replay expects the running one's. */
function withOwnUid(bytes: Buffer): Buffer {
  const text = bytes.toString('latin1');
  if (!text.startsWith('\0AUTH EXTERNAL ')) return bytes;
  const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
  return Buffer.from(text.replace(/^\0AUTH EXTERNAL [0-9a-f]+/, `\0AUTH EXTERNAL ${uid}`), 'latin1');
}

function listening(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}

function closed(server: Server, sockets: Socket[]): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

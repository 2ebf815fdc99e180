// The part of the D-Bus wire protocol the desktop link handler needs (D-Bus Specification, "Message
// Protocol" and "Authentication Protocol"): a connection to the session bus's unix socket
// authenticated with SASL EXTERNAL, messages marshalled and unmarshalled for any signature except
// unix file descriptors, method calls sent and answered. The npm D-Bus libraries are unmaintained or
// pull in half a dozen dependencies (XML, stream and 64-bit integer libraries) for what is here a
// few hundred lines; this module loads only when the bus starts `open-link --dbus-service`.
import { connect, type Socket } from 'node:net';

/** A value read from a message: strings, numbers, bigints (x, t), booleans, arrays, variants. */
export type WireValue = string | number | bigint | boolean | Variant | WireValue[];

export interface Variant {
  readonly signature: string;
  readonly value: WireValue;
}

const MESSAGE_TYPE = { methodCall: 1, methodReturn: 2, error: 3, signal: 4 } as const;
/** The caller wants no reply (flags of a message). */
const NO_REPLY_EXPECTED = 0x1;

export interface Message {
  readonly type: number;
  readonly flags: number;
  readonly serial: number;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly errorName?: string;
  readonly replySerial?: number;
  readonly destination?: string;
  readonly sender?: string;
  readonly signature: string;
  readonly body: WireValue[];
}

/** The bus or a peer broke the protocol: the connection cannot go on. */
class DBusProtocolError extends Error {}

/** An error reply to a method call. */
class DBusError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(`${errorName}: ${message}`);
  }
}

/** Header field codes, with the type of each field's value. */
const FIELDS = {
  path: [1, 'o'],
  interface: [2, 's'],
  member: [3, 's'],
  errorName: [4, 's'],
  replySerial: [5, 'u'],
  destination: [6, 's'],
  sender: [7, 's'],
  signature: [8, 'g'],
} as const;
type FieldName = keyof typeof FIELDS;

/** The protocol's limit on a message; the handler's messages are a few hundred bytes. */
const MAX_MESSAGE = 128 * 1024 * 1024;
const MAX_ARRAY = 64 * 1024 * 1024;

/** The alignment of each type code; unix file descriptors (h) are not supported. */
// prettier-ignore
const ALIGNMENT: Record<string, number> = { y: 1, b: 4, n: 2, q: 2, i: 4, u: 4, x: 8, t: 8, d: 8, s: 4, o: 4, g: 1, v: 1, a: 4, '(': 8, '{': 8 };

/** Where the complete type starting at `start` of a signature ends. */
function typeEnd(signature: string, start: number, depth = 0): number {
  const code = signature[start];
  if (depth > 64) throw new DBusProtocolError('signature nested too deeply');
  if (code === 'a') return typeEnd(signature, start + 1, depth + 1);
  if (code === '(' || code === '{') {
    const close = code === '(' ? ')' : '}';
    let index = start + 1;
    while (signature[index] !== close) {
      if (index >= signature.length) throw new DBusProtocolError(`unterminated signature ${signature}`);
      index = typeEnd(signature, index, depth + 1);
    }
    return index + 1;
  }
  if (code === undefined || ALIGNMENT[code] === undefined) throw new DBusProtocolError(`unsupported signature ${signature}`);
  return start + 1;
}

/** The complete types of a signature, in order. */
function splitSignature(signature: string): string[] {
  const types: string[] = [];
  for (let start = 0; start < signature.length;) {
    const end = typeEnd(signature, start);
    types.push(signature.slice(start, end));
    start = end;
  }
  return types;
}

class Reader {
  offset = 0;
  constructor(
    private readonly buffer: Buffer,
    private readonly little: boolean,
  ) {}

  private take(size: number): number {
    const at = this.offset;
    if (at + size > this.buffer.length) throw new DBusProtocolError('message ends inside a value');
    this.offset += size;
    return at;
  }

  align(to: number): void {
    this.take((to - (this.offset % to)) % to);
  }

  private uint32(): number {
    const at = this.take(4);
    return this.little ? this.buffer.readUInt32LE(at) : this.buffer.readUInt32BE(at);
  }

  private text(length: number): string {
    const at = this.take(length + 1);
    if (this.buffer[at + length] !== 0) throw new DBusProtocolError('string not terminated');
    return this.buffer.toString('utf8', at, at + length);
  }

  read(type: string): WireValue {
    this.align(ALIGNMENT[type[0]!]!);
    const b = this.buffer;
    switch (type[0]) {
      case 'y':
        return b[this.take(1)]!;
      case 'b':
        return this.uint32() !== 0;
      case 'n':
        return this.little ? b.readInt16LE(this.take(2)) : b.readInt16BE(this.take(2));
      case 'q':
        return this.little ? b.readUInt16LE(this.take(2)) : b.readUInt16BE(this.take(2));
      case 'i':
        return this.little ? b.readInt32LE(this.take(4)) : b.readInt32BE(this.take(4));
      case 'u':
        return this.uint32();
      case 'x':
        return this.little ? b.readBigInt64LE(this.take(8)) : b.readBigInt64BE(this.take(8));
      case 't':
        return this.little ? b.readBigUInt64LE(this.take(8)) : b.readBigUInt64BE(this.take(8));
      case 'd':
        return this.little ? b.readDoubleLE(this.take(8)) : b.readDoubleBE(this.take(8));
      case 's':
      case 'o':
        return this.text(this.uint32());
      case 'g':
        return this.text(b[this.take(1)]!);
      case 'v': {
        const signature = this.text(b[this.take(1)]!);
        if (splitSignature(signature).length !== 1) throw new DBusProtocolError('a variant holds one complete type');
        return { signature, value: this.read(signature) };
      }
      case 'a': {
        const length = this.uint32();
        if (length > MAX_ARRAY) throw new DBusProtocolError('array too long');
        const element = type.slice(1);
        this.align(ALIGNMENT[element[0]!]!);
        const end = this.offset + length;
        if (end > b.length) throw new DBusProtocolError('message ends inside an array');
        const items: WireValue[] = [];
        while (this.offset < end) items.push(this.read(element));
        if (this.offset !== end) throw new DBusProtocolError('array length mismatch');
        return items;
      }
      default:
        // ( or {: a struct or a dict entry, read as an array of its members.
        return splitSignature(type.slice(1, -1)).map((member) => this.read(member));
    }
  }
}

class Writer {
  private buffer = Buffer.alloc(256);
  length = 0;

  private room(size: number): number {
    if (this.length + size > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + size));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const at = this.length;
    this.length += size;
    return at;
  }

  align(to: number): void {
    this.room((to - (this.length % to)) % to); // Buffer.alloc: the padding is zeros
  }

  private text(value: WireValue, lengthSize: 1 | 4): void {
    const bytes = Buffer.from(value as string, 'utf8');
    if (lengthSize === 1) this.byte(bytes.length);
    else this.uint32(bytes.length);
    const at = this.room(bytes.length + 1);
    bytes.copy(this.buffer, at);
  }

  // room() may replace the buffer: it runs before the buffer is read.
  private byte(value: number): void {
    const at = this.room(1);
    this.buffer[at] = value;
  }

  private uint32(value: number, at = this.room(4)): void {
    this.buffer.writeUInt32LE(value, at);
  }

  write(type: string, value: WireValue): void {
    this.align(ALIGNMENT[type[0]!]!);
    switch (type[0]) {
      case 'y':
        this.byte(Number(value));
        return;
      case 'b':
        this.uint32(value ? 1 : 0);
        return;
      case 'u':
        this.uint32(Number(value));
        return;
      case 'i': {
        const at = this.room(4);
        this.buffer.writeInt32LE(Number(value), at);
        return;
      }
      case 's':
      case 'o':
        this.text(value, 4);
        return;
      case 'g':
        this.text(value, 1);
        return;
      case 'v': {
        const variant = value as Variant;
        this.text(variant.signature, 1);
        this.write(variant.signature, variant.value);
        return;
      }
      case 'a': {
        const at = this.room(4);
        const element = type.slice(1);
        this.align(ALIGNMENT[element[0]!]!);
        const start = this.length;
        for (const item of value as WireValue[]) this.write(element, item);
        this.uint32(this.length - start, at);
        return;
      }
      case '(':
      case '{': {
        const members = splitSignature(type.slice(1, -1));
        members.forEach((member, index) => this.write(member, (value as WireValue[])[index]!));
        return;
      }
      default:
        // The link handler and the notifications send no other types.
        throw new DBusProtocolError(`cannot write type ${type}`);
    }
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** A message's bytes (little-endian). */
export function encodeMessage(message: Message): Buffer {
  const body = new Writer();
  splitSignature(message.signature).forEach((type, index) => body.write(type, message.body[index]!));
  const fields: WireValue[] = [];
  for (const [name, [code, signature]] of Object.entries(FIELDS) as Array<[FieldName, (typeof FIELDS)[FieldName]]>) {
    const value = message[name];
    if (value !== undefined && !(name === 'signature' && value === '')) fields.push([code, { signature, value }]);
  }
  const header = new Writer();
  for (const byte of ['l'.charCodeAt(0), message.type, message.flags, 1]) header.write('y', byte);
  header.write('u', body.length);
  header.write('u', message.serial);
  header.write('a(yv)', fields);
  header.align(8);
  return Buffer.concat([header.bytes(), body.bytes()]);
}

/** The length of the message at the start of `buffer`, or undefined while its fixed header is incomplete. */
export function messageLength(buffer: Buffer): number | undefined {
  if (buffer.length < 16) return undefined;
  const little = endianness(buffer);
  const bodyLength = little ? buffer.readUInt32LE(4) : buffer.readUInt32BE(4);
  const fieldsLength = little ? buffer.readUInt32LE(12) : buffer.readUInt32BE(12);
  const total = Math.ceil((16 + fieldsLength) / 8) * 8 + bodyLength;
  if (total > MAX_MESSAGE) throw new DBusProtocolError('message too long');
  return total;
}

function endianness(buffer: Buffer): boolean {
  const mark = String.fromCharCode(buffer[0]!);
  if (mark !== 'l' && mark !== 'B') throw new DBusProtocolError('not a D-Bus message');
  if (buffer[3] !== 1) throw new DBusProtocolError(`protocol version ${buffer[3]}`);
  return mark === 'l';
}

/** One whole message (its bytes as messageLength measured them). */
export function decodeMessage(bytes: Buffer): Message {
  const reader = new Reader(bytes, endianness(bytes));
  reader.read('y'); // endianness, checked above
  const [type, flags] = [reader.read('y') as number, reader.read('y') as number];
  reader.read('y'); // version, checked above
  const bodyLength = reader.read('u') as number;
  const serial = reader.read('u') as number;
  const header: Record<string, WireValue> = {};
  for (const [code, variant] of reader.read('a(yv)') as Array<[number, Variant]>) {
    const field = Object.entries(FIELDS).find(([, [fieldCode]]) => fieldCode === code);
    if (field && variant.signature === field[1][1]) header[field[0]] = variant.value; // unknown fields are ignored (spec)
  }
  reader.align(8);
  if (reader.offset + bodyLength !== bytes.length) throw new DBusProtocolError('body length mismatch');
  const signature = (header.signature as string | undefined) ?? '';
  const body = splitSignature(signature).map((member) => reader.read(member));
  if (reader.offset !== bytes.length) throw new DBusProtocolError('body longer than its signature');
  return { ...(header as Partial<Message>), type, flags, serial, signature, body };
}

/**
 * The socket paths of a bus address (unix:path=…; several addresses separated by ;). Abstract sockets
 * (unix:abstract=…) are skipped: Node 20 passes their names padded with NULs, which the bus does not
 * match; session buses listen on a path (/run/user/<uid>/bus, or dbus-daemon's unix:tmpdir).
 */
function socketPaths(address: string): string[] {
  const paths: string[] = [];
  for (const entry of address.split(';')) {
    const colon = entry.indexOf(':');
    if (entry.slice(0, colon) !== 'unix') continue;
    for (const pair of entry.slice(colon + 1).split(',')) {
      if (pair.startsWith('path=')) paths.push(decodeURIComponent(pair.slice('path='.length)));
    }
  }
  return paths;
}

function connected(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** SASL EXTERNAL: the bus checks our uid on the socket against the one we name. */
function authenticate(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n');
      if (end < 0) {
        if (received.length > 4096) fail(new DBusProtocolError('no answer to AUTH'));
        return;
      }
      const line = received.toString('latin1', 0, end);
      socket.off('data', onData).off('error', fail).off('close', closed);
      if (!line.startsWith('OK ')) return reject(new DBusProtocolError(`the bus refused the authentication (${line.split(' ')[0]})`));
      socket.write('BEGIN\r\n');
      resolve(received.subarray(end + 2));
    };
    const fail = (err: Error) => {
      socket.off('data', onData).off('error', fail).off('close', closed);
      reject(err);
    };
    const closed = () => fail(new DBusProtocolError('the bus closed the connection during authentication'));
    socket.on('data', onData).on('error', fail).on('close', closed);
    const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
    socket.write(`\0AUTH EXTERNAL ${uid}\r\n`);
  });
}

export type CallHandler = (call: Message) => void;

/** A connection to a message bus: method calls out, replies in, incoming method calls to a handler. */
export class BusConnection {
  private serial = 0;
  private pending = new Map<number, { resolve: (reply: Message) => void; reject: (err: Error) => void }>();
  private received: Buffer = Buffer.alloc(0);
  private closedError: Error | undefined;
  /** Calls that came before handleCalls: the bus delivers the call that activated us right after RequestName. */
  private early: Message[] | undefined = [];
  private onCall: CallHandler = (call) => this.early?.push(call);
  /** Signals the bus routes here (after an AddMatch); none are kept before onSignal. */
  private onSignalHandler: CallHandler | undefined;
  /** Resolves when the connection ends, with the error that ended it if any. */
  readonly ended: Promise<Error | undefined>;

  private constructor(
    private readonly socket: Socket,
    leftover: Buffer,
  ) {
    this.ended = new Promise((resolve) => {
      socket.on('error', (err) => (this.closedError ??= err));
      socket.on('close', () => {
        const err = this.closedError ?? new DBusProtocolError('the bus closed the connection');
        for (const { reject } of this.pending.values()) reject(err);
        this.pending.clear();
        resolve(this.closedError);
      });
    });
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    if (leftover.length > 0) this.receive(leftover);
  }

  /** Connects to the bus at `address` and says Hello (the bus's first required call). */
  static async open(address: string): Promise<BusConnection> {
    const paths = socketPaths(address);
    if (paths.length === 0) throw new DBusProtocolError('no unix socket path in the bus address');
    let lastError: unknown;
    for (const path of paths) {
      let socket: Socket | undefined;
      try {
        socket = await connected(path);
        const bus = new BusConnection(socket, await authenticate(socket));
        await bus.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'Hello');
        return bus;
      } catch (err) {
        socket?.destroy();
        lastError = err;
      }
    }
    throw lastError;
  }

  handleCalls(handler: CallHandler): void {
    this.onCall = handler;
    const early = this.early ?? [];
    this.early = undefined;
    for (const call of early) handler(call);
  }

  private receive(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    try {
      for (let length = messageLength(this.received); length !== undefined && this.received.length >= length;) {
        const message = decodeMessage(this.received.subarray(0, length));
        this.received = this.received.subarray(length);
        this.dispatch(message);
        length = messageLength(this.received);
      }
    } catch (err) {
      this.closedError = err as Error;
      this.socket.destroy();
    }
  }

  private dispatch(message: Message): void {
    if (message.type === MESSAGE_TYPE.methodCall) return this.onCall(message);
    if (message.type === MESSAGE_TYPE.signal) return this.onSignalHandler?.(message);
    if (message.type !== MESSAGE_TYPE.methodReturn && message.type !== MESSAGE_TYPE.error) return;
    const waiting = message.replySerial === undefined ? undefined : this.pending.get(message.replySerial);
    if (!waiting) return;
    this.pending.delete(message.replySerial!);
    if (message.type === MESSAGE_TYPE.methodReturn) waiting.resolve(message);
    else waiting.reject(new DBusError(message.errorName ?? 'unknown', typeof message.body[0] === 'string' ? message.body[0] : ''));
  }

  private send(message: Omit<Message, 'serial'>): number {
    this.serial += 1;
    this.socket.write(encodeMessage({ ...message, serial: this.serial }));
    return this.serial;
  }

  call(destination: string, path: string, iface: string, member: string, signature = '', body: WireValue[] = []): Promise<WireValue[]> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) return reject(this.closedError ?? new DBusProtocolError('the connection is closed'));
      const serial = this.send({ type: MESSAGE_TYPE.methodCall, flags: 0, destination, path, interface: iface, member, signature, body });
      this.pending.set(serial, { resolve: (reply) => resolve(reply.body), reject });
    });
  }

  /** Signals this connection subscribed to (org.freedesktop.DBus.AddMatch) go to `handler`. */
  onSignal(handler: CallHandler): void {
    this.onSignalHandler = handler;
  }

  /** Emits a signal from `path` (a service's notifications; the notification server's stand-in in tests). */
  emit(path: string, iface: string, member: string, signature = '', body: WireValue[] = []): void {
    this.send({ type: MESSAGE_TYPE.signal, flags: NO_REPLY_EXPECTED, path, interface: iface, member, signature, body });
  }

  reply(call: Message, signature = '', body: WireValue[] = []): void {
    if (call.flags & NO_REPLY_EXPECTED) return;
    this.send({ type: MESSAGE_TYPE.methodReturn, flags: 0, replySerial: call.serial, destination: call.sender, signature, body });
  }

  replyError(call: Message, name: string, text: string): void {
    if (call.flags & NO_REPLY_EXPECTED) return;
    this.send({
      type: MESSAGE_TYPE.error,
      flags: 0,
      replySerial: call.serial,
      destination: call.sender,
      errorName: name,
      signature: 's',
      body: [text],
    });
  }

  /** Ends the connection once what was written is sent (the bus then releases our names). */
  async close(): Promise<void> {
    this.socket.end();
    await this.ended;
  }
}

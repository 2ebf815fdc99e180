// TLS session-ticket keys shared by every server process of one deployment, through one owner-only
// key file. The file holds the previous, current and next keys, each with the time it becomes the
// one that encrypts new tickets: every process switches at that time by its own clock, and already
// knows the next key before any process uses it. A key still decrypts tickets until its successor
// has been current for the grace (`lifetimeMs`: by then every agent on schedule has come back and
// had its ticket renewed with the new key); then it is refused and dropped from the file. Whichever process finds no next key writes one, under a
// lock file, with an atomic rename: the others read the change on their next look. Keys are
// secrets: never logged, never in an error message.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './usage';
import type { DatabaseLocation } from './db/location';

/** What Node's ticket callback takes: 16-byte key name, 16-byte HMAC key, 16-byte AES key. */
const TICKET_KEY_BYTES = 48;
const FORMAT = 'device-agent-server tls ticket keys 1';
/** A lock older than this was left by a process that died while rotating. */
const STALE_LOCK_MS = 30_000;

export interface TicketKey {
  /** When this key starts sealing new tickets (ms since the epoch). */
  activatesAt: number;
  /** name (16) | hmac (16) | aes (16) */
  key: Buffer;
}

export interface TicketKeyPolicy {
  /** How long each key seals new tickets. */
  rotationMs: number;
  /** How long a key still opens tickets after its successor took over (the grace after a switch). */
  lifetimeMs: number;
}

export class TicketKeyRing {
  private keys: TicketKey[];
  private seen: string;

  private constructor(
    readonly file: string,
    private readonly policy: TicketKeyPolicy,
    private readonly now: () => number,
  ) {
    const { keys, version } = readKeyFile(file);
    this.keys = keys;
    this.seen = version;
  }

  /** Reads the key file, creating it (owner-only, current and next key) when missing. */
  static open(file: string, policy: TicketKeyPolicy, now: () => number = Date.now): TicketKeyRing {
    createIfMissing(file, policy, now());
    const ring = new TicketKeyRing(file, policy, now);
    ring.maintain();
    return ring;
  }

  /** The key that seals new tickets now. */
  current(): TicketKey {
    const now = this.now();
    let current = this.keys[0]!;
    for (const key of this.keys) if (key.activatesAt <= now) current = key;
    return current;
  }

  /**
   * True while a key older than the current one still opens tickets: the grace after a switch, in
   * which an agent's ticket sealed with the previous key resumes and is renewed with the current one.
   */
  inGrace(): boolean {
    const now = this.now();
    const current = this.keys.indexOf(this.current());
    return this.keys.some((_key, index) => index < current && !isExpired(this.keys, index, this.policy.lifetimeMs, now));
  }

  /** The next time current() or inGrace() changes (ms since the epoch); undefined when no change is known. */
  nextChange(): number | undefined {
    const now = this.now();
    const times = this.keys.flatMap((key, index) => {
      const successor = this.keys[index + 1];
      return successor ? [key.activatesAt, successor.activatesAt + this.policy.lifetimeMs] : [key.activatesAt];
    });
    const future = times.filter((time) => time > now);
    return future.length === 0 ? undefined : Math.min(...future);
  }

  /** The key named `name`, when a ticket sealed with it may still be valid; undefined otherwise. */
  accepting(name: Buffer): TicketKey | undefined {
    const index = this.keys.findIndex((key) => key.key.subarray(0, 16).equals(name));
    if (index === -1) return undefined;
    return isExpired(this.keys, index, this.policy.lifetimeMs, this.now()) ? undefined : this.keys[index];
  }

  /**
   * Re-reads the file when another process changed it, and writes a next key when there is none.
   * Called on a timer well inside one rotation period; never throws (a failed rotation is retried).
   */
  maintain(): { rotated: boolean; error?: string } {
    try {
      const version = fileVersion(this.file);
      if (version !== this.seen) {
        const read = readKeyFile(this.file);
        this.keys = read.keys;
        this.seen = read.version;
      }
      if (this.keys.some((key) => key.activatesAt > this.now())) return { rotated: false };
      return { rotated: this.rotate() };
    } catch (error) {
      return { rotated: false, error: (error as Error).message };
    }
  }

  /** Adds a next key and drops expired ones, under the lock file. False when another process holds the lock. */
  private rotate(): boolean {
    const lock = `${this.file}.lock`;
    let fd: number;
    try {
      fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (this.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      return false;
    }
    try {
      const { keys } = readKeyFile(this.file);
      const now = this.now();
      if (!keys.some((key) => key.activatesAt > now)) {
        const newest = keys.at(-1)!.activatesAt;
        keys.push({
          activatesAt: Math.max(newest + this.policy.rotationMs, now + this.policy.rotationMs / 2),
          key: randomBytes(TICKET_KEY_BYTES),
        });
      }
      this.keys = keys.filter((_key, index) => !isExpired(keys, index, this.policy.lifetimeMs, now));
      writeAtomically(this.file, serialize(this.keys));
      this.seen = fileVersion(this.file);
      return true;
    } finally {
      closeSync(fd);
      rmSync(lock, { force: true });
    }
  }
}

/** No ticket sealed with this key can be valid: its successor has been current for a whole ticket lifetime. */
function isExpired(keys: TicketKey[], index: number, lifetimeMs: number, now: number): boolean {
  const successor = keys[index + 1];
  return successor !== undefined && successor.activatesAt + lifetimeMs <= now;
}

/** The default key file: beside a file database, shared by the processes that share it. */
export function defaultTicketKeyFile(db: DatabaseLocation): string | undefined {
  return db.engine === 'sqlite' ? join(dirname(db.path), `${basename(db.path)}.tls-ticket-keys`) : undefined;
}

function createIfMissing(file: string, policy: TicketKeyPolicy, now: number): void {
  if (existsSync(file)) return;
  const keys: TicketKey[] = [
    { activatesAt: now, key: randomBytes(TICKET_KEY_BYTES) },
    { activatesAt: now + policy.rotationMs, key: randomBytes(TICKET_KEY_BYTES) },
  ];
  const temp = tempName(file);
  try {
    writeFileSync(temp, serialize(keys), { mode: 0o600, flag: 'wx' });
    // link() fails when the file exists: of two processes starting at once, one creates it and the other reads it.
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new UsageError(`cannot create the TLS ticket key file ${file}: ${codeOf(error)}`);
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

function readKeyFile(file: string): { keys: TicketKey[]; version: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = codeOf(error);
    throw new UsageError(`cannot read the TLS ticket key file ${file}: ${code === 'ELOOP' ? 'it is a symbolic link' : code}`);
  }
  let text: string;
  let version: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`the TLS ticket key file ${file} is not a regular file`);
    const uid = process.geteuid?.();
    // Windows has no POSIX owner and mode: the directory's ACL applies.
    if (uid !== undefined) {
      if (stat.uid !== uid) {
        throw new UsageError(`the TLS ticket key file ${file} belongs to uid ${stat.uid}, not to this user (uid ${uid}); refusing it`);
      }
      if ((stat.mode & 0o077) !== 0) {
        throw new UsageError(
          `the TLS ticket key file ${file} is readable or writable by others (mode ${(stat.mode & 0o777).toString(8)}); make it owner-only (chmod 600)`,
        );
      }
    }
    version = versionOf(stat);
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  return { keys: parse(file, text), version };
}

function parse(file: string, text: string): TicketKey[] {
  const malformed = () =>
    new UsageError(`the TLS ticket key file ${file} is malformed; delete it and every server process makes a new one`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw malformed();
  }
  const { format, keys } = (parsed ?? {}) as { format?: unknown; keys?: unknown };
  if (format !== FORMAT || !Array.isArray(keys) || keys.length === 0) throw malformed();
  const ring = keys.map((entry: unknown) => {
    const { activates_at: at, key } = (entry ?? {}) as { activates_at?: unknown; key?: unknown };
    const bytes = typeof key === 'string' ? Buffer.from(key, 'base64') : Buffer.alloc(0);
    const activatesAt = typeof at === 'string' ? Date.parse(at) : Number.NaN;
    if (bytes.length !== TICKET_KEY_BYTES || Number.isNaN(activatesAt)) throw malformed();
    return { activatesAt, key: bytes };
  });
  return ring.sort((a, b) => a.activatesAt - b.activatesAt);
}

function serialize(keys: TicketKey[]): string {
  const entries = keys.map((key) => ({ activates_at: new Date(key.activatesAt).toISOString(), key: key.key.toString('base64') }));
  return `${JSON.stringify({ format: FORMAT, keys: entries }, null, 2)}\n`;
}

function writeAtomically(file: string, text: string): void {
  const temp = tempName(file);
  writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
  try {
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function fileVersion(file: string): string {
  return versionOf(statSync(file));
}

function versionOf(stat: { ino: number; mtimeMs: number; size: number }): string {
  return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
}

function tempName(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

// TLS of `serve --tls-cert/--tls-key`: the protocol floor, ciphers and session lifetime; session
// tickets sealed with the deployment's shared keys (./ticketKeys), so that an agent resumes with
// any process of the deployment across its heartbeat interval; and the certificate reloaded when
// its files change or on SIGHUP, without a restart: new connections get the new pair, open ones
// finish on the old, and a pair that does not load is refused with a log line, the old one kept.
//
// Tickets cost no JavaScript per connection: OpenSSL seals and opens them natively with the current
// key (`setTicketKeys`). Only in the grace after a key switch, while tickets sealed with the previous
// key are still honoured, does a JavaScript callback open tickets of either key and renew them with
// the current one; when the grace ends the server goes back to the native key alone.
import { X509Certificate, createHash, randomBytes } from 'node:crypto';
import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type Server as TlsServer, type TlsOptions } from 'node:tls';
import type { Logger } from 'pino';
import { TicketKeyRing, type TicketKeyPolicy } from './ticketKeys';
import { UsageError } from './usage';

/**
 * TLS 1.2 suites: ECDHE key exchange (forward secrecy) with AEAD ciphers only. TLS 1.3 keeps
 * Node's default suites (all AEAD). Curves stay Node's default (see docs/server.md).
 */
const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];
const TLS13_CIPHERS = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
/** TLS 1.3 caps a ticket's lifetime at 7 days (RFC 8446, 4.6.1). */
const MAX_TICKET_LIFETIME_SECONDS = 7 * 86_400;
const SESSION_ID_CONTEXT = 'device-agent-server';
/** Certificate renewals write several files (and symlinks): reload once they are all in place. */
const RELOAD_DEBOUNCE_MS = 500;
/** setTimeout's longest delay; a later switch is re-planned when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** Shared session-ticket keys of the deployment. */
  ticketKeyFile: string;
  ticketKeyRotationMs: number;
}

export interface ServerTls {
  /** What the HTTPS server is created with. */
  options: TlsOptions;
  /**
   * Installs the ticket keys and starts watching the certificate; reload() reads the pair again
   * (serve calls it on SIGHUP); stop() ends both.
   */
  attach(server: TlsServer, logger: Logger): { reload(trigger: string): void; stop(): void };
}

/**
 * The grace after a ticket-key switch: longer than the longest interval this server hands out, with
 * margin, so that every agent on schedule comes back within it and leaves with a ticket of the new key.
 */
export function ticketLifetimeSeconds(heartbeatIntervalSeconds: number, postureIntervalSeconds: number): number {
  return Math.min(MAX_TICKET_LIFETIME_SECONDS, 2 * Math.max(heartbeatIntervalSeconds, postureIntervalSeconds));
}

/**
 * Reads the pair and the ticket keys; a user error (UsageError) when either is unusable.
 * `lifetimeSeconds` is the grace after a key switch (ticketLifetimeSeconds).
 */
export function prepareTls(files: TlsFiles, lifetimeSeconds: number): ServerTls {
  const pair = readPair(files);
  const policy: TicketKeyPolicy = { rotationMs: files.ticketKeyRotationMs, lifetimeMs: lifetimeSeconds * 1000 };
  const ring = TicketKeyRing.open(files.ticketKeyFile, policy);
  // Native resumption does not renew a ticket: it must stay valid for its key's whole tenure and the
  // grace after it, so that an agent resumes on the ticket of its first connection until the switch.
  const sessionTimeout = Math.min(MAX_TICKET_LIFETIME_SECONDS, lifetimeSeconds + Math.ceil(files.ticketKeyRotationMs / 1000));
  const optionsFor = (cert: Buffer, key: Buffer): TlsOptions => ({
    cert,
    key,
    minVersion: 'TLSv1.2',
    ciphers: [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(':'),
    honorCipherOrder: true,
    sessionTimeout,
    // Node's default is a hash of the command line, which differs between the processes of one
    // deployment (ports, databases): a ticket would then resume only with the process that issued it.
    sessionIdContext: SESSION_ID_CONTEXT,
  });

  return {
    options: optionsFor(pair.cert, pair.key),
    attach(server, logger) {
      let current = pair;
      const canRenew = ticketCallbackOf(server) !== undefined;
      if (!canRenew) {
        logger.warn(
          { event: 'tls_ticket_keys_single' },
          'this Node cannot decrypt tickets with more than one key: tickets issued before a key rotation cost one full handshake',
        );
      }
      // What the server's secure context seals with: "native:<key name>" or "grace:<key name>".
      let sealing: string | undefined;
      /** Installs the current key, natively or (in the grace) with the callback; `fresh`: the context has no keys yet. */
      const seal = (fresh: boolean) => {
        const key = ring.current();
        const grace = canRenew && ring.inGrace();
        const wanted = `${grace ? 'grace' : 'native'}:${key.key.subarray(0, 16).toString('hex')}`;
        if (!fresh && wanted === sealing) return;
        // A callback once enabled stays on its context: leaving the grace takes a new one.
        if (!fresh) server.setSecureContext(optionsFor(current.cert, current.key));
        if (grace) openWithRing(server, ring);
        else server.setTicketKeys(key.key);
        sealing = wanted;
      };
      let switchAt: NodeJS.Timeout | undefined;
      /** Seals anew at the next key switch or end of a grace, to the millisecond (every process at the same time). */
      const schedule = () => {
        clearTimeout(switchAt);
        const at = ring.nextChange();
        if (at === undefined) return;
        switchAt = setTimeout(
          () => {
            seal(false);
            schedule();
          },
          Math.min(Math.max(0, at - Date.now()) + 1, MAX_TIMER_MS),
        );
        switchAt.unref();
      };
      seal(true);
      schedule();
      const maintenance = setInterval(
        () => {
          const outcome = ring.maintain();
          if (outcome.error !== undefined) logger.warn({ event: 'tls_ticket_keys_failed', file: ring.file }, outcome.error);
          else if (outcome.rotated) logger.info({ event: 'tls_ticket_keys_rotated', file: ring.file }, 'TLS ticket keys rotated');
          // Another process may have changed the file: its keys take effect now, and the next switch is theirs.
          seal(false);
          schedule();
        },
        Math.min(60_000, Math.max(250, files.ticketKeyRotationMs / 4)),
      );
      maintenance.unref();

      const reload = (trigger: string) => {
        let next: Pair;
        try {
          next = readPair(files);
        } catch (error) {
          logger.error(
            { event: 'tls_reload_failed', trigger, cert: files.certFile, key: files.keyFile },
            `TLS certificate not reloaded, the current one is kept: ${(error as Error).message}`,
          );
          return;
        }
        if (next.cert.equals(current.cert) && next.key.equals(current.key)) return;
        server.setSecureContext(optionsFor(next.cert, next.key));
        current = next;
        seal(true);
        logger.info({ event: 'tls_reloaded', trigger, ...describe(next.cert) }, 'TLS certificate reloaded');
      };

      let pending: NodeJS.Timeout | undefined;
      const soon = () => {
        clearTimeout(pending);
        pending = setTimeout(() => reload('file change'), RELOAD_DEBOUNCE_MS);
      };
      // The directories, not the files: renewals replace files and symlinks (certbot's live/ links,
      // a Kubernetes secret volume's ..data link). Any change there is a reason to read the pair
      // again: reload() does nothing when the bytes are the same.
      const watchers: FSWatcher[] = [...new Set([dirname(resolve(files.certFile)), dirname(resolve(files.keyFile))])].map((dir) =>
        watch(dir, { persistent: false }, soon).on('error', (error) =>
          logger.warn({ event: 'tls_watch_failed', dir }, `cannot watch ${dir}: ${error.message}; reload with SIGHUP`),
        ),
      );
      return {
        reload,
        stop() {
          clearInterval(maintenance);
          clearTimeout(switchAt);
          clearTimeout(pending);
          for (const watcher of watchers) watcher.close();
        },
      };
    },
  };
}

interface Pair {
  cert: Buffer;
  key: Buffer;
}

function readPair(files: Pick<TlsFiles, 'certFile' | 'keyFile'>): Pair {
  const pair = { cert: readPem('--tls-cert', files.certFile), key: readPem('--tls-key', files.keyFile) };
  try {
    createSecureContext(pair);
  } catch (error) {
    throw new UsageError(`--tls-cert and --tls-key do not hold a matching PEM certificate and private key: ${(error as Error).message}`);
  }
  return pair;
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** What identifies the served certificate in a log line (public data only). */
function describe(cert: Buffer): Record<string, string> {
  try {
    const x509 = new X509Certificate(cert);
    return { subject: x509.subject, not_after: x509.validTo, sha256: x509.fingerprint256 };
  } catch {
    return { sha256: createHash('sha256').update(cert).digest('hex') };
  }
}

/** The internals of Node's SecureContext that let one server decrypt tickets sealed with several keys. */
interface NativeContext {
  enableTicketKeyCallback: () => void;
  onticketkeycallback?: (name: Buffer, iv: Buffer, encrypt: boolean) => unknown[];
}

/** The server's secure context when it has the ticket-key callback; undefined on a Node without it. */
function ticketCallbackOf(server: TlsServer): NativeContext | undefined {
  const context = (server as unknown as { _sharedCreds?: { context?: Partial<NativeContext> } })._sharedCreds?.context;
  return typeof context?.enableTicketKeyCallback === 'function' ? (context as NativeContext) : undefined;
}

const NO_KEY = Buffer.alloc(16);

/**
 * The grace after a key switch: seals new tickets with the ring's current key and opens those of
 * any key it still accepts, renewing the ticket on every resumption (result 2: the agent leaves
 * with a ticket of the current key). This uses the ticket-key callback of Node's secure context,
 * which Node has no public API for (its `ticketKeys` holds a single key); only called when
 * ticketCallbackOf found it.
 */
function openWithRing(server: TlsServer, ring: TicketKeyRing): void {
  const context = ticketCallbackOf(server)!;
  context.enableTicketKeyCallback();
  context.onticketkeycallback = (name, _iv, encrypt) => {
    if (encrypt) {
      const { key } = ring.current();
      return [1, key.subarray(16, 32), key.subarray(32, 48), key.subarray(0, 16), randomBytes(16)];
    }
    const known = ring.accepting(name);
    return known ? [2, known.key.subarray(16, 32), known.key.subarray(32, 48)] : [0, NO_KEY, NO_KEY];
  };
}

// TLS of `serve --tls-cert/--tls-key`: the protocol floor, ciphers and session lifetime; session
// tickets sealed with the deployment's shared keys (./ticketKeys), so that an agent resumes with
// any process of the deployment across its heartbeat interval; and the certificate reloaded when
// its files change or on SIGHUP, without a restart: new connections get the new pair, open ones
// finish on the old, and a pair that does not load is refused with a log line, the old one kept.
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
 * Session lifetime: longer than the longest interval this server hands out, with margin, so that
 * an agent on schedule comes back with a valid ticket (each resumption renews it).
 */
export function ticketLifetimeSeconds(heartbeatIntervalSeconds: number, postureIntervalSeconds: number): number {
  return Math.min(MAX_TICKET_LIFETIME_SECONDS, 2 * Math.max(heartbeatIntervalSeconds, postureIntervalSeconds));
}

/** Reads the pair and the ticket keys; a user error (UsageError) when either is unusable. */
export function prepareTls(files: TlsFiles, lifetimeSeconds: number): ServerTls {
  const pair = readPair(files);
  const policy: TicketKeyPolicy = { rotationMs: files.ticketKeyRotationMs, lifetimeMs: lifetimeSeconds * 1000 };
  const ring = TicketKeyRing.open(files.ticketKeyFile, policy);
  const optionsFor = (cert: Buffer, key: Buffer): TlsOptions => ({
    cert,
    key,
    minVersion: 'TLSv1.2',
    ciphers: [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(':'),
    honorCipherOrder: true,
    sessionTimeout: lifetimeSeconds,
    // Node's default is a hash of the command line, which differs between the processes of one
    // deployment (ports, databases): a ticket would then resume only with the process that issued it.
    sessionIdContext: SESSION_ID_CONTEXT,
  });

  return {
    options: optionsFor(pair.cert, pair.key),
    attach(server, logger) {
      let current = pair;
      let sharedKeys = sealWithRing(server, ring);
      if (!sharedKeys) {
        logger.warn(
          { event: 'tls_ticket_keys_single' },
          'this Node cannot decrypt tickets with more than one key: tickets issued before a key rotation cost one full handshake',
        );
      }
      const maintenance = setInterval(
        () => {
          const outcome = ring.maintain();
          if (outcome.error !== undefined) logger.warn({ event: 'tls_ticket_keys_failed', file: ring.file }, outcome.error);
          else if (outcome.rotated) logger.info({ event: 'tls_ticket_keys_rotated', file: ring.file }, 'TLS ticket keys rotated');
          if (!sharedKeys) server.setTicketKeys(ring.current().key);
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
        sharedKeys = sealWithRing(server, ring);
        current = next;
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
  enableTicketKeyCallback?: () => void;
  onticketkeycallback?: (name: Buffer, iv: Buffer, encrypt: boolean) => unknown[];
}

const NO_KEY = Buffer.alloc(16);

/**
 * Seals new tickets with the ring's current key and opens those of any key it still accepts,
 * renewing the ticket on every resumption (result 2: the agent always holds a fresh one). This
 * uses the ticket-key callback of Node's secure context, which Node has no public API for (its
 * `ticketKeys` holds a single key); false, after installing the current key alone, where it is missing.
 */
function sealWithRing(server: TlsServer, ring: TicketKeyRing): boolean {
  const context = (server as unknown as { _sharedCreds?: { context?: NativeContext } })._sharedCreds?.context;
  if (context === undefined || typeof context.enableTicketKeyCallback !== 'function') {
    server.setTicketKeys(ring.current().key);
    return false;
  }
  context.enableTicketKeyCallback();
  context.onticketkeycallback = (name, _iv, encrypt) => {
    if (encrypt) {
      const { key } = ring.current();
      return [1, key.subarray(16, 32), key.subarray(32, 48), key.subarray(0, 16), randomBytes(16)];
    }
    const known = ring.accepting(name);
    return known ? [2, known.key.subarray(16, 32), known.key.subarray(32, 48)] : [0, NO_KEY, NO_KEY];
  };
  return true;
}

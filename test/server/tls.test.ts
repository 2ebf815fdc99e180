// `serve --tls-cert/--tls-key` over real TLS: session tickets shared by the processes of one
// deployment through the ticket key file, rotation and expiry of ticket keys, certificates renewed
// under a running server (file change, SIGHUP, a bad pair kept out), and a device API key revoked
// while its agent holds a resumable session.
import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { createApiClient } from '../../src/agent/client';
import { CredentialsRejectedError } from '../../src/agent/api';
import { tempDir } from '../support/agent';
import { logEntries, startServer, tryServerCli, type RunningServer } from '../support/server';
import { makeThrowawayCa, type ThrowawayCa } from '../agent/throwawayCa';
import { heartbeatBody } from './client';

interface Probe {
  reused: boolean;
  /** The newest ticket the server sent on this connection, if any. */
  session?: Buffer;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
  response: string;
}

/** One TLS connection: optionally offers `session`, sends `request` (default GET /healthz), reads to the end. */
function probe(
  server: Pick<RunningServer, 'url'>,
  ca: string[],
  session?: Buffer,
  request?: (send: (text: string) => void) => Promise<void>,
): Promise<Probe> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    let ticket: Buffer | undefined;
    let response = '';
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, session });
    socket.on('session', (next: Buffer) => (ticket = next));
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    socket.on('error', reject);
    socket.on('secureConnect', () => {
      const send = (text: string) => void socket.write(text);
      const sending = request
        ? request(send)
        : Promise.resolve(send(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
      sending.catch(reject);
    });
    socket.on('end', () =>
      resolve({
        reused: socket.isSessionReused(),
        session: ticket,
        fingerprint: socket.getPeerCertificate().fingerprint256,
        response,
      }),
    );
  });
}

const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

function readKeys(file: string): { activates_at: string; key: string }[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { keys: { activates_at: string; key: string }[] }).keys;
}

describe('session tickets', () => {
  test('a ticket issued by one server process is resumed by another sharing the key file; the file is owner-only and never logged', async () => {
    const ca = makeThrowawayCa();
    const dir = tempDir('device-agent-tickets-');
    const keyFile = join(dir, 'ticket-keys');
    const args = ['--tls-ticket-keys', keyFile];
    const first = await startServer({ tls: ca, args });
    const second = await startServer({ tls: ca, args });
    const alone = await startServer({ tls: ca });
    try {
      expect(readFileSync(keyFile).length).toBeGreaterThan(0);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const trusted = [readFileSync(ca.caFile, 'utf8')];

      const full = await probe(first, trusted);
      expect(full.reused).toBe(false);
      expect(full.session).toBeDefined();
      expect(full.response).toContain('{"status":"ok"}');
      expect((await probe(second, trusted, full.session)).reused).toBe(true);
      // A process with its own key file cannot open the ticket: a full handshake, no failure.
      const elsewhere = await probe(alone, trusted, full.session);
      expect({ reused: elsewhere.reused, ok: elsewhere.response.includes('{"status":"ok"}') }).toEqual({ reused: false, ok: true });

      for (const { key } of readKeys(keyFile)) {
        for (const server of [first, second]) expect(server.logs()).not.toContain(key);
      }
    } finally {
      await Promise.all([first.stop(), second.stop(), alone.stop()]);
    }
  });

  test('a ticket sealed just before a key rotation still resumes; once its key expires it is refused, though the ticket is still valid', async () => {
    const ca = makeThrowawayCa();
    const trusted = [readFileSync(ca.caFile, 'utf8')];
    const keyFile = join(tempDir('device-agent-tickets-'), 'ticket-keys');
    const rotation = ['--tls-ticket-keys', keyFile, '--tls-ticket-key-rotation', '5s'];
    // Tickets of `issuer` live 120 s (twice its 60 s intervals); `checker` hands out 1 s and 2 s
    // intervals, so its tickets live 4 s and it drops a key 4 s after its successor took over.
    const issuer = await startServer({ tls: ca, args: [...rotation, '--heartbeat-interval', '60', '--posture-interval', '60'] });
    const checker = await startServer({ tls: ca, args: [...rotation, '--heartbeat-interval', '1', '--posture-interval', '2'] });
    try {
      // A ticket sealed well before the next key takes over (on a slow machine, wait for a later rotation).
      let next: number | undefined;
      let ticket: Buffer | undefined;
      for (;;) {
        const upcoming = readKeys(keyFile)
          .map((key) => Date.parse(key.activates_at))
          .find((at) => at > Date.now());
        if (upcoming !== undefined && upcoming - Date.now() > 2_000) {
          ticket = (await probe(issuer, trusted)).session;
          if (Date.now() < upcoming - 500) {
            next = upcoming;
            break;
          }
        }
        await sleep(250);
      }

      await until(() => Date.now() > next + 500, 'the rotation');
      const afterRotation = await probe(checker, trusted, ticket);
      expect(afterRotation.reused).toBe(true);
      // Each resumption renews the ticket, sealed with the new key.
      expect(afterRotation.session).toBeDefined();

      await until(() => Date.now() > next + 4_000 + 500, 'the previous key to expire at the checker');
      expect((await probe(checker, trusted, ticket)).reused).toBe(false);
      expect(readKeys(keyFile).length).toBeGreaterThanOrEqual(2);
      // After the grace OpenSSL seals and opens tickets natively with the current key alone (no
      // callback per connection): the renewed ticket resumes, and is not renewed again.
      const native = await probe(checker, trusted, afterRotation.session);
      expect({ reused: native.reused, renewed: native.session !== undefined }).toEqual({ reused: true, renewed: false });
    } finally {
      await Promise.all([issuer.stop(), checker.stop()]);
    }
  });

  test("outside the grace a ticket is opened natively for its key's whole tenure, longer than the grace", async () => {
    const ca = makeThrowawayCa();
    const trusted = [readFileSync(ca.caFile, 'utf8')];
    // A grace of 2 s (twice the 1 s intervals); keys seal for 60 s, so tickets live 62 s.
    const server = await startServer({
      tls: ca,
      args: ['--tls-ticket-key-rotation', '60s', '--heartbeat-interval', '1', '--posture-interval', '1'],
    });
    try {
      const first = await probe(server, trusted);
      expect(first.session).toBeDefined();
      await sleep(3_000);
      const resumed = await probe(server, trusted, first.session);
      expect({ reused: resumed.reused, renewed: resumed.session !== undefined }).toEqual({ reused: true, renewed: false });
    } finally {
      await server.stop();
    }
  });

  test('a key file readable by others, or owned by someone else, is refused at start-up', async () => {
    const ca = makeThrowawayCa();
    const dir = tempDir('device-agent-tickets-');
    const certFile = join(dir, 'cert.pem');
    const keyPem = join(dir, 'key.pem');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyPem, ca.key, { mode: 0o600 });
    const keyFile = join(dir, 'ticket-keys');
    const serve = () =>
      tryServerCli([
        'serve',
        '--db',
        join(dir, 'db'),
        '--port',
        '0',
        '--tls-cert',
        certFile,
        '--tls-key',
        keyPem,
        '--tls-ticket-keys',
        keyFile,
      ]);
    writeFileSync(keyFile, '{}', { mode: 0o640 });
    chmodSync(keyFile, 0o640);
    const open = await serve();
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/ticket key file .* is readable or writable by others \(mode 640\); make it owner-only/);

    if (process.geteuid?.() === 0) {
      chmodSync(keyFile, 0o600);
      chownSync(keyFile, 65534, 65534);
      const foreign = await serve();
      expect(foreign.code).toBe(2);
      expect(foreign.stderr).toMatch(/belongs to uid 65534, not to this user/);
    }
  });
});

describe('certificate renewal', () => {
  function pairFiles(ca: ThrowawayCa) {
    const dir = tempDir('device-agent-cert-');
    const cert = join(dir, 'fullchain.pem');
    const key = join(dir, 'privkey.pem');
    writeFileSync(cert, ca.cert);
    writeFileSync(key, ca.key, { mode: 0o600 });
    return { dir, cert, key };
  }

  /** Replaces a file the way renewal tools do: a new file renamed over the old. */
  function replace(file: string, text: string) {
    writeFileSync(`${file}.new`, text, { mode: 0o600 });
    renameSync(`${file}.new`, file);
  }

  test('new connections get the renewed certificate while a request in flight completes on the old; a bad pair is refused and the old kept', async () => {
    const old = makeThrowawayCa();
    const renewed = makeThrowawayCa();
    const other = makeThrowawayCa();
    const files = pairFiles(old);
    const server = await startServer({ tls: { cert: files.cert, key: files.key } });
    const trusted = [readFileSync(old.caFile, 'utf8'), readFileSync(renewed.caFile, 'utf8')];
    try {
      expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(old.cert));

      // Half of a request's headers before the renewal, the rest after it.
      let inFlightStarted!: () => void;
      const started = new Promise<void>((resolve) => (inFlightStarted = resolve));
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const inFlight = probe(server, trusted, undefined, async (send) => {
        send('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        inFlightStarted();
        await finished;
        send('Connection: close\r\n\r\n');
      });
      await started;

      replace(files.key, renewed.key);
      replace(files.cert, renewed.cert);
      await until(() => server.logs().includes('TLS certificate reloaded'), 'the reload');
      const reloaded = logEntries(server.logs()).find((line) => line.event === 'tls_reloaded');
      expect(reloaded).toMatchObject({ trigger: 'file change', sha256: fingerprintOf(renewed.cert) });
      expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(renewed.cert));

      finish();
      const completed = await inFlight;
      expect(completed.fingerprint).toBe(fingerprintOf(old.cert));
      expect(completed.response).toMatch(/^HTTP\/1\.1 200 /);
      expect(completed.response).toContain('{"status":"ok"}');

      // A certificate without its key: refused, logged, and the renewed pair stays in service.
      replace(files.cert, other.cert);
      await until(() => server.logs().includes('TLS certificate not reloaded'), 'the refusal');
      const refused = logEntries(server.logs()).find((line) => line.event === 'tls_reload_failed');
      expect(refused).toMatchObject({ level: 'error', cert: files.cert });
      expect(refused?.msg).toMatch(
        /the current one is kept: --tls-cert and --tls-key do not hold a matching PEM certificate and private key/,
      );
      expect(server.logs()).not.toContain(renewed.key.split('\n')[1]);
      const still = await probe(server, trusted);
      expect({ fingerprint: still.fingerprint, ok: still.response.includes('{"status":"ok"}') }).toEqual({
        fingerprint: fingerprintOf(renewed.cert),
        ok: true,
      });
    } finally {
      await server.stop();
    }
  });

  /**
   * A certbot-style layout: live/ links into archive/, where a renewal rewrites the files in place,
   * out of sight of the watcher on live/ (the directory the server is given).
   */
  function certbotLayout() {
    const old = makeThrowawayCa();
    const renewed = makeThrowawayCa();
    const root = tempDir('device-agent-live-');
    mkdirSync(join(root, 'archive'));
    mkdirSync(join(root, 'live'));
    writeFileSync(join(root, 'archive', 'cert.pem'), old.cert);
    writeFileSync(join(root, 'archive', 'key.pem'), old.key, { mode: 0o600 });
    symlinkSync('../archive/cert.pem', join(root, 'live', 'cert.pem'));
    symlinkSync('../archive/key.pem', join(root, 'live', 'key.pem'));
    return {
      old,
      renewed,
      tls: { cert: join(root, 'live', 'cert.pem'), key: join(root, 'live', 'key.pem') },
      trusted: [readFileSync(old.caFile, 'utf8'), readFileSync(renewed.caFile, 'utf8')],
      renew: () => {
        writeFileSync(join(root, 'archive', 'key.pem'), renewed.key);
        writeFileSync(join(root, 'archive', 'cert.pem'), renewed.cert);
      },
    };
  }

  test('SIGHUP reloads a pair whose files changed out of sight of the watcher (certbot-style symlinks into another directory)', async () => {
    const { old, renewed, tls, trusted, renew } = certbotLayout();
    const server = await startServer({ tls });
    try {
      renew();
      await sleep(1_500);
      expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(old.cert));
      server.kill('SIGHUP');
      await until(() => server.logs().includes('TLS certificate reloaded'), 'the reload');
      expect(logEntries(server.logs()).find((line) => line.event === 'tls_reloaded')).toMatchObject({ trigger: 'SIGHUP' });
      expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(renewed.cert));
    } finally {
      await server.stop();
    }
  });

  test('with --workers, the supervisor passes SIGHUP to every worker: each reloads, none stops', async () => {
    const { old, renewed, tls, trusted, renew } = certbotLayout();
    const server = await startServer({ tls, args: ['--workers', '2'] });
    const pidsOf = (event: string) =>
      new Set(
        logEntries(server.logs())
          .filter((line) => line.event === event)
          .map((line) => line.pid),
      );
    const listening = () =>
      new Set(
        logEntries(server.logs())
          .filter((line) => line.msg?.startsWith('listening'))
          .map((line) => line.pid),
      );
    try {
      await until(() => listening().size === 2, 'both workers to listen', 60_000);
      renew();
      expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(old.cert));
      server.kill('SIGHUP');
      await until(() => pidsOf('tls_reloaded').size === 2, 'both workers to reload', 30_000);
      expect(pidsOf('tls_reloaded')).toEqual(listening());
      expect(logEntries(server.logs()).find((line) => line.event === 'sighup_forwarded')).toMatchObject({ workers: 2 });
      // New connections, handed to the workers in turn: every one gets the renewed certificate.
      for (let i = 0; i < 6; i += 1) expect((await probe(server, trusted)).fingerprint).toBe(fingerprintOf(renewed.cert));
      expect(server.logs()).not.toContain('a worker died');
    } finally {
      await server.stop();
    }
  });
});

describe('SIGHUP without TLS', () => {
  test('is logged and ignored, by one process and by every worker of --workers; the server serves on and stops cleanly', async () => {
    for (const args of [[], ['--workers', '2']]) {
      const server = await startServer({ args });
      const ignoredBy = () => logEntries(server.logs()).filter((line) => line.event === 'sighup_ignored');
      const workers = args.length === 0 ? 1 : 2;
      try {
        await until(
          () => logEntries(server.logs()).filter((line) => line.msg?.startsWith('listening')).length === workers,
          'listening',
          60_000,
        );
        server.kill('SIGHUP');
        await until(() => ignoredBy().length === workers, 'the SIGHUP to be logged', 30_000);
        expect(ignoredBy()[0]).toMatchObject({ level: 'info', msg: 'SIGHUP: nothing to reload (serving without --tls-cert); ignored' });
        const health = await fetch(`${server.url}/healthz`);
        expect(health.status).toBe(200);
      } finally {
        // Exit 0, not killed by the signal.
        await server.stop();
      }
    }
  });
});

describe('the agent over TLS', () => {
  /** A full garbage collection: undici's own session cache holds sessions only weakly. */
  function collectGarbage(): void {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  }

  test('resumes its session across two heartbeats on separate connections; a revoked key is refused on the resumed session', async () => {
    const ca = makeThrowawayCa();
    const server = await startServer({ tls: ca, args: ['--log-level', 'debug'] });
    const api = createApiClient({ serverUrl: server.url, caFile: ca.caFile });
    try {
      const created = await server.createDevice();
      const apiKey = (await api.enroll(created.enrollment_token)).api_key;
      await api.heartbeat(apiKey, heartbeatBody());
      // The server closes idle keep-alive connections after 5 s: the next heartbeat needs a new one.
      await sleep(5_500);
      collectGarbage();
      await api.heartbeat(apiKey, heartbeatBody());
      const heartbeats = () =>
        logEntries(server.logs()).filter((line) => line.msg === 'request' && line.path === '/api/agent/v1/heartbeat');
      await until(() => heartbeats().length === 2, 'the second heartbeat in the log');
      expect(heartbeats()[1]).toMatchObject({ status: 200, tls_resumed: true });

      await server.revokeDevice(created.device_id);
      await sleep(5_500);
      const refused = await api.heartbeat(apiKey, heartbeatBody()).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(CredentialsRejectedError);
      await until(() => heartbeats().length === 3, 'the third heartbeat in the log');
      expect(heartbeats()[2]).toMatchObject({ status: 401, tls_resumed: true });
    } finally {
      await api.close();
      await server.stop();
    }
  });
});

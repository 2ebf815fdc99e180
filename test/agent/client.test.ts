// The API client in process: against the real reference server for the happy paths, and against
// small stubs for the answers a correct server does not give (429, 5xx, redirects, bad bodies,
// stalls). Every failure must come out as the typed error the caller acts on.
import { getEventListeners, once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  CredentialsRejectedError,
  InvalidRequestError,
  InvalidResponseError,
  PayloadTooLargeError,
  RetryableError,
} from '../../src/agent/api';
import { createApiClient, parseRetryAfter } from '../../src/agent/client';
import { InvalidInputError } from '../../src/agent/errors';
import { ROUTES } from '../../src/protocol/schemas';
import { USER_AGENT, VERSION } from '../../src/version';
import { tempDir } from '../support/agent';
import { startServer, type RunningServer } from '../support/server';
import { makeThrowawayCa } from './throwawayCa';
import { stringContaining } from '../support/matchers';

const identity = {
  hardware_uuid: 'hw-client-test',
  hostname: 'h',
  platform: 'LINUX' as const,
  os_version: 'Debian 12',
  agent_version: VERSION,
};
const KEY = 'c'.repeat(96);

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A stub answering every request with `respond`, recording what it received. */
async function stub(respond: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      respond(req, res);
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('against the real reference server', () => {
  it('enrolls, heartbeats, uploads (with the report id) and unenrolls, with the spec headers', async () => {
    const device = await server.createDevice();
    const api = createApiClient({ serverUrl: server.url });
    const { api_key: apiKey } = await api.enroll(device.enrollment_token);
    expect(apiKey).toMatch(/^[0-9a-f]{96}$/);
    const beat = await api.heartbeat(apiKey, identity);
    expect(beat.device_id).toBe(device.device_id);
    const accepted = await api.postures(apiKey, {
      results: [{ check_key: 'DISK_ENCRYPTION', status: 'PASS', observed_at: new Date().toISOString(), evidence: { method: 'luks' } }],
    });
    expect(accepted.reportId).toEqual(expect.any(String));
    const shown = await server.showDevice(device.device_id);
    expect(shown.postures[0]?.correlation_id).toBe(accepted.reportId);
    await api.unenroll(apiKey);
    await expect(api.heartbeat(apiKey, identity)).rejects.toBeInstanceOf(CredentialsRejectedError);
    await expect(api.enroll(device.enrollment_token)).rejects.toMatchObject({
      name: 'CredentialsRejectedError',
      status: 401,
      route: 'enroll',
    });
    await api.close();
  });

  it('sends Accept, Content-Type, User-Agent and Authorization only where due', async () => {
    const recording = await stub((req, res) => (req.url === ROUTES.enroll ? json(res, 200, { api_key: KEY }) : res.writeHead(204).end()));
    const api = createApiClient({ serverUrl: recording.url });
    await api.enroll('a'.repeat(96));
    await api.unenroll(KEY);
    const [enroll, unenroll] = recording.seen;
    for (const request of [enroll!, unenroll!]) {
      expect(request.method).toBe('POST');
      expect(request.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json', 'user-agent': USER_AGENT });
    }
    expect(USER_AGENT).toBe(`device-agent/${VERSION}`);
    expect(enroll!.url).toBe(ROUTES.enroll);
    expect(JSON.parse(enroll!.body)).toEqual({ token: 'a'.repeat(96) });
    expect(enroll!.headers.authorization).toBeUndefined();
    expect(unenroll!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(unenroll!.body)).toEqual({});
    await api.close();
    await recording.close();
  });
});

describe('failures, typed by what the caller must do', () => {
  it.each([
    [400, { error: 'bad_request', message: 'hostname is required' }, InvalidRequestError, 'hostname is required'],
    [404, { error: 'not_found', message: 'no route' }, InvalidRequestError, 'no route'],
    [401, { error: 'unauthorized', message: 'invalid API key' }, CredentialsRejectedError, 'invalid API key'],
    [409, { error: 'conflict', message: 'hardware_uuid in use' }, ConflictError, 'hardware_uuid in use'],
    [413, { error: 'payload_too_large', message: 'too big' }, PayloadTooLargeError, 'too big'],
    [500, 'not json at all', RetryableError, undefined],
    [502, { error: 'internal_error', message: 'bad gateway' }, RetryableError, 'bad gateway'],
  ] as const)('%i -> %o', async (status, body, type, serverMessage) => {
    const answering = await stub((_req, res) => json(res, status, body));
    const api = createApiClient({ serverUrl: answering.url });
    const error = await api.heartbeat(KEY, identity).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ status, route: 'heartbeat', serverMessage });
    expect(answering.seen).toHaveLength(1); // no retry inside the client
    await api.close();
    await answering.close();
  });

  it('429 and 503 carry Retry-After in seconds or as an HTTP date', async () => {
    const date = new Date(Date.now() + 90_000).toUTCString();
    const answers = [
      [429, { 'retry-after': '7' }],
      [503, { 'retry-after': date }],
      [503, {}],
    ] as const;
    let next = 0;
    const answering = await stub((_req, res) => {
      const [status, headers] = answers[next++]!;
      json(res, status, { error: status === 429 ? 'too_many_requests' : 'internal_error', message: 'later' }, headers);
    });
    const api = createApiClient({ serverUrl: answering.url });
    const errors: RetryableError[] = [];
    for (let i = 0; i < answers.length; i++) {
      errors.push(
        await api.heartbeat(KEY, identity).then(
          () => expect.fail('expected a failure'),
          (err: RetryableError) => err,
        ),
      );
    }
    expect(errors.map((e) => [e.constructor, e.status])).toEqual([
      [RetryableError, 429],
      [RetryableError, 503],
      [RetryableError, 503],
    ]);
    expect(errors[0]!.retryAfterMs).toBe(7000);
    expect(errors[1]!.retryAfterMs).toBeGreaterThan(85_000);
    expect(errors[1]!.retryAfterMs).toBeLessThanOrEqual(90_000);
    expect(errors[2]!.retryAfterMs).toBeUndefined();
    await api.close();
    await answering.close();
  });

  it('parses Retry-After strictly', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('a 200 without a 96-hex api_key is an invalid response, naming the field but not the value', async () => {
    for (const body of [{ api_key: 'short' }, { key: KEY }, 'html'] as const) {
      const answering = await stub((_req, res) => json(res, 200, body));
      const api = createApiClient({ serverUrl: answering.url });
      const error = await api.enroll('a'.repeat(96)).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect((error as Error).message).not.toContain('short');
      if (typeof body === 'object') expect((error as Error).message).toContain('api_key');
      await api.close();
      await answering.close();
    }
  });

  it('does not follow redirects, and never sends the key to the redirect target', async () => {
    const target = await stub((_req, res) =>
      json(res, 200, { device_id: 'x', heartbeat_interval_seconds: 1, posture_interval_seconds: 1, server_time: new Date().toISOString() }),
    );
    const redirecting = await stub((_req, res) => res.writeHead(307, { location: `${target.url}${ROUTES.heartbeat}` }).end());
    const api = createApiClient({ serverUrl: redirecting.url });
    const error = await api.heartbeat(KEY, identity).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toMatch(/307 .*redirects are not followed/);
    expect(target.seen).toHaveLength(0);
    await api.close();
    await Promise.all([target.close(), redirecting.close()]);
  });

  it('connection refused, stalled headers and a caller deadline are retryable', async () => {
    const refused = createApiClient({ serverUrl: 'http://127.0.0.1:1' });
    await expect(refused.heartbeat(KEY, identity)).rejects.toMatchObject({
      name: 'RetryableError',
      message: stringContaining('ECONNREFUSED'),
    });

    const stalling = await stub(() => undefined); // never answers
    const slowHeaders = createApiClient({ serverUrl: stalling.url, timeouts: { headersMs: 200 } });
    const started = Date.now();
    await expect(slowHeaders.heartbeat(KEY, identity)).rejects.toMatchObject({
      name: 'RetryableError',
      message: stringContaining('UND_ERR_HEADERS_TIMEOUT'),
    });
    expect(Date.now() - started).toBeLessThan(5_000);

    const deadline = createApiClient({ serverUrl: stalling.url });
    await expect(deadline.heartbeat(KEY, identity, { timeoutMs: 150 })).rejects.toMatchObject({
      name: 'RetryableError',
      message: stringContaining('timed out'),
    });

    // The caller's own abort (shutdown) comes back as the abort, not as a server problem.
    const controller = new AbortController();
    const pending = deadline.heartbeat(KEY, identity, { signal: controller.signal });
    controller.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    await Promise.all([refused.close(), slowHeaders.close(), deadline.close()]);
    await stalling.close();
  });

  it("keeps nothing in the caller's signal once a request ends (the daemon's lives as long as the process)", async () => {
    const answering = await stub((_req, res) =>
      json(res, 200, { device_id: 'x', heartbeat_interval_seconds: 1, posture_interval_seconds: 1, server_time: new Date().toISOString() }),
    );
    const api = createApiClient({ serverUrl: answering.url });
    /** What AbortSignal.any leaves in a source signal on Node 20: a set of references to each signal made from it. */
    const dependants = (signal: AbortSignal) => {
      const symbol = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
      return symbol ? (signal as unknown as Record<symbol, Set<unknown> | undefined>)[symbol]?.size : undefined;
    };
    const probe = new AbortController();
    AbortSignal.any([probe.signal]);
    const anyKeepsReferences = dependants(probe.signal) === 1; // on this runtime (Node 20)

    const daemonSignal = new AbortController().signal;
    for (let i = 0; i < 50; i++) await api.heartbeat(KEY, identity, { signal: daemonSignal, timeoutMs: 10_000 });
    expect(getEventListeners(daemonSignal, 'abort')).toEqual([]);
    if (anyKeepsReferences) expect(dependants(daemonSignal) ?? 0).toBe(0); // it was 50
    await api.close();
    await answering.close();
  });

  it('refuses to send a malformed key', async () => {
    const recording = await stub((_req, res) => res.writeHead(204).end());
    const api = createApiClient({ serverUrl: recording.url });
    await expect(api.unenroll('')).rejects.toBeInstanceOf(InvalidRequestError);
    expect(recording.seen).toHaveLength(0);
    await api.close();
    await recording.close();
  });
});

describe('TLS', () => {
  it('verifies always: a CA file for another CA does not make an untrusted server trusted', async () => {
    const [trusted, other] = [makeThrowawayCa(), makeThrowawayCa()];
    const https = createTlsServer({ cert: other.cert, key: other.key }, (_req, res) => json(res, 200, { api_key: KEY }));
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    const url = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;

    const wrongCa = createApiClient({ serverUrl: url, caFile: trusted.caFile });
    await expect(wrongCa.enroll('a'.repeat(96))).rejects.toMatchObject({ name: 'RetryableError', message: stringContaining('--ca-file') });
    const rightCa = createApiClient({ serverUrl: url, caFile: other.caFile });
    await expect(rightCa.enroll('a'.repeat(96))).resolves.toEqual({ api_key: KEY });
    await Promise.all([wrongCa.close(), rightCa.close()]);
    https.closeAllConnections();
    https.close();
  });

  it('rejects a CA file that is missing or holds no valid certificate, as input errors', () => {
    expect(() => createApiClient({ serverUrl: server.url, caFile: '/nonexistent.pem' })).toThrow(InvalidInputError);
    const garbage = join(tempDir(), 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    expect(() => createApiClient({ serverUrl: server.url, caFile: garbage })).toThrow(/contains an invalid certificate/);
  });
});

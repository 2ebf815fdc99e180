// A seeded, bounded fuzz pass: malformed bodies, headers and content types on every route must
// never produce a 5xx, and every error must use the contract's body.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { NO_RATE_LIMITS, startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, heartbeatBody, result, type Answer } from './client';
import { stringContaining } from '../support/matchers';

const SEED = 0x5eed_2026;
const CASES_PER_ROUTE = 150;
const ERROR_CODES_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  409: 'conflict',
  413: 'payload_too_large',
};

let server: RunningServer;
beforeAll(async () => {
  // One device sends many requests here: the per-device limits are tested in rateLimits.test.ts.
  server = await startServer({ args: NO_RATE_LIMITS });
});
afterAll(async () => {
  await server?.stop();
});

/** mulberry32: small, fast, deterministic. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof generator>;

const STRINGS = [
  '',
  ' ',
  'PASS',
  'LINUX',
  'linux',
  '\u0000',
  '\ud800',
  '😀'.repeat(50),
  'x'.repeat(300),
  '__proto__',
  'rpt_',
  'dev_0',
  '2024-01-01T00:00:00Z',
  '1e999',
  'null',
];

function randomValue(r: Random, depth = 0): unknown {
  switch (r.int(depth > 3 ? 4 : 7)) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick([0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, 42]);
    case 3:
      return r.pick(STRINGS);
    case 4:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: r.int(4) }, () => [r.pick(['a', 'token', 'results', 'status', '']), randomValue(r, depth + 1)]),
      );
  }
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { d: value };
  return value;
}

/** Changes one thing in a valid body (recursively into objects and arrays). */
function mutate(r: Random, value: unknown): unknown {
  if (Array.isArray(value) && value.length > 0 && r.next() < 0.7) {
    const copy = [...(value as unknown[])];
    const i = r.int(copy.length);
    copy[i] = mutate(r, copy[i]);
    return copy;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && r.next() < 0.8) {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const key = r.pick(keys.length > 0 ? keys : ['x']);
    switch (r.int(4)) {
      case 0:
        delete copy[key];
        break;
      case 1:
        copy[key] = randomValue(r);
        break;
      case 2:
        copy[key] = mutate(r, copy[key]);
        break;
      default:
        copy[r.pick(['unknown', 'evidence', 'correlation_id'])] = randomValue(r);
    }
    return copy;
  }
  return randomValue(r);
}

function rawBody(r: Random, valid: unknown): string | Buffer {
  const text = JSON.stringify(mutate(r, valid)) ?? 'undefined';
  switch (r.int(9)) {
    case 0:
      return text.slice(0, r.int(text.length + 1));
    case 1:
      return Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)));
    case 2:
      return '['.repeat(20_000) + ']'.repeat(20_000);
    case 3:
      return `${text.slice(0, -1)},"a":1,"a":2}`;
    case 4:
      return `${text}${r.pick(['x', '\u0000', ',', '}'])}`;
    default:
      return text;
  }
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/octet-stream', undefined];

function expectNoServerError(answer: Answer, label: string): void {
  expect(answer.status, label).toBeLessThan(500);
  if (answer.status >= 400) {
    expect(answer.body?.error, `${label}: ${answer.text}`).toBe(ERROR_CODES_BY_STATUS[answer.status]);
    expect(typeof answer.body?.message, label).toBe('string');
  }
}

test('malformed requests on every route never get a 5xx', async () => {
  const r = generator(SEED);
  const active = await enrolledDevice(server);
  const pending = await enrolledDevice(server, { activate: false });
  const validBodies: Record<string, () => unknown> = {
    [ROUTES.enroll]: () => ({ token: 'ab'.repeat(48) }),
    [ROUTES.heartbeat]: () => heartbeatBody({ hardware_uuid: active.hardwareUuid }),
    [ROUTES.postures]: () => ({
      results: [result(), result({ check_key: 'DEEP', evidence: nested(r.pick([31, 32, 33, 500])) as Record<string, unknown> })],
    }),
    [ROUTES.unenroll]: () => r.pick([[], 'x', 1]),
  };
  // Mostly a valid key, so that most cases reach body parsing and validation.
  const authorizations = [
    ...Array<string>(4).fill(`Bearer ${active.apiKey}`),
    `Bearer ${pending.apiKey}`,
    'Bearer ',
    'Bearer x',
    `Bearer ${'0'.repeat(96)}`,
    undefined,
  ];

  for (const [route, valid] of Object.entries(validBodies)) {
    for (let i = 0; i < CASES_PER_ROUTE; i++) {
      const headers: Record<string, string> = {};
      const contentType = r.pick(CONTENT_TYPES);
      if (contentType) headers['content-type'] = contentType;
      const authorization = r.pick(authorizations);
      if (authorization) headers.authorization = authorization;
      const answer = await call(server, route, { raw: rawBody(r, valid()), headers });
      expectNoServerError(answer, `${route} case ${i} (seed ${SEED})`);
    }
  }

  expect((await call(server, '/healthz', { method: 'GET' })).status).toBe(200);
  expect(server.logs()).not.toMatch(/"level":"(error|fatal)"/);
});

test('evidence nested 100,000 levels deep (within 1 MiB) gets 400, not a crash', async () => {
  const device = await enrolledDevice(server);
  const depth = 100_000;
  const evidence = '{"d":'.repeat(depth) + '1' + '}'.repeat(depth);
  const raw = `{"results":[{"check_key":"DEEP","status":"PASS","observed_at":"2024-01-01T00:00:00Z","evidence":${evidence}}]}`;
  const answer = await call(server, ROUTES.postures, { apiKey: device.apiKey, raw, headers: { 'content-type': 'application/json' } });
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({ error: 'bad_request', message: stringContaining('results[0].evidence') });
});

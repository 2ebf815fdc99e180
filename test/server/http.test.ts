// HTTP-level behaviour shared by all routes: 404/405, content types, JSON parsing, early 413,
// health check, error body and headers.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { logEntries, startServer, type RunningServer } from '../support/server';
import { call, enrolledDevice, expectError, heartbeatBody, type EnrolledDevice } from './client';

let server: RunningServer;
let device: EnrolledDevice;
beforeAll(async () => {
  server = await startServer();
  device = await enrolledDevice(server);
});
afterAll(async () => {
  await server?.stop();
});

const AGENT_ROUTES = Object.values(ROUTES);

describe.concurrent('routing', () => {
  test.each(AGENT_ROUTES.flatMap((route) => ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'].map((method) => [method, route])))(
    '%s %s: 405 with Allow: POST',
    async (method, route) => {
      const answer = await call(server, route, { method, apiKey: device.apiKey });
      expectError(answer, 405, 'method_not_allowed');
      expect(answer.headers.allow).toBe('POST');
    },
  );

  test.each(AGENT_ROUTES)('HEAD %s: 405 with Allow: POST and no body', async (route) => {
    const answer = await call(server, route, { method: 'HEAD' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('POST');
    expect(answer.text).toBe('');
  });

  test('a wrong method is refused before the body is read', async () => {
    const answer = await call(server, ROUTES.postures, {
      method: 'PUT',
      raw: 'x'.repeat(2 * 1024 * 1024),
      headers: { 'content-type': 'application/json' },
    });
    expectError(answer, 405, 'method_not_allowed');
  });

  test.each([
    ['GET', '/'],
    ['POST', '/api/agent/v1'],
    ['POST', '/api/agent/v1/'],
    ['POST', '/api/agent/v2/enroll'],
    ['POST', '/api/agent/v1/enroll/'],
    ['POST', '/api/agent/v1/devices'],
    ['GET', '/healthz/x'],
  ])('%s %s: 404 with the error body', async (method, path) => {
    expectError(await call(server, path, { method, json: method === 'POST' ? {} : undefined }), 404, 'not_found');
  });

  test('a query string does not change the route', async () => {
    expectError(await call(server, `${ROUTES.heartbeat}?x=1`, { json: heartbeatBody() }), 401, 'unauthorized');
  });

  test('GET /healthz: 200; other methods there: 405', async () => {
    const answer = await call(server, '/healthz', { method: 'GET' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
    expect((await call(server, '/healthz', { method: 'HEAD' })).status).toBe(200);
    const post = await call(server, '/healthz', { method: 'POST' });
    expectError(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe.concurrent('request bodies', () => {
  test.each([
    ['text/plain', '{"results":[]}'],
    ['application/x-www-form-urlencoded', 'results='],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/jsonx', '{"results":[]}'],
    ['not a media type', '{"results":[]}'],
  ])('Content-Type %s: 400', async (contentType, raw) => {
    expectError(
      await call(server, ROUTES.postures, { apiKey: device.apiKey, raw, headers: { 'content-type': contentType } }),
      400,
      'bad_request',
    );
  });

  test('a body without Content-Type: 400', async () => {
    expectError(await call(server, ROUTES.postures, { apiKey: device.apiKey, raw: '{"results":[]}' }), 400, 'bad_request');
  });

  test.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])(
    'Content-Type %s is JSON',
    async (contentType) => {
      const answer = await call(server, ROUTES.postures, {
        apiKey: device.apiKey,
        raw: '{"results":[]}',
        headers: { 'content-type': contentType },
      });
      expect(answer.status).toBe(204);
    },
  );

  test.each([
    ['truncated JSON', '{"results":['],
    ['not JSON at all', 'results'],
    ['trailing garbage', '{"results":[]} x'],
    ['single quotes', "{'results':[]}"],
    ['a __proto__ key', '{"results":[],"__proto__":{"admin":true}}'],
    ['a constructor.prototype key', '{"results":[],"constructor":{"prototype":{"admin":true}}}'],
  ])('%s: 400', async (_what, raw) => {
    const answer = await call(server, ROUTES.postures, { apiKey: device.apiKey, raw, headers: { 'content-type': 'application/json' } });
    expectError(answer, 400, 'bad_request');
  });

  test('an empty body where one is required: 400', async () => {
    expectError(await call(server, ROUTES.enroll, { raw: '', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await call(server, ROUTES.enroll), 400, 'bad_request');
  });
});

describe('early refusal of oversized bodies', () => {
  test('a Content-Length over the limit gets 413 before the body is sent', async () => {
    const head = [
      `POST ${ROUTES.postures} HTTP/1.1`,
      `Host: ${new URL(server.url).host}`,
      `Authorization: Bearer ${device.apiKey}`,
      'Content-Type: application/json',
      `Content-Length: ${100 * 1024 * 1024}`,
      '',
      '{"results":[',
    ].join('\r\n');
    const { port, hostname } = new URL(server.url);
    const response = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(head));
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received.includes('\r\n\r\n') && received.includes('}')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no answer without the body; got: ${received}`)), 5_000).unref();
    });
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).toContain('"error":"payload_too_large"');
  });
});

describe('bodies that are not JSON', () => {
  test.each([ROUTES.heartbeat, ROUTES.postures, ROUTES.enroll])(
    '%s: the answer ends the connection (the client may still be sending); a JSON body the route refuses does not',
    async (route) => {
      const own = await enrolledDevice(server);
      const broken = await call(server, route, { apiKey: own.apiKey, raw: '{"x', headers: { 'content-type': 'application/json' } });
      expectError(broken, 400, 'bad_request');
      expect(broken.headers.connection).toBe('close');
      const refused = await call(server, route, { apiKey: own.apiKey, json: { x: 1 } });
      expectError(refused, 400, 'bad_request');
      expect(refused.headers.connection).toBe('keep-alive');
    },
  );
});

describe('requests cut off', () => {
  test.each([ROUTES.heartbeat, ROUTES.postures])('%s: a client gone in the middle of its body leaves nothing behind', async (route) => {
    const body = JSON.stringify(heartbeatBody({ hardware_uuid: device.hardwareUuid }));
    const head = [
      `POST ${route} HTTP/1.1`,
      `Host: ${new URL(server.url).host}`,
      `Authorization: Bearer ${device.apiKey}`,
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      '',
      body.slice(0, 20),
    ].join('\r\n');
    const { port, hostname } = new URL(server.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(head, () => setTimeout(() => socket.destroy(), 200)));
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // The server goes on answering, and logged no failure of its own for the request it lost.
    const ok = await call(server, ROUTES.heartbeat, { apiKey: device.apiKey, json: heartbeatBody({ hardware_uuid: device.hardwareUuid }) });
    expect(ok.status).toBe(200);
    expect(logEntries(server.logs()).filter((entry) => entry.msg === 'request failed')).toEqual([]);
  });
});

describe('answers', () => {
  test('JSON answers and errors carry Cache-Control: no-store', async () => {
    const ok = await call(server, ROUTES.heartbeat, { apiKey: device.apiKey, json: heartbeatBody({ hardware_uuid: device.hardwareUuid }) });
    expect(ok.status).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    const error = await call(server, ROUTES.heartbeat, { json: {} });
    expect(error.headers['cache-control']).toBe('no-store');
    expect(error.headers['content-type']).toMatch(/^application\/json/);
  });
});

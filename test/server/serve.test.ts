// `device-agent-server serve` as an operator meets it: start-up messages, migrations, TLS,
// bad flags, and a clean stop on SIGTERM/SIGINT with in-flight requests finishing.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sqlite as Database } from '../../src/server/db/sqliteDriver';
import { Agent } from 'undici';
import { beforeAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/protocol/schemas';
import { SCHEMA_VERSION } from '../../src/server/db/migrations';
import { logEntries, SERVER_BIN, startServer, tryServerCli } from '../support/server';
import { call, enroll, enrolledDevice, expectUsageError, heartbeatBody } from './client';
import { makeThrowawayCa } from '../agent/throwawayCa';

const scratch = mkdtempSync(join(tmpdir(), 'device-agent-serve-test-'));

describe('start-up', () => {
  test('announces its URL, warns about plain HTTP, prints a working device create command, migrates the database', async () => {
    const server = await startServer();
    try {
      const lines = logEntries(server.logs());
      expect(lines.filter((l) => typeof l.url === 'string')).toEqual([
        expect.objectContaining({ msg: `listening on ${server.url}`, url: server.url, public_url: server.url }),
      ]);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines.some((l) => l.level === 'warn' && /production belongs behind TLS/.test(l.msg ?? ''))).toBe(true);

      const command = lines.find((l) => typeof l.command === 'string')?.command;
      expect(command).toBe(`node dist/device-agent-server.cjs device create --db ${server.dbPath} --org <organization>`);
      const [node, ...args] = String(command).replace('<organization>', 'banner-org').split(' ');
      expect(node).toBe('node');
      const created = execFileSync(process.execPath, args, { encoding: 'utf8' });
      expect(created).toContain('Created device dev_');
      expect(created).toContain('in organization "banner-org"');

      const db = new Database(server.dbPath, { readonly: true, fileMustExist: true });
      try {
        expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        db.close();
      }
      expect((await call(server, '/healthz', { method: 'GET' })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test('--public-url is what device create prints', async () => {
    const server = await startServer({ args: ['--public-url', 'https://agents.example.com:8443'] });
    try {
      expect(logEntries(server.logs()).find((l) => l.url)).toMatchObject({
        url: server.url,
        public_url: 'https://agents.example.com:8443',
      });
      expect((await server.createDevice()).server_url).toBe('https://agents.example.com:8443');
    } finally {
      await server.stop();
    }
  });

  test('a database from a newer version is refused with a clear message', async () => {
    const path = join(scratch, 'newer.db');
    const db = new Database(path);
    db.pragma('user_version = 99');
    db.close();
    await expect(startServer({ args: ['--db', path] })).rejects.toThrow(
      new RegExp(`schema is version 99, newer than this program knows \\(${SCHEMA_VERSION}\\)`),
    );
  });

  test('a file that is not a database is refused with a clear message', async () => {
    const path = join(scratch, 'not-a-db.db');
    writeFileSync(path, 'hello, this is not SQLite '.repeat(100));
    expectUsageError(await tryServerCli(['device', 'list', '--db', path]), /cannot use .* as a device-agent-server database/);
    await expect(startServer({ args: ['--db', path] })).rejects.toThrow(/exited with code 2/);
  });
});

describe.concurrent('invalid serve flags: exit 2 with a clear message', () => {
  const db = join(scratch, 'flags.db');
  const garbage = join(scratch, 'garbage.pem');
  writeFileSync(garbage, 'not a certificate');
  test.each([
    [['--port', '70000'], /--port.*0 to 65535/],
    [['--port', 'http'], /--port.*whole number/],
    [['--heartbeat-interval', '0'], /--heartbeat-interval.*1 to 86400/],
    [['--posture-interval', '1.5'], /--posture-interval/],
    [['--log-level', 'loud'], /--log-level.*loud/],
    [['--public-url', 'agents.example.com'], /--public-url.*origin/],
    [['--tls-cert', garbage], /--tls-cert and --tls-key go together/],
    [['--tls-cert', join(scratch, 'none.pem'), '--tls-key', garbage], /cannot read --tls-cert .*ENOENT/],
    [['--tls-cert', garbage, '--tls-key', garbage], /do not hold a matching PEM certificate and private key/],
  ])('%j', async (flags, message) => {
    expectUsageError(await tryServerCli(['serve', '--db', db, '--port', '0', ...flags]), message);
  });

  test('no --db', async () => {
    expectUsageError(await tryServerCli(['serve']), /--db/);
  });

  test('a busy port', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      expectUsageError(await tryServerCli(['serve', '--db', db, '--port', String(port)]), /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });
});

describe('TLS', () => {
  let cert: string;
  let key: string;
  let caCert: string;
  beforeAll(() => {
    const ca = makeThrowawayCa();
    ({ cert, key } = ca);
    caCert = readFileSync(ca.caFile, 'utf8');
  });

  test('--tls-cert/--tls-key serve HTTPS; device create prints the https URL', async () => {
    const server = await startServer({ tls: { cert, key } });
    const trusting = new Agent({ connect: { ca: caCert } });
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(server.logs()).not.toContain('production belongs behind TLS');
      expect((await call(server, '/healthz', { method: 'GET', dispatcher: trusting })).status).toBe(200);
      const device = await server.createDevice();
      expect(device.server_url).toBe(server.url);
      expect(device.enrollment_link).toContain(`server=${encodeURIComponent(server.url)}`);
      const enrolled = await call(server, ROUTES.enroll, { json: { token: device.enrollment_token }, dispatcher: trusting });
      expect(enrolled.status).toBe(200);
      // Plain HTTP on the TLS port gets no API answer.
      const plain = await call({ url: server.url.replace('https:', 'http:') }, '/healthz', { method: 'GET' }).catch((e: Error) => e);
      expect(plain instanceof Error ? 'refused' : plain.status).not.toBe(200);
    } finally {
      await trusting.close();
      await server.stop();
    }
  });
});

describe('stopping', () => {
  test('SIGTERM: no new connections, the in-flight request finishes, the database is closed, exit 0', async () => {
    const server = await startServer();
    const device = await enrolledDevice(server, { activate: false });
    const body = JSON.stringify(heartbeatBody());
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    const until = async (condition: () => boolean | Promise<boolean>, what: string) => {
      for (const deadline = Date.now() + 60_000; !(await condition());) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    // A first request on this connection proves the server has accepted it.
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
    await until(() => response.includes('{"status":"ok"}'), 'the health answer');
    response = '';
    // Headers and part of the body: the request is in flight when the signal arrives.
    socket.write(
      [
        `POST ${ROUTES.heartbeat} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        `Authorization: Bearer ${device.apiKey}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        body.slice(0, 20),
      ].join('\r\n'),
    );
    const stopped = server.stop();
    await until(() => server.logs().includes('stopping: finishing in-flight requests'), 'the stop to begin');
    const tryConnect = () =>
      new Promise<string>((resolve) => {
        const late = connect(Number(port), hostname);
        late.once('connect', () => {
          late.destroy();
          resolve('connected');
        });
        late.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
    await until(async () => (await tryConnect()) === 'ECONNREFUSED', 'new connections to be refused');
    expect(response).toBe('');
    socket.end(body.slice(20));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response).toContain(`"device_id":"${device.deviceId}"`);
    await stopped;
    const messages = logEntries(server.logs()).map((l) => l.msg);
    expect(messages).toEqual(expect.arrayContaining(['stopping: finishing in-flight requests', 'stopped']));
    // SQLite removes the WAL when its last connection closes cleanly.
    expect(existsSync(`${server.dbPath}-wal`)).toBe(false);
    expect((await server.showDevice(device.deviceId)).state).toBe('ACTIVE');
  });

  test('SIGINT stops it the same way (exit 0)', async () => {
    const child = spawn(process.execPath, [SERVER_BIN, 'serve', '--db', join(scratch, 'sigint.db'), '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await new Promise<void>((resolve) => {
      const check = () => (output.includes('"url"') ? resolve() : setTimeout(check, 20));
      check();
    });
    const url = logEntries(output).find((l) => l.url)!.url;
    expect((await enroll({ url } as never, 'f'.repeat(96))).status).toBe(401);
    child.kill('SIGINT');
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(output).toContain('"signal":"SIGINT"');
  });
});

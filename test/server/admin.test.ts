// The admin CLI (`device create|list|show|revoke`) as a real process, alongside a running server.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VERSION } from '../../src/version';
import { NO_RATE_LIMITS, runServerCli, startServer, tryServerCli as cli, type RunningServer } from '../support/server';
import { enroll, enrolledDevice, expectUsageError, heartbeat, postures, result } from './client';
import type { CreatedDevice, DeviceSummary } from '../../src/server/admin';
import { parseJson } from '../support/json';
import { anyString, stringMatching } from '../support/matchers';

let server: RunningServer;
beforeAll(async () => {
  // One device's uploads in a loop below: the per-device limits are tested in rateLimits.test.ts.
  server = await startServer({ args: NO_RATE_LIMITS });
});
afterAll(async () => {
  await server?.stop();
});

const HEX96 = /^[0-9a-f]{96}$/;

describe.concurrent('device create', () => {
  test('--json prints the device, token, server URL and enrollment link', async () => {
    const created = parseJson<CreatedDevice>(
      (await runServerCli(['device', 'create', '--db', server.dbPath, '--org', 'acme', '--json'])).stdout,
    );
    expect(created).toEqual({
      device_id: stringMatching(/^dev_[0-9a-f]{32}$/),
      org: 'acme',
      enrollment_token: stringMatching(HEX96),
      server_url: server.url,
      enrollment_link: `device-agent://enroll?server=${encodeURIComponent(server.url)}&token=${created.enrollment_token}`,
      token_expires_at: anyString(),
    });
  });

  test('human output shows the token, the server URL and the link, and how to enroll', async () => {
    const { stdout } = await runServerCli(['device', 'create', '--db', server.dbPath, '--org', 'acme', '--name', "Bob's laptop"]);
    const token = /Enrollment token\s+([0-9a-f]{96})/.exec(stdout)?.[1];
    expect(token).toMatch(HEX96);
    expect(stdout).toMatch(/^Created device dev_[0-9a-f]{32} in organization "acme" \(PENDING\)\./);
    expect(stdout).toContain(`Server URL        ${server.url}`);
    expect(stdout).toContain(`device-agent://enroll?server=${encodeURIComponent(server.url)}&token=${token}`);
    expect(stdout).toContain(`device-agent enroll --server ${server.url} --token-file <file>`);
    expect((await enroll(server, token)).status).toBe(200);
  });

  test('--public-url overrides the announced server URL', async () => {
    const { stdout } = await runServerCli([
      'device',
      'create',
      '--db',
      server.dbPath,
      '--org',
      'acme',
      '--public-url',
      'https://agents.example.com/',
      '--json',
    ]);
    const created = parseJson<CreatedDevice>(stdout);
    expect(created.server_url).toBe('https://agents.example.com');
    expect(created.enrollment_link).toMatch(/^device-agent:\/\/enroll\?server=https%3A%2F%2Fagents\.example\.com&token=[0-9a-f]{96}$/);
  });

  test.each(['7', '0s', '1w', '1.5h'])('--token-ttl %j: exit 2 with a clear message', async (ttl) => {
    expectUsageError(
      await cli(['device', 'create', '--db', server.dbPath, '--org', 'acme', '--token-ttl', ttl]),
      /--token-ttl.*30s, 15m, 12h, 7d/s,
    );
  });

  test.each([
    ['no --org', ['device', 'create', '--db', 'DB'], /--org/],
    ['no --db', ['device', 'create', '--org', 'acme'], /--db/],
    ['an empty --org', ['device', 'create', '--db', 'DB', '--org', '  '], /--org must be 1 to 128 printable characters/],
    ['a control character in --name', ['device', 'create', '--db', 'DB', '--org', 'a', '--name', 'a\u0007b'], /--name must be/],
    [
      'a --public-url with a path',
      ['device', 'create', '--db', 'DB', '--org', 'a', '--public-url', 'https://x.example/api'],
      /--public-url.*origin/,
    ],
    ['an unknown flag', ['device', 'create', '--db', 'DB', '--org', 'a', '--colour'], /unknown option '--colour'/],
    ['an unknown command', ['device', 'delete', 'x', '--db', 'DB'], /unknown command 'delete'/],
  ])('%s: exit 2 with a clear message', async (_what, args, message) => {
    expectUsageError(await cli(args.map((a) => (a === 'DB' ? server.dbPath : a))), message);
  });

  test('a database in a missing directory: exit 2, nothing created', async () => {
    expectUsageError(
      await cli(['device', 'create', '--db', join(server.dir, 'missing', 'x.db'), '--org', 'a']),
      /directory does not exist/,
    );
  });
});

describe('device list', () => {
  test('lists devices, filtered by --org, as JSON or a table', async () => {
    const globex = await enrolledDevice(server, { org: 'list-globex' });
    const initech = await server.createDevice({ org: 'list-initech', name: 'printer' });
    const all = parseJson<DeviceSummary[]>((await runServerCli(['device', 'list', '--db', server.dbPath, '--json'])).stdout);
    expect(all.map((d) => d.device_id)).toEqual(expect.arrayContaining([globex.deviceId, initech.device_id]));
    const onlyGlobex: unknown = JSON.parse(
      (await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'list-globex', '--json'])).stdout,
    );
    expect(onlyGlobex).toEqual([
      expect.objectContaining({ device_id: globex.deviceId, org: 'list-globex', state: 'ACTIVE', hostname: 'test-host' }),
    ]);
    const table = (await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'list-initech'])).stdout;
    expect(table.split('\n')[0]).toMatch(/^DEVICE\s+ORG\s+STATE\s+NAME\s+HOSTNAME\s+PLATFORM\s+LAST SEEN\s+OS\s+AGENT\s+FAILING\s+LABELS$/);
    expect(table).toMatch(new RegExp(`^${initech.device_id}\\s+list-initech\\s+PENDING\\s+printer\\s+-`, 'm'));
    expect((await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'nobody'])).stdout).toBe('No devices.\n');
  });

  test('a missing database: exit 2 and no file created', async () => {
    const missing = join(server.dir, 'nothing-here.db');
    expectUsageError(await cli(['device', 'list', '--db', missing]), /no database at/);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('device show', () => {
  test('--json: the record of the contract and the postures with their correlation_id', async () => {
    const device = await enrolledDevice(server, { org: 'show-org' });
    const sent = await postures(server, device.apiKey, {
      results: [result({ check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { enabled: false } })],
    });
    const shown = await server.showDevice(device.deviceId);
    expect(shown).toMatchObject({
      device_id: device.deviceId,
      org: 'show-org',
      state: 'ACTIVE',
      hardware_uuid: device.hardwareUuid,
      serial_number: 'C02TEST',
      hostname: 'test-host',
      platform: 'LINUX',
      os_version: 'Debian GNU/Linux 12 (bookworm)',
      agent_version: '0.1.0',
      last_seen_at: anyString(),
      postures: [
        {
          correlation_id: sent.headers['posture-report-id'],
          check_key: 'FIREWALL_ENABLED',
          status: 'FAIL',
          evidence: { enabled: false },
          observed_at: anyString(),
          received_at: anyString(),
        },
      ],
    });
  });

  test('human output', async () => {
    const device = await enrolledDevice(server);
    await postures(server, device.apiKey, { results: [result({ check_key: 'TIME_SYNC' })] });
    const { stdout } = await runServerCli(['device', 'show', device.deviceId, '--db', server.dbPath]);
    expect(stdout).toMatch(new RegExp(`^Device\\s+${device.deviceId}$`, 'm'));
    expect(stdout).toMatch(/^State\s+ACTIVE$/m);
    expect(stdout).toContain('Postures: 1 result in 1 report');
    expect(stdout).toMatch(/TIME_SYNC\s+PASS\s+rpt_[0-9a-f]{32}/);
    // The label column is as wide as the longest label shown, not the longest one there is.
    const fields = stdout.slice(0, stdout.indexOf('\n\n')).split('\n');
    const labels = fields.map((line) => /^(.+?)\s{2,}/.exec(line)![1]!);
    expect(labels).not.toContain('Enrollment secret');
    const width = Math.max(...labels.map((label) => label.length));
    for (const line of fields) expect(line.slice(width)).toMatch(/^ {2}\S/);
  });

  test('an unknown device: exit 2, no stack trace', async () => {
    const unknown = `dev_${'0'.repeat(32)}`;
    expectUsageError(await cli(['device', 'show', unknown, '--db', server.dbPath]), new RegExp(`no device "${unknown}"`));
  });

  test('a value that is no device id: exit 2, its form named and the value not echoed', async () => {
    const outcome = await cli(['device', 'show', 'dev_nope', '--db', server.dbPath]);
    expectUsageError(outcome, /no such device: a device id is "dev_" and 32 lowercase hexadecimal digits/);
    expect(outcome.stderr).not.toContain('dev_nope');
  });
});

describe('device revoke', () => {
  test('revokes once, then says it already was', async () => {
    const device = await enrolledDevice(server);
    expect((await cli(['device', 'revoke', device.deviceId, '--db', server.dbPath])).stdout).toBe(`Revoked device ${device.deviceId}.\n`);
    const again = await cli(['device', 'revoke', device.deviceId, '--db', server.dbPath]);
    expect(again).toMatchObject({ code: 0, stdout: `Device ${device.deviceId} was already revoked.\n` });
    expect((await heartbeat(server, device.apiKey)).status).toBe(401);
  });

  test('an unknown device: exit 2', async () => {
    const unknown = `dev_${'f'.repeat(32)}`;
    expectUsageError(await cli(['device', 'revoke', unknown, '--db', server.dbPath]), new RegExp(`no device "${unknown}"`));
  });

  test('a value that is no device id: exit 2, nothing revoked', async () => {
    expectUsageError(await cli(['device', 'revoke', 'dev_0', '--db', server.dbPath]), /no such device: a device id is "dev_"/);
  });
});

describe('while serve runs', () => {
  test('admin commands and agent traffic interleave without errors', async () => {
    const device = await enrolledDevice(server);
    let stop = false;
    const traffic = (async () => {
      let beats = 0;
      while (!stop) {
        expect((await postures(server, device.apiKey, { results: Array.from({ length: 20 }, () => result()) })).status).toBe(204);
        beats += 1;
      }
      return beats;
    })();
    const admin = await Promise.all([
      ...Array.from({ length: 4 }, () => server.createDevice({ org: 'busy' })),
      runServerCli(['device', 'list', '--db', server.dbPath, '--json']),
      server.showDevice(device.deviceId),
    ]);
    stop = true;
    expect(await traffic).toBeGreaterThan(0);
    expect(admin).toHaveLength(6);
    const busy: unknown = JSON.parse((await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'busy', '--json'])).stdout);
    expect(busy).toHaveLength(4);
  });
});

describe('program', () => {
  test('--version and --help exit 0', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/serve/);
    expect(help.stdout).toMatch(/device/);
    expect((await cli(['device', 'create', '--help'])).stdout).toMatch(/--token-ttl <duration>/);
  });
});

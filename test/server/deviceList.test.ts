// The device list as the working screen through the admin API, on every engine: each device's
// failing count, statuses and labels in one page; the filters by a check's status (MISSING, stale,
// rule, excepted), agent and OS version, label and failing count; the sorts by failing count and
// agent version, page after page; and the overview's counts equal to the lists they name.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ComplianceSummary, DeviceListItem, DevicePage } from '../../src/server/admin';
import { CHECK_KEYS } from '../../src/protocol/constants';
import { createAdminToken } from '../support/admin';
import { records } from '../support/csv';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, runServerCli, startServer, type RunningServer } from '../support/server';
import { enrollFleet, type FleetDevice } from '../console/fleet';
import { call, createSecret, enrolledDevice, expectError, heartbeat, heartbeatBody } from './client';

let server: RunningServer;
let token: string;
let fleet: FleetDevice[];
let observed: number;
const FLEET = 24;

beforeAll(async () => {
  server = await startServer({
    args: [...NO_RATE_LIMITS, '--rate-limit-registrations', '0', '--rate-limit-registrations-per-secret', '0'],
  });
  token = (await createAdminToken(server, { org: 'acme' })).admin_token;
  const secrets = {
    finance: (await createSecret(server, ['--label', 'team=finance'])).enroll_secret,
    eng: (await createSecret(server, ['--label', 'team=eng'])).enroll_secret,
  };
  observed = Date.now();
  fleet = await enrollFleet(server, secrets, 0, FLEET, observed);
});
afterAll(async () => {
  await server?.stop();
});

const get = (path: string) => call(server, `/api/admin/v1${path}`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });

async function list(query: string): Promise<DeviceListItem[]> {
  const devices: DeviceListItem[] = [];
  let cursor: string | null = null;
  do {
    const answer = await get(`/devices?${query}&limit=5${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(answer.status, answer.text).toBe(200);
    const page = parseJson<DevicePage>(answer.text);
    devices.push(...page.devices);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return devices;
}

const ids = (devices: readonly { deviceId: string }[]) => devices.map((d) => d.deviceId).sort();
const listedIds = (devices: readonly DeviceListItem[]) => devices.map((d) => d.device_id).sort();
const failing = (d: FleetDevice) => Object.values(d.latest).filter((r) => r.status === 'FAIL').length;

describe.concurrent('the list', () => {
  test("each device carries its failing count, each check's status, its labels and versions", async () => {
    const byId = new Map(fleet.map((d) => [d.deviceId, d]));
    const devices = await list('sort=created_at');
    expect(devices).toHaveLength(FLEET);
    for (const item of devices) {
      const d = byId.get(item.device_id)!;
      expect(item).toMatchObject({
        failing_checks: failing(d),
        checks: Object.fromEntries(Object.entries(d.latest).map(([check, r]) => [check, r.status])),
        in_grace: [],
        excepted: [],
        labels: { team: d.team },
        agent_version: d.agentVersion,
        os_version: d.osVersion,
        platform: d.platform,
      });
    }
  });

  test('filters: a check status (or none), a label, versions, a failing count', async () => {
    const expect_ = async (query: string, want: FleetDevice[]) => expect(listedIds(await list(query)), query).toEqual(ids(want));
    await expect_(
      'check=SCREEN_LOCK&status=FAIL',
      fleet.filter((d) => d.latest.SCREEN_LOCK?.status === 'FAIL'),
    );
    await expect_(
      'check=SCREEN_LOCK&status=pass',
      fleet.filter((d) => d.latest.SCREEN_LOCK?.status === 'PASS'),
    );
    await expect_(
      'check=MALWARE_PROTECTION&status=MISSING',
      fleet.filter((d) => d.latest.MALWARE_PROTECTION === undefined),
    );
    await expect_(
      'check=OS_VERSION&status=FAIL&rule=not_enforced',
      fleet.filter((d) => d.latest.OS_VERSION?.status === 'FAIL'),
    );
    await expect_('check=OS_VERSION&rule=disabled', []);
    await expect_(
      'label=team%3Dfinance',
      fleet.filter((d) => d.team === 'finance'),
    );
    await expect_(
      'agent_version=0.2.1',
      fleet.filter((d) => d.agentVersion === '0.2.1'),
    );
    await expect_(
      `os_version=${encodeURIComponent('15.1')}&platform=DARWIN`,
      fleet.filter((d) => d.osVersion === '15.1'),
    );
    await expect_(
      'min_failing=2',
      fleet.filter((d) => failing(d) >= 2),
    );
    // Every result was received just now: none before this test began, all before a minute from now.
    await expect_(`check=TIME_SYNC&result_before=2000-01-01T00:00:00Z`, []);
    await expect_(
      `check=TIME_SYNC&result_before=${new Date(Date.now() + 60_000).toISOString()}`,
      fleet.filter((d) => d.latest.TIME_SYNC),
    );
  });

  test('sorted by failing count and by agent version, page after page, with ties by id', async () => {
    const byFailing = await list('sort=failing_checks&order=desc');
    expect(byFailing.map((d) => d.failing_checks)).toEqual(fleet.map(failing).sort((a, b) => b - a));
    const ascending = await list('sort=failing_checks');
    expect(ascending.map((d) => d.device_id)).toEqual(byFailing.map((d) => d.device_id).reverse());
    const byVersion = await list('sort=agent_version');
    expect(byVersion.map((d) => d.agent_version)).toEqual(fleet.map((d) => d.agentVersion).sort());
  });

  test('refused: a check filter without its check, an unknown status, a label without =, a tampered count cursor', async () => {
    expectError(await get('/devices?status=FAIL'), 400, 'bad_request');
    expectError(await get('/devices?check=SCREEN_LOCK&status=BROKEN'), 400, 'bad_request');
    expectError(await get('/devices?check=SCREEN_LOCK&status=MISSING&rule=x'), 400, 'bad_request');
    expectError(await get('/devices?label=team'), 400, 'bad_request');
    expectError(await get('/devices?min_failing=0'), 400, 'bad_request');
    const cursor = Buffer.from(JSON.stringify(['failing_checks', 'asc', 'x', 'dev_00000000000000000000000000000001'])).toString(
      'base64url',
    );
    expectError(await get(`/devices?sort=failing_checks&cursor=${cursor}`), 400, 'bad_request');
  });
});

describe('the overview counts what its lists list', () => {
  test('per check and status (exceptions and grace periods apart), stale results, platforms, agent versions and OS releases', async () => {
    // A grace of 90 min for every check but TIME_SYNC: the FAILs that began an hour ago are in grace, those of two hours ago fail.
    const policy = await call(server, '/api/admin/v1/policy?org=acme', {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}` },
      json: { checks: { graceSeconds: 5400, graceSecondsByCheck: { TIME_SYNC: 0 } } },
    });
    expect(policy.status, policy.text).toBe(200);
    // A device with no heartbeat yet: no platform.
    const created = await call(server, '/api/admin/v1/devices', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json: { org: 'acme' },
    });
    expect(created.status, created.text).toBe(201);
    const exception = await call(server, '/api/admin/v1/exceptions?org=acme', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json: { label: 'team=eng', check_key: 'FIREWALL_ENABLED', reason: 'test', expires: '30d' },
    });
    expect(exception.status, exception.text).toBe(201);
    const summary = parseJson<ComplianceSummary>((await get('/compliance')).text);
    for (const c of summary.checks) {
      const count = async (query: string) => (await list(`state=ACTIVE&check=${c.check_key}&${query}`)).length;
      expect(await count('status=PASS'), c.check_key).toBe(c.PASS);
      expect(await count('status=FAIL&excepted=false'), c.check_key).toBe(c.FAIL);
      expect(await count('status=IN_GRACE&excepted=false'), c.check_key).toBe(c.IN_GRACE);
      expect(await count('status=FAIL&excepted=true'), c.check_key).toBe(c.EXCEPTED);
      expect(await count('status=UNKNOWN'), c.check_key).toBe(c.UNKNOWN);
      expect(await count('status=NOT_APPLICABLE'), c.check_key).toBe(c.NOT_APPLICABLE);
      expect(await count('status=MISSING'), c.check_key).toBe(c.MISSING);
      expect(await count(`result_before=${summary.results_stale_before}`), c.check_key).toBe(c.STALE);
    }
    const firewall = summary.checks.find((c) => c.check_key === 'FIREWALL_ENABLED')!;
    expect(firewall.EXCEPTED).toBe(fleet.filter((d) => d.team === 'eng' && d.latest.FIREWALL_ENABLED?.status === 'FAIL').length);
    expect(firewall.EXCEPTED).toBeGreaterThan(0);
    // In grace: a FAIL that began within the grace (not excepted); TIME_SYNC has none.
    const began = (hoursAgo: number) => new Date(observed - hoursAgo * 3_600_000).toISOString();
    const fails = (check: string, since: string, team?: string) =>
      fleet.filter((d) => d.latest[check]?.status === 'FAIL' && d.latest[check].since === since && (team === undefined || d.team === team))
        .length;
    const disk = summary.checks.find((c) => c.check_key === 'DISK_ENCRYPTION')!;
    expect([disk.IN_GRACE, disk.FAIL]).toEqual([fails('DISK_ENCRYPTION', began(1)), fails('DISK_ENCRYPTION', began(2))]);
    expect(disk.IN_GRACE * disk.FAIL).toBeGreaterThan(0);
    expect(firewall.IN_GRACE).toBe(fails('FIREWALL_ENABLED', began(1), 'finance'));
    const timeSync = summary.checks.find((c) => c.check_key === 'TIME_SYNC')!;
    expect([timeSync.IN_GRACE, timeSync.FAIL]).toEqual([0, fails('TIME_SYNC', began(1)) + fails('TIME_SYNC', began(2))]);
    // The list counts as the overview does: a FAIL in grace, or excepted, is not failing (yet); its status stays FAIL.
    const standing = (d: FleetDevice, check: string) => {
      if (d.latest[check]?.status !== 'FAIL') return 'not_failing';
      if (check === 'FIREWALL_ENABLED' && d.team === 'eng') return 'excepted';
      return check !== 'TIME_SYNC' && d.latest[check].since === began(1) ? 'in_grace' : 'failing';
    };
    const checksWhere = (d: FleetDevice, which: ReturnType<typeof standing>) =>
      Object.keys(d.latest)
        .filter((check) => standing(d, check) === which)
        .sort();
    const failingNow = (d: FleetDevice) => checksWhere(d, 'failing').length;
    const byId = new Map(fleet.map((d) => [d.deviceId, d]));
    for (const item of await list('state=ACTIVE')) {
      const d = byId.get(item.device_id)!;
      expect(item, d.hostname).toMatchObject({
        failing_checks: failingNow(d),
        checks: Object.fromEntries(Object.entries(d.latest).map(([check, r]) => [check, r.status])),
        in_grace: checksWhere(d, 'in_grace'),
        excepted: checksWhere(d, 'excepted'),
      });
    }
    expect(fleet.filter((d) => checksWhere(d, 'in_grace').length > 0 && failingNow(d) > 0).length).toBeGreaterThan(0);
    for (const c of summary.checks)
      expect(listedIds(await list(`state=ACTIVE&failing=${c.check_key}`)), c.check_key).toEqual(
        ids(fleet.filter((d) => standing(d, c.check_key) === 'failing')),
      );
    for (const c of summary.checks) expect((await list(`failing=${c.check_key}`)).length, c.check_key).toBe(c.FAIL);
    expect(listedIds(await list('failing=any'))).toEqual(ids(fleet.filter((d) => failingNow(d) > 0)));
    for (const least of [1, 2, 3])
      expect(listedIds(await list(`min_failing=${least}`)), `min_failing=${least}`).toEqual(
        ids(fleet.filter((d) => failingNow(d) >= least)),
      );
    const byFailing = await list('state=ACTIVE&sort=failing_checks&order=desc');
    expect(byFailing.map((d) => d.failing_checks)).toEqual(fleet.map(failingNow).sort((a, b) => b - a));
    expect((await list('state=ACTIVE&sort=failing_checks')).map((d) => d.device_id)).toEqual(byFailing.map((d) => d.device_id).reverse());
    // The CSV export: the failing count, and each check's status with a FAIL in grace or excepted apart.
    const csv = records((await get('/devices?format=csv&state=ACTIVE')).text).slice(4);
    const [columns, ...rows] = csv;
    const listedAs = (d: FleetDevice, check: string) =>
      ({ failing: 'FAIL', in_grace: 'FAIL (in grace)', excepted: 'FAIL (excepted)', not_failing: d.latest[check]?.status ?? '' })[
        standing(d, check)
      ];
    expect(rows).toHaveLength(FLEET);
    for (const row of rows) {
      const cells = Object.fromEntries(columns!.map((name, i) => [name, row[i]]));
      const d = byId.get(cells.device_id!)!;
      expect(cells, d.hostname).toMatchObject({
        failing_checks: String(failingNow(d)),
        ...Object.fromEntries(CHECK_KEYS.map((check) => [check, listedAs(d, check)])),
        other_checks: '',
      });
    }
    expect(rows.flat()).toContain('FAIL (in grace)');
    expect(rows.flat()).toContain('FAIL (excepted)');
    // The CLI's failing column: the count and the checks that fail, not those in grace or excepted.
    const table = (await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'acme', '--state', 'ACTIVE'])).stdout;
    for (const d of fleet) {
      const failingChecks = checksWhere(d, 'failing');
      const cell = failingChecks.length === 0 ? '0' : `${failingChecks.length}: ${failingChecks.join(',')}`;
      expect(
        table
          .split('\n')
          .find((line) => line.startsWith(d.deviceId))!
          .split(/\s{2,}/),
        d.hostname,
      ).toContain(cell);
    }
    expect(summary.devices.by_platform.UNKNOWN).toBe(1);
    expect((await list('platform=UNKNOWN')).map((d) => d.device_id)).toEqual([parseJson<{ device_id: string }>(created.text).device_id]);
    expect(summary.agent_versions.reduce((sum, v) => sum + v.devices, 0)).toBe(FLEET);
    for (const v of summary.agent_versions) expect((await list(`state=ACTIVE&agent_version=${v.agent_version}`)).length).toBe(v.devices);
    for (const r of summary.os_releases)
      expect((await list(`state=ACTIVE&platform=${r.platform}&os_version=${encodeURIComponent(r.os_version!)}`)).length).toBe(r.devices);
    expect((await list(`state=ACTIVE&last_seen_before=${summary.presence.stale_before}`)).length).toBe(summary.presence.stale);
  });
});

describe('agent versions sort as versions', () => {
  test('1.10.0 after 1.9.0 and 1.2.0, a prerelease before its release, page after page, both ways', async () => {
    for (const version of ['1.10.0', '1.9.0', '1.10.0.1', '1.2.0', '1.10.0-rc.1', '1.10.0-rc.1.2', '1.10.0-beta']) {
      const device = await enrolledDevice(server, { org: 'acme' });
      const beat = await heartbeat(server, device.apiKey, heartbeatBody({ hardware_uuid: device.hardwareUuid, agent_version: version }));
      expect(beat.status, beat.text).toBe(200);
    }
    const ascending = (await list('state=ACTIVE&sort=agent_version')).map((d) => d.agent_version);
    expect(ascending.slice(-7)).toEqual(['1.2.0', '1.9.0', '1.10.0-beta', '1.10.0-rc.1', '1.10.0-rc.1.2', '1.10.0', '1.10.0.1']);
    expect(ascending.slice(0, -7)).toEqual(fleet.map((d) => d.agentVersion).sort());
    const descending = (await list('state=ACTIVE&sort=agent_version&order=desc')).map((d) => d.agent_version);
    expect(descending).toEqual([...ascending].reverse());
  });
});

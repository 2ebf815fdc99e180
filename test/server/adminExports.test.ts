// CSV exports of the admin API (`?format=csv`) over real HTTP: a filtered device list whole and a
// device's whole history, each with its about lines (organization, filters, time) and exactly the
// rows the JSON answers list; a hostname a spreadsheet would evaluate is exported as text.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdminToken } from '../support/admin';
import { records } from '../support/csv';
import { parseJson } from '../support/json';
import { NO_RATE_LIMITS, startServer, type RunningServer } from '../support/server';
import { csvCell, csvDocument } from '../../src/server/csv';
import type { DevicePage, PostureHistory } from '../../src/server/admin';
import { call, enrolledDevice, expectError, heartbeat, heartbeatBody, postures, result, type EnrolledDevice } from './client';

const API = '/api/admin/v1';
/** A hostname as a spreadsheet formula (devices choose their hostnames). */
const FORMULA_HOSTNAME = '=HYPERLINK("http://evil.example","click")';
/** In every result's evidence, which exports leave out. */
const EVIDENCE_MARK = 'evidence-only-ruleset-7f3a';
let server: RunningServer;
let acmeToken: string;
let formulaDevice: EnrolledDevice;
let plainDevice: EnrolledDevice;

const api = (path: string, token = acmeToken) =>
  call(server, `${API}${path}`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  server = await startServer({ args: NO_RATE_LIMITS });
  acmeToken = (await createAdminToken(server, { org: 'acme' })).admin_token;
  [formulaDevice, plainDevice] = await Promise.all([enrolledDevice(server, { org: 'acme' }), enrolledDevice(server, { org: 'acme' })]);
  await enrolledDevice(server, { org: 'globex' });
  await heartbeat(
    server,
    formulaDevice.apiKey,
    heartbeatBody({ hardware_uuid: formulaDevice.hardwareUuid, hostname: FORMULA_HOSTNAME, platform: 'LINUX' }),
  );
  await heartbeat(
    server,
    plainDevice.apiKey,
    heartbeatBody({ hardware_uuid: plainDevice.hardwareUuid, hostname: 'mac-alice', platform: 'DARWIN' }),
  );
  for (const status of ['FAIL', 'PASS', 'FAIL'] as const) {
    const answer = await postures(server, formulaDevice.apiKey, {
      results: [
        result({
          check_key: 'FIREWALL_ENABLED',
          status,
          evidence: { rule: status === 'FAIL' ? 'no_inbound_filtering' : 'ufw_active', ruleset: EVIDENCE_MARK },
        }),
      ],
    });
    expect(answer.status, answer.text).toBe(204);
  }
});
afterAll(() => server?.stop());

describe('csv cells', () => {
  test.each([
    ['plain', 'plain'],
    ['=1+2', "'=1+2"],
    ['+cmd', "'+cmd"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=a,"b"', `"'=a,""b"""`],
  ])('%j is written %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  test('null is an empty cell, numbers and booleans as text; about lines are one cell each', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
    expect(csvDocument({ about: [['filters', 'hostname=x,y']], columns: ['a', 'b'], rows: [[1, null]] })).toBe(
      '"# filters: hostname=x,y"\r\na,b\r\n1,\r\n',
    );
  });
});

describe('GET /devices?format=csv', () => {
  test('every matching device with its about lines; the formula hostname is text', async () => {
    const answer = await api('/devices?format=csv&platform=linux');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(answer.headers['content-disposition']).toMatch(/^attachment; filename="devices-\d{4}-\d{2}-\d{2}\.csv"$/);
    const [organization, filters, exportedAt, count, columns, ...rows] = records(answer.text);
    expect(organization).toEqual(['# organization: acme']);
    expect(filters).toEqual(['# filters: platform=linux']);
    expect(Date.parse(exportedAt![0]!.replace('# exported at: ', ''))).toBeGreaterThan(Date.now() - 60_000);
    expect(count).toEqual(['# devices: 1']);
    expect(columns![0]).toBe('device_id');
    expect(rows).toHaveLength(1);
    const row = Object.fromEntries(columns!.map((name, i) => [name, rows[0]![i]]));
    expect(row).toMatchObject({ device_id: formulaDevice.deviceId, org: 'acme', hostname: `'${FORMULA_HOSTNAME}`, platform: 'LINUX' });
  });

  test('the same devices as the JSON list, within the credential organization', async () => {
    const json = parseJson<DevicePage>((await api('/devices?limit=500')).text);
    const csv = records((await api('/devices?format=csv')).text).slice(5);
    expect(csv.map((row) => row[0]).sort()).toEqual(json.devices.map((d) => d.device_id).sort());
    expect(csv).toHaveLength(2);
  });

  test('refused: another format, and paging with csv', async () => {
    expectError(await api('/devices?format=xml'), 400, 'bad_request');
    expectError(await api('/devices?format=csv&limit=1'), 400, 'bad_request');
  });
});

describe('GET /devices/{id}/history?format=csv', () => {
  test('every result newest first with its word and summary, never its evidence', async () => {
    const answer = await api(`/devices/${formulaDevice.deviceId}/history?format=csv&check=FIREWALL_ENABLED`);
    expect(answer.status, answer.text).toBe(200);
    const [organization, device, filters, , count, columns, ...rows] = records(answer.text);
    expect([organization, device, filters, count]).toEqual([
      ['# organization: acme'],
      [`# device: ${formulaDevice.deviceId}`],
      ['# filters: check=FIREWALL_ENABLED'],
      ['# results: 3'],
    ]);
    expect(columns).toEqual(['observed_at', 'received_at', 'check_key', 'status', 'word', 'summary', 'correlation_id']);
    const json = parseJson<PostureHistory>((await api(`/devices/${formulaDevice.deviceId}/history?check=FIREWALL_ENABLED`)).text);
    expect(rows.map((r) => [r[3], r[4], r[6]])).toEqual(json.results.map((r) => [r.status, r.remediation.word, r.correlation_id]));
    expect(rows.map((r) => r[3])).toEqual(['FAIL', 'PASS', 'FAIL']);
    expect(answer.text).not.toContain(EVIDENCE_MARK);
  });

  test("another organization's device is out of reach, as in JSON", async () => {
    const globex = (await createAdminToken(server, { org: 'globex' })).admin_token;
    expect((await api(`/devices/${formulaDevice.deviceId}/history?format=csv`, globex)).status).toBe(404);
  });
});

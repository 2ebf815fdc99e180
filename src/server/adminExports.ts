// CSV exports of the admin API (`?format=csv`): a filtered device list whole (every page) and a
// device's whole result history (within retention), for an auditor. The same service layer as the
// JSON answers, so an export holds exactly what the API lists; csv.ts makes the cells safe.
import {
  MAX_HISTORY_PAGE,
  deviceHistory,
  getDevice,
  listAllDevices,
  listedStatus,
  type DeviceListItem,
  type DeviceListRequest,
  type DeviceSummary,
  type PostureView,
} from './admin';
import type { AdminPrincipal } from './adminAccess';
import { csvDocument, type CsvValue } from './csv';
import type { Store } from './db/store';
import { CHECK_KEYS } from '../protocol/constants';

export interface CsvFile {
  /** The download's subject, for its file name. */
  subject: string;
  text: string;
}

const DEVICE_COLUMNS = [
  'device_id',
  'org',
  'name',
  'state',
  'hostname',
  'serial_number',
  'hardware_uuid',
  'platform',
  'os_version',
  'agent_version',
  'created_at',
  'activated_at',
  'last_seen_at',
  'revoked_at',
] as const satisfies readonly (keyof DeviceSummary)[];

export async function deviceListCsv(
  store: Store,
  admin: AdminPrincipal,
  request: Omit<DeviceListRequest, 'cursor' | 'limit'>,
  now: Date,
): Promise<CsvFile> {
  const devices = await listAllDevices(store, admin.scope, request);
  const filters = Object.entries(request).filter(([, value]) => value !== undefined);
  return {
    subject: 'devices',
    text: csvDocument({
      about: [
        ['organization', request.org ?? admin.orgName ?? 'all organizations'],
        ['filters', filters.length === 0 ? 'none' : filters.map(([name, value]) => `${name}=${String(value)}`).join(' ')],
        ['exported at', now.toISOString()],
        ['devices', String(devices.length)],
      ],
      columns: [...DEVICE_COLUMNS, 'failing_checks', ...CHECK_KEYS, 'other_checks'],
      rows: devices.map((device): CsvValue[] => [
        ...DEVICE_COLUMNS.map((column) => device[column]),
        device.failing_checks,
        ...CHECK_KEYS.map((key) => listedStatus(device, key) ?? null),
        otherChecks(device),
      ]),
    }),
  };
}

/** The checks other than the official ones (each has its column), as `KEY=status; …`; null when none. */
function otherChecks(device: DeviceListItem): string | null {
  const others = Object.keys(device.checks)
    .filter((key) => !(CHECK_KEYS as readonly string[]).includes(key))
    .sort()
    .map((key) => `${key}=${listedStatus(device, key)}`);
  return others.length === 0 ? null : others.join('; ');
}

const RESULT_COLUMNS = ['observed_at', 'received_at', 'check_key', 'status', 'word', 'summary', 'correlation_id'] as const;

/** Every stored result of the device (of one check when given), newest first; evidence is left out. */
export async function deviceHistoryCsv(
  store: Store,
  admin: AdminPrincipal,
  deviceId: string,
  check: string | undefined,
  now: Date,
): Promise<CsvFile> {
  const { org } = await getDevice(store, admin.scope, deviceId);
  const results: PostureView[] = [];
  let before: number | undefined;
  do {
    const page = await deviceHistory(store, admin.scope, deviceId, { check, before, limit: MAX_HISTORY_PAGE });
    results.push(...page.results);
    before = page.next_before ?? undefined;
  } while (before !== undefined);
  const rows = results.map((r): CsvValue[] => [
    r.observed_at,
    r.received_at,
    r.check_key,
    r.status,
    r.remediation.word,
    r.remediation.summary,
    r.correlation_id,
  ]);
  return {
    subject: `history-${deviceId}`,
    text: csvDocument({
      about: [
        ['organization', org],
        ['device', deviceId],
        ['filters', check === undefined ? 'none' : `check=${check}`],
        ['exported at', now.toISOString()],
        ['results', String(results.length)],
      ],
      columns: RESULT_COLUMNS,
      rows,
    }),
  };
}

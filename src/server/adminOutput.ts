// Human-readable output of the admin commands; the --json forms print the objects as they are,
// through displayJson. Every value shown goes through displayText: a device's hostname, OS version,
// check keys and evidence words are its own, and must not act on the admin's terminal.
import { listedStatus, type CreatedDevice, type DeviceDetails, type DeviceListItem } from './admin';
import type { AuditView } from './audit';
import type { TableCount } from './db/migrateData';
import { displayText } from './displayText';
import type { CreatedSecret, SecretView } from './enrollSecrets';
import { latestPerCheck, type FleetFailure } from './remediation';

export function formatCreated(device: CreatedDevice): string {
  const created = shown(device);
  return [
    `Created device ${created.device_id} in organization "${created.org}" (PENDING).`,
    '',
    `  Server URL        ${created.server_url}`,
    `  Enrollment token  ${created.enrollment_token}`,
    `  Enrollment link   ${created.enrollment_link}`,
    `  Token expires     ${humanTime(created.token_expires_at)} (single use)`,
    '',
    'On the device, save the token in a file only you can read, then run:',
    `  device-agent enroll --server ${created.server_url} --token-file <file>`,
    'The token and the link are secrets and are not shown again.',
    '',
  ].join('\n');
}

/** `secret create`: the one time the secret is shown. */
export function formatCreatedSecret(secret: CreatedSecret, org: string, serverUrl: string): string {
  const limits = [
    secret.expires_at === null ? 'no expiry' : `expires ${humanTime(secret.expires_at)}`,
    secret.max_uses === null ? 'no cap on uses' : `at most ${count(secret.max_uses, 'device')}`,
  ];
  return [
    `Created enrollment secret ${secret.secret_id} for organization "${displayText(org)}" (${limits.join(', ')}).`,
    '',
    `  ${secret.enroll_secret}`,
    '',
    'Ship it with the agent package the way your MDM or configuration management ships secrets, then on each device:',
    `  device-agent enroll --server ${displayText(serverUrl)} --enroll-secret-file <file>`,
    'It is a secret and is not shown again (only its hash is stored); `secret revoke` ends it at once.',
    '',
  ].join('\n');
}

export function formatSecretList(secrets: readonly SecretView[]): string {
  if (secrets.length === 0) return 'No enrollment secrets.\n';
  return table(
    ['SECRET', 'ORG', 'STATUS', 'USES', 'EXPIRES', 'LABELS', 'NOTE'],
    secrets.map((s) => [
      s.secret_id,
      s.org,
      s.status,
      s.max_uses === null ? String(s.uses) : `${s.uses}/${s.max_uses}`,
      humanTime(s.expires_at),
      labelsText(s.labels) || null,
      s.note,
    ]),
  );
}

export function formatDeviceList(devices: readonly DeviceListItem[]): string {
  if (devices.length === 0) return 'No devices.\n';
  return table(
    ['DEVICE', 'ORG', 'STATE', 'NAME', 'HOSTNAME', 'PLATFORM', 'LAST SEEN', 'OS', 'AGENT', 'FAILING', 'LABELS'],
    devices.map((d) => [
      d.device_id,
      d.org,
      d.state,
      d.name,
      d.hostname,
      d.platform,
      humanTime(d.last_seen_at),
      d.os_version,
      d.agent_version,
      failingCell(d),
      labelsText(d.labels) || null,
    ]),
  );
}

/** "0", or "2: DISK_ENCRYPTION,FIREWALL_ENABLED": the failing checks, not those in grace or excepted (listedStatus). */
function failingCell(device: DeviceListItem): string {
  const failing = Object.keys(device.checks).filter((key) => listedStatus(device, key) === 'FAIL');
  return failing.length === 0 ? '0' : `${failing.length}: ${failing.sort().join(',')}`;
}

/** Labels as one line: `key=value`, comma-separated; empty when none. */
export function labelsText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** migrate-data's verification: each table's rows in the SQLite file and in PostgreSQL. */
export function formatCounts(counts: readonly TableCount[]): string {
  return table(
    ['TABLE', 'SQLITE', 'POSTGRESQL', ''],
    counts.map((c) => [c.table, String(c.source), String(c.target), c.source === c.target ? 'ok' : 'DIFFERENT']),
  );
}

export function formatDevice(device: DeviceDetails): string {
  const fields: [string, string | null][] = [
    ['Device', device.device_id],
    ['Organization', device.org],
    ['Name', device.name],
    ['State', device.state],
    ['Hostname', device.hostname],
    ['Platform', device.platform],
    ['OS version', device.os_version],
    ['Agent version', device.agent_version],
    ['Hardware UUID', device.hardware_uuid],
    ['Serial number', device.serial_number],
    ['Created', humanTime(device.created_at)],
    ['Enrolled', humanTime(device.enrolled_at)],
    ['Activated', humanTime(device.activated_at)],
    ['Last seen', humanTime(device.last_seen_at)],
    ['Revoked', humanTime(device.revoked_at)],
    ['Token expires', humanTime(device.token_expires_at)],
    ['Enrollment secret', device.enroll_secret_id],
    ['Replaces', device.supersedes],
    ['Replaced by', device.superseded_by],
    ['Duplicate of', device.duplicate_of],
  ];
  const shown = fields.filter((field): field is [string, string] => field[1] !== null);
  const width = Math.max(...shown.map(([label]) => label.length));
  const lines = shown.map(([label, value]) => `${label.padEnd(width)}  ${displayText(value)}`);
  const reports = new Set(device.postures.map((p) => p.correlation_id)).size;
  lines.push('', `Postures: ${count(device.postures.length, 'result')} in ${count(reports, 'report')}`);
  const body = lines.join('\n') + '\n';
  if (device.postures.length === 0) return body;
  return (
    body +
    table(
      ['OBSERVED', 'CHECK', 'STATUS', 'REPORT'],
      device.postures.map((p) => [humanTime(p.observed_at), p.check_key, p.status, p.correlation_id]),
    ) +
    formatLatest(device.postures, device.failing_since)
  );
}

/** The newest result of each check with what it means; how to fix it for each one that is not PASS. */
function formatLatest(postures: DeviceDetails['postures'], failingSince: DeviceDetails['failing_since']): string {
  const blocks = latestPerCheck(postures).map((p) => {
    const { word, summary, admin } = shown(p.remediation);
    const excepted = p.excepted_until ? `, excepted until ${humanTime(p.excepted_until)}` : '';
    const since = failingSince[p.check_key] ? `, failing since ${humanTime(failingSince[p.check_key]!)}` : '';
    const lines = [`${displayText(p.check_key)}  ${p.status}${word ? ` (${word})` : ''}${since}${excepted}`, `  ${summary}`];
    if (p.status !== 'PASS' && p.status !== 'NOT_APPLICABLE') {
      // The catalogue's steps are lines of their own: split before escaping, which shows line feeds.
      const steps = p.remediation.fix.split('\n').map((l) => `    ${displayText(l)}`);
      lines.push('  On the device:', ...steps, '  For the fleet:', `    ${admin}`);
    }
    return lines.join('\n');
  });
  return `\nLatest result of each check:\n\n${blocks.join('\n\n')}\n`;
}

/** `device failing`: "3 devices fail FIREWALL_ENABLED (LINUX, no_inbound_filtering): … How to fix: …". */
export function formatFleetFailures(failures: readonly FleetFailure[]): string {
  if (failures.length === 0) return 'No active device fails a check.\n';
  const blocks = failures.map((failure) => {
    const f = shown(failure);
    return [
      `${count(f.devices.length, 'device')} ${f.devices.length === 1 ? 'fails' : 'fail'} ${f.check_key} (${f.platform || 'unknown platform'}${f.word ? `, ${f.word}` : ''}): ${f.summary}`,
      `  How to fix: ${f.admin}`,
      `  Devices: ${f.devices.map((id, i) => displayText(f.hostnames[i] === null ? id : `${f.hostnames[i]} (${id})`)).join(' ')}`,
    ].join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}

/** The object with each string field made displayable (other fields as they are). */
function shown<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [key, typeof field === 'string' ? displayText(field) : field]),
  ) as T;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** 2026-11-21 03:59:37 UTC */
export function humanTime(iso: string | null): string | null {
  return iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export function table(headers: readonly string[], rows: readonly (readonly (string | null)[])[]): string {
  const cells = rows.map((row) => row.map((cell) => (cell === null ? '-' : displayText(cell))));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

/** `audit`: one line per entry, newest first. */
export function formatAudit(entries: readonly AuditView[]): string {
  if (entries.length === 0) return 'No audit entries.\n';
  return table(
    ['WHEN', 'WHO', 'ACTION', 'ORG', 'TARGET', 'DETAILS', 'FROM'],
    entries.map((e) => [
      humanTime(e.at),
      e.actor,
      e.action,
      e.org,
      e.target_id === null ? null : `${e.target_type} ${e.target_id}`,
      e.detail === null
        ? null
        : Object.entries(e.detail)
            .map(([key, value]) => `${key}=${String(value)}`)
            .join(' '),
      e.address ?? 'cli',
    ]),
  );
}

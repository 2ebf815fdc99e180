// The admin operations behind `device create|list|show|revoke`. They work on the same database
// as a running `serve` (WAL, busy timeout, IMMEDIATE transactions).
import { hashCredential, newCredential } from './credentials';
import type { DeviceRecord, RevokeOutcome, Store, StoredPostureResult } from './db/store';
import { DEFAULT_PUBLIC_URL, PUBLIC_URL_SETTING, enrollmentLink } from './publicUrl';
import { withRemediation, type Remediation } from './remediation';
import { UsageError } from './usage';

const MAX_LABEL_LENGTH = 128;

export interface CreatedDevice {
  device_id: string;
  org: string;
  enrollment_token: string;
  server_url: string;
  enrollment_link: string;
  token_expires_at: string;
}

export interface DeviceSummary {
  device_id: string;
  org: string;
  name: string | null;
  state: string;
  hardware_uuid: string | null;
  serial_number: string | null;
  hostname: string | null;
  platform: string | null;
  os_version: string | null;
  agent_version: string | null;
  created_at: string;
  enrolled_at: string | null;
  activated_at: string | null;
  last_seen_at: string | null;
  revoked_at: string | null;
  /** Set while the device still has an unused enrollment token. */
  token_expires_at: string | null;
}

export interface PostureView {
  correlation_id: string;
  check_key: string;
  status: string;
  evidence: Record<string, unknown> | null;
  observed_at: string;
  received_at: string;
  /** What the result means and how to fix it (src/server/remediation.ts); rendered here, never sent by devices. */
  remediation: Remediation;
}

export interface DeviceDetails extends DeviceSummary {
  postures: PostureView[];
}

function validLabel(what: string, value: string): string {
  const label = value.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is what this line is for
  if (label === '' || label.length > MAX_LABEL_LENGTH || /[\u0000-\u001f\u007f]/.test(label)) {
    throw new UsageError(`${what} must be 1 to ${MAX_LABEL_LENGTH} printable characters`);
  }
  return label;
}

export async function createDevice(
  store: Store,
  input: { org: string; name?: string; tokenTtlMs: number; publicUrl?: string },
  now = new Date(),
): Promise<CreatedDevice> {
  const org = validLabel('--org', input.org);
  const name = input.name === undefined ? null : validLabel('--name', input.name);
  const token = newCredential();
  const tokenExpiresAt = new Date(now.getTime() + input.tokenTtlMs).toISOString();
  const deviceId = await store.createDevice({
    orgName: org,
    name,
    tokenHash: hashCredential(token),
    tokenExpiresAt,
    now: now.toISOString(),
  });
  const serverUrl = input.publicUrl ?? (await store.getSetting(PUBLIC_URL_SETTING)) ?? DEFAULT_PUBLIC_URL;
  return {
    device_id: deviceId,
    org,
    enrollment_token: token,
    server_url: serverUrl,
    enrollment_link: enrollmentLink(serverUrl, token),
    token_expires_at: tokenExpiresAt,
  };
}

export async function listDevices(store: Store, org?: string): Promise<DeviceSummary[]> {
  return (await store.listDevices(org === undefined ? undefined : validLabel('--org', org))).map(summarize);
}

export async function showDevice(store: Store, deviceId: string): Promise<DeviceDetails> {
  const device = await findDevice(store, deviceId);
  return { ...summarize(device), postures: withRemediation(device.platform, (await store.listPostures(device)).map(postureView)) };
}

export async function revokeDevice(store: Store, deviceId: string, now = new Date()): Promise<RevokeOutcome> {
  return store.revokeDevice(await findDevice(store, deviceId), now.toISOString());
}

async function findDevice(store: Store, deviceId: string): Promise<DeviceRecord> {
  const device = await store.findDevice(deviceId);
  if (!device) throw new UsageError(`no device ${JSON.stringify(deviceId)} in this database`);
  return device;
}

function summarize(device: DeviceRecord): DeviceSummary {
  return {
    device_id: device.id,
    org: device.orgName,
    name: device.name,
    state: device.state,
    hardware_uuid: device.hardwareUuid,
    serial_number: device.serialNumber,
    hostname: device.hostname,
    platform: device.platform,
    os_version: device.osVersion,
    agent_version: device.agentVersion,
    created_at: device.createdAt,
    enrolled_at: device.enrolledAt,
    activated_at: device.activatedAt,
    last_seen_at: device.lastSeenAt,
    revoked_at: device.revokedAt,
    token_expires_at: device.tokenExpiresAt,
  };
}

function postureView(result: StoredPostureResult): Omit<PostureView, 'remediation'> {
  return {
    correlation_id: result.reportId,
    check_key: result.checkKey,
    status: result.status,
    evidence: result.evidence,
    observed_at: result.observedAt,
    received_at: result.receivedAt,
  };
}

// Device identity for the heartbeat: hardware_uuid (with its source), serial_number, hostname,
// platform, os_version. Each platform's probe (src/identity/<os>.ts) reads its sources through a
// checks Host, so its parsers are tested on recorded output from that OS.
import type { Platform } from '../protocol/schemas';
import type { Host } from '../../checks/types';

export interface IdentityFacts {
  /** Null when no source gave a usable (non-placeholder) identifier. */
  hardwareUuid: { value: string; source: string } | null;
  /** Null when unavailable: the heartbeat then omits it rather than sending an empty string. */
  serialNumber: string | null;
  /** As a person would write it: "Ubuntu 24.04.1 LTS", "macOS 15.1", "Windows 11 Pro 24H2 (26100.2314)", "FreeBSD 14.1-RELEASE-p5". */
  osVersion: string;
}

export interface IdentityProbe {
  collect(host: Host): Promise<IdentityFacts>;
}

export interface DeviceIdentity {
  hardware_uuid: string;
  /** Where hardware_uuid came from (e.g. "dmi_product_uuid", "machine_id"): lets an operator spot VM clones sharing a machine id. */
  hardware_uuid_source: string;
  serial_number?: string;
  hostname: string;
  platform: Platform;
  os_version: string;
}

/** Firmware filler text that boards ship instead of a serial or UUID. */
const PLACEHOLDER_TEXT = new Set([
  'not settable',
  'not specified',
  'not applicable',
  'not available',
  'to be filled by o.e.m.',
  'to be filled by oem',
  'default string',
  'system serial number',
  'system product name',
  'none',
  'n/a',
  'na',
  'unknown',
  '0',
  '.',
  '123456789',
  '0123456789',
]);

/**
 * Firmware UUIDs that many machines share although they are neither all zeros nor all F: the
 * deny-list FreeBSD's rc.d/hostid applies before trusting SMBIOS (vendor sample values, byte
 * counters, a Dell-style filler), and the byte counter 00010203-… other boards ship. Compared on
 * their 32 hex digits, so any case, dashes or braces match.
 */
export const SHARED_FIRMWARE_UUIDS: readonly string[] = [
  '00020003-0004-0005-0006-000700080009',
  '03000200-0400-0500-0006-000700080009',
  '07090201-0103-0301-0807-060504030201',
  '11111111-2222-3333-4444-555555555555',
  '4c4c4544-0000-2010-8020-80c04f202020',
  '58585858-5858-5858-5858-585858585858',
  '890e2d14-cacd-45d1-ae66-bc80e8bfeb0f',
  '8e275844-178f-44a8-aceb-a7d7e5178c63',
  'dc698397-fa54-4cf2-82c8-b1b5307a6a7f',
  'fefefefe-fefe-fefe-fefe-fefefefefefe',
  '00010203-0405-0607-0809-0a0b0c0d0e0f',
];
const SHARED_HEX = new Set(SHARED_FIRMWARE_UUIDS.map((uuid) => uuid.replace(/-/g, '')));

/**
 * True for vendor placeholders that many machines share: all-zero or all-F UUIDs (any
 * punctuation), repeated single characters, the shared firmware UUIDs above, UUIDs ending in
 * `-ffff-ffff-ffff-ffffffffffff` (rc.d/hostid refuses those too), and firmware filler text.
 */
export function isPlaceholderId(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value.length === 0 || PLACEHOLDER_TEXT.has(value)) return true;
  const compact = value.replace(/[^0-9a-z]/g, '');
  if (compact.length === 0 || /^(.)\1*$/.test(compact)) return true;
  return /^[0-9a-f]{32}$/.test(compact) && (SHARED_HEX.has(compact) || compact.endsWith('f'.repeat(24)));
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A firmware or OS UUID in its canonical 8-4-4-4-12 form, lower-cased (Linux reports the SMBIOS
 * UUID lower-case, so every platform sends the same machine's id the same way; Windows' braces
 * are dropped); null for anything else or a placeholder.
 */
export function canonicalUuid(raw: string): string | null {
  const value = raw
    .trim()
    .replace(/^\{(.*)\}$/, '$1')
    .toLowerCase();
  return CANONICAL_UUID.test(value) && !isPlaceholderId(value) ? value : null;
}

/** A firmware serial number: printable ASCII, at most 255 characters, not filler text; else null. */
export function firmwareSerial(raw: string): string | null {
  const value = raw.trim();
  if (value.length === 0 || value.length > 255 || /[^\x20-\x7e]/.test(value)) return null;
  return isPlaceholderId(value) ? null : value;
}

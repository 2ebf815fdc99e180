// Host identity for the heartbeat: hardware_uuid (with its source), serial_number, hostname,
// platform, os_version. Each platform's probe (src/host/<os>.ts) reads its sources through a
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

export interface HostIdentity {
  hardware_uuid: string;
  /** Where hardware_uuid came from (e.g. "dmi_product_uuid", "machine_id"): lets an operator spot VM clones sharing a machine id. */
  hardware_uuid_source: string;
  serial_number?: string;
  hostname: string;
  platform: Platform;
  os_version: string;
}

const PLACEHOLDER_TEXT = [
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
  // SMBIOS UUID left at the firmware vendor's sample value on many consumer boards.
  '03000200-0400-0500-0006-000700080009',
];

/**
 * True for vendor placeholders that many machines share: all-zero or all-F UUIDs (any
 * punctuation), repeated single characters, and firmware filler text.
 */
export function isPlaceholderId(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value.length === 0) return true;
  if (PLACEHOLDER_TEXT.includes(value)) return true;
  const compact = value.replace(/[^0-9a-z]/g, '');
  if (compact.length === 0) return true;
  return /^(.)\1*$/.test(compact);
}

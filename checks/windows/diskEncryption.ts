// DISK_ENCRYPTION on Windows: BitLocker (or Device Encryption, the same WMI class) on the OS
// volume, from Win32_EncryptableVolume's GetProtectionStatus/GetConversionStatus methods (research
// §1.4). Suspended protection (fully encrypted, key protectors present, protection off: the key
// sits in the clear on disk) is its own FAIL. No administrator rights: UNKNOWN, never FAIL.
import * as z from 'zod/mini';
import type { Policy } from '../policy';
import type { Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import { defineProbeCheck, probeSection, sectionUnknown, type Section } from './probe';

const EncryptableVolume = z.object({
  DriveLetter: z.nullable(z.string()),
  /** Mounted at a drive letter or folder; false for a volume mounted nowhere (a system volume); null when unknown. */
  Mounted: z._default(z.nullable(z.boolean()), null),
  /** 0 OS volume, 1 fixed data volume, 2 removable (Windows 8+). */
  VolumeType: z.nullable(z.int()),
  ProtectionStatus: z.nullable(z.int()),
  ConversionStatus: z.nullable(z.int()),
  EncryptionPercentage: z.nullable(z.number()),
  EncryptionMethod: z.nullable(z.int()),
  KeyProtectorTypes: z.array(z.int()),
  /** Method return codes (GetProtectionStatus, GetConversionStatus, GetEncryptionMethod, GetKeyProtectors): 0 = success. */
  ReturnValues: z.array(z.nullable(z.number())),
});
export type EncryptableVolume = z.infer<typeof EncryptableVolume>;

export interface DiskEncryptionFacts {
  volumes: Section<EncryptableVolume[]>;
  systemDrive: string | null;
}

const PROTECTION: Record<number, string> = { 0: 'off', 1: 'on', 2: 'unknown' };
const CONVERSION: Record<number, string> = {
  0: 'fully_decrypted',
  1: 'fully_encrypted',
  2: 'encryption_in_progress',
  3: 'decryption_in_progress',
  4: 'encryption_paused',
  5: 'decryption_paused',
};
/** GetEncryptionMethod values (Microsoft Learn, Win32_EncryptableVolume). */
const METHODS: Record<number, string> = {
  0: 'none',
  1: 'AES_128_WITH_DIFFUSER',
  2: 'AES_256_WITH_DIFFUSER',
  3: 'AES_128',
  4: 'AES_256',
  5: 'HARDWARE_ENCRYPTION',
  6: 'XTS_AES_128',
  7: 'XTS_AES_256',
};
/** GetKeyProtectorType values; only the types are reported, never protector IDs or recovery passwords. */
const PROTECTORS: Record<number, string> = {
  0: 'Unknown',
  1: 'Tpm',
  2: 'ExternalKey',
  3: 'NumericalPassword',
  4: 'TpmPin',
  5: 'TpmStartupKey',
  6: 'TpmPinStartupKey',
  7: 'PublicKey',
  8: 'Passphrase',
  9: 'TpmCertificate',
  10: 'CryptoApiNextGeneration',
};

type VolumeState =
  | { kind: 'protected' }
  | { kind: 'unprotected'; state: 'suspended' | 'protection_off' | 'decrypted' | 'decrypting' }
  | { kind: 'encrypting'; state: 'encrypting' | 'encryption_paused' }
  | { kind: 'undetermined'; reason: 'method_failed' | 'unexpected_value' | 'protection_status_unknown' };

/** What one volume's method results mean (research §1.4 decision table). */
export function volumeState(volume: EncryptableVolume): VolumeState {
  if (volume.ReturnValues.some((code) => code !== 0)) return { kind: 'undetermined', reason: 'method_failed' };
  const { ProtectionStatus: protection, ConversionStatus: conversion } = volume;
  if (protection === null || conversion === null || PROTECTION[protection] === undefined || CONVERSION[conversion] === undefined) {
    return { kind: 'undetermined', reason: 'unexpected_value' };
  }
  if (protection === 2) return { kind: 'undetermined', reason: 'protection_status_unknown' };
  switch (conversion) {
    case 1:
      if (protection === 1) return { kind: 'protected' };
      return { kind: 'unprotected', state: volume.KeyProtectorTypes.length > 0 ? 'suspended' : 'protection_off' };
    case 2:
      return { kind: 'encrypting', state: 'encrypting' };
    case 4:
      return { kind: 'encrypting', state: 'encryption_paused' };
    case 0:
      return { kind: 'unprotected', state: 'decrypted' };
    default:
      return { kind: 'unprotected', state: 'decrypting' };
  }
}

function volumeEvidence(volume: EncryptableVolume): Evidence {
  const evidence: Evidence = {
    protection: PROTECTION[volume.ProtectionStatus ?? -1] ?? null,
    conversion: CONVERSION[volume.ConversionStatus ?? -1] ?? null,
    percent: volume.EncryptionPercentage,
    method: METHODS[volume.EncryptionMethod ?? -1] ?? null,
    protectors: volume.KeyProtectorTypes.map((type) => PROTECTORS[type] ?? 'Unknown'),
  };
  return evidence;
}

function isOsVolume(volume: EncryptableVolume, systemDrive: string | null): boolean {
  if (volume.VolumeType !== null) return volume.VolumeType === 0;
  return systemDrive !== null && volume.DriveLetter?.toUpperCase() === systemDrive.toUpperCase();
}

/** Whether a volume counts as protected, given the policy's verdict for encryption in progress. */
const compliant = (state: VolumeState, policy: Policy) =>
  state.kind === 'protected' || (state.kind === 'encrypting' && policy.diskEncryption.inProgress === 'PASS');

export function evaluateDiskEncryption(facts: DiskEncryptionFacts, policy: Policy) {
  const base: Evidence = { source: 'wmi', scope: policy.diskEncryption.scope };
  const { volumes } = facts;
  if (!volumes.ok) {
    // No Win32_EncryptableVolume at all: an edition without BitLocker or Device Encryption.
    if (volumes.reason === 'not_available') return fail({ ...base, rule: 'not_supported_by_edition' });
    return sectionUnknown(volumes, base);
  }
  const osVolumes = volumes.value.filter((v) => isOsVolume(v, facts.systemDrive));
  if (osVolumes.length !== 1) return unknown('os_volume_not_found', { ...base, volumes: volumes.value.length });
  const osVolume = osVolumes[0]!;
  const osState = volumeState(osVolume);
  const evidence: Evidence = { ...base, os_volume: volumeEvidence(osVolume) };

  if (policy.diskEncryption.scope === 'all_local') {
    // A fixed volume mounted nowhere (Azure Disk Encryption's BEK key volume, an OEM tools volume)
    // holds no user data a user can reach and often cannot be encrypted at all: not counted.
    const fixed = volumes.value.filter((v) => v.VolumeType === 1);
    const unmounted = fixed.filter((v) => v.DriveLetter === null && v.Mounted === false);
    const dataStates = fixed.filter((v) => !unmounted.includes(v)).map(volumeState);
    if (unmounted.length > 0) evidence.unmounted_volumes_skipped = unmounted.length;
    evidence.fixed_data_volumes = dataStates.length;
    evidence.other_fixed_unprotected = dataStates.filter((s) => s.kind !== 'undetermined' && !compliant(s, policy)).length;
    const undetermined = dataStates.filter((s) => s.kind === 'undetermined').length;
    if (undetermined > 0) evidence.other_fixed_undetermined = undetermined;
  }

  if (osState.kind === 'undetermined') return unknown(osState.reason, evidence);
  if (osState.kind === 'unprotected') return fail({ ...evidence, state: osState.state, rule: osState.state });
  if (osState.kind === 'encrypting' && policy.diskEncryption.inProgress === 'FAIL') {
    return fail({ ...evidence, state: osState.state, rule: 'in_progress' });
  }
  if (evidence.other_fixed_unprotected) return fail({ ...evidence, rule: 'fixed_data_volume_unprotected' });
  if (evidence.other_fixed_undetermined) return unknown('fixed_data_volume_undetermined', evidence);
  return pass({
    ...evidence,
    state: osState.kind === 'protected' ? 'protected' : osState.state,
    rule: osState.kind === 'protected' ? 'protected' : 'in_progress_accepted',
  });
}

export const diskEncryptionCheck = defineProbeCheck(
  'DISK_ENCRYPTION',
  (probe): DiskEncryptionFacts => ({
    volumes: probeSection(probe, 'bitlocker', z.array(EncryptableVolume)),
    systemDrive: probe.ok ? probe.doc.systemDrive : null,
  }),
  (facts, policy) => evaluateDiskEncryption(facts, policy),
);

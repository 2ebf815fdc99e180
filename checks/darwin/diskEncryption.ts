// DISK_ENCRYPTION on macOS: FileVault as `fdesetup status` reports it (research §1.1). Not the
// APFS "encrypted" flag: Apple-silicon and T2 SSDs are always hardware-encrypted, FileVault or not.
import { defineCheck, type CommandResult, type Verdict } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';

export const FDESETUP = '/usr/bin/fdesetup';

export interface FileVaultStatus {
  filevault: 'on' | 'off';
  conversion: 'none' | 'encrypting' | 'decrypting' | 'deferred';
  /** "Percent completed = N" while converting. */
  percent?: number;
  /** "Encryption in progress: Pending" (waiting for AC power). */
  pending?: boolean;
  /** Lines none of the known forms match: a PASS needs none. */
  unrecognizedLines: number;
}

const STATE = /^FileVault is (On|Off)\.$/;
const DEFERRED_RESTART = /^FileVault is Off, but will be enabled after the next restart\.$/;
const DEFERRED_USER = /^Deferred enablement appears to be active for user '.*'\.$/;
const CONVERSION = /^(Encryption|Decryption) in progress(?:: (?:Percent completed = (\d{1,3}(?:\.\d+)?)|(Pending)))?\.?$/;
const BENIGN = /^FileVault master keychain appears to be installed\.$/;

/** Parses `fdesetup status`; null when no line says what FileVault is doing. */
export function parseFdesetupStatus(stdout: string): FileVaultStatus | null {
  let state: 'on' | 'off' | undefined;
  let conversion: FileVaultStatus['conversion'] = 'none';
  let percent: number | undefined;
  let pending = false;
  let unrecognizedLines = 0;
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (line === '' || BENIGN.test(line)) continue;
    let m: RegExpExecArray | null;
    if ((m = STATE.exec(line))) state = m[1] === 'On' ? 'on' : 'off';
    else if (DEFERRED_RESTART.test(line)) {
      state = 'off';
      conversion = 'deferred';
    } else if (DEFERRED_USER.test(line)) conversion = 'deferred';
    else if ((m = CONVERSION.exec(line))) {
      conversion = m[1] === 'Encryption' ? 'encrypting' : 'decrypting';
      if (m[2] !== undefined && Number(m[2]) <= 100) percent = Number(m[2]);
      pending = m[3] !== undefined;
    } else unrecognizedLines++;
  }
  if (state === undefined && conversion !== 'encrypting' && conversion !== 'decrypting') return null;
  const status: FileVaultStatus = {
    filevault: state ?? (conversion === 'encrypting' ? 'on' : 'off'),
    conversion,
    unrecognizedLines,
  };
  if (percent !== undefined) status.percent = percent;
  if (pending) status.pending = true;
  return status;
}

export function evaluateFileVault(result: CommandResult, policy: Policy): Verdict {
  const base = { source: 'fdesetup' };
  if (result.error || result.exitCode !== 0) {
    return unknown(commandFailureReason(result), { ...base, exit_code: result.exitCode });
  }
  const status = parseFdesetupStatus(result.stdout);
  if (!status) return unknown('parse_error', base);
  const evidence = {
    ...base,
    filevault: status.filevault,
    conversion: status.conversion,
    ...(status.percent !== undefined ? { percent: status.percent } : {}),
    ...(status.pending ? { pending: true } : {}),
  };
  // Positive evidence of an unprotected disk decides even beside lines we do not know.
  if (status.conversion === 'decrypting') return fail({ ...evidence, rule: 'decrypting' });
  if (status.conversion === 'deferred') return fail({ ...evidence, rule: 'deferred' });
  if (status.filevault === 'off') return fail({ ...evidence, rule: 'filevault_off' });
  if (status.conversion === 'encrypting' && policy.diskEncryption.inProgress === 'FAIL') {
    return fail({ ...evidence, rule: 'encryption_in_progress' });
  }
  if (status.unrecognizedLines > 0) {
    return unknown('unrecognized_output', { ...evidence, unrecognized_lines: status.unrecognizedLines });
  }
  return pass({ ...evidence, rule: status.conversion === 'encrypting' ? 'encryption_in_progress' : 'filevault_on' });
}

export const diskEncryption = defineCheck({
  key: 'DISK_ENCRYPTION',
  platform: 'DARWIN',
  collect: (ctx) => ctx.host.run(FDESETUP, ['status']),
  evaluate: (result, policy) => evaluateFileVault(result, policy),
});

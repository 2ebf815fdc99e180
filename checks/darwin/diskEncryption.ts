// DISK_ENCRYPTION on macOS: FileVault as `fdesetup status` reports it (research §1.1). Not the
// APFS "encrypted" flag: Apple-silicon and T2 SSDs are always hardware-encrypted, FileVault or not.
import { defineCheck, type CommandResult } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';

const FDESETUP = '/usr/bin/fdesetup';

export interface FileVaultStatus {
  filevault: 'on' | 'off';
  /** restart_pending: "FileVault is On, but needs to be restarted to finish." (not protecting yet). */
  conversion: 'none' | 'encrypting' | 'decrypting' | 'deferred' | 'restart_pending';
  /** "Percent completed = N" while converting. */
  percent?: number;
  /** "Encryption in progress: Pending" (waiting for AC power). */
  pending?: boolean;
  /** 1-based numbers of the lines none of the known forms match: a PASS needs none. */
  unrecognizedLines: number[];
}

/**
 * The state line: the token after "FileVault is" decides; Apple rewords what follows between
 * releases, so only the known tails add meaning and any other tail leaves the line unrecognised.
 */
const STATE = /^FileVault is (On|Off)(?:\.|, but (will be enabled after the next restart|needs to be restarted to finish)\.?|([,\s].*)|)$/;
/** "… for user 'x'.", "… for user \"x\".", "… for user x", "… for user." and bare: the opening words decide. */
const DEFERRED = /^Deferred enablement appears to be active\b/;
const CONVERSION = /^(Encryption|Decryption) in progress(?:: (?:Percent completed = (\d{1,3}(?:\.\d+)?)|(Pending)))?\.?$/;
const BENIGN = /^FileVault master keychain appears to be installed\.$/;

/** Parses `fdesetup status`; null when no line says what FileVault is doing. */
export function parseFdesetupStatus(stdout: string): FileVaultStatus | null {
  let state: 'on' | 'off' | undefined;
  let conversion: FileVaultStatus['conversion'] = 'none';
  let percent: number | undefined;
  let pending = false;
  const unrecognizedLines: number[] = [];
  for (const [i, raw] of stdout.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || BENIGN.test(line)) continue;
    let m: RegExpExecArray | null;
    if ((m = STATE.exec(line))) {
      state = m[1] === 'On' ? 'on' : 'off';
      if (m[2]?.startsWith('will')) conversion = 'deferred';
      else if (m[2] !== undefined && state === 'on') conversion = 'restart_pending';
      // "Off, but needs to be restarted to finish" (decryption completes at restart) is plainly Off.
      if (m[3] !== undefined) unrecognizedLines.push(i + 1);
    } else if (DEFERRED.test(line)) conversion = 'deferred';
    else if ((m = CONVERSION.exec(line))) {
      conversion = m[1] === 'Encryption' ? 'encrypting' : 'decrypting';
      if (m[2] !== undefined && Number(m[2]) <= 100) percent = Number(m[2]);
      pending = m[3] !== undefined;
    } else unrecognizedLines.push(i + 1);
  }
  if (state === undefined && conversion === 'none') return null;
  const status: FileVaultStatus = {
    filevault: state ?? (conversion === 'encrypting' ? 'on' : 'off'),
    conversion,
    unrecognizedLines,
  };
  if (percent !== undefined) status.percent = percent;
  if (pending) status.pending = true;
  return status;
}

export function evaluateFileVault(result: CommandResult, policy: Policy) {
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
  if (status.conversion === 'restart_pending') return fail({ ...evidence, rule: 'restart_pending' });
  if (status.filevault === 'off') return fail({ ...evidence, rule: 'filevault_off' });
  if (status.conversion === 'encrypting' && policy.diskEncryption.inProgress === 'FAIL') {
    return fail({ ...evidence, rule: 'encryption_in_progress' });
  }
  if (status.unrecognizedLines.length > 0) {
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

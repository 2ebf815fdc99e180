// Verdict constructors and evidence hygiene shared by every evaluator.
import type { Policy } from './policy';
import type { CommandResult, Evidence, FsError, Verdict } from './types';

// Each constructor infers the verdict's word from its literal, so an evaluator's return type lists its words.
export const pass = <Word extends string>(evidence: Evidence & { rule: Word }): Verdict<Word> => ({ status: 'PASS', evidence });
export const fail = <Word extends string>(evidence: Evidence & { rule: Word }): Verdict<Word> => ({ status: 'FAIL', evidence });
export const unknown = <Word extends string>(reason: Word, evidence: Evidence = {}): Verdict<Word> => ({
  status: 'UNKNOWN',
  evidence: { reason, ...evidence },
});
export const notApplicable = <Word extends string>(reason: Word, evidence: Evidence = {}): Verdict<Word> => ({
  status: 'NOT_APPLICABLE',
  evidence: { reason, ...evidence },
});

/**
 * A host-level control (disk, firewall, time, updates) seen from inside a container or jail, where
 * the host's state is out of sight: policy.containers.mode decides, `rule: "containers_mode"`.
 */
export function containersModeVerdict<Word extends 'container' | 'jail'>(policy: Policy, reason: Word, evidence: Evidence): Verdict<Word> {
  const withRule = { ...evidence, rule: 'containers_mode' };
  return policy.containers.mode === 'NOT_APPLICABLE' ? notApplicable(reason, withRule) : unknown(reason, withRule);
}

/** The UNKNOWN reason for a command that did not give a usable answer. */
export type CommandFailureReason = 'command_not_found' | 'permission_denied' | 'timeout' | 'check_error' | 'parse_error';

export function commandFailureReason(result: CommandResult): CommandFailureReason {
  switch (result.error) {
    case 'not_found':
      return 'command_not_found';
    case 'permission_denied':
      return 'permission_denied';
    case 'timeout':
      return 'timeout';
    case 'output_too_large':
    case 'spawn_failed':
      return 'check_error';
    default:
      return 'parse_error';
  }
}

/** The UNKNOWN reason for a file or directory that could not be read. */
export type FsFailureReason = 'permission_denied' | 'not_found' | 'check_error';

export function fsFailureReason(error: FsError): FsFailureReason {
  return error === 'permission_denied' ? 'permission_denied' : error === 'not_found' ? 'not_found' : 'check_error';
}

export const EVIDENCE_LIMITS = {
  stringLength: 200,
  arrayItems: 50,
  depth: 4,
  totalBytes: 4096,
} as const;

/**
 * Caps evidence so that one check can never ship a configuration file or a flood of items:
 * strings are cut at 200 characters, arrays at 50 items, nesting at 4 levels, and the whole
 * object at 4 KiB (then only scalar top-level fields are kept, with `truncated: true`).
 */
export function capEvidence(evidence: Evidence): Evidence {
  const capped = capValue(evidence, 0) as Evidence;
  if (Buffer.byteLength(JSON.stringify(capped)) <= EVIDENCE_LIMITS.totalBytes) return capped;
  const scalars: Evidence = { truncated: true };
  for (const [k, v] of Object.entries(capped)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) scalars[k] = v;
  }
  return scalars;
}

function capValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') {
    return value.length > EVIDENCE_LIMITS.stringLength ? `${value.slice(0, EVIDENCE_LIMITS.stringLength)}…` : value;
  }
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' || typeof value === 'boolean') return value;
    if (value === null) return null;
    return typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function' ? value.toString() : 'undefined';
  }
  if (depth >= EVIDENCE_LIMITS.depth) return '[depth limit]';
  if (Array.isArray(value)) {
    const items = value.slice(0, EVIDENCE_LIMITS.arrayItems).map((v) => capValue(v, depth + 1));
    return value.length > EVIDENCE_LIMITS.arrayItems ? [...items, `+${value.length - EVIDENCE_LIMITS.arrayItems} more`] : items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = capValue(v, depth + 1);
  return out;
}

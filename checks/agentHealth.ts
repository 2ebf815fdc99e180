// Required protection agents judged by their own health reports (MALWARE_PROTECTION on Linux and
// macOS): a running daemon is only the intent. Each product that has a report is asked for it only
// when it is required (on Linux, and its processes run): Microsoft Defender (`mdatp health`,
// checks/mdatp.ts), CrowdStrike Falcon (linux/falconctl.ts, darwin/protectionAgents.ts), SentinelOne
// (linux/sentinelctl.ts, darwin/protectionAgents.ts), Wazuh (its state file, checks/wazuhState.ts:
// connected to its manager or not). falconctl and sentinelctl are root-only: as a user the report
// is unreadable and the check says so (UNKNOWN), never PASS from the process.
import type { CommandResult, Evidence } from './types';
import { commandFailureReason, fail, unknown, type CommandFailureReason, type FsFailureReason } from './verdict';

/** Why a report could not be had: the runner's or the file's reason, or `exit_status` (the tool refused, its daemon not answering). */
export type HealthError = CommandFailureReason | FsFailureReason | 'exit_status';

export type HealthReading<T> = { ok: true; health: T } | { ok: false; error: HealthError };

/** Why a tool's report could not be had, or undefined when it answered. */
export function healthFailure(result: CommandResult): HealthError | undefined {
  if (result.error) return commandFailureReason(result);
  return result.exitCode === 0 ? undefined : 'exit_status';
}

/** One tool's report parsed, or why it could not be had. */
export function readHealthReport<T>(result: CommandResult, parse: (stdout: string) => T): HealthReading<T> {
  const error = healthFailure(result);
  return error ? { ok: false, error } : { ok: true, health: parse(result.stdout) };
}

/** What one product's report says: its fields for the evidence, and why it does not PASS when it does not. */
export interface Judgement<Rule extends string, Reason extends string> {
  evidence: Evidence;
  outcome?: { status: 'FAIL'; rule: Rule; detail?: Evidence } | { status: 'UNKNOWN'; reason: Reason; detail: Evidence };
}

export const failed = <Rule extends string>(evidence: Evidence, rule: Rule, detail?: Evidence): Judgement<Rule, never> => ({
  evidence,
  outcome: detail ? { status: 'FAIL', rule, detail } : { status: 'FAIL', rule },
});

/** A report that could not be had, or lacks a field a PASS needs: UNKNOWN `agent_health_unreadable`. */
export const unreadable = (
  agent: string,
  detail: { health_error: HealthError } | { fields_unread: string[] },
  evidence: Evidence = {},
): Judgement<never, 'agent_health_unreadable'> => ({
  evidence,
  outcome: { status: 'UNKNOWN', reason: 'agent_health_unreadable', detail: { agent, ...detail } },
});

/** Of the fields a PASS needs (name -> value read, undefined when unread), the names of those unread. */
export const unreadFields = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);

/**
 * The products' judgements together, every product's fields in the evidence: a FAIL any report
 * proves (in the order given), else the first UNKNOWN, else undefined (all PASS).
 */
export function combineJudgements<Rule extends string, Reason extends string>(
  judgements: readonly Judgement<Rule, Reason>[],
  evidence: Evidence,
) {
  for (const j of judgements) Object.assign(evidence, j.evidence);
  for (const { outcome } of judgements) if (outcome?.status === 'FAIL') return fail({ ...evidence, ...outcome.detail, rule: outcome.rule });
  for (const { outcome } of judgements)
    if (outcome?.status === 'UNKNOWN') return unknown(outcome.reason, { ...evidence, ...outcome.detail });
  return undefined;
}

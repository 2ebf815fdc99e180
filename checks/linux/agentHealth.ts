// Required protection agents judged by their own health reports (MALWARE_PROTECTION on Linux): a
// running daemon is only the intent. Each product that has a report is asked for it only when it
// is required and its processes run: Microsoft Defender (`mdatp health`, mdatp.ts), CrowdStrike
// Falcon (`falconctl -g`, falconctl.ts), SentinelOne (`sentinelctl`, sentinelctl.ts). The vendors'
// tools are root-only: as a user the report is unreadable and the check says so (UNKNOWN), never
// PASS from the process.
import type { CommandResult, Evidence } from '../types';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

/** Why a report could not be had: the runner's reason, or `exit_status` (the tool refused, its daemon not answering). */
export type HealthError = CommandFailureReason | 'exit_status';

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

/** The evidence of a report that could not be read or lacks a field the verdict needs. */
export const unreadable = (evidence: Evidence, agent: string, detail: { health_error: HealthError } | { fields_unread: string[] }) => ({
  ...evidence,
  agent,
  ...detail,
});

/** The names of the fields a PASS needs that the report did not give (each entry: its name when unread). */
export const unreadFields = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);

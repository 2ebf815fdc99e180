// Microsoft Defender for Endpoint (Linux and macOS, the same `mdatp` tool) judged by its own health
// report, `mdatp health`, not by its daemon running: a running wdavdaemon can be unlicensed, have
// real-time protection off, run in passive mode or carry stale definitions (Microsoft's "Investigate
// agent health issues" page lists the fields). Linux reads the text report, `name : value` lines; the
// few fields that decide are read, every other field is ignored, and a line that is no field is
// reported by its number, never by its text (it can carry organisation and machine ids). macOS reads
// `--output json` (the form recorded from a Mac), the same fields under their camelCase names.
import type { Policy } from './policy';
import type { CommandResult } from './types';
import { failed, healthFailure, readHealthReport, unreadable, type HealthReading, type Judgement } from './agentHealth';

/** The fields of `mdatp health` the verdict rests on. */
export interface DefenderHealth {
  healthy?: boolean;
  licensed?: boolean;
  realTimeProtection?: boolean;
  passiveMode?: boolean;
  /** `definitions_status` as printed (`up_to_date`, …; the JSON's camelCase `$type` in that form). */
  definitionsStatus?: string;
  definitionsAgeMinutes?: number;
  healthIssues?: number;
  /** 1-based numbers of the lines that are no `name : value` field (a wrapped value, a notice). */
  unrecognizedLines: number[];
}

/** The report, or why it could not be had (`exit_status`: the daemon not answering, mdatp refusing). */
export type DefenderHealthReading = HealthReading<DefenderHealth>;

const FIELD = /^([a-z][a-z0-9_]*)\s+: (.*)$/;

/** The true/false fields that decide, by their name in the report. */
const BOOLEAN_FIELDS: Partial<Record<string, 'healthy' | 'licensed' | 'realTimeProtection' | 'passiveMode'>> = {
  healthy: 'healthy',
  licensed: 'licensed',
  real_time_protection_enabled: 'realTimeProtection',
  passive_mode_enabled: 'passiveMode',
};

const bool = (value: string) => (value === 'true' ? true : value === 'false' ? false : undefined);
const unquote = (value: string) => /^"(.*)"$/.exec(value)?.[1] ?? value;

/** Reads `mdatp health`'s text output. */
export function parseMdatpHealth(stdout: string): DefenderHealth {
  const health: DefenderHealth = { unrecognizedLines: [] };
  stdout.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const m = FIELD.exec(line);
    if (!m) {
      health.unrecognizedLines.push(i + 1);
      return;
    }
    const [, name, value] = m as unknown as [string, string, string];
    const flag = BOOLEAN_FIELDS[name];
    if (flag) health[flag] = bool(value);
    else if (name === 'definitions_status') health.definitionsStatus = unquote(value);
    else if (name === 'definitions_updated_minutes_ago' && /^\d+$/.test(value)) health.definitionsAgeMinutes = Number(value);
    // `[]`, or a list of quoted issue names: only their number is kept.
    else if (name === 'health_issues' && /^\[.*\]$/.test(value))
      health.healthIssues = value === '[]' ? 0 : value.slice(1, -1).split('",').length;
  });
  return health;
}

/** The health report, or why it could not be had (mdatp missing, refused, the daemon not answering). */
export const readMdatpHealth = (result: CommandResult): DefenderHealthReading => readHealthReport(result, parseMdatpHealth);

/** A setting of the JSON report: `{ "value": …, "isManaged": … }`, or (older versions) the value itself. */
const settingValue = (field: unknown) => (typeof field === 'object' && field !== null && 'value' in field ? field.value : field);
const boolOf = (value: unknown) => (typeof value === 'boolean' ? value : undefined);

/** Reads `mdatp health --output json`: the same fields as the text report, camelCase. */
export function parseMdatpHealthJson(report: Record<string, unknown>): DefenderHealth {
  const health: DefenderHealth = { unrecognizedLines: [] };
  const put = <K extends keyof DefenderHealth>(key: K, value: DefenderHealth[K] | undefined) => {
    if (value !== undefined) health[key] = value;
  };
  put('healthy', boolOf(report.healthy));
  put('licensed', boolOf(report.licensed));
  put('realTimeProtection', boolOf(settingValue(report.realTimeProtectionEnabled)));
  put('passiveMode', boolOf(settingValue(report.passiveModeEnabled)));
  const status = settingValue(report.definitionsStatus);
  const statusType = typeof status === 'object' && status !== null && '$type' in status ? status.$type : status;
  // `upToDate` is the text report's `up_to_date`.
  if (typeof statusType === 'string' && /^[A-Za-z]{1,40}$/.test(statusType))
    health.definitionsStatus = statusType.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const minutes = report.definitionsUpdatedMinutesAgo;
  if (Number.isSafeInteger(minutes) && (minutes as number) >= 0) health.definitionsAgeMinutes = minutes as number;
  if (Array.isArray(report.healthIssues)) health.healthIssues = report.healthIssues.length;
  return health;
}

/** The JSON health report, or why it could not be had (`parse_error`: no JSON object). */
export function readMdatpHealthJson(result: CommandResult): DefenderHealthReading {
  const error = healthFailure(result);
  if (error) return { ok: false, error };
  let report: unknown;
  try {
    report = JSON.parse(result.stdout);
  } catch {
    // Not JSON: no object, below.
  }
  return typeof report === 'object' && report !== null && !Array.isArray(report)
    ? { ok: true, health: parseMdatpHealthJson(report as Record<string, unknown>) }
    : { ok: false, error: 'parse_error' };
}

type DefenderRule = 'agent_unlicensed' | 'realtime_protection_off' | 'passive_mode' | 'signatures_outdated' | 'agent_unhealthy';
type DefenderReason = 'agent_health_unreadable' | 'definitions_status_unrecognized';

/** What Defender's report says (agentHealth.ts combines it with the other products'). */
export function judgeDefender(reading: DefenderHealthReading, policy: Policy): Judgement<DefenderRule, DefenderReason> {
  if (!reading.ok) return unreadable('microsoft-defender', { health_error: reading.error });
  const h = reading.health;
  const maxMinutes = policy.malware.maxSignatureAgeDays * 1440;
  const defender: Record<string, unknown> = {
    healthy: h.healthy ?? null,
    licensed: h.licensed ?? null,
    real_time_protection: h.realTimeProtection ?? null,
    passive_mode: h.passiveMode ?? null,
    definitions_status: h.definitionsStatus ?? null,
    signature_age_days: h.definitionsAgeMinutes === undefined ? null : Math.floor(h.definitionsAgeMinutes / 1440),
  };
  if (h.healthIssues) defender.health_issues = h.healthIssues;
  if (h.unrecognizedLines.length > 0) defender.unrecognized_lines = h.unrecognizedLines;
  const evidence = { defender, max_signature_age_days: policy.malware.maxSignatureAgeDays };
  if (h.licensed === false) return failed(evidence, 'agent_unlicensed');
  if (h.realTimeProtection === false) return failed(evidence, 'realtime_protection_off');
  if (h.passiveMode === true) return failed(evidence, 'passive_mode');
  if (h.definitionsAgeMinutes !== undefined && h.definitionsAgeMinutes > maxMinutes) return failed(evidence, 'signatures_outdated');
  if (h.healthy === false) return failed(evidence, 'agent_unhealthy');
  // A PASS needs every deciding field read: healthy, licensed, real-time protection on, and definitions
  // dated within the limit with the status Defender itself gives them.
  const unread = [
    h.healthy === undefined && 'healthy',
    h.licensed === undefined && 'licensed',
    h.realTimeProtection === undefined && 'real_time_protection_enabled',
    h.definitionsAgeMinutes === undefined && 'definitions_updated_minutes_ago',
  ].filter((f): f is string => f !== false);
  if (unread.length > 0) return unreadable('microsoft-defender', { fields_unread: unread }, evidence);
  if (h.definitionsStatus !== undefined && h.definitionsStatus !== 'up_to_date')
    return { evidence, outcome: { status: 'UNKNOWN', reason: 'definitions_status_unrecognized', detail: {} } };
  return { evidence };
}

// Microsoft Defender for Endpoint on Linux judged by its own health report, `mdatp health`, not by
// its daemon running: a running wdavdaemon can be unlicensed, have real-time protection off, run in
// passive mode or carry stale definitions (Microsoft's "Investigate agent health issues" page lists
// the fields). The report is `name : value` lines; the few fields that decide are read, every other
// field is ignored, and a line that is no field is reported by its number, never by its text (it can
// carry organisation and machine ids).
import type { Policy } from '../policy';
import type { CommandResult } from '../types';
import { failed, readHealthReport, unreadable, type HealthReading, type Judgement } from './agentHealth';

export const MDATP = '/usr/bin/mdatp';

/** The fields of `mdatp health` the verdict rests on. */
export interface DefenderHealth {
  healthy?: boolean;
  licensed?: boolean;
  realTimeProtection?: boolean;
  passiveMode?: boolean;
  /** `definitions_status` as printed (`up_to_date`, …). */
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

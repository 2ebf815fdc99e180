// SentinelOne on Linux judged by its own reports, not by its s1-agent process running: `sentinelctl
// control status` says whether the agent is enabled (an agent disabled from the console or by
// `sentinelctl control disable` keeps running and protects nothing), `sentinelctl engines status`
// whether its detection engines are (the DFI engine, static AI on files, and the dynamic engine,
// behavioural AI, each switched by the console's policy). Both print `name<spaces>value` lines
// (some versions `name: value`); a line that is neither is reported by command and number.
// Connectivity to the console (`sentinelctl management status`) is not asked: the engines protect
// offline, and a laptop without a network must not FAIL.
import type { CommandResult } from '../types';
import { failed, healthFailure, unreadFields, unreadable, type HealthReading } from '../agentHealth';

export const SENTINELCTL = '/opt/sentinelone/bin/sentinelctl';
export const SENTINELCTL_REPORTS = {
  control: ['control', 'status'],
  engines: ['engines', 'status'],
} as const satisfies Record<string, readonly string[]>;
type Report = keyof typeof SENTINELCTL_REPORTS;

/** The deciding fields, each as printed (`Enabled`, `Disabled`, …). */
export interface SentinelOneHealth {
  agentState?: string;
  dfiEngine?: string;
  dynamicEngine?: string;
  /** `<report> status:<line>` for each line that is no field (1-based). */
  unrecognizedLines: string[];
}

const LINE = /^(\S.*?)(?::\s+|\s{2,})(\S.*)$/;
/** A state word as the reports print them; anything else is kept out of the evidence. */
const WORD = /^[A-Za-z][A-Za-z ()_-]{0,39}$/;
const FIELDS: Partial<Record<string, 'agentState' | 'dfiEngine' | 'dynamicEngine'>> = {
  'agent state': 'agentState',
  'dfi engine': 'dfiEngine',
  'dynamic engine': 'dynamicEngine',
};

/** Reads one of the reports into `health`. */
function parseReport(report: Report, stdout: string, health: SentinelOneHealth) {
  stdout.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const m = LINE.exec(line);
    if (!m) {
      health.unrecognizedLines.push(`${report} status:${i + 1}`);
      return;
    }
    const field = FIELDS[m[1]!.toLowerCase()];
    if (field && WORD.test(m[2]!)) health[field] = m[2]!;
  });
}

/** Both reports parsed, or why the first that failed could not be had. */
export function readSentinelctl(results: Record<Report, CommandResult>): HealthReading<SentinelOneHealth> {
  const health: SentinelOneHealth = { unrecognizedLines: [] };
  for (const report of Object.keys(SENTINELCTL_REPORTS) as Report[]) {
    const error = healthFailure(results[report]);
    if (error) return { ok: false, error };
    parseReport(report, results[report].stdout, health);
  }
  return { ok: true, health };
}

const state = (word: string | undefined) => word?.toLowerCase();

/** What SentinelOne's reports say (agentHealth.ts combines it with the other products'). */
export function judgeSentinelOne(reading: HealthReading<SentinelOneHealth>) {
  if (!reading.ok) return unreadable('sentinelone', { health_error: reading.error });
  const h = reading.health;
  const sentinelone: Record<string, unknown> = {
    agent_state: h.agentState ?? null,
    dfi_engine: h.dfiEngine ?? null,
    dynamic_engine: h.dynamicEngine ?? null,
  };
  if (h.unrecognizedLines.length > 0) sentinelone.unrecognized_lines = h.unrecognizedLines;
  const evidence = { sentinelone };
  if (state(h.agentState) === 'disabled') return failed(evidence, 'agent_disabled');
  const engines = { dfi_engine: h.dfiEngine, dynamic_engine: h.dynamicEngine };
  const off = Object.entries(engines).filter(([, word]) => state(word) === 'disabled');
  if (off.length > 0) return failed(evidence, 'protection_engine_disabled', { engines_disabled: off.map(([name]) => name) });
  // A PASS needs each field read with a word whose meaning is known.
  const known = (word: string | undefined) => (state(word) === 'enabled' ? word : undefined);
  const unread = unreadFields({ agent_state: known(h.agentState), dfi_engine: known(h.dfiEngine), dynamic_engine: known(h.dynamicEngine) });
  if (unread.length > 0) return unreadable('sentinelone', { fields_unread: unread }, evidence);
  return { evidence };
}

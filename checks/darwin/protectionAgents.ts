// Third-party protection products a policy requires on a Mac (policy.malware.requiredAgents.DARWIN),
// each judged by its own health report, never by being installed: CrowdStrike Falcon (`falconctl
// stats`, `Sensor operational:`), SentinelOne (`sentinelctl status`: `Agent Operational State:`,
// `Protection:`, `Ready:`) and Microsoft Defender (`mdatp health --output json`, judged as on Linux,
// checks/mdatp.ts). A product's tool that does not exist means the product is not installed (FAIL);
// one that fails or refuses (falconctl and sentinelctl answer root only) is UNKNOWN, never PASS.
// Nothing runs unless the policy names a product. Console connectivity (falconctl's `Cloud Info`,
// sentinelctl's `Management`) is not judged: the products protect offline, and a laptop without a
// network must not FAIL.
import { combineJudgements, failed, readHealthReport, unreadable, type HealthReading, type Judgement } from '../agentHealth';
import { judgeDefender, readMdatpHealthJson, type DefenderHealthReading } from '../mdatp';
import type { Policy } from '../policy';
import { healthReportOf, type ProtectionProduct as DarwinProduct } from '../requiredAgents';
import type { CheckContext, Evidence } from '../types';
import { fail } from '../verdict';

export const FALCONCTL = '/Applications/Falcon.app/Contents/Resources/falconctl';
export const SENTINELCTL = '/Library/Sentinel/sentinel-agent.bundle/Contents/MacOS/sentinelctl';
export const MDATP = '/usr/local/bin/mdatp';

/** The fields of `falconctl stats` that decide, as printed. */
export interface FalconStats {
  operational?: string;
  version?: string;
}

/** The fields of `sentinelctl status` that decide, as printed. */
export interface SentinelOneStatus {
  operationalState?: string;
  protection?: string;
  ready?: string;
  version?: string;
}

/** A state word as the reports print it; anything else is kept out of the evidence. */
const WORD = /^[A-Za-z][A-Za-z ()_-]{0,39}$/;
const VERSION = /^\d+(?:\.\d+)+$/;

/**
 * A report of `name: value` lines under headings (`=== agent_info ===`, `Agent`) and tables, as both
 * falconctl and sentinelctl print it on macOS: the first value of each field named (lower case),
 * kept only when it fits `valid` (a later line of the same name never stands in for it). Headings,
 * tables and every other field are not read.
 */
export function reportFields<Name extends string>(stdout: string, valid: Record<Name, RegExp>): Partial<Record<Name, string>> {
  const fields: Partial<Record<Name, string>> = {};
  const seen = new Set<string>();
  for (const line of stdout.split('\n')) {
    const m = /^\s*([^:]+?):\s+(\S.*?)\s*$/.exec(line);
    const name = m?.[1]!.toLowerCase() as Name | undefined;
    if (!name || !Object.hasOwn(valid, name) || seen.has(name)) continue;
    seen.add(name);
    if (valid[name].test(m![2]!)) fields[name] = m![2]!;
  }
  return fields;
}

export function parseFalconStats(stdout: string): FalconStats {
  const f = reportFields(stdout, { 'sensor operational': WORD, version: VERSION });
  return { operational: f['sensor operational'], version: f.version };
}

export function parseSentinelctlStatus(stdout: string): SentinelOneStatus {
  const f = reportFields(stdout, { 'agent operational state': WORD, protection: WORD, ready: WORD, version: VERSION });
  return { operationalState: f['agent operational state'], protection: f.protection, ready: f.ready, version: f.version };
}

/** Each product's report, read once whatever names the policy uses for it. */
export interface AgentReports {
  'falcon-sensor'?: HealthReading<FalconStats>;
  sentinelone?: HealthReading<SentinelOneStatus>;
  'microsoft-defender'?: DefenderHealthReading;
}

export interface RequiredAgentFacts {
  required: string[];
  reports: AgentReports;
}

const READ = {
  'falcon-sensor': async (ctx: CheckContext) => readHealthReport(await ctx.host.run(FALCONCTL, ['stats']), parseFalconStats),
  sentinelone: async (ctx: CheckContext) => readHealthReport(await ctx.host.run(SENTINELCTL, ['status']), parseSentinelctlStatus),
  'microsoft-defender': async (ctx: CheckContext) => readMdatpHealthJson(await ctx.host.run(MDATP, ['health', '--output', 'json'])),
} satisfies Record<DarwinProduct, (ctx: CheckContext) => Promise<unknown>>;

/** The required products' reports (one process each, in parallel); undefined when the policy requires none. */
export async function collectRequiredAgents(ctx: CheckContext): Promise<RequiredAgentFacts | undefined> {
  const required = ctx.policy.malware.requiredAgents.DARWIN;
  if (required.length === 0) return undefined;
  // The policy's schema admits only names with a report.
  const products = [...new Set(required.map((agent) => healthReportOf(agent) as DarwinProduct))];
  const reports: AgentReports = {};
  await Promise.all(products.map(async (product) => Object.assign(reports, { [product]: await READ[product](ctx) })));
  return { required, reports };
}

const lower = (word: string | undefined) => word?.toLowerCase();

/** What Falcon's `falconctl stats` says. */
export function judgeFalconStats(reading: HealthReading<FalconStats>): Judgement<'sensor_not_operational', 'agent_health_unreadable'> {
  if (!reading.ok) return unreadable('falcon-sensor', { health_error: reading.error });
  const h = reading.health;
  const evidence = { falcon: { operational: h.operational ?? null, version: h.version ?? null } };
  if (lower(h.operational) === 'false') return failed(evidence, 'sensor_not_operational');
  if (lower(h.operational) !== 'true') return unreadable('falcon-sensor', { fields_unread: ['Sensor operational'] }, evidence);
  return { evidence };
}

/** What SentinelOne's `sentinelctl status` says. */
export function judgeSentinelctlStatus(
  reading: HealthReading<SentinelOneStatus>,
): Judgement<'agent_disabled' | 'protection_disabled', 'agent_health_unreadable'> {
  if (!reading.ok) return unreadable('sentinelone', { health_error: reading.error });
  const h = reading.health;
  const sentinelone = {
    operational_state: h.operationalState ?? null,
    protection: h.protection ?? null,
    ready: h.ready ?? null,
    version: h.version ?? null,
  };
  const evidence = { sentinelone };
  if (lower(h.operationalState) === 'disabled') return failed(evidence, 'agent_disabled');
  if (lower(h.protection) === 'disabled') return failed(evidence, 'protection_disabled');
  // A PASS needs each field read with the one word whose meaning is known.
  const unread = [
    lower(h.operationalState) !== 'enabled' && 'Agent Operational State',
    lower(h.protection) !== 'enabled' && 'Protection',
    lower(h.ready) !== 'yes' && 'Ready',
  ].filter((field): field is string => field !== false);
  if (unread.length > 0) return unreadable('sentinelone', { fields_unread: unread }, evidence);
  return { evidence };
}

/** Defender's judgement with its definitions' limit among its own fields: on a Mac the top-level limit is XProtect's. */
function judgeDefenderOnMac(reading: DefenderHealthReading, policy: Policy) {
  const judgement = judgeDefender(reading, policy);
  const { max_signature_age_days: limit, defender, ...evidence } = judgement.evidence;
  if (defender) evidence.defender = { ...defender, max_signature_age_days: limit };
  return { ...judgement, evidence };
}

/**
 * The required products together, their fields added to `evidence`: a product not installed FAILs
 * first (`not_installed` names them all), then a FAIL any report proves, then the first UNKNOWN;
 * undefined when every report says the product protects.
 */
export function judgeRequiredAgents(facts: RequiredAgentFacts, policy: Policy, evidence: Evidence) {
  const { reports } = facts;
  evidence.required = facts.required;
  const notInstalled = (Object.keys(reports) as DarwinProduct[]).filter((product) => {
    const reading = reports[product]!;
    return !reading.ok && reading.error === 'command_not_found';
  });
  if (notInstalled.length > 0) return fail({ ...evidence, not_installed: notInstalled, rule: 'required_agent_not_installed' });
  const judgements = [
    reports['microsoft-defender'] && judgeDefenderOnMac(reports['microsoft-defender'], policy),
    reports['falcon-sensor'] && judgeFalconStats(reports['falcon-sensor']),
    reports.sentinelone && judgeSentinelctlStatus(reports.sentinelone),
  ].filter((j) => j !== undefined);
  return combineJudgements(judgements, evidence);
}

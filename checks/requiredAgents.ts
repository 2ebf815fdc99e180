// policy.malware.requiredAgents on platforms without built-in anti-malware (LINUX, FREEBSD): which
// processes stand for a named agent, and which of them are not running. Agents are found by their
// processes, so the same names work on both platforms. DARWIN takes only the products that report
// their own health (DARWIN_AGENT_NAMES): there the report, not a process, is what is read.
import type { RunningCommands } from './runningCommands';
import type { Host } from './types';

/** Agents whose daemons are not (only) named after them: the processes that must all run ("a|b": either one). */
const AGENT_PROCESSES: Record<string, readonly string[]> = {
  // Fleet's "Antivirus healthy" rule: the scanner and the signature updater both run.
  clamav: ['clamd', 'freshclam'],
  'microsoft-defender': ['wdavdaemon'],
  // Kernel-module mode runs falcon-sensor; eBPF mode (the default since 2024) falcon-sensor-bpf.
  'falcon-sensor': ['falcon-sensor|falcon-sensor-bpf'],
  sentinelone: ['s1-agent'],
  'wazuh-agent': ['wazuh-agentd'],
  osquery: ['osqueryd'],
};
/** Other names administrators use for the same agents. */
const ALIASES: Record<string, string> = { mdatp: 'microsoft-defender', crowdstrike: 'falcon-sensor' };

/** Anti-malware engines, reported when seen even if not required. osquery and Wazuh are not anti-malware (research §9.2). */
export const ANTIMALWARE_AGENTS = ['clamav', 'microsoft-defender', 'falcon-sensor', 'sentinelone'] as const;

/** The processes an agent name stands for: a known agent's, else the name itself as a command name. */
export function agentProcesses(agent: string): readonly string[] {
  return AGENT_PROCESSES[canonicalAgent(agent)] ?? [agent];
}

/** The agent a name stands for, aliases resolved (`mdatp` -> `microsoft-defender`), lower case. */
function canonicalAgent(agent: string): string {
  const name = agent.toLowerCase();
  return ALIASES[name] ?? name;
}

/** The protection products whose own report judges them on macOS as on Linux (`mdatp health`, `falconctl`, `sentinelctl`). */
const PROTECTION_PRODUCTS = ['microsoft-defender', 'falcon-sensor', 'sentinelone'] as const;
export type ProtectionProduct = (typeof PROTECTION_PRODUCTS)[number];

/** The agents that report their own health: the protection products, and on Linux and FreeBSD Wazuh (its state file). */
const HEALTH_REPORTING = [...PROTECTION_PRODUCTS, 'wazuh-agent'] as const;
export type HealthReportingAgent = (typeof HEALTH_REPORTING)[number];

/** The names policy.malware.requiredAgents.DARWIN accepts: the protection products and their aliases (Wazuh is not anti-malware). */
export const DARWIN_AGENT_NAMES = [...PROTECTION_PRODUCTS, 'mdatp', 'crowdstrike'] as const;

/** The product whose own health report judges this required agent, if it has one. */
export function healthReportOf(agent: string): HealthReportingAgent | undefined {
  const name = canonicalAgent(agent);
  return HEALTH_REPORTING.find((product) => product === name);
}

/** Is this required agent ClamAV (whatever the case)? Its signatures can be dated. */
export const isClamav = (agent: string) => agent.toLowerCase() === 'clamav';

/** One of a process entry's alternatives runs. */
const processRunning = (entry: string, running: RunningCommands) => entry.split('|').some((name) => running.has(name));

/** All of the agent's processes run. */
export function agentRunning(agent: string, running: RunningCommands): boolean {
  return agentProcesses(agent).every((p) => processRunning(p, running));
}

/** Per agent, its processes that are not running (empty when the agent runs). */
export function missingProcesses(agents: readonly string[], running: RunningCommands): Record<string, string[]> {
  return Object.fromEntries(agents.map((agent) => [agent, agentProcesses(agent).filter((p) => !processRunning(p, running))]));
}

/** ClamAV's daily signature database, in either form freshclam writes (`.cld` after incremental updates). */
const CLAMAV_DAILY = ['daily.cld', 'daily.cvd'];

/** When ClamAV's signatures last changed: the newer of daily.cld and daily.cvd in `directory`; undefined when neither can be dated. */
export async function clamavSignaturesMs(host: Host, directory: string): Promise<number | undefined> {
  const dbs = await Promise.all(CLAMAV_DAILY.map((f) => host.stat(`${directory}/${f}`)));
  const newest = Math.max(...dbs.map((d) => (d.ok && d.mtimeMs !== undefined ? d.mtimeMs : -Infinity)));
  return Number.isFinite(newest) ? newest : undefined;
}

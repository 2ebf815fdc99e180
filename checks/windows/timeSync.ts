// TIME_SYNC on Windows (research §4.4): the Windows Time service's configuration from the registry
// (Group Policy, HKLM\SOFTWARE\Policies\Microsoft\W32Time, over the local values), then its live
// state: a configured time source is not synchronisation. `w32tm /query /status /verbose` prints
// translated labels and dates ("Sprungindikator: …" on German Windows) in a fixed order, so only the
// numbers are read, by line position: leap indicator, stratum, ReferenceId and the seconds since
// the last good sync. On workgroup Windows 10/11 W32Time is a trigger-start service that is
// stopped most of the time (w32tm then fails with 0x80070426): the Time-Service events of the
// System log say when it last synchronised.
import * as z from 'zod/mini';
import type { Policy } from '../policy';
import type { Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import {
  defineProbeCheck,
  probeComputer,
  probeSection,
  probeServices,
  registryKey,
  sectionUnknown,
  serviceState,
  startType,
  type ComputerFacts,
  type Section,
  type ServiceFacts,
} from './probe';
import { regNumber, regString, type RegistryValues } from './registry';

export const W32tmOutput = z.object({ ExitCode: z.nullable(z.int()), Lines: z.array(z.string()) });
export type W32tmOutput = z.infer<typeof W32tmOutput>;
const TimeServiceEvent = z.object({ Id: z.int(), TimeCreated: z.string() });
type TimeServiceEvent = z.infer<typeof TimeServiceEvent>;

export interface TimeSyncFacts {
  parameters: Section<RegistryValues | null>;
  parametersPolicy: Section<RegistryValues | null>;
  ntpClient: Section<RegistryValues | null>;
  ntpClientPolicy: Section<RegistryValues | null>;
  vmicProvider: Section<RegistryValues | null>;
  services: Section<ServiceFacts[]>;
  computer: Section<ComputerFacts>;
  w32tm: Section<W32tmOutput>;
  events: Section<TimeServiceEvent[]>;
}

/** W32Time Parameters\Type values (case-insensitive in Windows), and what provides the time. */
const TYPES: Record<string, { type: string; provider: string | null }> = {
  ntp: { type: 'NTP', provider: 'ntp' },
  nt5ds: { type: 'NT5DS', provider: 'domain' },
  allsync: { type: 'AllSync', provider: 'all' },
  nosync: { type: 'NoSync', provider: null },
};

/**
 * A sync older than this FAILs: W32Time polls a stand-alone machine's NTP server once a week
 * (SpecialPollInterval 604800) and a domain member far more often, so a last good sync more than
 * eight days old means the time source has stopped answering.
 */
const STALE_SYNC_SECONDS = 8 * 86_400;

/** ReferenceId "LOCL": the free-running local CMOS clock, no time source at all. */
const LOCAL_CLOCK_REFID = 0x4c4f434c;
/** ReferenceId "VMTP": Hyper-V's VM IC time provider (the host's clock). */
const HYPERV_REFID = 0x564d5450;

/** Events 35 ("now synchronizing … with the time source") and 37 ("receiving valid time data"). */
const SYNC_EVENT_IDS = new Set([35, 37]);

export interface W32tmReading {
  leapIndicator: number;
  stratum: number;
  referenceId: number;
  /** The verbose lines; null when absent or not a number. */
  phaseOffsetSeconds: number | null;
  secondsSinceGoodSync: number | null;
}

const number = (text: string | undefined, pattern: RegExp): number | null => {
  const match = text === undefined ? null : pattern.exec(text);
  return match ? Number(match[1]!.replace(',', '.')) : null;
};

/**
 * The numbers of `w32tm /query /status /verbose`, read by position (labels are translated): each
 * "label: value" line is one field, a line without a colon continues the previous one (a long
 * German message wraps). Null when the first six fields are not the numbers they must be.
 */
export function parseW32tmStatus(lines: string[]): W32tmReading | null {
  const values: string[] = [];
  for (const line of lines) {
    const colon = line.search(/[:\uff1a]/);
    if (colon >= 0) values.push(line.slice(colon + 1).trim());
  }
  const leapIndicator = number(values[0], /^([0-3])\s*\(/);
  const stratum = number(values[1], /^(\d{1,2})\b/);
  const referenceId = number(values[5], /^(0x[0-9a-f]{8})\b/i);
  if (leapIndicator === null || stratum === null || stratum > 16 || referenceId === null) return null;
  return {
    leapIndicator,
    stratum,
    referenceId,
    phaseOffsetSeconds: number(values[9], /^(-?\d+(?:[.,]\d+)?)s$/),
    secondsSinceGoodSync: number(values[15], /^(\d+(?:[.,]\d+)?)s$/),
  };
}

/** The error w32tm printed, by its HRESULT (the message around it is translated). */
export function w32tmError(output: W32tmOutput): string {
  const hresult = /\(0x([0-9a-f]{8})\)/i.exec(output.Lines.join('\n'))?.[1]?.toLowerCase();
  if (hresult === '80070426') return 'service_not_running';
  if (hresult === '80070005') return 'access_denied';
  return hresult ? `hresult_0x${hresult}` : `exit_${output.ExitCode}`;
}

function referenceKind(reading: W32tmReading): string {
  if (reading.referenceId === LOCAL_CLOCK_REFID) return 'local_clock';
  if (reading.referenceId === HYPERV_REFID) return 'hyperv';
  return reading.referenceId === 0 ? 'unspecified' : 'peer';
}

/** What w32tm says about the clock now. */
function judgeReading(reading: W32tmReading, evidence: Evidence, policy: Policy) {
  Object.assign(evidence, {
    state_source: 'w32tm',
    leap_indicator: reading.leapIndicator,
    stratum: reading.stratum,
    reference: referenceKind(reading),
  });
  if (reading.secondsSinceGoodSync !== null) evidence.last_sync_age_s = Math.round(reading.secondsSinceGoodSync);
  // Leap indicator 3 and stratum 0 are NTP's "not synchronised" (RFC 5905); LOCL is the free-running CMOS clock.
  if (reading.leapIndicator === 3 || reading.stratum === 0) return fail({ ...evidence, rule: 'not_synchronized' });
  if (reading.referenceId === LOCAL_CLOCK_REFID) return fail({ ...evidence, rule: 'local_clock' });
  if (reading.secondsSinceGoodSync !== null && reading.secondsSinceGoodSync > STALE_SYNC_SECONDS) {
    return fail({ ...evidence, stale_after_s: STALE_SYNC_SECONDS, rule: 'sync_stale' });
  }
  const max = policy.timeSync.maxOffsetSeconds;
  if (max !== null && reading.phaseOffsetSeconds !== null) {
    Object.assign(evidence, { offset_measured: true, offset_s: reading.phaseOffsetSeconds });
    if (Math.abs(reading.phaseOffsetSeconds) > max) return fail({ ...evidence, max_offset_s: max, rule: 'offset_too_large' });
  }
  return pass({ ...evidence, rule: 'synchronized' });
}

/** When w32tm cannot say (service stopped between its triggers): the newest Time-Service sync event. */
function judgeEvents(events: Section<TimeServiceEvent[]>, evidence: Evidence, now: Date) {
  if (!events.ok) return sectionUnknown(events, evidence);
  evidence.state_source = 'time_service_events';
  const times = events.value.filter((e) => SYNC_EVENT_IDS.has(e.Id)).map((e) => Date.parse(e.TimeCreated));
  if (times.some(Number.isNaN)) return unknown('parse_error', { ...evidence, value: 'TimeCreated' });
  if (times.length === 0) return unknown('no_sync_record', evidence);
  const newest = Math.max(...times);
  const age = Math.max(0, Math.round((now.getTime() - newest) / 1000));
  evidence.last_sync_age_s = age;
  evidence.peer_errors_since_sync = events.value.filter((e) => !SYNC_EVENT_IDS.has(e.Id) && Date.parse(e.TimeCreated) > newest).length;
  if (age > STALE_SYNC_SECONDS) return fail({ ...evidence, stale_after_s: STALE_SYNC_SECONDS, rule: 'sync_stale' });
  return pass({ ...evidence, rule: 'synchronized' });
}

function effective(policy: Section<RegistryValues | null>, local: Section<RegistryValues | null>): Section<RegistryValues | null> {
  if (!policy.ok) return policy;
  if (!local.ok) return local;
  return { ok: true, value: { ...(local.value ?? {}), ...(policy.value ?? {}) } };
}

export function evaluateTimeSync(facts: TimeSyncFacts, policy: Policy, now: Date) {
  const evidence: Evidence = { source: 'w32time' };
  if (policy.timeSync.maxOffsetSeconds !== null) evidence.offset_measured = false;

  const parameters = effective(facts.parametersPolicy, facts.parameters);
  if (!parameters.ok) return sectionUnknown(parameters, evidence);
  const typeValue = regString(parameters.value, 'Type');
  const known = typeof typeValue === 'string' ? TYPES[typeValue.trim().toLowerCase()] : undefined;
  if (!known) return unknown(typeValue === null ? 'not_configured' : 'unexpected_value', { ...evidence, value: 'Type' });
  evidence.type = known.type;
  evidence.provider = known.provider;

  if (!facts.services.ok) return sectionUnknown(facts.services, evidence);
  const service = facts.services.value.find((s) => s.Name === 'W32Time');
  if (!service) return fail({ ...evidence, service_start: null, rule: 'service_not_installed' });
  Object.assign(evidence, { service_start: startType(service), service_status: serviceState(service) });

  if (facts.computer.ok) evidence.domain_joined = facts.computer.value.PartOfDomain;
  const vmic = facts.vmicProvider.ok ? regNumber(facts.vmicProvider.value, 'Enabled') : 'invalid';
  if (vmic === 0 || vmic === 1) evidence.vmic_provider_enabled = vmic === 1;

  if (startType(service) === 'disabled') return fail({ ...evidence, rule: 'service_disabled' });
  if (known.type === 'NoSync') return fail({ ...evidence, rule: 'no_sync' });

  const ntpClient = effective(facts.ntpClientPolicy, facts.ntpClient);
  if (!ntpClient.ok) return sectionUnknown(ntpClient, evidence);
  const clientEnabled = regNumber(ntpClient.value, 'Enabled');
  if (clientEnabled === 0) return fail({ ...evidence, rule: 'ntp_client_disabled' });
  if (clientEnabled !== 1 && clientEnabled !== null) return unknown('unexpected_value', { ...evidence, value: 'NtpClient.Enabled' });

  if (known.type === 'NTP') {
    const servers = regString(parameters.value, 'NtpServer');
    if (servers === 'invalid') return unknown('unexpected_value', { ...evidence, value: 'NtpServer' });
    const count = (servers ?? '').split(/\s+/).filter(Boolean).length;
    evidence.ntp_servers = count;
    if (count === 0) return fail({ ...evidence, rule: 'no_ntp_server' });
  }

  // Configured: now what the service actually did.
  if (facts.w32tm.ok) {
    const reading = facts.w32tm.value.ExitCode === 0 ? parseW32tmStatus(facts.w32tm.value.Lines) : null;
    if (reading) return judgeReading(reading, evidence, policy);
    evidence.w32tm_error = facts.w32tm.value.ExitCode === 0 ? 'unparsed_output' : w32tmError(facts.w32tm.value);
  } else {
    evidence.w32tm_error = facts.w32tm.error ?? facts.w32tm.reason;
  }
  // NT5DS follows the domain hierarchy; on a machine in no domain there is nothing to follow.
  if (known.type === 'NT5DS' && facts.computer.ok && !facts.computer.value.PartOfDomain) return unknown('nt5ds_without_domain', evidence);
  return judgeEvents(facts.events, evidence, now);
}

export const timeSyncCheck = defineProbeCheck(
  'TIME_SYNC',
  (probe): TimeSyncFacts => ({
    parameters: registryKey(probe, 'w32time'),
    parametersPolicy: registryKey(probe, 'w32timePolicy'),
    ntpClient: registryKey(probe, 'ntpClient'),
    ntpClientPolicy: registryKey(probe, 'ntpClientPolicy'),
    vmicProvider: registryKey(probe, 'vmicTimeProvider'),
    services: probeServices(probe),
    computer: probeComputer(probe),
    w32tm: probeSection(probe, 'w32tm', W32tmOutput),
    events: probeSection(probe, 'timeEvents', z.array(TimeServiceEvent)),
  }),
  evaluateTimeSync,
);

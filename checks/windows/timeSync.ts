// TIME_SYNC on Windows (research §4.4): the Windows Time service's configuration from the registry,
// Group Policy (HKLM\SOFTWARE\Policies\Microsoft\W32Time) over the local values. Configuration
// level only: `w32tm /query /status` prints translated text ("Sprungindikator: …" on German
// Windows), so it is not read. On workgroup Windows 10/11 W32Time is a trigger-start service that
// is stopped most of the time and syncs on its schedule: stopped is not a failure, disabled is.
import type { Policy } from '../policy';
import type { Evidence, Verdict } from '../types';
import { fail, pass, unknown } from '../verdict';
import { defineProbeCheck, probeComputer, probeServices, registryKey, sectionUnknown, serviceState, startType, type ComputerFacts, type Section, type ServiceFacts } from './probe';
import { regNumber, regString, type RegistryValues } from './registry';

export interface TimeSyncFacts {
  parameters: Section<RegistryValues | null>;
  parametersPolicy: Section<RegistryValues | null>;
  ntpClient: Section<RegistryValues | null>;
  ntpClientPolicy: Section<RegistryValues | null>;
  vmicProvider: Section<RegistryValues | null>;
  services: Section<ServiceFacts[]>;
  computer: Section<ComputerFacts>;
}

/** W32Time Parameters\Type values (case-insensitive in Windows), and what provides the time. */
const TYPES: Record<string, { type: string; provider: string | null }> = {
  ntp: { type: 'NTP', provider: 'ntp' },
  nt5ds: { type: 'NT5DS', provider: 'domain' },
  allsync: { type: 'AllSync', provider: 'all' },
  nosync: { type: 'NoSync', provider: null },
};

function effective(policy: Section<RegistryValues | null>, local: Section<RegistryValues | null>): Section<RegistryValues | null> {
  if (!policy.ok) return policy;
  if (!local.ok) return local;
  return { ok: true, value: { ...(local.value ?? {}), ...(policy.value ?? {}) } };
}

export function evaluateTimeSync(facts: TimeSyncFacts, policy: Policy): Verdict {
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
  // NT5DS follows the domain hierarchy; on a machine in no domain there is nothing to follow.
  if (known.type === 'NT5DS') {
    if (!facts.computer.ok) return sectionUnknown(facts.computer, evidence);
    if (!facts.computer.value.PartOfDomain) return unknown('nt5ds_without_domain', evidence);
  }
  return pass({ ...evidence, rule: 'configured' });
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
  }),
  (facts, policy) => evaluateTimeSync(facts, policy),
);
